//! The decisions behind the engine's timer wheel: connection watchdogs (`--timeout`,
//! `--think-timeout`) and session think times.
//!
//! A connection keeps at most one watchdog timer, never later than its deadline
//! (`Conn::deadline`: the connect or send watchdog, `--timeout`; the reply watchdog,
//! `--timeout` + `--think-timeout`). A deadline that moves later leaves the timer
//! where it is: when it fires, the connection is found not yet late and the timer
//! is set again for the new deadline (one wheel operation per firing, none per
//! byte received). A deadline that moves earlier replaces the timer. A connection
//! whose deadline has passed when its timer fires has timed out (`client-timo`).
//! The wheel rounds deadlines up to its tick (1 ms) and never fires early.
//!
//! Pure: the engine passes `now` and the wheel; the connection table, the closing
//! and the sessions are the engine's (`Engine::arm_watchdog`, `on_watchdog`,
//! `session::call_done`).

use std::time::{Duration, Instant};

use crate::wire::timer::{TimerId, TimerWheel};

/// A positive option value in seconds as a Duration (huge values saturate; zero or
/// less: none). `--timeout` and `--runtime` are read through it, and the reply
/// watchdog is `duration_of(timeout + think_timeout)`.
pub(super) fn duration_of(secs: f64) -> Option<Duration> {
    (secs > 0.0).then(|| Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// Makes sure a timer with `payload` is pending no later than `deadline` (None: no
/// deadline, the timer in place stays and finds nothing when it fires); `armed` is
/// the connection's timer and its deadline.
pub(super) fn arm<T: Copy>(
    wheel: &mut TimerWheel<T>,
    armed: &mut Option<(Instant, TimerId)>,
    deadline: Option<Instant>,
    payload: T,
) {
    let Some(deadline) = deadline else {
        return;
    };
    if let Some((at, timer)) = *armed {
        if at <= deadline {
            return;
        }
        wheel.cancel(timer);
    }
    *armed = wheel.schedule(deadline, payload).map(|t| (deadline, t));
}

/// What a fired watchdog means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fired {
    /// The deadline has passed: the connection timed out.
    TimedOut,
    /// The deadline moved later: arm again (`arm`).
    Rearm,
    /// No deadline any more (nothing outstanding).
    Idle,
}

/// The watchdog timer of a connection whose deadline is now `deadline` fired at
/// `now`: it is no longer armed.
pub(super) fn fired(
    armed: &mut Option<(Instant, TimerId)>,
    deadline: Option<Instant>,
    now: Instant,
) -> Fired {
    *armed = None;
    match deadline {
        Some(d) if d <= now => Fired::TimedOut,
        Some(_) => Fired::Rearm,
        None => Fired::Idle,
    }
}

/// When a think time of `think` seconds that starts at `now` ends (None: beyond any
/// clock; the session then waits for `--runtime` or a signal).
pub(super) fn think_until(now: Instant, think: f64) -> Option<Instant> {
    now.checked_add(Duration::try_from_secs_f64(think).unwrap_or(Duration::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::Sim;
    use crate::engine::conn::tests::{ms, reply, Rig};
    use crate::engine::conn::{Phase, Step};
    use crate::model::stats::ErrorKind;

    /// The engine's wheel: 1 ms ticks from `t0`.
    fn wheel(t0: Instant) -> TimerWheel<u32> {
        TimerWheel::new(t0, Duration::from_millis(1), 64)
    }

    /// `Engine::arm_watchdog` for the rig's connection (payload 7).
    fn arm_conn(w: &mut TimerWheel<u32>, r: &mut Rig) {
        let deadline = r.conn.deadline();
        arm(w, &mut r.conn.armed, deadline, 7);
    }

    /// Runs the engine's watchdog loop on `r` until the connection times out or its
    /// deadline goes away: sleep to the wheel's next deadline, expire, decide.
    /// Returns each firing (time after `t0`, decision).
    fn watch(r: &mut Rig, w: &mut TimerWheel<u32>, clock: &Sim) -> Vec<(Duration, Fired)> {
        let mut log = Vec::new();
        arm_conn(w, r);
        while let Some(next) = w.next_deadline() {
            clock.set(next.max(clock.peek()));
            let mut hit = Vec::new();
            w.expire(clock.peek(), |p| hit.push(p));
            for p in hit {
                assert_eq!(p, 7);
                let deadline = r.conn.deadline();
                let f = fired(&mut r.conn.armed, deadline, clock.peek());
                log.push((clock.peek() - r.t0, f));
                if f == Fired::Rearm {
                    arm_conn(w, r);
                }
            }
            if log.last().is_some_and(|l| l.1 != Fired::Rearm) {
                break;
            }
        }
        log
    }

    #[test]
    fn option_values_become_durations() {
        assert_eq!(duration_of(0.0), None);
        assert_eq!(duration_of(-1.0), None);
        assert_eq!(duration_of(0.3), Some(ms(300)));
        assert_eq!(duration_of(1e300), Some(Duration::MAX));
        // The reply watchdog: `--think-timeout` alone still bounds the wait.
        assert_eq!(duration_of(0.0 + 2.0), Some(ms(2000)));
    }

    #[test]
    fn a_silent_server_times_out_at_the_first_tick_after_the_reply_deadline() {
        let mut r = Rig::new(false);
        let (t0, clock) = (r.t0, Sim::new(r.t0));
        let mut w = wheel(t0);
        // Connected and written 0.4 ms in; the reply deadline is 3 s later.
        let t = r.at(Duration::from_micros(400));
        r.connect(t);
        r.issue(t);
        r.writable(t);
        assert_eq!(r.conn.deadline(), Some(t + ms(3000)));
        // Rounded up to the 1 ms tick: 3,001 ms, never earlier.
        assert_eq!(watch(&mut r, &mut w, &clock), [(ms(3001), Fired::TimedOut)]);
    }

    #[test]
    fn a_connect_that_never_completes_times_out_at_the_timeout() {
        // The engine arms the watchdog when the connect starts (`open_conn`): no
        // readiness event ever comes for a connect nobody answers. HTTP/1 and HTTP/2.
        for http2 in [false, true] {
            let mut r = Rig::new(http2);
            let (t0, clock) = (r.t0, Sim::new(r.t0));
            let mut w = wheel(t0);
            assert_eq!(
                watch(&mut r, &mut w, &clock),
                [(ms(2000), Fired::TimedOut)],
                "http2 {http2}"
            );
            assert_eq!(r.conn.timed_out(), Some(ErrorKind::ClientTimo));
            assert!(r.conn.unanswered_connect(), "counted as a connect timeout");
        }
    }

    #[test]
    fn a_handshake_nobody_answers_times_out_from_the_connect_start() {
        // TCP connected at 0.3 s, the TLS handshake never completes: the watchdog set
        // at the connect start still stands (httperf counts the handshake in the
        // connect), so it fires at 2 s, not 2.3 s.
        let mut r = Rig::new(false);
        let (t0, clock) = (r.t0, Sim::new(r.t0));
        let mut w = wheel(t0);
        arm_conn(&mut w, &mut r);
        clock.set(r.at(ms(300)));
        r.conn.phase = Phase::Handshaking;
        assert_eq!(watch(&mut r, &mut w, &clock), [(ms(2000), Fired::TimedOut)]);
        assert!(r.conn.unanswered_connect());
    }

    #[test]
    fn a_reply_timeout_is_not_a_connect_timeout() {
        let mut r = Rig::new(false);
        let (t0, clock) = (r.t0, Sim::new(r.t0));
        let mut w = wheel(t0);
        arm_conn(&mut w, &mut r);
        // Connected at 1.5 s (before the 2 s connect deadline): the connect watchdog
        // is gone, the reply deadline is 3 s after the request went out.
        let t = r.at(ms(1500));
        clock.set(t);
        r.connect(t);
        r.issue(t);
        r.writable(t);
        arm_conn(&mut w, &mut r);
        assert_eq!(
            watch(&mut r, &mut w, &clock),
            [(ms(2000), Fired::Rearm), (ms(4500), Fired::TimedOut)]
        );
        assert!(!r.conn.unanswered_connect());
    }

    #[test]
    fn a_later_deadline_keeps_the_timer_which_rearms_when_it_fires() {
        let mut r = Rig::new(false);
        let (t0, clock) = (r.t0, Sim::new(r.t0));
        let mut w = wheel(t0);
        r.connect(t0);
        r.issue(t0);
        r.writable(t0);
        arm_conn(&mut w, &mut r);
        // Part of a header at 1 s: the deadline moves to 4 s, the timer stays at 3 s.
        clock.set(r.at(ms(1000)));
        assert_eq!(r.receive(clock.peek(), b"HTTP/1.1 2"), Step::Continue);
        arm_conn(&mut w, &mut r);
        assert_eq!(r.conn.armed.map(|a| a.0), Some(r.at(ms(3000))));
        assert_eq!(w.len(), 1);
        let log = watch(&mut r, &mut w, &clock);
        assert_eq!(log, [(ms(3000), Fired::Rearm), (ms(4000), Fired::TimedOut)]);
    }

    #[test]
    fn an_earlier_deadline_replaces_the_timer_and_no_deadline_leaves_it_idle() {
        let t0 = Instant::now();
        let mut w = wheel(t0);
        let mut armed = None;
        arm(&mut w, &mut armed, Some(t0 + ms(5000)), 1);
        arm(&mut w, &mut armed, Some(t0 + ms(3000)), 1);
        assert_eq!(armed.map(|a| a.0), Some(t0 + ms(3000)));
        assert_eq!(w.len(), 1, "the later timer is cancelled");
        arm(&mut w, &mut armed, None, 1);
        assert_eq!(w.len(), 1, "no deadline: the timer stays and fires idle");
        let mut hit = Vec::new();
        w.expire(t0 + ms(2999), |p| hit.push(p));
        assert!(hit.is_empty(), "never early");
        w.expire(t0 + ms(3000), |p| hit.push(p));
        assert_eq!(hit, [1]);
        assert_eq!(fired(&mut armed, None, t0 + ms(3000)), Fired::Idle);
        assert_eq!(armed, None);
    }

    #[test]
    fn a_complete_reply_stops_the_watchdog() {
        let mut r = Rig::new(false);
        let (t0, clock) = (r.t0, Sim::new(r.t0));
        let mut w = wheel(t0);
        r.connect(t0);
        r.issue(t0);
        r.writable(t0);
        arm_conn(&mut w, &mut r);
        clock.set(r.at(ms(20)));
        r.receive(clock.peek(), &reply(200, 0));
        // The timer still fires at 3 s, and finds nothing to watch.
        assert_eq!(watch(&mut r, &mut w, &clock), [(ms(3000), Fired::Idle)]);
    }

    #[test]
    fn a_think_time_ends_at_the_first_tick_after_it() {
        let t0 = Instant::now();
        let mut w = wheel(t0);
        let start = t0 + ms(10);
        let until = think_until(start, 0.3005).expect("a think time");
        assert_eq!(until, start + Duration::from_micros(300_500));
        w.schedule(until, 9);
        let mut hit = Vec::new();
        w.expire(t0 + ms(310), |p| hit.push(p));
        assert!(hit.is_empty());
        w.expire(t0 + ms(311), |p| hit.push(p));
        assert_eq!(hit, [9]);
        // A think time beyond any clock never ends.
        assert_eq!(think_until(t0, 1e30), None);
        assert_eq!(think_until(t0, 0.0), Some(t0));
    }
}
