//! Session workloads (`--wsess`, `--wsesslog`, `--wsesspage`): sessions arrive at
//! `--rate`, each issuing bursts of calls (the first call of a burst alone, the rest
//! together once it is answered) with think times between bursts, over up to
//! `--max-connections` connections with up to `--max-piped-calls` calls each
//! (docs/compatibility.md §4.6). For `--wsesspage` a burst is a page view whose calls
//! `engine::event_loop::page` finds in the replies.
//!
//! Fixes over httperf: calls that find no connection with room wait instead of
//! aborting; a burst that ends mid-flight never double-frees; a connection that fails
//! after a reply is replaced and its unanswered calls re-sent; `Connection: close`
//! moves the remaining calls to a new connection; `--retry-on-failure` is bounded
//! (`MAX_RETRIES` per call and per session for failed connections).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::page::PageView;
use super::{Engine, Timer};
use crate::engine::conn::{Completion, Owner};
use crate::model::call::CallRef;
use crate::model::stats::ErrorKind;
use crate::model::workload::Kind;
use crate::wire::http::cookie::CookieScan;
use crate::wire::table::ConnId;
use crate::wire::timer::TimerId;
use crate::wire::tls::SessionCache;

/// Most connections of one session (httperf's limit; larger values are refused when the
/// options are checked).
const MAX_CONNS: usize = crate::model::config::SESSION_MAX_CONNS as usize;
/// Retries of one call after `--failure-status`, and replacements of connections that
/// failed before any reply, per session, under `--retry-on-failure`.
pub(crate) const MAX_RETRIES: u8 = 8;

/// One user session.
#[derive(Debug, Default)]
pub(crate) struct Session {
    started: Option<Instant>,
    /// Global arrival number of the session.
    arrival: u64,
    /// `--wsesslog` template used.
    template: usize,
    /// Index of the current burst.
    burst: usize,
    /// Calls issued so far (`--wsess`).
    issued: u64,
    /// Calls of the current burst not yet answered.
    pub(super) in_burst: u64,
    /// The rest of the current burst is still to be issued.
    rest_pending: bool,
    conns: [Option<ConnId>; MAX_CONNS],
    pending: VecDeque<(CallRef, u8)>,
    cookie: Option<Vec<u8>>,
    connects: u64,
    replies: u64,
    think: Option<TimerId>,
    conn_retries: u8,
    /// TLS session store shared by the session's connections (resumption).
    tls: Option<SessionCache>,
    /// `--wsesspage`: the URIs of the current page view.
    pub(super) page: PageView,
}

impl Session {
    /// The session's TLS store, for a new connection to resume from.
    pub(crate) fn tls_cache(&self) -> Option<SessionCache> {
        self.tls.clone()
    }

    /// The session's global arrival number.
    pub(crate) fn arrival(&self) -> u64 {
        self.arrival
    }
}

impl Engine<'_> {
    fn max_conns(&self) -> usize {
        match self.cfg.load().max_connections() {
            0 => MAX_CONNS,
            n => usize::try_from(n).unwrap_or(MAX_CONNS).min(MAX_CONNS),
        }
    }

    fn max_piped(&self) -> usize {
        if self.http10() {
            return 1;
        }
        match self.cfg.load().max_piped_calls() {
            0 => 32,
            n => usize::try_from(n).unwrap_or(32),
        }
    }

    /// Arrival of a session workload: a new session and its first burst.
    pub(super) fn start_session(&mut self, now: Instant) {
        let work = self.work;
        let templates = match &work.kind {
            Kind::Wsesslog { sessions, .. } => sessions.len().max(1),
            _ => 1,
        };
        let k = self.arrival_index();
        let template = usize::try_from(k).unwrap_or(0) % templates;
        let Some((id, s)) = self.sessions.alloc(Session::default) else {
            return;
        };
        *s = Session {
            started: Some(now),
            arrival: k,
            template,
            tls: work.tls.as_ref().and_then(|t| t.session_cache()),
            ..Session::default()
        };
        self.begin_burst(id, now);
    }

    /// Starts burst `sess.burst`: its first call alone.
    fn begin_burst(&mut self, id: ConnId, now: Instant) {
        let work = self.work;
        let Some(s) = self.sessions.get_mut(id) else {
            return;
        };
        s.think = None;
        let size = match &work.kind {
            Kind::Wsess { calls, burst, .. } => (*calls - s.issued).min((*burst).max(1)),
            Kind::Wsesslog { sessions, .. } => sessions
                .get(s.template)
                .and_then(|t| t.get(s.burst))
                .map_or(0, |b| b.calls.len() as u64),
            // The page alone; `engine::page` adds what its replies embed.
            Kind::Wsesspage { .. } => 1,
            Kind::Request => 0,
        };
        if size == 0 {
            self.end_session(id, true, now);
            return;
        }
        s.in_burst = size;
        s.rest_pending = size > 1;
        if let Some(what) = self.burst_call(id, 0, now) {
            self.assign(id, what, 0, now);
        }
    }

    /// Call `j` of the current burst.
    fn burst_call(&mut self, id: ConnId, j: usize, now: Instant) -> Option<CallRef> {
        let work = self.work;
        match &work.kind {
            Kind::Wsesslog { sessions, .. } => {
                let s = self.sessions.get_mut(id)?;
                sessions
                    .get(s.template)?
                    .get(s.burst)?
                    .calls
                    .get(j)
                    .copied()
            }
            Kind::Wsess { calls, .. } => {
                // Call i of session k is call k × calls + i of the whole run.
                let s = self.sessions.get_mut(id)?;
                let index = s.arrival * calls + s.issued;
                s.issued += 1;
                self.next_call_ref(now, index)
            }
            Kind::Wsesspage { .. } => self.page_first_call(id),
            Kind::Request => None,
        }
    }

    /// Puts a call on the first connection of the session with room (opening one if a
    /// slot is free), or makes it wait.
    pub(super) fn assign(&mut self, id: ConnId, what: CallRef, retries: u8, now: Instant) {
        let (max_conns, max_piped) = (self.max_conns(), self.max_piped());
        for slot in 0..max_conns {
            let Some(s) = self.sessions.get_mut(id) else {
                return;
            };
            match s.conns[slot] {
                Some(cid) => {
                    let room = self
                        .table
                        .get_mut(cid)
                        .is_some_and(|c| !c.closing && c.outstanding() < max_piped);
                    if room {
                        let cookie = s.cookie.clone();
                        self.issue(cid, what, cookie.as_deref(), retries, now);
                        return;
                    }
                }
                None => {
                    let owner = Owner::Session {
                        sess: id,
                        slot: u8::try_from(slot).unwrap_or(0),
                    };
                    let Some(cid) = self.open_conn(now, owner) else {
                        // Failed at once: the session may be gone (see on_conn_closed);
                        // if it survived, this call waits for a later connection.
                        if let Some(s) = self.sessions.get_mut(id) {
                            s.pending.push_back((what, retries));
                        }
                        return;
                    };
                    if self.cfg.sessions().session_cookies() {
                        if let Some(c) = self.table.get_mut(cid) {
                            c.cookie.get_or_insert_with(CookieScan::default);
                        }
                    }
                    self.page_attach(cid);
                    let Some(s) = self.sessions.get_mut(id) else {
                        return;
                    };
                    s.conns[slot] = Some(cid);
                    let cookie = s.cookie.clone();
                    self.issue(cid, what, cookie.as_deref(), retries, now);
                    return;
                }
            }
        }
        if let Some(s) = self.sessions.get_mut(id) {
            s.pending.push_back((what, retries));
        }
    }

    /// Moves waiting calls onto connections with room.
    fn pump(&mut self, id: ConnId, now: Instant) {
        loop {
            let Some(s) = self.sessions.get_mut(id) else {
                return;
            };
            let Some((what, retries)) = s.pending.pop_front() else {
                return;
            };
            let before = s.pending.len();
            self.assign(id, what, retries, now);
            // assign() put it back at the end: no room anywhere right now.
            match self.sessions.get_mut(id) {
                Some(s) if s.pending.len() > before => {
                    if let Some(last) = s.pending.pop_back() {
                        s.pending.push_front(last);
                    }
                    return;
                }
                Some(_) => {}
                None => return,
            }
        }
    }

    pub(super) fn session_on_connected(&mut self, _conn: ConnId, sess: ConnId) {
        if let Some(s) = self.sessions.get_mut(sess) {
            s.connects += 1;
        }
    }

    pub(super) fn session_on_completion(
        &mut self,
        c: &Completion,
        sess: ConnId,
        slot: u8,
        now: Instant,
    ) {
        let http10 = self.http10();
        let Some(conn) = self.table.get_mut(c.conn) else {
            return;
        };
        let cookie = conn.cookie.as_mut().and_then(CookieScan::take);
        let detach = http10 || conn.closing;
        if http10 && conn.outstanding() == 0 {
            // HTTP/1.0: the client closes after every reply.
            self.to_close.push(c.conn);
        }
        let Some(s) = self.sessions.get_mut(sess) else {
            return;
        };
        if detach && s.conns[usize::from(slot)] == Some(c.conn) {
            s.conns[usize::from(slot)] = None;
        }
        s.replies += 1;
        if let Some(cookie) = cookie {
            s.cookie = Some(cookie);
        }
        let failed = self.cfg.sessions().failure_status() != 0
            && u32::from(c.status) == self.cfg.sessions().failure_status();
        if failed {
            if self.cfg.sessions().retry_on_failure() && c.call.retries < MAX_RETRIES {
                self.assign(sess, c.call.what, c.call.retries + 1, now);
                return;
            }
            self.end_session(sess, false, now);
            return;
        }
        self.page_on_reply(c, sess, now);
        self.call_done(sess, now);
        self.pump(sess, now);
    }

    /// A call of the current burst is answered.
    fn call_done(&mut self, id: ConnId, now: Instant) {
        let work = self.work;
        let Some(s) = self.sessions.get_mut(id) else {
            return;
        };
        s.in_burst = s.in_burst.saturating_sub(1);
        if s.rest_pending {
            s.rest_pending = false;
            let rest = s.in_burst;
            for j in 1..=rest {
                let Some(what) = self.burst_call(id, usize::try_from(j).unwrap_or(usize::MAX), now)
                else {
                    break;
                };
                self.assign(id, what, 0, now);
            }
            return;
        }
        if s.in_burst > 0 {
            return;
        }
        let (more, think) = match &work.kind {
            Kind::Wsess { calls, think, .. } => (s.issued < *calls, *think),
            Kind::Wsesslog { sessions, think } => {
                let t = sessions.get(s.template);
                let burst = t.and_then(|t| t.get(s.burst));
                (
                    t.is_some_and(|t| s.burst + 1 < t.len()),
                    burst.and_then(|b| b.think).unwrap_or(*think),
                )
            }
            Kind::Wsesspage { pages, think, .. } => ((s.burst as u64) + 1 < *pages, *think),
            Kind::Request => (false, 0.0),
        };
        if !more {
            self.end_session(id, true, now);
            return;
        }
        s.burst += 1;
        if think <= 0.0 {
            self.begin_burst(id, now);
            return;
        }
        let Some(at) = super::timers::think_until(now, think) else {
            // A think time beyond any clock: the session waits for --runtime or a signal.
            return;
        };
        s.think = self.wheel.schedule(at, Timer::Think(id));
        if s.think.is_none() {
            // The wheel is full (never at the sizes we allocate): do not stall.
            self.begin_burst(id, now);
        }
    }

    pub(super) fn session_on_think(&mut self, id: ConnId, now: Instant) {
        if self.sessions.get_mut(id).is_some_and(|s| s.think.is_some()) {
            self.begin_burst(id, now);
        }
    }

    pub(super) fn session_on_conn_closed(
        &mut self,
        sess: ConnId,
        slot: u8,
        conn: Option<ConnId>,
        fail: Option<ErrorKind>,
        replies: u64,
        now: Instant,
    ) {
        let retry = self.cfg.sessions().retry_on_failure();
        // Taken now: nested closes (a replacement connection failing at once) must
        // not see this connection's calls.
        let left = std::mem::take(&mut self.leftovers);
        let Some(s) = self.sessions.get_mut(sess) else {
            return;
        };
        if conn.is_some() && s.conns[usize::from(slot)] == conn {
            s.conns[usize::from(slot)] = None;
        }
        let fatal = match fail {
            Some(ErrorKind::ClientTimo) => true,
            Some(_) if replies == 0 => {
                s.conn_retries += 1;
                !retry || s.conn_retries > MAX_RETRIES
            }
            _ => false,
        };
        if fatal {
            self.end_session(sess, false, now);
            return;
        }
        // Re-send what the connection left unanswered, in order.
        for c in &left {
            self.assign(sess, c.what, c.retries, now);
        }
        self.pump(sess, now);
        if self.leftovers.capacity() == 0 {
            self.leftovers = left;
            self.leftovers.clear();
        }
    }

    /// Ends a session: statistics, its connections closed, the slot freed.
    fn end_session(&mut self, id: ConnId, ok: bool, now: Instant) {
        let Some(s) = self.sessions.get_mut(id) else {
            return;
        };
        let life = s
            .started
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        self.stats.on_session(ok, life, s.connects, s.replies);
        if let Some(t) = s.think.take() {
            self.wheel.cancel(t);
        }
        let conns = s.conns;
        self.sessions.free(id);
        for cid in conns.into_iter().flatten() {
            if let Some(c) = self.table.get_mut(cid) {
                c.owner = Owner::Orphan;
                self.to_close.push(cid);
            }
        }
        self.on_unit_done(now);
    }
}
