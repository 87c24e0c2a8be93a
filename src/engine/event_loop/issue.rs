//! Sending: a call rendered into its connection's send queue (`issue`), the
//! connection marked dirty, and the dirty connections written at the end of the
//! handler (`flush`), which also closes the ones the workload finished with.
//!
//! Request bytes come from the workload's `Requests` (a replay's: the engine's own,
//! `replay`), as HTTP/1.x text or HTTP/2 frames; `--print-request` sees a copy. HTTP/2 writes may be held to the end of
//! the poll turn (`h2flush`). Called by the workload halves and `events`.

use std::io::{self, Write};
use std::time::Instant;

use crate::engine::conn::Step;
use crate::model::call::{Call, CallRef};
use crate::wire::table::ConnId;

use super::{page, Engine};

impl<'c> Engine<'c> {
    /// Queues call `what` on connection `id` (bytes rendered into its send buffer).
    pub(super) fn issue(
        &mut self,
        id: ConnId,
        what: CallRef,
        cookie: Option<&[u8]>,
        retries: u8,
        now: Instant,
    ) {
        self.issue_at(id, what, cookie, retries, now, now);
    }

    /// `issue` of a call due at `due` (a `--call-rate` call's scheduled time).
    pub(super) fn issue_at(
        &mut self,
        id: ConnId,
        what: CallRef,
        cookie: Option<&[u8]>,
        retries: u8,
        now: Instant,
        due: Instant,
    ) {
        // Call ids are unique over all engines: this engine's n-th call is
        // stripe + n × stripes.
        let call_id = self.next_call_id;
        self.next_call_id += u64::from(self.plan.stripes.max(1));
        let timeout = self.timeout;
        // A replay's calls are templates of the engine's own requests.
        let requests = match &self.replay {
            Some(r) => &r.requests,
            None => &self.work.requests,
        };
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        conn.lend(&mut self.bufs);
        let host = self
            .work
            .targets
            .get(conn.target)
            .map_or("", |t| t.host.as_str());
        let printing = self.observer.is_some();
        let (len, head_len, printed) = if conn.is_mux() {
            // (`--wsesspage` is refused with HTTP/2: `ConfigBuilder::build` refuses it.)
            let (len, header) = conn.stage_h2(requests, what, host, cookie);
            let mut text = Vec::new();
            let h = if printing {
                // The request as header lines, pseudo-headers first.
                requests.render_h2_text(what, host, cookie, &mut text)
            } else {
                0
            };
            (len, header, printing.then_some((text, h)))
        } else {
            let page_uri = page::call_uri(&mut self.sessions, conn.owner, what);
            let q = conn.send_queue();
            let (len, header) = match page_uri {
                Some(uri) => requests.render_uri(uri.as_bytes(), host, cookie, q),
                None => requests.render(what, host, cookie, q),
            };
            // `--print-request` sees the bytes as sent; the send queue may hold the
            // body by reference, so printing renders a copy (not the hot path).
            let printed = printing.then(|| {
                let mut text = Vec::new();
                match page_uri {
                    Some(uri) => requests.render_uri(uri.as_bytes(), host, cookie, &mut text),
                    None => requests.render(what, host, cookie, &mut text),
                };
                (text, header)
            });
            (len, header, printed)
        };
        if self.cfg.output().verbose() > 0 && self.cfg.output().json() != Some("-") {
            if let CallRef::Uri(i) = what {
                let uri = self
                    .work
                    .requests
                    .uris
                    .get(i as usize)
                    .map_or("", String::as_str);
                let _ = writeln!(io::stdout().lock(), "rshperf: accessing URI `{uri}'");
            }
        }
        if let (Some(p), Some((text, h))) = (self.observer.as_deref_mut(), printed) {
            p.request(call_id, &text, h);
        }
        let call = Call {
            id: call_id,
            what,
            len,
            head_len,
            head: requests.is_head(what),
            send_start: now,
            written: None,
            due,
            retries,
            stream: 0,
            sent: 0,
            begun: false,
        };
        conn.queue(call, now, timeout);
        self.mark_dirty(id);
    }

    pub(super) fn mark_dirty(&mut self, id: ConnId) {
        if !self.dirty.contains(&id) {
            self.dirty.push(id);
        }
    }

    /// Writes what was queued on dirty connections and closes the ones the workload
    /// finished with.
    pub(super) fn flush(&mut self) {
        loop {
            let now = Instant::now();
            if let Some(id) = self.to_close.pop() {
                self.finish(id, None, now);
                continue;
            }
            let Some(id) = self.dirty.pop() else { break };
            if self.table.get_mut(id).is_some_and(|c| c.is_mux()) && self.h2.held(id) {
                continue;
            }
            let (table, mut ctx, buf) = self.ctx();
            let Some(conn) = table.get_mut(id) else {
                continue;
            };
            let step = if conn.wants_write() {
                conn.write_keeping_closing_reply(now, buf, &mut ctx)
            } else {
                Step::Continue
            };
            self.after_step(id, step, now);
        }
    }
}
