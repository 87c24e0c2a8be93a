//! The `--wsesspage` half of the session workload: sessions that view a page N2 times
//! and fetch what it embeds (docs/compatibility.md, `--wsesspage`).
//!
//! A page view starts with the `--uri` call alone. Every reply of the view is scanned
//! by its connection (`http::html::PageScan`); when the engine handles a call's
//! completion, its references are resolved against that call's URI
//! (`workload::page::resolve`) and each new same-server URI is issued at once on the
//! session's connections (the next burst, pipelined like httperf's). A URI is fetched
//! at most once per view (as a browser's cache would; it also ends self-embedding
//! pages and redirect loops), and a view fetches at most `MAX_CALLS` URIs. The view
//! ends when none of its calls is outstanding; after the think time the next one
//! starts, and after N2 views the session ends (`engine::event_loop::session` owns bursts, think
//! times, connections and failures; this file only decides the calls of a view).
//!
//! The URIs of a view live in the session (`PageView`); calls refer to them by index
//! (`CallRef::Page`), which stays valid until the view ends, so re-sent calls render
//! the same request. `-vv` prints httperf's `fetching` (stdout) and `ignoring absolute
//! URI` (stderr) lines. Called from `engine::event_loop::session` and `Engine::issue`.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{Engine, Session};
use crate::engine::conn::{Completion, Owner};
use crate::model::call::CallRef;
use crate::model::workload::page::{self, Skip};
use crate::model::workload::Kind;
use crate::wire::http::html::PageScan;
use crate::wire::table::{ConnId, Table};

/// Most URIs fetched in one page view (the page included).
pub(crate) const MAX_CALLS: usize = 1024;

/// The URIs of a session's current page view, in the order they were issued.
#[derive(Debug, Default)]
struct Uris {
    text: String,
    spans: Vec<(usize, usize)>,
    /// `MAX_CALLS` was reached (reported once per run).
    capped: bool,
}

impl Uris {
    /// URI `i` of the view.
    fn get(&self, i: usize) -> Option<&str> {
        let &(a, b) = self.spans.get(i)?;
        self.text.get(a..b)
    }

    /// Adds `uri` unless the view already fetches it or is full; returns its index.
    fn add(&mut self, uri: &str) -> Option<u32> {
        if self.spans.iter().any(|&(a, b)| &self.text[a..b] == uri) {
            return None;
        }
        if self.spans.len() >= MAX_CALLS {
            self.capped = true;
            return None;
        }
        let start = self.text.len();
        self.text.push_str(uri);
        self.spans.push((start, self.text.len()));
        u32::try_from(self.spans.len() - 1).ok()
    }
}

/// A session's page view: its URIs, and buffers for resolving references.
#[derive(Debug, Default)]
pub(crate) struct PageView {
    uris: Uris,
    base: String,
    out: String,
    scratch: String,
}

impl PageView {
    /// URI `i` of the view.
    fn uri(&self, i: u32) -> Option<&str> {
        self.uris.get(usize::try_from(i).ok()?)
    }

    fn clear(&mut self) {
        self.uris.text.clear();
        self.uris.spans.clear();
    }
}

/// The URI of call `what` when it is a page-view call of the session that owns the
/// connection (for `Engine::issue`).
pub(super) fn call_uri(sessions: &mut Table<Session>, owner: Owner, what: CallRef) -> Option<&str> {
    let (CallRef::Page(i), Owner::Session { sess, .. }) = (what, owner) else {
        return None;
    };
    sessions.get_mut(sess)?.page.uri(i)
}

/// Prints a limit warning once per run (all engines).
fn warn_once(flag: &AtomicBool, text: &str) {
    if !flag.swap(true, Ordering::Relaxed) {
        crate::wire::note::note!("rshperf: warning: --wsesspage: {text} (reported once)");
    }
}

impl Engine<'_> {
    /// A connection of a page session: its replies must be scanned.
    pub(super) fn page_attach(&mut self, cid: ConnId) {
        if matches!(self.work.kind, Kind::Wsesspage { .. }) {
            if let Some(c) = self.table.get_mut(cid) {
                c.page.get_or_insert_with(PageScan::default);
            }
        }
    }

    /// Starts a page view of session `id`: its first call, `--uri`.
    pub(super) fn page_first_call(&mut self, id: ConnId) -> Option<CallRef> {
        let s = self.sessions.get_mut(id)?;
        s.page.clear();
        let i = s.page.uris.add(self.cfg.target().uri())?;
        self.print_fetching(id, i);
        Some(CallRef::Page(i))
    }

    /// The reply to call `c` of session `sess` completed: issues the new same-server
    /// URIs it references, as part of the current view.
    pub(super) fn page_on_reply(&mut self, c: &Completion, sess: ConnId, now: Instant) {
        let work = self.work;
        let Kind::Wsesspage { origins, .. } = &work.kind else {
            return;
        };
        let verbose = self.cfg.output().verbose() > 1;
        let (Some(conn), Some(s)) = (self.table.get_mut(c.conn), self.sessions.get_mut(sess))
        else {
            return;
        };
        let Some(scan) = conn.page.as_mut() else {
            return;
        };
        let Some(origin) = origins.get(conn.target).or(origins.first()) else {
            return;
        };
        let PageView {
            uris,
            base,
            out,
            scratch,
        } = &mut s.page;
        // The base of relative references: the URI this reply answers.
        base.clear();
        match c.call.what {
            CallRef::Page(i) => {
                base.push_str(uris.get(i as usize).unwrap_or(self.cfg.target().uri()))
            }
            _ => base.push_str(self.cfg.target().uri()),
        }
        let first_new = uris.spans.len();
        scan.take(c.call.id, |reference| {
            match page::resolve(reference, base, origin, out, scratch) {
                Ok(()) => {
                    uris.add(out);
                }
                Err(Skip::OtherServer) if verbose => {
                    crate::wire::note::note!("rshperf: ignoring absolute URI `{reference}'");
                }
                Err(_) => {}
            }
        });
        static SCAN_LIMIT: AtomicBool = AtomicBool::new(false);
        static VIEW_LIMIT: AtomicBool = AtomicBool::new(false);
        if let Some(limit) = scan.take_limit() {
            warn_once(&SCAN_LIMIT, &limit.describe());
        }
        if std::mem::take(&mut uris.capped) {
            warn_once(
                &VIEW_LIMIT,
                &format!("a page view reaches {MAX_CALLS} URIs; the rest are not fetched"),
            );
        }
        let last = uris.spans.len();
        s.in_burst += (last - first_new) as u64;
        for i in first_new..last {
            let Ok(i) = u32::try_from(i) else { break };
            self.print_fetching(sess, i);
            self.assign(sess, CallRef::Page(i), 0, now);
        }
    }

    /// `-vv`: httperf's `fetching` line (stdout) for a new call of the view.
    fn print_fetching(&mut self, sess: ConnId, i: u32) {
        if self.cfg.output().verbose() < 2 || !self.text_out() {
            return;
        }
        if let Some(uri) = self.sessions.get_mut(sess).and_then(|s| s.page.uri(i)) {
            let _ = writeln!(io::stdout().lock(), "rshperf: fetching `{uri}'");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_fetches_each_uri_once_and_at_most_max_calls() {
        let mut v = PageView::default();
        assert_eq!(v.uris.add("/page/index.html"), Some(0));
        assert_eq!(v.uris.add("/page/a.png"), Some(1));
        assert_eq!(v.uris.add("/page/index.html"), None);
        assert_eq!(v.uris.add("/page/a.png"), None);
        assert_eq!(v.uri(1), Some("/page/a.png"));
        assert_eq!(v.uri(2), None);
        for k in 2..MAX_CALLS {
            assert_eq!(v.uris.add(&format!("/o/{k}")), u32::try_from(k).ok());
        }
        assert!(!v.uris.capped);
        assert_eq!(v.uris.add("/one-too-many"), None);
        assert!(v.uris.capped);
        v.clear();
        assert_eq!(v.uri(0), None);
        assert_eq!(v.uris.add("/page/a.png"), Some(0));
    }
}
