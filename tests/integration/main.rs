//! The integration test binary: rshperf run against in-process servers on
//! 127.0.0.1:0 that count what they see. One binary, one module per topic.

mod ab;
mod basic;
mod bodies;
mod call_rate;
mod ci_install;
mod compare;
mod diagnose;
mod edge;
mod faults;
mod first_run;
mod hostile;
mod hostile_h2;
mod http2;
mod http2_hpack;
mod http3;
mod http3_wire;
mod layers;
mod merge;
mod metrics;
mod multihost;
mod nobody_answers;
mod nothing_lost;
mod outputs;
mod pacing;
mod package;
mod page;
mod readme;
mod repo;
mod serve;
mod sessions;
mod support;
mod sweep;
mod threads;
mod tls;
mod unix_socket;
