//! `note!`: a line on stderr that never fails the caller. `eprintln!` panics when
//! stderr is a closed pipe (`2>&1 >/dev/null | head -2`), which would kill an engine
//! thread mid-run; a note to a dead stderr is dropped instead. Used by the engine for
//! its `--debug` lines and warnings.

/// Writes one formatted line to stderr, ignoring write errors.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub(crate) use note;
