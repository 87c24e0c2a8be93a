//! Naps: while replies stream in on several multiplexed connections (HTTP/2 and
//! HTTP/3), the engine sleeps briefly off the poll instead of blocking in it.
//!
//! A thread blocked in `epoll_wait` is woken by each arriving segment or datagram,
//! and the waking is done by the sender: on loopback the server's send path runs the
//! wake-up of the client (`try_to_wake_up`, and on a virtual machine an interrupt to
//! the client's idle CPU) before its write returns. Under a multiplexed load, where
//! replies on many connections keep arriving and the client is idle between them,
//! that wake-up is the largest single item of a loopback server's profile (nginx's
//! HTTP/2 worker: about 12 % of its cycles, more than any part of its HTTP/2 code),
//! so the client makes the server slower than it has to be; and the client pays a
//! context switch per wake-up (over HTTP/3 against caddy, `finish_task_switch` was
//! 15 % of the client's CPU).
//!
//! So after a poll turn that handled I/O, the engine sleeps (a plain `nanosleep`:
//! off the poll's wait queue, so arriving data only marks its socket ready and
//! wakes nobody), then polls without blocking and handles everything that arrived
//! meanwhile in one turn. It naps only while calls take long anyway: the moving
//! average of response times (first reply byte after the stream opened) is at least
//! `SLOW` (8 shortest naps), and a nap lasts an eighth of that average, between
//! `NAP` and `MAX_NAP`, so it adds at most an eighth to a reply's wait, and it falls
//! within the call's measured response time, never outside it. The longer the
//! server's queue, the more replies a nap collects: fewer wake-ups, reads and
//! packets per call (over HTTP/3, 1 ms instead of 200 µs cut the client's CPU per
//! call by about a tenth against caddy). A lightly loaded or idle client blocks in
//! the poll as before (a lone request's response time is not changed), and a nap
//! never runs past the engine's next deadline (arrival, timer, timeline tick): it
//! ends there, or is not taken when less than `NAP` remains.
//!
//! Owns the decision; the engine does the sleeping and the polling.

use std::time::{Duration, Instant};

/// The shortest nap (the kernel's default timer slack adds up to 50 µs).
pub(super) const NAP: Duration = Duration::from_micros(200);

/// The longest nap.
pub(super) const MAX_NAP: Duration = Duration::from_millis(1);

/// Average response time from which the engine naps: 8 shortest naps.
pub(super) const SLOW: Duration = Duration::from_micros(8 * 200);

/// Weight of the newest response time in the moving average (1/2^k).
const SHIFT: u32 = 4;

/// Whether the engine's next wait is a nap.
#[derive(Debug, Default)]
pub(super) struct Nap {
    /// Naps are allowed (HTTP/2 or HTTP/3 runs).
    enabled: bool,
    /// The last poll turn handled I/O.
    io: bool,
    /// Moving average of response times, in µs.
    avg_us: u64,
    /// Naps taken (`--debug`).
    pub(super) taken: u64,
}

impl Nap {
    /// Napping for an engine whose connections multiplex calls (`enabled`).
    pub(super) fn new(enabled: bool) -> Nap {
        Nap {
            enabled,
            ..Nap::default()
        }
    }

    /// A call's response time (first reply byte after its stream opened).
    pub(super) fn on_response(&mut self, rt: Duration) {
        if self.enabled {
            let us = u64::try_from(rt.as_micros()).unwrap_or(u64::MAX);
            // avg += (us - avg) / 2^SHIFT, in integers.
            self.avg_us = self.avg_us - (self.avg_us >> SHIFT) + (us >> SHIFT);
        }
    }

    /// A poll turn handled `events` I/O events.
    pub(super) fn after_turn(&mut self, events: usize) {
        self.io = events > 0;
    }

    /// Whether the next wait should be a nap (if no deadline comes first).
    pub(super) fn wanted(&self) -> bool {
        self.enabled && self.io && self.avg_us >= SLOW.as_micros() as u64
    }

    /// How long a nap lasts now: an eighth of the average response time, within
    /// `NAP` and `MAX_NAP`.
    fn length(&self) -> Duration {
        Duration::from_micros(self.avg_us / 8).clamp(NAP, MAX_NAP)
    }

    /// The nap to take before the next poll, if any: none when not `wanted` or when
    /// `deadline` (the engine's next one) is less than `NAP` away; cut short to end
    /// at `deadline`.
    pub(super) fn next(&mut self, now: Instant, deadline: Option<Instant>) -> Option<Duration> {
        if !self.wanted() {
            return None;
        }
        let nap = match deadline {
            Some(d) => self.length().min(d.saturating_duration_since(now)),
            None => self.length(),
        };
        if nap < NAP {
            return None;
        }
        self.taken += 1;
        Some(nap)
    }
}

/// The sooner of two optional deadlines (the engine's next deadline, and a batched
/// call rate's next call, which its own tick wakes a poll for but a nap must not
/// sleep past).
pub(super) fn sooner(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::{Clock, Sim};

    /// A napper whose average response time has settled at `rt`.
    fn settled(enabled: bool, rt: Duration) -> Nap {
        let mut n = Nap::new(enabled);
        for _ in 0..200 {
            n.on_response(rt);
        }
        n
    }

    #[test]
    fn naps_after_io_while_responses_are_slow() {
        let now = Instant::now();
        let mut n = settled(true, Duration::from_millis(20));
        assert_eq!(n.next(now, None), None, "no turn with I/O yet");
        n.after_turn(1);
        // An eighth of 20 ms is past the longest nap.
        assert_eq!(n.next(now, None), Some(MAX_NAP));
        assert_eq!(n.next(now, Some(now + NAP)), Some(NAP));
        assert_eq!(n.taken, 2);
        n.after_turn(0);
        assert_eq!(n.next(now, None), None, "an idle turn blocks in the poll");
    }

    #[test]
    fn a_nap_is_an_eighth_of_the_average_response_time_within_its_bounds() {
        let now = Instant::now();
        let us = Duration::from_micros;
        for (rt, nap) in [
            (SLOW, NAP),
            (us(2400), us(300)),
            (us(6000), us(750)),
            (us(8000), MAX_NAP),
            (us(50_000), MAX_NAP),
        ] {
            let mut n = settled(true, rt);
            n.after_turn(1);
            let got = n.next(now, None).expect("a nap");
            // The integer moving average settles within a few µs of `rt`.
            let diff = got.abs_diff(nap);
            assert!(
                diff <= us(2),
                "response time {rt:?}: nap {got:?}, not {nap:?}"
            );
        }
    }

    #[test]
    fn fast_responses_or_http1_never_nap() {
        let now = Instant::now();
        let mut fast = settled(true, SLOW - Duration::from_micros(100));
        fast.after_turn(50);
        assert_eq!(fast.next(now, None), None);
        let mut h1 = settled(false, Duration::from_millis(20));
        h1.after_turn(50);
        assert_eq!(h1.next(now, None), None);
        assert_eq!(fast.taken + h1.taken, 0);
    }

    #[test]
    fn the_average_follows_the_responses() {
        let mut n = settled(true, Duration::from_millis(20));
        n.after_turn(1);
        assert!(n.wanted());
        for _ in 0..200 {
            n.on_response(Duration::from_micros(100));
        }
        assert!(!n.wanted(), "average {} µs", n.avg_us);
    }

    #[test]
    fn naps_on_simulated_time_stop_short_of_the_deadline() {
        let t0 = Instant::now();
        let clock = Sim::new(t0);
        let mut n = settled(true, Duration::from_millis(20));
        n.after_turn(3);
        // The engine's next deadline at 1,050 µs; a batched call due at 730 µs.
        let deadline = Some(t0 + Duration::from_micros(1050));
        let call = Some(t0 + Duration::from_micros(730));
        let due = sooner(deadline, call);
        assert_eq!(due, call);
        let mut slept = Vec::new();
        while let Some(nap) = n.next(clock.now(), due) {
            clock.advance(nap);
            slept.push(clock.peek() - t0);
        }
        // One nap, cut short at the batched call's 730 µs; then no time is left.
        let us = Duration::from_micros;
        assert_eq!(slept, [us(730)]);
        // With the call handled: naps to the deadline 2.1 ms away, then 100 µs
        // left is less than the shortest nap: poll instead.
        let deadline = Some(clock.peek() + us(2100));
        let from = clock.peek();
        slept.clear();
        while let Some(nap) = n.next(clock.now(), deadline) {
            clock.advance(nap);
            slept.push(clock.peek() - from);
        }
        assert_eq!(slept, [us(1000), us(2000)]);
        assert_eq!(sooner(None, call), call);
        assert_eq!(sooner(deadline, None), deadline);
        assert_eq!(sooner(None, None), None);
    }

    #[test]
    fn a_nap_never_passes_the_next_deadline() {
        let now = Instant::now();
        let mut n = settled(true, Duration::from_millis(20));
        n.after_turn(10);
        assert_eq!(n.next(now, Some(now + NAP / 2)), None);
        assert_eq!(n.next(now, Some(now)), None);
        assert_eq!(n.taken, 0);
    }
}
