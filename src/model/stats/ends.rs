//! `Ends`: how every connection of a run ended — without a failure, by a failure, or
//! not at all (still open at the end: `Stats::abandoned`) — and the calls left
//! unanswered on those still open, so that every connection is in exactly one
//! category: `connections = successful + failed + abandoned`, and every error counter
//! increment is a connection's failure, an attempt that never got a socket, or a
//! stream the server reset (`errors = failed + unopened + streams reset`).
//!
//! Owns the counters and their merge; `Stats` holds one (`Stats::ends`, None in
//! documents written before it, which are then read with httperf's population:
//! `successful` = connections with a reply). Fed by the engine when a connection ends
//! (`event_loop::finish`, `connect`) and at the end of the run (`event_loop::run`).
//! httperf's own figures (Connection time, Connection length) keep their population,
//! the connections with at least one reply (`Stats::lifetimes`).

use serde::{Deserialize, Serialize};

#[cfg(test)]
use super::merge::both;
use super::merge::{Merge, MergeError};

/// The ends of one engine's connections (or merged from several).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ends {
    /// Connections that ended without a failure (closed by the client after their
    /// calls, or cleanly by the server with no call unanswered).
    pub(crate) successful: u64,
    /// Connections that ended by a failure (each counted once, in one error counter),
    /// whether or not they had replies before it.
    pub(crate) failed: u64,
    /// Of `failed`, those that had at least one reply (they are also in httperf's
    /// population of connections with a lifetime).
    pub(crate) failed_after_reply: u64,
    /// Connection attempts that failed before a socket existed (a full descriptor or
    /// connection table: `fd-unavail`): counted as errors, not as connections.
    pub(crate) unopened: u64,
    /// Calls unanswered on the connections still open at the end (queued, or sent and
    /// no reply begun: not a stream or slow body under way).
    pub(crate) unanswered: u64,
    /// The longest any of those calls, or a `--call-rate` call never sent, had waited
    /// at the end, from its scheduled (or issue) time, µs.
    pub(crate) unanswered_max_us: u64,
}

impl Merge for Ends {
    fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
        super::merge::merge_fields!(Ends, self, o;
            successful: sum,
            failed: sum,
            failed_after_reply: sum,
            unopened: sum,
            unanswered: sum,
            unanswered_max_us: max,
        )
    }
}

impl Ends {
    /// A connection ended: by a failure (`failed`) or not, after `replies` replies.
    pub(crate) fn on_end(&mut self, failed: bool, replies: u64) {
        if failed {
            self.failed += 1;
            if replies > 0 {
                self.failed_after_reply += 1;
            }
        } else {
            self.successful += 1;
        }
    }

    /// A call was unanswered at the end, after waiting `waited_us`.
    pub(crate) fn on_unanswered(&mut self, waited_us: u64) {
        self.unanswered += 1;
        self.on_waited(waited_us);
    }

    /// A call (unanswered or never sent) had waited `waited_us` at the end.
    pub(crate) fn on_waited(&mut self, waited_us: u64) {
        self.unanswered_max_us = self.unanswered_max_us.max(waited_us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_counted_once_and_merge_only_when_both_are_known() {
        let mut e = Ends::default();
        e.on_end(false, 3);
        e.on_end(true, 0);
        e.on_end(true, 2);
        e.on_unanswered(700);
        e.on_waited(900);
        e.on_unanswered(50);
        assert_eq!(
            e,
            Ends {
                successful: 1,
                failed: 2,
                failed_after_reply: 1,
                unopened: 0,
                unanswered: 2,
                unanswered_max_us: 900,
            }
        );
        let mut a = Some(e.clone());
        both(&mut a, &Some(e.clone())).expect("no overflow");
        assert_eq!(
            a.as_ref().map(|x| (x.failed, x.unanswered_max_us)),
            Some((4, 900))
        );
        both(&mut a, &None).expect("unknown");
        assert_eq!(a, None);
        both(&mut a, &Some(e)).expect("stays unknown");
        assert_eq!(a, None);
    }
}
