//! Test rig: a real `Engine` (its poll, timerfd and tables) for unit tests of the
//! engine's decisions, driven with instants from the simulated clock (`Sim`).
//!
//! Nothing is connected: the tests call the engine's methods with `now` and read its
//! fields. Used by the tests in `run` and `arrivals`.

use std::time::Instant;

use crate::engine::tally::Tally;
use crate::model::config::Config;
use crate::model::workload::Workload;

use super::{Engine, Plan};

/// A configuration for 127.0.0.1:8080 at `rate` per second for `conns` connections.
pub(super) fn config(rate: f64, conns: u64) -> Config {
    let mut b = Config::builder();
    b.server("127.0.0.1").port(8080).num_conns(conns).rate(rate);
    b.build().expect("a valid configuration").config
}

/// Runs `test` on an engine for `cfg` (stripe `stripe` of `stripes`) starting at `t0`.
pub(super) fn with_engine(
    cfg: &Config,
    stripe: u32,
    stripes: u32,
    t0: Instant,
    test: impl FnOnce(&mut Engine<'_>),
) {
    let work = Workload::from_config(cfg).expect("a workload for the configuration");
    let tally = Tally::new(1);
    let link = tally.engine(0).expect("one engine slot");
    let plan = Plan {
        stripe,
        stripes,
        arrivals: cfg.load().num_conns(),
        capacity: 16,
        io: super::backend::Kind::Epoll,
    };
    let mut engine =
        Engine::new(cfg, &work, None, None, link, plan, t0).expect("an engine can be built");
    test(&mut engine);
}
