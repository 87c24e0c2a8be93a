//! The request-oriented workload (httperf's `conn_rate` + `call_seq`): each arrival
//! opens a connection that makes `--num-calls` calls in pipelined bursts of
//! `--burst-length`; the next burst starts when every call of the current one has its
//! reply; the client closes after the last. A final short burst completes normally.
//! Over HTTP/2 the burst is a window instead: `--burst-length` streams stay in flight,
//! each answered call replaced by the next at once (h2load's `-m`).

use std::time::Instant;

use super::Engine;
use crate::conn::{Completion, Owner};
use crate::table::ConnId;

impl Engine<'_> {
    /// Arrival of the request-oriented workload: one new connection.
    pub(super) fn start_request_conn(&mut self, now: Instant) {
        let owner = Owner::Request {
            calls_left: self.cfg.num_calls,
            in_burst: 0,
            arrival: self.arrival_index(),
        };
        self.open_conn(now, owner);
    }

    pub(super) fn request_on_connected(&mut self, id: ConnId, now: Instant) {
        self.request_next_burst(id, now);
    }

    /// Issues the next burst on `id`, or closes it when all calls are done.
    fn request_next_burst(&mut self, id: ConnId, now: Instant) {
        let burst = self.cfg.burst_length.max(1);
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let Owner::Request { calls_left, .. } = conn.owner else {
            return;
        };
        if calls_left == 0 || conn.closing {
            self.to_close.push(id);
            return;
        }
        let n = calls_left.min(burst);
        self.request_issue(id, n, now);
    }

    /// Issues the next `n` calls of connection `id` (n ≤ calls left) and counts them
    /// in the burst.
    fn request_issue(&mut self, id: ConnId, n: u64, now: Instant) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let Owner::Request {
            calls_left,
            in_burst,
            arrival,
        } = conn.owner
        else {
            return;
        };
        conn.owner = Owner::Request {
            calls_left: calls_left - n,
            in_burst: in_burst + n,
            arrival,
        };
        // Call j of arrival k is call k × num_calls + j of the whole run: the URI it
        // gets does not depend on how arrivals are striped over engines.
        let first = arrival * self.cfg.num_calls + (self.cfg.num_calls - calls_left);
        for j in 0..n {
            let Some(what) = self.next_call_ref(now, first + j) else {
                break;
            };
            self.issue(id, what, None, 0, now);
        }
    }

    pub(super) fn request_on_completion(&mut self, c: &Completion, now: Instant) {
        let Some(conn) = self.table.get_mut(c.conn) else {
            return;
        };
        let Owner::Request {
            calls_left,
            in_burst,
            arrival,
        } = conn.owner
        else {
            return;
        };
        let in_burst = in_burst.saturating_sub(1);
        conn.owner = Owner::Request {
            calls_left,
            in_burst,
            arrival,
        };
        if conn.is_h2() && calls_left > 0 && !conn.closing {
            self.request_issue(c.conn, 1, now);
        } else if in_burst == 0 && !conn.closing {
            self.request_next_burst(c.conn, now);
        }
    }
}
