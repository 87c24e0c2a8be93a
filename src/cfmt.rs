//! C printf number formatting that Rust's `format!` lacks (`%g`).
