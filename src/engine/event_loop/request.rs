//! The request-oriented workload (httperf's `conn_rate` + `call_seq`): each arrival
//! opens a connection that makes `--num-calls` calls in pipelined bursts of
//! `--burst-length`; the next burst starts when every call of the current one has its
//! reply; the client closes after the last. A final short burst completes normally.
//!
//! In a closed-loop group with a request budget (ab's `-k`), a connection instead
//! makes one call at a time for as long as the group's budget lasts and the server
//! keeps the connection open (`closed_reserve`); ab and lb runs also record each
//! completed request (`ab_completed`).
//!
//! Over HTTP/2 the burst is a window instead: `--burst-length` streams stay in flight,
//! each answered call replaced by the next at once (h2load's `-m`).
//!
//! The decisions are `CallPlan`'s (pure, unit-tested); the engine half below issues
//! the calls it decides on and closes the connections it is done with.

use std::time::Instant;

use super::Engine;
use crate::engine::conn::{Completion, Owner};
use crate::wire::table::ConnId;

/// Where a request-oriented connection is in its calls (the counters of
/// `Owner::Request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CallPlan {
    /// Calls of this connection not yet issued.
    pub(super) calls_left: u64,
    /// Calls of the current burst still outstanding.
    pub(super) in_burst: u64,
}

/// What a connection does after one of its calls was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterReply {
    /// HTTP/2: issue call `j` of the connection on the answered call's stream.
    Replace(u64),
    /// The burst is answered: the next burst (or the close).
    NextBurst,
    /// Calls of the burst are still outstanding (or the server is closing).
    Wait,
}

impl CallPlan {
    /// The next burst of a connection making `num_calls` calls in bursts of `burst`:
    /// Some((n, j)): issue its calls j … j + n − 1; None: the connection is done
    /// (no calls left, or the server said it closes) and the client closes it.
    pub(super) fn next_burst(
        &mut self,
        burst: u64,
        closing: bool,
        num_calls: u64,
    ) -> Option<(u64, u64)> {
        if self.calls_left == 0 || closing {
            self.in_burst = 0;
            return None;
        }
        let n = self.calls_left.min(burst.max(1));
        let j = num_calls.saturating_sub(self.calls_left);
        self.calls_left -= n;
        self.in_burst = n;
        Some((n, j))
    }

    /// A call of the burst was answered on a connection that speaks HTTP/2 (`h2`),
    /// where the server may have said it closes (`closing`).
    pub(super) fn on_reply(&mut self, h2: bool, closing: bool, num_calls: u64) -> AfterReply {
        self.in_burst = self.in_burst.saturating_sub(1);
        if h2 && self.calls_left > 0 && !closing {
            let j = num_calls.saturating_sub(self.calls_left);
            self.calls_left -= 1;
            self.in_burst += 1;
            return AfterReply::Replace(j);
        }
        if self.in_burst == 0 && !closing {
            AfterReply::NextBurst
        } else {
            AfterReply::Wait
        }
    }
}

impl Engine<'_> {
    /// Arrival of the request-oriented workload: one new connection for global arrival
    /// `arrival`, whose request already failed to connect `retries` times. A connection
    /// of a budget group carries the one call its unit took from the budget.
    pub(super) fn start_request_conn(&mut self, now: Instant, arrival: u64, retries: u8) {
        let budget = self.closed_budget(arrival);
        let owner = Owner::Request {
            calls_left: if budget {
                1
            } else {
                self.cfg.load().num_calls()
            },
            in_burst: 0,
            arrival,
            retries,
        };
        let id = self.open_conn(now, owner);
        if let Some(id) = id.filter(|_| self.ab_recording()) {
            self.ab_watch(id);
        }
    }

    pub(super) fn request_on_connected(&mut self, id: ConnId, now: Instant) {
        self.request_next_burst(id, now);
    }

    /// Issues the next burst on `id`, or closes it when all calls are done.
    fn request_next_burst(&mut self, id: ConnId, now: Instant) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let Owner::Request {
            mut calls_left,
            arrival,
            retries,
            ..
        } = conn.owner
        else {
            return;
        };
        let (closing, target) = (conn.closing, conn.target);
        if calls_left == 0 && !closing && self.closed_reserve(self.group_of(arrival)) {
            calls_left = 1;
        }
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let mut plan = CallPlan {
            calls_left,
            in_burst: 0,
        };
        let num_calls = self.cfg.load().num_calls();
        let next = plan.next_burst(self.cfg.load().burst_length(), closing, num_calls);
        conn.owner = Owner::Request {
            calls_left: plan.calls_left,
            in_burst: plan.in_burst,
            arrival,
            retries,
        };
        let Some((n, j)) = next else {
            self.to_close.push(id);
            return;
        };
        // Call j of arrival k is call k × num_calls + j of the whole run: the URI it
        // gets does not depend on how arrivals are striped over engines.
        let first = arrival * num_calls + j;
        for j in 0..n {
            let Some(what) = self.next_call_ref_to(now, first + j, target) else {
                break;
            };
            self.issue(id, what, None, 0, now);
        }
    }

    pub(super) fn request_on_completion(&mut self, c: &Completion, now: Instant) {
        if self.ab_recording() {
            self.ab_completed(c, now);
        }
        let Some(conn) = self.table.get_mut(c.conn) else {
            return;
        };
        let Owner::Request {
            calls_left,
            in_burst,
            arrival,
            retries,
        } = conn.owner
        else {
            return;
        };
        let mut plan = CallPlan {
            calls_left,
            in_burst,
        };
        let num_calls = self.cfg.load().num_calls();
        let after = plan.on_reply(conn.is_mux(), conn.closing, num_calls);
        conn.owner = Owner::Request {
            calls_left: plan.calls_left,
            in_burst: plan.in_burst,
            arrival,
            retries,
        };
        match after {
            AfterReply::Replace(j) => {
                // HTTP/2: the answered call's stream goes to the next call.
                let target = conn.target;
                if let Some(what) = self.next_call_ref_to(now, arrival * num_calls + j, target) {
                    self.issue(c.conn, what, None, 0, now);
                }
            }
            AfterReply::NextBurst => self.request_next_burst(c.conn, now),
            AfterReply::Wait => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls a connection of `num_calls` calls in bursts of `burst` issues, as
    /// (j, calls in flight once issued), answering the oldest call in flight each
    /// time, until it closes; `h2`: an HTTP/2 window.
    fn life(num_calls: u64, burst: u64, h2: bool) -> Vec<(u64, u64)> {
        let mut plan = CallPlan {
            calls_left: num_calls,
            in_burst: 0,
        };
        let mut issued = Vec::new();
        let mut in_flight = 0;
        let Some((n, j)) = plan.next_burst(burst, false, num_calls) else {
            return issued;
        };
        for k in 0..n {
            in_flight += 1;
            issued.push((j + k, in_flight));
        }
        while in_flight > 0 {
            in_flight -= 1;
            match plan.on_reply(h2, false, num_calls) {
                AfterReply::Replace(j) => {
                    in_flight += 1;
                    issued.push((j, in_flight));
                }
                AfterReply::NextBurst => match plan.next_burst(burst, false, num_calls) {
                    Some((n, j)) => {
                        for k in 0..n {
                            in_flight += 1;
                            issued.push((j + k, in_flight));
                        }
                    }
                    None => assert_eq!(plan.in_burst, 0),
                },
                AfterReply::Wait => assert!(in_flight > 0),
            }
            assert_eq!(plan.in_burst, in_flight);
        }
        issued
    }

    #[test]
    fn one_call_per_connection_by_default() {
        assert_eq!(life(1, 1, false), [(0, 1)]);
    }

    #[test]
    fn keep_alive_calls_go_one_after_another() {
        let want: Vec<(u64, u64)> = (0..5).map(|j| (j, 1)).collect();
        assert_eq!(life(5, 1, false), want);
    }

    #[test]
    fn pipelined_bursts_start_when_the_previous_one_is_answered() {
        // 10 calls in bursts of 3: 3, 3, 3, then a short burst of 1.
        let got = life(10, 3, false);
        let want = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 1),
            (4, 2),
            (5, 3),
            (6, 1),
            (7, 2),
            (8, 3),
            (9, 1),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn over_http2_the_burst_is_a_window_of_streams_in_flight() {
        // 10 calls, 4 streams: each answer opens the next at once, 4 in flight until
        // the calls run out.
        let got = life(10, 4, true);
        let want: Vec<(u64, u64)> = (0..4)
            .map(|j| (j, j + 1))
            .chain((4..10).map(|j| (j, 4)))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_server_that_closes_ends_the_calls() {
        let mut plan = CallPlan {
            calls_left: 10,
            in_burst: 0,
        };
        assert_eq!(plan.next_burst(2, false, 10), Some((2, 0)));
        // `Connection: close` on the first reply: no next burst, and no replacement
        // stream after a GOAWAY.
        assert_eq!(plan.on_reply(false, true, 10), AfterReply::Wait);
        assert_eq!(plan.on_reply(false, true, 10), AfterReply::Wait);
        assert_eq!(plan.next_burst(2, true, 10), None);
        let mut h2 = CallPlan {
            calls_left: 5,
            in_burst: 3,
        };
        assert_eq!(h2.on_reply(true, true, 8), AfterReply::Wait);
        assert_eq!(h2.calls_left, 5);
        // A burst length of 0 counts as 1.
        let mut zero = CallPlan {
            calls_left: 3,
            in_burst: 0,
        };
        assert_eq!(zero.next_burst(0, false, 3), Some((1, 0)));
    }
}
