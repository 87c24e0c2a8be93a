//! Readiness of one connection: connect and handshake completion, writes, reads,
//! then the completed calls handed to their workload and the step's consequence
//! (re-arm the watchdog, close, fail).
//!
//! Owns `on_event` (one poll event), `process_completions`, `after_step`,
//! `on_connected` and the borrow split `ctx` the connection needs. The connection
//! machine is `conn::Conn`; closing is `finish`. Called by `run` and `flush`.

use std::time::Instant;

use crate::engine::conn::{Conn, Ctx, Owner, Phase, ReplyObserver, Step};
use crate::model::stats::ErrorKind;
use crate::wire::table::{ConnId, Table};

use super::{Engine, Ready};

impl<'c> Engine<'c> {
    pub(super) fn ctx(&mut self) -> (&mut Table<Conn>, Ctx<'_>, &mut [u8]) {
        let ctx = Ctx {
            stats: &mut self.stats,
            timeout: self.timeout,
            reply_timeout: self.reply_timeout,
            debug: self.cfg.output().debug(),
            completions: &mut self.completions,
            observer: self
                .observer
                .as_deref_mut()
                .map(|o| o as &mut dyn ReplyObserver),
            stream: self.stream,
        };
        (&mut self.table, ctx, &mut self.buf)
    }

    pub(super) fn on_event(&mut self, id: ConnId, ready: Ready) {
        let now = Instant::now();
        let (table, mut ctx, buf) = self.ctx();
        let Some(conn) = table.get_mut(id) else {
            return;
        };
        let mut step = Step::Continue;
        if conn.phase != Phase::Active {
            let result = match conn.phase {
                // Only an error or hang-up needs SO_ERROR to tell a refused connect.
                Phase::Connecting if ready.writable && !ready.closed => {
                    conn.on_connect_clean(now, &mut ctx)
                }
                Phase::Connecting if ready.writable => conn.on_connect_ready(now, &mut ctx),
                Phase::Handshaking => conn.on_handshake_ready(now, &mut ctx),
                _ => return,
            };
            match result {
                Ok(true) => {
                    // Queue the first calls, then handle the rest of this event: data
                    // or a FIN may have arrived with the connect completion, and an
                    // edge-triggered poll will not report them again.
                    self.on_connected(id, now);
                    self.flush();
                    let (table, mut ctx, buf) = self.ctx();
                    let Some(conn) = table.get_mut(id) else {
                        return;
                    };
                    if ready.readable {
                        step = conn.on_readable(now, buf, ready.closed, &mut ctx);
                    }
                }
                Ok(false) => return,
                Err(kind) => {
                    self.report_tls_error(id);
                    step = Step::Fail(kind);
                }
            }
        } else {
            // A peer that answered and closed (FIN, or RST for a request it did not
            // read) while a request was still being written: what it sent before
            // closing is read first, so its reply counts (a closing reply ends the
            // connection normally) before a write fails on the closed socket.
            let read_first = ready.closed && ready.readable && !conn.is_mux();
            if read_first {
                step = conn.on_readable(now, buf, true, &mut ctx);
            }
            if step == Step::Continue && ready.writable && conn.wants_write() {
                // The close may have come after the poll.
                step = conn.write_keeping_closing_reply(now, buf, &mut ctx);
            }
            if step == Step::Continue && ready.readable && !read_first {
                step = conn.on_readable(now, buf, ready.closed, &mut ctx);
            }
        }
        let replied = !self.completions.is_empty();
        self.process_completions(now);
        self.after_step(id, step, now);
        if replied {
            // A connection left idle by its last reply (a session's think time)
            // holds no buffers.
            if let Some(c) = self.table.get_mut(id) {
                c.park(&mut self.bufs);
            }
        }
        if self.pool_has_waiting() {
            // A connection may have room now (an HTTP/2 server's SETTINGS, a reply).
            self.pool_dispatch(now);
        }
        // HTTP/2 answers to what was read (acks, window updates) wait for the
        // connection's one write of this turn (`h2flush`).
        if self
            .table
            .get_mut(id)
            .is_some_and(|c| c.is_mux() && c.wants_write())
        {
            self.mark_dirty(id);
        }
        self.flush();
    }

    /// Hands completed calls to their workload.
    pub(super) fn process_completions(&mut self, now: Instant) {
        while !self.completions.is_empty() {
            let batch = std::mem::take(&mut self.completions);
            for c in &batch {
                self.log_reply(c, now);
                self.nap
                    .on_response(c.first_byte.saturating_duration_since(c.call.send_start));
                let owner = self.table.get_mut(c.conn).map(|conn| conn.owner);
                match owner {
                    Some(Owner::Request { .. }) => self.request_on_completion(c, now),
                    Some(Owner::Pool { slot }) => self.pool_on_completion(c, slot, now),
                    Some(Owner::Session { sess, slot }) => {
                        self.session_on_completion(c, sess, slot, now)
                    }
                    Some(Owner::Orphan) | None => {}
                }
            }
            let mut batch = batch;
            batch.clear();
            if self.completions.is_empty() {
                self.completions = batch;
            }
        }
    }

    pub(super) fn after_step(&mut self, id: ConnId, step: Step, now: Instant) {
        match step {
            Step::Continue => self.arm_watchdog(id),
            Step::Close => {
                let fail = self.table.get_mut(id).and_then(|c| unused_pool(c));
                self.finish(id, fail, now)
            }
            Step::PeerClosed => {
                let fail = self.table.get_mut(id).and_then(|c| {
                    (c.outstanding() > 0)
                        .then_some(ErrorKind::ConnReset)
                        .or(unused_pool(c))
                });
                self.finish(id, fail, now);
            }
            Step::Fail(kind) => self.finish(id, Some(kind), now),
        }
    }

    /// A connection became established: the workload may send.
    pub(super) fn on_connected(&mut self, id: ConnId, now: Instant) {
        let owner = self.table.get_mut(id).map(|c| c.owner);
        match owner {
            Some(Owner::Request { .. }) => self.request_on_connected(id, now),
            Some(Owner::Pool { slot }) => self.pool_on_connected(slot, now),
            Some(Owner::Session { sess, .. }) => self.session_on_connected(id, sess),
            _ => {}
        }
        self.mark_dirty(id);
    }
}

/// A `--call-rate` pool connection the server closed before its first reply (with or
/// without a call on it: it exists to carry calls) has failed, as httperf counts a
/// close before the reply of the call a connection was opened for: `connreset`. Its
/// slot then backs off before the next connection (`dispatch::backoff`), so a server
/// that closes every new connection gets a bounded number of them (a replay's
/// connection per client or per request: its client's waiting calls are lost).
fn unused_pool(c: &Conn) -> Option<ErrorKind> {
    (matches!(c.owner, Owner::Pool { .. }) && c.replies == 0).then_some(ErrorKind::ConnReset)
}
