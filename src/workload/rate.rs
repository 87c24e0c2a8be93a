//! Arrival schedules: `--rate` / `--period` (d, u, e, v) as absolute offsets from t0.
//!
//! Owns the inter-arrival distributions, httperf's `erand48` random numbers (seeded from
//! `--client`), and striping (engine j of N takes arrivals k ≡ j mod N of one global
//! sequence). Does not know about connections or time sources: it only yields offsets.
//! Called by the engine's arrival generator.

use std::time::Duration;

/// The inter-arrival process chosen with `--rate` or `--period`.
#[derive(Debug, Clone, PartialEq)]
pub enum Period {
    /// Rate ≤ 0: the next arrival starts when the previous one is destroyed.
    Sequential,
    /// Fixed spacing of this many seconds (`--rate X` = 1/X, `--period dT`).
    Deterministic(f64),
    /// Uniform on [min, max) seconds (`--period uMIN,MAX`).
    Uniform(f64, f64),
    /// Exponential with this mean, seconds (`--period eMEAN`).
    Exponential(f64),
    /// Piecewise deterministic: (period, duration) pairs, cycled (`--period vT1,D1,…`).
    Variable(Vec<(f64, f64)>),
}

/// httperf's 48-bit linear congruential generator (`erand48`), bit-exact with glibc.
#[derive(Debug, Clone)]
pub struct Erand48 {
    state: u64,
}

impl Erand48 {
    /// The generator httperf seeds for client `id`: words `0x1234 ^ id`,
    /// `0x5678 ^ (id << 8)`, `0x9abc ^ !id` (id truncated to 16 bits).
    pub fn for_client(id: u32) -> Self {
        todo!()
    }

    /// The next value in [0, 1), exactly `x / 2^48`.
    pub fn next_f64(&mut self) -> f64 {
        todo!()
    }
}

/// The global arrival schedule, restricted to one stripe.
#[derive(Debug, Clone)]
pub struct Schedule {}

impl Schedule {
    /// Schedule for `period`, random numbers seeded for `client_id`, yielding only the
    /// arrivals k with k mod `stripes` == `stripe` (use 0/1 for all arrivals).
    /// Panics never; `Period::Sequential` yields nothing (the caller paces itself).
    pub fn new(period: &Period, client_id: u32, stripe: u32, stripes: u32) -> Self {
        todo!()
    }

    /// Offset from t0 of this stripe's next arrival (the first global arrival, k = 0,
    /// is at offset 0). Offsets are absolute (t0 + Σ draws), so they never drift.
    /// Returns None for `Period::Sequential`.
    pub fn next_offset(&mut self) -> Option<Duration> {
        todo!()
    }
}
