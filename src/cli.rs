//! Command-line parsing with getopt_long rules (reference §1.1).
