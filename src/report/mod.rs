//! Reports: turning `Stats` into text. Pure: nothing here measures or does I/O except
//! writing to the given writer.

pub mod classic;
pub mod print;
pub mod session;
pub mod summary;
