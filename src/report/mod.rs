//! Reports: turning `Stats` into text and files. Nothing here measures anything;
//! the classic text, session block, percentiles and print lines write to a given
//! writer; `json` and `csv` also open the files named by `--json` and `--csv`.

pub mod ab;
pub mod chart;
pub mod classic;
pub mod csv;
pub mod html;
pub mod json;
pub mod percentiles;
pub mod print;
pub mod servers;
pub mod session;
pub mod summary;
pub mod timeline;
