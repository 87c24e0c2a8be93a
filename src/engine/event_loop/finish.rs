//! Closing a connection: its end (successful or failed) and lifetime counted, its
//! watchdog cancelled, its `--hog` port released, its socket closed and slot freed,
//! its unanswered calls aborted, and its owner (request, pool, session, closed loop)
//! told; and at the end of the run, the connections still open abandoned.
//!
//! Called by `events`, `issue` (`flush`) and `watchdog`; `abandon_open` by `run`.

use std::time::Instant;

use crate::engine::conn::{Owner, Phase};
use crate::model::stats::{us, ErrorKind};
use crate::wire::table::ConnId;

use super::Engine;

impl<'c> Engine<'c> {
    /// Ends connection `id`: counts the failure (if any) and its lifetime (if it had a
    /// reply), closes the socket, frees the slot, tells its owner.
    pub(super) fn finish(&mut self, id: ConnId, fail: Option<ErrorKind>, now: Instant) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        if let Some((_, t)) = conn.armed.take() {
            self.wheel.cancel(t);
        }
        if conn.tls_error.is_some() {
            self.report_tls_error(id);
        }
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        if let Some(kind) = fail {
            self.stats.on_error(kind);
            if let Some(srv) = self.stats.servers.get_mut(conn.target) {
                srv.errors[kind.index()] += 1;
            }
            if self.cfg.output().debug() > 0 {
                crate::wire::note::note!("rshperf: connection {} failed: {kind:?}", id.index());
            }
        }
        self.stats.ends_mut().on_end(fail.is_some(), conn.replies);
        if conn.replies > 0 {
            self.stats
                .on_lifetime(now.saturating_duration_since(conn.started));
        }
        if let Some(key) = conn.port_key.take() {
            // This client closes it: after the handshake, without a reset, its port
            // stays in TIME_WAIT.
            let time_wait = conn.phase != Phase::Connecting && !self.opts.reset_on_close;
            self.portuse.closed(key, time_wait, now);
        }
        if let Some((pool, port)) = conn.port.take() {
            if let Some(ports) = self.ports.get_mut(pool) {
                ports.release(port);
            }
        }
        if fail.is_none() {
            conn.close_tls();
        }
        conn.end_stream(now, false, &mut self.stats);
        conn.close_h3(now, &mut self.stats);
        // Closing the descriptor also removes it from the epoll set.
        conn.stream = None;
        let owner = conn.owner;
        let replies = conn.replies;
        let mut leftovers = std::mem::take(&mut self.leftovers);
        leftovers.extend(conn.drain_calls());
        if let Some(log) = self.log.as_mut() {
            log.unanswered(
                conn,
                &leftovers,
                fail,
                self.stop.is_some(),
                now,
                self.replay.as_ref(),
            );
        }
        conn.release(&mut self.bufs);
        if let Some(o) = self.observer.as_deref_mut() {
            for c in &leftovers {
                o.abort(c.id);
            }
        }
        self.table.free(id);
        self.dirty.retain(|d| *d != id);
        self.conn_gone();
        self.leftovers = leftovers;
        self.on_closed(owner, Some(id), fail, replies, now);
        self.leftovers.clear();
    }

    /// At the end of the run (`end`): every connection still open is abandoned —
    /// counted in `abandoned`, neither successful nor failed. One with a reply gets
    /// its lifetime up to the end, so that httperf's figures (Connection time,
    /// Connection length) count every reply's connection, as they do in httperf,
    /// whose run ends only once every connection is closed. Its unanswered calls are
    /// counted with how long they had waited (from their scheduled or issue time) —
    /// not a call whose reply had begun (a stream or slow body under way: HTTP/1.x's
    /// call in flight after its status line, every HTTP/2 or HTTP/3 stream after its
    /// final status); on a `--call-rate` pool connection they are the pool's abandoned
    /// calls. Each is logged as `abandoned`. The sockets close when the engine is
    /// dropped.
    pub(super) fn abandon_open(&mut self, end: Instant) {
        for id in self.table.ids() {
            let Some(conn) = self.table.get_mut(id) else {
                continue;
            };
            let stats = &mut self.stats;
            stats.abandoned += 1;
            if conn.replies > 0 {
                stats.on_lifetime(end.saturating_duration_since(conn.started));
            }
            let pool = matches!(conn.owner, Owner::Pool { .. });
            // A reply under way (a long stream, a slow body) is not unanswered.
            let first_begun = conn.reply_begun();
            let calls: Vec<_> = conn.drain_calls().collect();
            for (i, call) in calls.iter().enumerate() {
                let waited = end.saturating_duration_since(call.due);
                if !(call.begun || (i == 0 && first_begun)) {
                    stats.ends_mut().on_unanswered(us(waited));
                }
                if pool {
                    stats.pool.on_abandoned(waited);
                }
            }
            if let Some(log) = self.log.as_mut() {
                log.unanswered(conn, &calls, None, true, end, self.replay.as_ref());
            }
        }
    }

    /// Tells a connection's owner it is gone (`self.leftovers` holds its unanswered
    /// calls).
    pub(super) fn on_closed(
        &mut self,
        owner: Owner,
        id: Option<ConnId>,
        fail: Option<ErrorKind>,
        replies: u64,
        now: Instant,
    ) {
        match owner {
            Owner::Request { .. } if self.closed.is_some() => {
                self.closed_request_end(owner, fail, now)
            }
            Owner::Request { .. } => self.on_unit_done(now),
            Owner::Pool { slot } => self.pool_on_closed(slot, fail, replies, now),
            Owner::Session { sess, slot } => {
                self.session_on_conn_closed(sess, slot, id, fail, replies, now)
            }
            Owner::Orphan => {}
        }
    }
}
