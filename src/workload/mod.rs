//! Workload generators: when arrivals happen (`rate`) and what they request.

pub mod rate;
pub mod sesslog;
pub mod uri;
