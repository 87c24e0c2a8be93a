//! The classic httperf text report, byte for byte (reference §2.3).
