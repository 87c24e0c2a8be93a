//! `TimeChange`: a rate profile's cumulative rate Λ(t) = ∫₀ᵗ rate and its inverse,
//! which turn a unit-rate arrival sequence into the profile's arrivals.
//!
//! Arrival k of a profiled run is at `t_k = inf{t ≥ 0 : Λ(t) > s_k}`, where `s_k` is
//! the k-th arrival of the period distribution scaled to mean 1 (`workload::rate`):
//! `s_k = k` for deterministic spacing (arrivals where Λ crosses each integer), a
//! unit-rate Poisson process for exponential spacing (so the arrivals are the
//! non-homogeneous Poisson process of the profile's rate: the time-change theorem).
//! With the strict inequality an arrival on a plateau of Λ (a segment of rate 0) goes
//! to where the rate resumes, so a segment [a, b) gets exactly the arrivals with
//! Λ(a) ≤ s_k < Λ(b), and none when its rate is 0. The run ends at the profile's end:
//! `s_k ≥ Λ(T)` has no arrival.
//!
//! Owns the integration and inversion (linear pieces in closed form, sine pieces by
//! safeguarded Newton iteration); everything is a pure function of `s`, so every
//! stripe of a partitioned run computes the same time for the same arrival. Does not
//! draw random numbers or know about stripes (`workload::rate::Schedule` does); the
//! grammar is `RateProfile`'s (`model::profile`). Called by the schedule and by the timeline's
//! target rate.

use std::f64::consts::TAU;

use super::{Piece, RateProfile};

/// Attoseconds per second.
const AS_PER_SEC: u128 = 1_000_000_000_000_000_000;
/// Most Newton/bisection steps when inverting a sine piece (each at least halves the
/// bracket when Newton's step leaves it; 200 halvings reach any f64).
const MAX_STEPS: u32 = 200;

/// One piece of the profile, placed in the run.
#[derive(Debug, Clone, PartialEq)]
struct Placed {
    /// Start, attoseconds from t0 (exact: the pieces' durations are whole nanoseconds).
    start_as: u128,
    /// Start in seconds.
    start: f64,
    /// Length in seconds.
    len: f64,
    /// Λ at the start.
    lambda0: f64,
    /// Λ at the end (≥ `lambda0`).
    lambda1: f64,
    /// The rate's formula.
    shape: Shape,
}

/// A piece's rate as a function of the time τ since its start.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// `a + c·τ`.
    Linear {
        /// Rate at τ = 0.
        a: f64,
        /// Slope, per second².
        c: f64,
    },
    /// `mean + amp·sin(ω·τ)`.
    Sine {
        /// Mean rate.
        mean: f64,
        /// Amplitude (≤ mean).
        amp: f64,
        /// Angular frequency 2π/period.
        omega: f64,
    },
}

impl Shape {
    /// The rate at τ.
    fn rate(&self, tau: f64) -> f64 {
        match *self {
            Shape::Linear { a, c } => (a + c * tau).max(0.0),
            Shape::Sine { mean, amp, omega } => (mean + amp * (omega * tau).sin()).max(0.0),
        }
    }

    /// ∫₀^τ rate.
    fn integral(&self, tau: f64) -> f64 {
        match *self {
            Shape::Linear { a, c } => a * tau + c * tau * tau / 2.0,
            Shape::Sine { mean, amp, omega } => {
                mean * tau + amp / omega * (1.0 - (omega * tau).cos())
            }
        }
    }

    /// The least τ in [0, len] with ∫₀^τ rate ≥ u, for 0 ≤ u < the piece's integral
    /// (the integral is strictly increasing on the piece, except where a linear piece
    /// has rate 0 at one end, so "≥" and ">" agree up to rounding).
    fn inverse(&self, u: f64, len: f64) -> f64 {
        if u <= 0.0 {
            return 0.0;
        }
        let tau = match *self {
            // a·τ + c·τ²/2 = u, in the form without cancellation: 2u / (a + √(a² + 2cu)).
            Shape::Linear { a, c } => {
                let root = (a * a + 2.0 * c * u).max(0.0).sqrt();
                let den = a + root;
                if den > 0.0 {
                    2.0 * u / den
                } else {
                    len
                }
            }
            Shape::Sine { mean, amp, .. } => {
                let lo = u / (mean + amp);
                let hi = if mean > amp {
                    (u / (mean - amp)).min(len)
                } else {
                    len
                };
                self.solve(u, lo.min(hi), hi)
            }
        };
        tau.clamp(0.0, len)
    }

    /// τ in [lo, hi] with ∫₀^τ rate = u: Newton's step from the bracket's middle,
    /// a bisection whenever the step leaves the bracket.
    fn solve(&self, u: f64, mut lo: f64, mut hi: f64) -> f64 {
        let mut x = (lo + hi) / 2.0;
        for _ in 0..MAX_STEPS {
            let f = self.integral(x) - u;
            if f == 0.0 {
                return x;
            }
            if f < 0.0 {
                lo = x;
            } else {
                hi = x;
            }
            let slope = self.rate(x);
            let newton = x - f / slope;
            let next = if slope > 0.0 && newton > lo && newton < hi {
                newton
            } else {
                lo + (hi - lo) / 2.0
            };
            if next == x || hi <= lo {
                return x;
            }
            x = next;
        }
        x
    }
}

/// A profile's Λ and its inverse.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TimeChange {
    /// The pieces in order, with Λ at their ends.
    pieces: Vec<Placed>,
    /// The profile's end, attoseconds from t0.
    end_as: u128,
}

impl TimeChange {
    /// Λ of `profile`.
    pub(crate) fn new(profile: &RateProfile) -> TimeChange {
        let mut pieces = Vec::new();
        let (mut start_as, mut lambda) = (0u128, 0.0f64);
        for piece in profile.pieces() {
            let d = piece.duration();
            let len = d.as_secs_f64();
            let shape = match piece {
                Piece::Linear { from, to, .. } => Shape::Linear {
                    a: from,
                    c: (to - from) / len,
                },
                Piece::Sine {
                    mean,
                    amplitude,
                    period,
                    ..
                } => Shape::Sine {
                    mean,
                    amp: amplitude,
                    omega: TAU / period.as_secs_f64(),
                },
            };
            let lambda1 = lambda + shape.integral(len).max(0.0);
            pieces.push(Placed {
                start_as,
                start: attos_secs(start_as),
                len,
                lambda0: lambda,
                lambda1,
                shape,
            });
            start_as += d.as_nanos() * (AS_PER_SEC / 1_000_000_000);
            lambda = lambda1;
        }
        TimeChange {
            pieces,
            end_as: start_as,
        }
    }

    /// Λ(T): the expected number of arrivals of the whole profile (exact for
    /// deterministic spacing, up to the count's rounding up: arrivals are s = 0, 1, …
    /// below it).
    pub(crate) fn total(&self) -> f64 {
        self.pieces.last().map_or(0.0, |p| p.lambda1)
    }

    /// The profile's length in seconds.
    #[cfg(test)]
    pub(crate) fn seconds(&self) -> f64 {
        attos_secs(self.end_as)
    }

    /// The piece at `t` seconds (None past the end).
    fn piece_at(&self, t: f64) -> Option<&Placed> {
        if t < 0.0 {
            return None;
        }
        let i = self.pieces.partition_point(|p| p.start + p.len <= t);
        self.pieces.get(i)
    }

    /// The target rate at `t` seconds from t0 (0 outside the profile).
    #[cfg(test)]
    pub(crate) fn rate_at(&self, t: f64) -> f64 {
        self.piece_at(t)
            .map_or(0.0, |p| p.shape.rate((t - p.start).min(p.len)))
    }

    /// Λ(t), `t` seconds from t0 (Λ(T) past the end, 0 before t0).
    pub(crate) fn lambda(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        match self.piece_at(t) {
            Some(p) => p.lambda0 + p.shape.integral((t - p.start).min(p.len)),
            None => self.total(),
        }
    }

    /// The arrival for unit time `s`: attoseconds from t0 of inf{t : Λ(t) > s}, or
    /// None when `s ≥ Λ(T)` (after the profile's end).
    pub(crate) fn inverse(&self, s: f64) -> Option<u128> {
        let i = self.pieces.partition_point(|p| p.lambda1 <= s);
        let p = self.pieces.get(i)?;
        let tau = p.shape.inverse(s - p.lambda0, p.len);
        let end_as = self.pieces.get(i + 1).map_or(self.end_as, |n| n.start_as);
        // Inside the piece: rounding must not move an arrival past its end.
        Some((p.start_as + to_attos(tau)).min(end_as.saturating_sub(1)))
    }
}

/// Converts a draw in seconds to attoseconds; negative and NaN draws count as 0.
pub(crate) fn to_attos(seconds: f64) -> u128 {
    // `as` saturates: NaN and negatives become 0, absurdly large values u128::MAX.
    (seconds * AS_PER_SEC as f64).round() as u128
}

/// Seconds of `attos` attoseconds (exact for whole seconds).
pub(crate) fn attos_secs(attos: u128) -> f64 {
    (attos / AS_PER_SEC) as f64 + (attos % AS_PER_SEC) as f64 / AS_PER_SEC as f64
}

#[cfg(test)]
mod tests;
