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

use std::time::Instant;

use super::Engine;
use crate::engine::conn::{Completion, Owner};
use crate::wire::table::ConnId;

impl Engine<'_> {
    /// Arrival of the request-oriented workload: one new connection for global arrival
    /// `arrival`, whose request already failed to connect `retries` times. A connection
    /// of a budget group carries the one call its unit took from the budget.
    pub(super) fn start_request_conn(&mut self, now: Instant, arrival: u64, retries: u8) {
        let budget = self.closed_budget(arrival);
        let owner = Owner::Request {
            calls_left: if budget { 1 } else { self.cfg.load.num_calls },
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
        let burst = self.cfg.load.burst_length.max(1);
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
        if calls_left == 0 || closing {
            conn.owner = Owner::Request {
                calls_left,
                in_burst: 0,
                arrival,
                retries,
            };
            self.to_close.push(id);
            return;
        }
        let n = calls_left.min(burst);
        conn.owner = Owner::Request {
            calls_left: calls_left - n,
            in_burst: n,
            arrival,
            retries,
        };
        // Call j of arrival k is call k × num_calls + j of the whole run: the URI it
        // gets does not depend on how arrivals are striped over engines.
        let num_calls = self.cfg.load.num_calls;
        let first = arrival * num_calls + num_calls.saturating_sub(calls_left);
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
        let in_burst = in_burst.saturating_sub(1);
        if conn.is_h2() && calls_left > 0 && !conn.closing {
            // HTTP/2: the answered call's stream goes to the next call.
            conn.owner = Owner::Request {
                calls_left: calls_left - 1,
                in_burst: in_burst + 1,
                arrival,
                retries,
            };
            let (num_calls, target) = (self.cfg.load.num_calls, conn.target);
            let index = arrival * num_calls + num_calls.saturating_sub(calls_left);
            if let Some(what) = self.next_call_ref_to(now, index, target) {
                self.issue(c.conn, what, None, 0, now);
            }
            return;
        }
        conn.owner = Owner::Request {
            calls_left,
            in_burst,
            arrival,
            retries,
        };
        if in_burst == 0 && !conn.closing {
            self.request_next_burst(c.conn, now);
        }
    }
}
