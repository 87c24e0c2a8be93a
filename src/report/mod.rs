//! Reports: turning `Stats` into text. Pure: nothing here measures or does I/O except
//! writing to the given writer.

pub mod classic;
pub mod csv;
pub mod json;
pub mod percentiles;
pub mod summary;
