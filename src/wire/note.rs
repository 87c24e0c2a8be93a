//! `note!` and `say!`: a line on stderr or stdout that never fails the caller.
//! `eprintln!` and `println!` panic when their stream is a closed pipe
//! (`2>&1 | head -2`), which would kill an engine thread mid-run or end a finished
//! run with a panic instead of its exit status; a line to a dead stream is dropped
//! instead. Used by every layer for warnings, notes and `--debug` lines.

/// Writes one formatted line to stderr, ignoring write errors.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// Writes one formatted line to stdout, ignoring write errors.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

pub(crate) use {note, say};
