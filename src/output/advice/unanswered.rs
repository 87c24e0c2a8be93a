//! The advice rule about a server that stopped answering: calls still unanswered when
//! the run ended (sent and waiting on the connections still open, or a `--call-rate`
//! call never sent), the oldest of them older than any reply took.
//!
//! A run that ends by time always leaves some calls in flight; they are news only when
//! they waited longer than the server ever took to answer (and at least a second), as
//! when it hung, stopped reading, or fell far behind the schedule. Such calls are
//! neither replies nor errors (`abandoned`, `unanswered`, the call rate's `unsent` and
//! `abandoned`), so without this warning a hung server looks like a quiet success.
//! A pure function of the run's result; `advice::assess` runs it with the other rules.

use super::{Advice, Finding};
use crate::model::run::RunResult;
use crate::model::stats::quantile_ms;

/// The shortest wait that can make unanswered calls a finding, ms.
const MIN_WAIT_MS: f64 = 1000.0;
/// How many times the longest response time an unanswered call must have waited.
const OVER_LONGEST: f64 = 2.0;

/// Calls were unanswered at the end, the oldest for at least `MIN_WAIT_MS` and for
/// more than `OVER_LONGEST` times the longest response time of any reply.
pub(super) fn unanswered(run: &RunResult) -> Option<Advice> {
    let st = &run.stats;
    let ends = st.ends.as_ref()?;
    let (sent, unsent) = (ends.unanswered, st.pool.unsent);
    let waited_ms = ends.unanswered_max_us as f64 / 1000.0;
    let longest_ms = quantile_ms(&st.hist.response, 1.0);
    if sent + unsent == 0 || waited_ms < MIN_WAIT_MS || waited_ms <= OVER_LONGEST * longest_ms {
        return None;
    }
    let mut parts = Vec::new();
    if sent > 0 {
        parts.push(format!("{sent} sent and waiting on connections still open"));
    }
    if unsent > 0 {
        parts.push(format!("{unsent} never sent"));
    }
    let replies = st.all_replies();
    let than = if replies == 0 {
        "and no reply came at all".to_string()
    } else {
        format!("longer than any of the {replies} replies took (at most {longest_ms:.3} ms)")
    };
    let counted = if st.pool.is_used() {
        "the call rate's unsent and abandoned calls, counted in its lateness and response \
         figures up to the end"
    } else {
        "`unanswered` calls on `abandoned` connections"
    };
    Some(Advice {
        finding: Finding::Unanswered,
        text: format!(
            "{} {} unanswered when the run ended ({}), the oldest after {:.3} s, {than}: the \
             server stopped answering or fell far behind; they are not errors but {counted} \
             (gate on them with --fail-on)",
            sent + unsent,
            if sent + unsent == 1 {
                "call was"
            } else {
                "calls were"
            },
            parts.join(", "),
            waited_ms / 1000.0,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::Stats;
    use std::time::Duration;

    fn result(stats: Stats) -> RunResult {
        RunResult::of(stats, 4.0)
    }

    /// A run with replies of `response_ms` and calls unanswered at the end: `sent` on
    /// open connections, `unsent` never sent (a call-rate pool), the oldest `waited_ms`.
    fn stats(response_ms: &[u64], sent: u64, unsent: u64, waited_ms: u64) -> Stats {
        let mut st = Stats::new();
        for &ms in response_ms {
            st.on_response(Duration::from_millis(ms));
            st.on_reply(200, 100, 10, 0, Duration::ZERO);
        }
        let e = st.ends_mut();
        e.unanswered = sent;
        e.unanswered_max_us = waited_ms * 1000;
        if unsent > 0 {
            st.pool.connections = 5;
            st.pool.unsent = unsent;
        }
        st
    }

    #[test]
    fn a_hung_server_is_named_with_what_it_left_unanswered() {
        let hung = unanswered(&result(stats(&[2; 19], 5, 376, 3_900))).expect("a finding");
        assert_eq!(hung.finding, Finding::Unanswered);
        assert_eq!(
            hung.text,
            "381 calls were unanswered when the run ended (5 sent and waiting on connections \
             still open, 376 never sent), the oldest after 3.900 s, longer than any of the 19 \
             replies took (at most 2.000 ms): the server stopped answering or fell far behind; \
             they are not errors but the call rate's unsent and abandoned calls, counted in \
             its lateness and response figures up to the end (gate on them with --fail-on)"
        );
        let silent = unanswered(&result(stats(&[], 10, 0, 2_000))).expect("a finding");
        assert_eq!(
            silent.text,
            "10 calls were unanswered when the run ended (10 sent and waiting on connections \
             still open), the oldest after 2.000 s, and no reply came at all: the server \
             stopped answering or fell far behind; they are not errors but `unanswered` calls \
             on `abandoned` connections (gate on them with --fail-on)"
        );
        let one = unanswered(&result(stats(&[], 1, 0, 1_000))).expect("a finding");
        assert!(
            one.text.starts_with("1 call was unanswered"),
            "{}",
            one.text
        );
    }

    #[test]
    fn calls_in_flight_at_the_end_of_a_healthy_run_are_no_finding() {
        // Nothing unanswered; in flight for less than a second; or for no longer than
        // twice the slowest reply (a slow server that still answers).
        assert!(unanswered(&result(stats(&[5; 10], 0, 0, 0))).is_none());
        assert!(unanswered(&result(stats(&[5; 10], 3, 0, 999))).is_none());
        assert!(unanswered(&result(stats(&[1_500; 10], 3, 0, 3_000))).is_none());
        assert!(unanswered(&result(stats(&[1_500; 10], 3, 0, 3_100))).is_some());
        // A document written before the counters: nothing to judge.
        let mut old = stats(&[], 10, 0, 2_000);
        old.ends = None;
        assert!(unanswered(&result(old)).is_none());
    }
}
