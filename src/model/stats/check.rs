//! `Stats::check`: the identities and ranges every run's statistics satisfy, checked
//! on statistics read back from a document (`rshperf merge`, `rshperf compare`), so
//! that a document contradicting itself (more replies than requests, a negative
//! reply-rate sample, a timeline that ends in 10^300 s) is refused naming the field,
//! instead of being merged into figures nobody measured.
//!
//! Owns the list of checks; each is a fact of how the engine counts (named in its
//! message). Checks that need counters added later (`Ends`, the pool's `abandoned`)
//! apply only when the document has them (`Stats::ends` is Some). Pure; called by
//! `output::json::stats_from_json`.

use super::merge::MergeError;
use super::Stats;

/// A contradiction at `path` (a member of `raw`, or `histograms.NAME`).
fn at(path: &str, what: String) -> MergeError {
    MergeError::new(what).within(path)
}

/// `Ok` when `ok`, else the contradiction `what` at `path`.
fn need(ok: bool, path: &str, what: impl FnOnce() -> String) -> Result<(), MergeError> {
    if ok {
        Ok(())
    } else {
        Err(at(path, what()))
    }
}

/// The sum of `v` (None when it overflows).
fn total<'a>(v: impl IntoIterator<Item = &'a u64>) -> Option<u64> {
    v.into_iter().try_fold(0u64, |t, &x| t.checked_add(x))
}

/// Slack for comparing a time measured in µs with the document's duration, µs.
const SLACK_US: f64 = 1000.0;

impl Stats {
    /// Checks the identities and ranges of statistics measured over `duration_s`
    /// seconds; the first contradiction names its field (`replies_by_class: 1000100
    /// replies but 200 requests`, paths relative to the document's `raw`, or
    /// `histograms.NAME`). `check_totals` must pass first (no sum overflows).
    pub(crate) fn check(&self, duration_s: f64) -> Result<(), MergeError> {
        self.check_connections()?;
        self.check_calls()?;
        self.check_lifetimes()?;
        self.check_samples(duration_s)?;
        self.check_pool()?;
        self.check_parts()
    }

    /// Connections: each ended once (successful, failed, abandoned), and the error
    /// counters are those failures, the attempts without a socket and the streams the
    /// server reset.
    fn check_connections(&self) -> Result<(), MergeError> {
        let n = self.connections;
        need(self.abandoned <= n, "abandoned", || {
            format!("{} connections abandoned of {n} made", self.abandoned)
        })?;
        need(self.connects <= n, "connects", || {
            format!("{} connects of {n} connections", self.connects)
        })?;
        need(self.lifetimes <= n, "lifetimes", || {
            format!("{} connection lifetimes of {n} connections", self.lifetimes)
        })?;
        let errors = self.total_errors();
        need(self.unroutable <= errors, "unroutable", || {
            format!(
                "{} unroutable connects but {errors} errors",
                self.unroutable
            )
        })?;
        let timo = self.errors[super::ErrorKind::ClientTimo.index()];
        need(self.connect_timeouts <= timo, "connect_timeouts", || {
            format!(
                "{} connect timeouts but {timo} client-timo",
                self.connect_timeouts
            )
        })?;
        let Some(e) = &self.ends else {
            return Ok(());
        };
        let ended = total([&e.successful, &e.failed, &self.abandoned]);
        need(ended == Some(n), "ends", || {
            format!(
                "{n} connections but {} successful + {} failed + {} abandoned",
                e.successful, e.failed, self.abandoned
            )
        })?;
        need(
            e.failed_after_reply <= e.failed.min(self.lifetimes),
            "ends.failed_after_reply",
            || {
                format!(
                    "{} failed after a reply, of {} failed and {} with a reply",
                    e.failed_after_reply, e.failed, self.lifetimes
                )
            },
        )?;
        let resets = self
            .http2
            .streams_reset
            .checked_add(self.http3.streams_reset);
        let counted = total([&e.failed, &e.unopened, &resets.unwrap_or(u64::MAX)]);
        need(counted == Some(errors), "errors", || {
            format!(
                "{errors} errors but {} failed connections + {} attempts without a socket + \
                 {} streams reset",
                e.failed,
                e.unopened,
                resets.map_or("too many".to_string(), |r| r.to_string())
            )
        })
    }

    /// Requests, responses and replies: a reply is to a request, and each histogram
    /// holds one value per event it counts.
    fn check_calls(&self) -> Result<(), MergeError> {
        let replies = self.all_replies();
        need(replies <= self.requests, "replies_by_class", || {
            format!("{replies} replies but {} requests", self.requests)
        })?;
        let [ok, found] = self.status_200_302;
        need(
            ok <= self.replies_by_class[2] && found <= self.replies_by_class[3],
            "status_200_302",
            || {
                format!(
                    "[{ok}, {found}] replies with status 200 and 302, but {} 2xx and {} 3xx",
                    self.replies_by_class[2], self.replies_by_class[3]
                )
            },
        )?;
        for (name, hist, events, of) in [
            ("connect", &self.hist.connect, self.connects, "connects"),
            ("response", &self.hist.response, self.responses, "responses"),
            ("transfer", &self.hist.transfer, replies, "replies"),
            ("lifetime", &self.hist.lifetime, self.lifetimes, "lifetimes"),
        ] {
            need(hist.len() == events, &format!("histograms.{name}"), || {
                format!("{} values for {events} {of}", hist.len())
            })?;
        }
        let handshakes = total(&self.tls_handshakes);
        need(
            handshakes.is_some_and(|h| h <= self.connects),
            "tls_handshakes",
            || {
                format!(
                    "{:?} TLS handshakes but {} connects",
                    self.tls_handshakes, self.connects
                )
            },
        )?;
        let sessions = self.sessions_ok.checked_add(self.sessions_failed);
        need(
            total(&self.session_lengths) == sessions,
            "session_lengths",
            || {
                format!(
                    "{:?} sessions by length but {} + {} sessions",
                    total(&self.session_lengths),
                    self.sessions_ok,
                    self.sessions_failed
                )
            },
        )
    }

    /// Lifetimes: their sum, extremes and 1-ms bins agree with their count.
    fn check_lifetimes(&self) -> Result<(), MergeError> {
        let n = self.lifetimes;
        need(
            total(&self.lifetime_bins) == Some(n),
            "lifetime_bins",
            || {
                format!(
                    "{:?} lifetimes in the bins but {n} lifetimes",
                    total(&self.lifetime_bins)
                )
            },
        )?;
        let (min, max, sum) = (
            self.lifetime_min_us,
            self.lifetime_max_us,
            self.lifetime_sum_us,
        );
        if n == 0 {
            return need(sum == 0 && max == 0, "lifetime_sum_us", || {
                format!("sum {sum} µs and max {max} µs without a lifetime")
            });
        }
        need(min <= max, "lifetime_min_us", || {
            format!("shortest lifetime {min} µs above the longest, {max} µs")
        })?;
        let low = u128::from(min) * u128::from(n);
        let high = u128::from(max) * u128::from(n);
        need(
            (low..=high).contains(&u128::from(sum)),
            "lifetime_sum_us",
            || format!("{sum} µs is not the sum of {n} lifetimes of {min}…{max} µs"),
        )
    }

    /// Reply-rate samples and the timeline: real lengths within the run, counts that
    /// add up to at most the run's own.
    fn check_samples(&self, duration_s: f64) -> Result<(), MergeError> {
        for (i, s) in self.rate_samples.iter().enumerate() {
            need(
                s.seconds.is_finite() && s.seconds > 0.0 && s.seconds <= duration_s + 1.0,
                &format!("rate_samples[{i}].seconds"),
                || format!("{:?} is not an interval of a {duration_s} s run", s.seconds),
            )?;
        }
        let sampled = total(self.rate_samples.iter().map(|s| &s.replies));
        need(
            sampled.is_some_and(|r| r <= self.all_replies()),
            "rate_samples",
            || {
                format!(
                    "{sampled:?} replies sampled but {} replies",
                    self.all_replies()
                )
            },
        )?;
        let t = &self.timeline;
        let mut covered = 0u64;
        for (i, iv) in t.intervals.iter().enumerate() {
            let at_i = |m: &str| format!("timeline.intervals[{i}].{m}");
            need(iv.width >= 1, &at_i("width"), || {
                "0 seconds wide".to_string()
            })?;
            covered = covered.saturating_add(iv.width);
            need(iv.open <= self.connections, &at_i("open"), || {
                format!("{} open of {} connections", iv.open, self.connections)
            })?;
        }
        need(
            covered as f64 <= duration_s.ceil() + 1.0,
            "timeline.intervals",
            || format!("{covered} s of intervals in a {duration_s} s run"),
        )?;
        need(
            t.end_s.is_finite() && t.end_s >= 0.0 && t.end_s <= covered as f64,
            "timeline.end_s",
            || {
                format!(
                    "{:?} is not within the {covered} s the intervals cover",
                    t.end_s
                )
            },
        )?;
        let sum = |f: &dyn Fn(&super::timeline::Interval) -> u64| {
            t.intervals
                .iter()
                .try_fold(0u64, |n, iv| n.checked_add(f(iv)))
        };
        need(
            sum(&|iv| iv.connections).is_some_and(|c| c <= self.connections),
            "timeline.intervals",
            || {
                format!(
                    "more connections by second than the {} made",
                    self.connections
                )
            },
        )?;
        for k in 0..5 {
            need(
                sum(&|iv| iv.replies[k]).is_some_and(|r| r <= self.replies_by_class[k + 1]),
                "timeline.intervals",
                || format!("more {}xx replies by second than the run's", k + 1),
            )?;
        }
        let waited = self.ends.as_ref().map_or(0, |e| e.unanswered_max_us);
        need(
            waited as f64 <= duration_s * 1e6 + SLACK_US,
            "ends.unanswered_max_us",
            || format!("{waited} µs of waiting in a {duration_s} s run"),
        )
    }

    /// `--call-rate`: every scheduled call ended once, and the two histograms hold
    /// the calls they describe.
    fn check_pool(&self) -> Result<(), MergeError> {
        let p = &self.pool;
        need(p.issued <= p.scheduled, "pool.issued", || {
            format!("{} calls issued of {} scheduled", p.issued, p.scheduled)
        })?;
        if self.ends.is_none() {
            return Ok(());
        }
        let ended = total([&p.completed, &p.lost, &p.unsent, &p.abandoned]);
        need(ended == Some(p.scheduled), "pool.scheduled", || {
            format!(
                "{} calls scheduled but {} completed + {} lost + {} unsent + {} abandoned",
                p.scheduled, p.completed, p.lost, p.unsent, p.abandoned
            )
        })?;
        need(p.lateness.len() == p.scheduled, "pool.lateness", || {
            format!(
                "{} values for {} scheduled calls",
                p.lateness.len(),
                p.scheduled
            )
        })?;
        let timed = p.scheduled.saturating_sub(p.lost);
        need(p.response.len() == timed, "pool.response", || {
            format!(
                "{} values for {timed} calls answered, unsent or abandoned",
                p.response.len()
            )
        })
    }

    /// Per-server figures add up to the run's.
    fn check_parts(&self) -> Result<(), MergeError> {
        if self.servers.is_empty() {
            return Ok(());
        }
        let sum = |f: fn(&super::ServerStats) -> u64| {
            self.servers
                .iter()
                .try_fold(0u64, |n, s| n.checked_add(f(s)))
        };
        need(
            sum(|s| s.connections) == Some(self.connections),
            "servers",
            || {
                format!(
                    "the servers' connections do not add up to {}",
                    self.connections
                )
            },
        )?;
        need(
            sum(|s| s.requests) == Some(self.requests),
            "servers",
            || format!("the servers' requests do not add up to {}", self.requests),
        )?;
        need(
            sum(|s| s.replies()) == Some(self.replies()),
            "servers",
            || format!("the servers' replies do not add up to {}", self.replies()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::{ErrorKind, RateSample};
    use std::time::Duration;

    /// A consistent run: 10 connections (8 successful with 3 replies each, 1 failed
    /// after a reply, 1 abandoned with a reply), timed over 2 s.
    fn run() -> Stats {
        let mut s = Stats::new();
        for k in 0..10 {
            s.on_connecting();
            s.on_connected(Duration::from_micros(100));
            let replies = if k < 8 { 3 } else { 1 };
            for _ in 0..replies {
                s.on_request_sent(80);
                s.on_response(Duration::from_millis(1));
                s.on_reply(200, 100, 10, 0, Duration::from_micros(10));
            }
            s.on_lifetime(Duration::from_millis(5 + k));
            match k {
                0..=7 => s.ends_mut().on_end(false, replies),
                8 => {
                    s.on_error(ErrorKind::ConnReset);
                    s.ends_mut().on_end(true, replies);
                }
                _ => s.abandoned += 1,
            }
        }
        s.rate_samples.push(RateSample {
            replies: 20,
            sessions: 0,
            seconds: 1.0,
        });
        s.roll_timeline(1, 1.0);
        s.roll_timeline(1, 1.5);
        s
    }

    fn refused(s: &Stats) -> String {
        s.check(2.0).expect_err("a contradiction").to_string()
    }

    #[test]
    fn a_measured_run_passes() {
        run().check(2.0).expect("consistent");
        Stats::new().check(0.0).expect("empty");
    }

    #[test]
    fn more_replies_than_requests_are_refused() {
        let mut s = run();
        s.replies_by_class[2] += 1_000_000;
        assert_eq!(
            refused(&s),
            "replies_by_class: 1000026 replies but 26 requests"
        );
    }

    #[test]
    fn a_negative_or_endless_interval_is_refused() {
        let mut s = run();
        s.rate_samples[0].seconds = -1.7;
        assert_eq!(
            refused(&s),
            "rate_samples[0].seconds: -1.7 is not an interval of a 2 s run"
        );
        let mut s = run();
        s.timeline.end_s = 1e300;
        assert_eq!(
            refused(&s),
            "timeline.end_s: 1e300 is not within the 2 s the intervals cover"
        );
        let mut s = run();
        s.timeline.intervals[0].width = u64::MAX;
        assert!(refused(&s).starts_with("timeline.intervals: 18446744073709551615 s"));
    }

    #[test]
    fn connections_must_end_once_and_errors_be_their_failures() {
        let mut s = run();
        s.ends_mut().successful += 1;
        assert_eq!(
            refused(&s),
            "ends: 10 connections but 9 successful + 1 failed + 1 abandoned"
        );
        let mut s = run();
        s.on_error(ErrorKind::Other);
        assert_eq!(
            refused(&s),
            "errors: 2 errors but 1 failed connections + 0 attempts without a socket + 0 \
             streams reset"
        );
        // A stream reset is an error of a connection that goes on.
        s.http2.streams_reset = 1;
        s.check(2.0).expect("consistent");
        // A document written before the counters is checked for the rest only.
        let mut old = run();
        old.ends = None;
        old.abandoned = 0;
        old.check(2.0).expect("no counters to check");
    }

    #[test]
    fn histograms_hold_one_value_per_event() {
        let mut s = run();
        s.hist.response.record(5).expect("in range");
        assert_eq!(
            refused(&s),
            "histograms.response: 27 values for 26 responses"
        );
        let mut s = run();
        s.lifetime_sum_us = 1;
        assert!(refused(&s).starts_with("lifetime_sum_us: 1 µs is not the sum of 10"));
    }

    #[test]
    fn the_pool_accounts_for_every_scheduled_call() {
        let mut s = run();
        s.pool.connections = 2;
        s.pool.scheduled = 3;
        s.pool.on_issued(Duration::from_millis(1));
        s.pool.on_response(Duration::from_millis(2));
        s.pool.on_unsent(Duration::from_secs(1), true);
        s.pool.on_issued(Duration::from_millis(1));
        s.pool.on_abandoned(Duration::from_secs(1));
        s.check(2.0).expect("consistent");
        s.pool.scheduled = 5;
        assert_eq!(
            refused(&s),
            "pool.scheduled: 5 calls scheduled but 1 completed + 0 lost + 1 unsent + 1 \
             abandoned"
        );
        s.pool.issued = 6;
        assert_eq!(refused(&s), "pool.issued: 6 calls issued of 5 scheduled");
    }
}
