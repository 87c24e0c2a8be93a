//! The closed loop in the engine: units (connections or sessions) started as users
//! become free rather than on a schedule; httperf's sequential mode, `--concurrency`,
//! and `rshperf ab`/`lb` (one group per server, optionally a request budget spent over
//! keep-alive connections).
//!
//! Owns this engine's share of every group (users in flight, units and calls left,
//! connect retries waiting), the choice of the next group, the end condition, and
//! ab's per-request recording: times and sizes into `stats::ab`, failures by ab's
//! classes, the heartbeat, and the per-call observer (`-g`). Part of the engine
//! (`impl Engine`); `on_arrivals` calls `closed_start`, the workload halves report
//! ends through `unit_done` and `closed_request_end`. The description and its split
//! over engines are in `workload::closed`.

use std::time::{Duration, Instant};

use super::Engine;
use crate::engine::conn::{Completion, Owner};
use crate::model::stats::ab::{AbFailure, CallTimes, Completed};
use crate::model::stats::ErrorKind;
use crate::model::workload::closed::{ClosedLoop, GroupShare};
use crate::wire::http::cookie::CookieScan;

/// Sees every completed request of an ab or lb run (the `-g` file); the engine calls
/// it after recording the request in `stats::ab`.
pub(crate) trait CallObserver {
    /// Request of target `target`, started at `start`, completed with `times` and a
    /// reply of `status`.
    fn completed(&mut self, target: usize, start: Instant, times: &CallTimes, status: u16);
}

/// This engine's state of one group.
#[derive(Debug, Clone)]
struct GroupState {
    /// What is left of this engine's share.
    left: GroupShare,
    /// Units in flight.
    live: u64,
    /// Units started by this engine (numbers their arrivals).
    started: u64,
    /// Retry counts of requests waiting to be tried again (lb's `-m`).
    retries: Vec<u8>,
}

impl GroupState {
    fn can_start(&self) -> bool {
        let budget = match self.left.calls {
            Some(calls) => calls > 0,
            None => self.left.units > 0,
        };
        self.live < self.left.users && budget
    }
}

/// This engine's closed loop.
#[derive(Debug, Clone)]
pub(super) struct ClosedState {
    /// The description (front end's or the configuration's).
    desc: ClosedLoop,
    groups: Vec<GroupState>,
    /// Round-robin position over the groups.
    next: usize,
    /// Requests ended (complete or failed), for ab's heartbeat.
    ended: u64,
}

impl ClosedState {
    /// The state of engine `stripe` of `stripes` for `desc`.
    pub(super) fn new(desc: ClosedLoop, stripe: u32, stripes: u32) -> ClosedState {
        ClosedState {
            groups: desc
                .share(stripe, stripes)
                .into_iter()
                .map(|left| GroupState {
                    left,
                    live: 0,
                    started: 0,
                    retries: Vec::new(),
                })
                .collect(),
            next: 0,
            ended: 0,
            desc,
        }
    }

    /// Whether some group may start a unit now.
    pub(super) fn can_start(&self) -> bool {
        self.groups.iter().any(GroupState::can_start)
    }

    /// Whether everything is done: nothing in flight, nothing left to start.
    fn finished(&self) -> bool {
        self.groups.iter().all(|g| g.live == 0) && !self.can_start()
    }
}

/// µs of a duration, saturating.
fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Engine<'_> {
    /// Starts one unit of the next group that may (due since `at`). Returns false when
    /// none may: the caller stops issuing.
    pub(super) fn closed_start(&mut self, now: Instant, at: Instant) -> bool {
        let Some(state) = self.closed.as_mut() else {
            return false;
        };
        let n = state.groups.len();
        let Some(g) = (0..n)
            .map(|i| (state.next + i) % n)
            .find(|&g| state.groups[g].can_start())
        else {
            return false;
        };
        state.next = (g + 1) % n;
        let group = &mut state.groups[g];
        group.live += 1;
        match group.left.calls.as_mut() {
            Some(calls) => *calls -= 1,
            None => group.left.units -= 1,
        }
        let retries = group.retries.pop().unwrap_or(0);
        let k = u64::from(self.plan.stripe) + group.started * u64::from(self.plan.stripes);
        group.started += 1;
        let arrival = state.desc.arrival_of(g, k);
        if state.desc.ab.is_some() {
            let target = self.target_of(arrival);
            let at = us(now.saturating_duration_since(self.t0));
            self.stats.ab.server(target).on_start(at);
        }
        self.pacer.begin();
        self.stats.on_lateness(now.saturating_duration_since(at));
        if self.work.is_session() {
            self.start_session(now);
        } else {
            self.start_request_conn(now, arrival, retries);
        }
        self.flush();
        if self.stop.is_none() && self.closed.as_ref().is_some_and(ClosedState::can_start) {
            self.pacer.insert(at);
        }
        true
    }

    /// A unit of `group` ended: frees its user, starts the next or ends the run.
    pub(super) fn unit_done(&mut self, now: Instant, group: usize) {
        self.done += 1;
        let Some(state) = self.closed.as_mut() else {
            if self.done >= self.plan.arrivals {
                self.stop.get_or_insert(now);
            }
            return;
        };
        if let Some(g) = state.groups.get_mut(group) {
            g.live = g.live.saturating_sub(1);
        }
        if state.finished() {
            self.stop.get_or_insert(now);
        } else if self.stop.is_none() && state.can_start() {
            self.pacer.insert(now);
        }
    }

    /// The group of the unit with global arrival number `arrival`.
    pub(super) fn group_of(&self, arrival: u64) -> usize {
        self.closed.as_ref().map_or(0, |c| c.desc.group_of(arrival))
    }

    /// Whether the unit of global arrival `arrival` spends a request budget (its
    /// connection then makes one call at a time while the budget lasts).
    pub(super) fn closed_budget(&self, arrival: u64) -> bool {
        self.closed
            .as_ref()
            .and_then(|c| c.desc.groups.get(c.desc.group_of(arrival)))
            .is_some_and(|g| g.calls.is_some())
    }

    /// Keep-alive budget: takes one more call for a connection of `group`. False when
    /// the group has no budget (a connection then makes `--num-calls` calls) or it is
    /// spent.
    pub(super) fn closed_reserve(&mut self, group: usize) -> bool {
        let Some(g) = self.closed.as_mut().and_then(|s| s.groups.get_mut(group)) else {
            return false;
        };
        match g.left.calls.as_mut() {
            Some(calls) if *calls > 0 => {
                *calls -= 1;
                true
            }
            _ => false,
        }
    }

    /// Whether ab's per-request figures are recorded.
    pub(super) fn ab_recording(&self) -> bool {
        self.closed.as_ref().is_some_and(|c| c.desc.ab.is_some())
    }

    /// A request-oriented connection of the closed loop ended (`fail`: why it failed)
    /// with `reserved` calls not yet sent and `outstanding` sent but unanswered. Either
    /// queues a connect retry (the unit's budget comes back; lb's `-m`) or counts the
    /// lost calls as ab failures; then ends the unit.
    pub(super) fn closed_request_end(
        &mut self,
        owner: Owner,
        fail: Option<ErrorKind>,
        now: Instant,
    ) {
        let Owner::Request {
            calls_left: reserved,
            in_burst: outstanding,
            arrival,
            retries,
        } = owner
        else {
            return;
        };
        let group = self.group_of(arrival);
        let max_retries = self.closed.as_ref().map_or(0, |c| c.desc.retries);
        let lost = reserved + outstanding;
        match fail {
            Some(_) if outstanding == 0 && reserved > 0 && retries < max_retries => {
                if let Some(g) = self.closed.as_mut().and_then(|s| s.groups.get_mut(group)) {
                    match g.left.calls.as_mut() {
                        Some(calls) => *calls += reserved,
                        None => g.left.units += 1,
                    }
                    g.retries.push(retries + 1);
                }
            }
            Some(kind) if lost > 0 && self.ab_recording() => {
                let why = match kind {
                    _ if outstanding == 0 => AbFailure::Connect,
                    ErrorKind::ClientTimo | ErrorKind::Other => AbFailure::Exception,
                    _ => AbFailure::Receive,
                };
                let target = self.target_of(arrival);
                let end = us(now.saturating_duration_since(self.t0));
                self.stats.ab.server(target).on_failure(why, lost, end);
                self.ab_heartbeat(lost);
            }
            None if reserved > 0 => {
                // Calls taken from the budget but never sent go back to it.
                if let Some(g) = self.closed.as_mut().and_then(|s| s.groups.get_mut(group)) {
                    if let Some(calls) = g.left.calls.as_mut() {
                        *calls += reserved;
                    }
                }
            }
            _ => {}
        }
        self.unit_done(now, group);
    }

    /// The target of global arrival `arrival` (round-robin, as `open_conn` chooses).
    fn target_of(&self, arrival: u64) -> usize {
        usize::try_from(arrival % self.work.targets.len().max(1) as u64).unwrap_or(0)
    }

    /// ab and lb learn the `Server:` name (and TLS parameters) from the first reply of
    /// each server: connections opened while it is unknown scan their reply headers.
    pub(super) fn ab_watch(&mut self, id: crate::wire::table::ConnId) {
        let Some(conn) = self.table.get_mut(id) else {
            return;
        };
        let known = self
            .stats
            .ab
            .servers
            .get(conn.target)
            .is_some_and(|s| s.software.is_some());
        if !known && conn.cookie.is_none() {
            conn.cookie = Some(CookieScan::server());
        }
    }

    /// Records a completed request in ab's figures (and the `-g` observer).
    pub(super) fn ab_completed(&mut self, c: &Completion, now: Instant) {
        let Some(conn) = self.table.get_mut(c.conn) else {
            return;
        };
        let target = conn.target;
        // One call at a time: the first reply of a connection carries its connect
        // time; later ones (keep-alive) start when they were sent, as in ab.
        let first = conn.replies <= 1;
        let start = if first {
            conn.started
        } else {
            c.call.send_start
        };
        let times = CallTimes {
            connect_us: if first {
                us(conn.connected.saturating_duration_since(conn.started))
            } else {
                0
            },
            total_us: us(now.saturating_duration_since(start)),
            wait_us: c
                .call
                .written
                .map_or(0, |w| us(c.first_byte.saturating_duration_since(w))),
        };
        // The first reply of a server names it (and its TLS parameters): once.
        let software = conn.cookie.take().map(|mut scan| {
            let name = scan.take().unwrap_or_default();
            String::from_utf8_lossy(&name).into_owned()
        });
        let tls = conn.tls.as_ref();
        let srv = self.stats.ab.server(target);
        if srv.software.is_none() {
            srv.software = software;
        }
        if let (None, Some(tls)) = (&srv.tls_protocol, tls) {
            let (protocol, key) = crate::wire::tls::summary(tls);
            srv.tls_protocol = Some(protocol);
            srv.tls_temp_key = key;
        }
        srv.on_complete(&Completed {
            times,
            status: c.status,
            header_bytes: c.reply.header_bytes,
            body_bytes: c.reply.content_bytes,
            footer_bytes: c.reply.footer_bytes,
            sent_bytes: c.call.len as u64,
            keep_alive: !c.reply.close,
            end_us: us(now.saturating_duration_since(self.t0)),
        });
        if let Some(o) = self.calls.as_deref_mut() {
            o.completed(target, start, &times, c.status);
        }
        self.ab_heartbeat(1);
    }

    /// ab's heartbeat: `Completed N requests` on stderr every `heartbeat` requests.
    fn ab_heartbeat(&mut self, ended: u64) {
        let Some(state) = self.closed.as_mut() else {
            return;
        };
        let every = state.desc.ab.map_or(0, |a| a.heartbeat);
        for _ in 0..ended {
            state.ended += 1;
            if every > 0 && state.ended % every == 0 {
                crate::wire::note::note!("Completed {} requests", state.ended);
            }
        }
    }
}
