//! The per-request log's records (`--request-log`): a call answered (`log_reply`),
//! given up with its connection or still open when the run ended
//! (`Logger::unanswered`, by `finish` and `abandon_open`), and the last records handed
//! to the writer (`flush_log`). What a record holds is `model::reqlog`; the batches
//! and the writer's feed are `engine::reqlog`. Called by `events`, `finish` and `run`;
//! the unsent `--call-rate` calls, and a replay's calls lost while waiting for their
//! client's connection, are logged by `pool`.

use std::time::Instant;

use crate::engine::conn::{Completion, Conn, Phase};
use crate::engine::reqlog::Logger;
use crate::model::call::{Call, CallRef};
use crate::model::reqlog::{End, Record};
use crate::model::stats::ErrorKind;

use super::replay::ReplayCalls;
use super::Engine;

/// How a record names the request `what`: by reference, resolved by the writer, or
/// a replayed call by its URI (the writer's `Requests` do not hold the engine's
/// templates).
fn named(what: CallRef, replay: Option<&ReplayCalls>) -> (Option<CallRef>, String) {
    match replay {
        Some(r) => (None, r.uri(what)),
        None => (Some(what), String::new()),
    }
}

impl Logger<'_> {
    /// A record of `call` on `conn` ending at `end` (times that never came empty).
    fn record(
        &self,
        conn: &Conn,
        call: &Call,
        end: Instant,
        replay: Option<&ReplayCalls>,
    ) -> Record {
        let began = call.written.is_some() || call.sent > 0;
        let (what, uri) = named(call.what, replay);
        Record {
            id: call.id,
            conn: conn.serial,
            stream: (call.stream > 0).then_some(u64::from(call.stream)),
            server: conn.target as u64,
            what,
            uri,
            scheduled_us: match conn.owner {
                crate::engine::conn::Owner::Pool { .. } => Some(self.us(call.due)),
                _ => conn.scheduled.map(|t| self.us(t)),
            },
            connect_us: Some(self.us(conn.started)),
            connected_us: (conn.phase == Phase::Active).then(|| self.us(conn.connected)),
            send_us: began.then(|| self.us(call.send_start)),
            written_us: call.written.map(|t| self.us(t)),
            first_byte_us: None,
            end_us: self.us(end),
            status: None,
            bytes_out: u64::from(call.sent),
            bytes_in: 0,
            content_bytes: 0,
            end: End::Reply,
        }
    }

    /// Logs `calls`, given up unanswered by connection `conn` (drained) when it
    /// closed at `now` after `fail` (None: it closed cleanly, or, `over`, the run
    /// ended).
    pub(super) fn unanswered(
        &mut self,
        conn: &Conn,
        calls: &[Call],
        fail: Option<ErrorKind>,
        over: bool,
        now: Instant,
        replay: Option<&ReplayCalls>,
    ) {
        let end = match fail {
            Some(kind) => End::Failed(kind),
            None if over => End::Abandoned,
            None => End::Closed,
        };
        for call in calls {
            let mut r = self.record(conn, call, now, replay);
            r.end = end;
            self.push(r);
        }
    }

    /// A `--call-rate` call due at `due` that never found a connection before `end`.
    pub(super) fn unsent(
        &mut self,
        id: u64,
        what: CallRef,
        due: Instant,
        end: Instant,
        replay: Option<&ReplayCalls>,
    ) {
        self.never_sent(id, what, (due, end), End::Unsent, replay);
    }

    /// A replayed call due at `due`, waiting for its client's connection when that
    /// connection failed (`kind`) at `end`: lost with it, never sent.
    pub(super) fn lost_waiting(
        &mut self,
        id: u64,
        what: CallRef,
        (due, end): (Instant, Instant),
        kind: ErrorKind,
        replay: Option<&ReplayCalls>,
    ) {
        self.never_sent(id, what, (due, end), End::Failed(kind), replay);
    }

    /// A call due at `due` that ended (`how`) at `end` without being sent.
    fn never_sent(
        &mut self,
        id: u64,
        what: CallRef,
        (due, end): (Instant, Instant),
        how: End,
        replay: Option<&ReplayCalls>,
    ) {
        let (what, uri) = named(what, replay);
        let r = Record {
            id,
            what,
            uri,
            scheduled_us: Some(self.us(due)),
            end_us: self.us(end),
            end: how,
            ..Record::default()
        };
        self.push(r);
    }
}

impl Engine<'_> {
    /// Logs the answered (or, status 0, reset) call `c`; its connection is still in
    /// the table.
    pub(super) fn log_reply(&mut self, c: &Completion, now: Instant) {
        let Some(log) = self.log.as_mut() else {
            return;
        };
        let Some(conn) = self.table.get_mut(c.conn) else {
            return;
        };
        let mut r = log.record(conn, &c.call, now, self.replay.as_ref());
        r.send_us = Some(log.us(c.call.send_start));
        r.bytes_out = c.call.len as u64;
        if c.status == 0 {
            r.end = End::Failed(ErrorKind::Other);
        } else {
            let p = &c.reply;
            r.first_byte_us = Some(log.us(c.first_byte));
            r.status = Some(u64::from(c.status));
            r.bytes_in = p.header_bytes + p.content_bytes + p.footer_bytes;
            r.content_bytes = p.content_bytes;
        }
        log.push(r);
    }

    /// At the end of the run, once the calls of the connections still open are logged
    /// (`abandon_open`): hands the last records to the writer.
    pub(super) fn flush_log(&mut self) {
        if let Some(log) = self.log.as_mut() {
            log.flush();
        }
    }
}
