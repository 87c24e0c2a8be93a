//! `rshperf replay` in an engine: the request of each due call, read from the
//! engine's pass over the log (`model::replay::feed`) and rendered into a template
//! of the engine's own `Requests`, which lives while the call does.
//!
//! A template is taken when its call becomes due (`pool_call_due`) and given back
//! when the call is answered or lost (`pool_on_completion`, `pool_on_closed`);
//! a call put back after a clean close keeps its template and is rendered again
//! from it. So the templates held are the calls waiting or in flight, whatever the
//! log's length; and while `BACKLOG` calls wait for a connection, the next due
//! call is not read (`arrivals_capped`). The request log names a replayed call by its URI (the shared
//! `Requests` do not know this engine's templates). Called by `pool`, `issue` and
//! `log`.

use crate::model::call::{CallRef, Requests};
use crate::model::config::Config;
use crate::model::replay::feed::{self, SharedFeed};
use crate::model::workload::Workload;

/// Calls that may wait for a connection before the next due call is read: past it
/// the log waits, each call still late from its scheduled time.
pub(super) const BACKLOG: usize = 1024;

/// One engine's replayed calls.
#[derive(Debug)]
pub(super) struct ReplayCalls {
    feed: SharedFeed,
    /// The workload's requests, with a template per call alive.
    pub(super) requests: Requests,
    /// Templates free for the next call.
    free: Vec<u32>,
    /// Scratch for a call's header lines.
    lines: Vec<u8>,
}

impl ReplayCalls {
    /// The calls of `feed` (this engine's pass over `work`'s log).
    pub(super) fn new(work: &Workload, feed: SharedFeed) -> ReplayCalls {
        ReplayCalls {
            feed,
            requests: work.requests.clone(),
            free: Vec::new(),
            lines: Vec::new(),
        }
    }

    /// The request of the call just due (its method, else `--method`; its headers
    /// after `--add-header`'s; its body), in a template of its own, and its client;
    /// None when the feed has none (the pacer offered no call).
    pub(super) fn take(&mut self, cfg: &Config) -> Option<(CallRef, String)> {
        let e = feed::lock(&self.feed).take()?;
        self.lines.clear();
        for (name, value) in &e.headers {
            self.lines
                .extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        let method = if e.method.is_empty() {
            cfg.request().method()
        } else {
            &e.method
        };
        let request = (method, e.uri.as_str(), &e.body[..]);
        if let Some(i) = self.free.pop() {
            if let Some(r) = self.requests.set_template(i, cfg, &self.lines, request) {
                return Some((r, e.client));
            }
        }
        let r = self
            .requests
            .add_template(cfg, &self.lines, method, &e.uri, &e.body);
        Some((r, e.client))
    }

    /// The call of `what` is over: its template is free.
    pub(super) fn release(&mut self, what: CallRef) {
        if let CallRef::Template(i) = what {
            debug_assert!(!self.free.contains(&i), "a template given back twice");
            self.free.push(i);
        }
    }

    /// The URI of `what`, for the request log.
    pub(super) fn uri(&self, what: CallRef) -> String {
        String::from_utf8_lossy(self.requests.uri(what)).into_owned()
    }
}
