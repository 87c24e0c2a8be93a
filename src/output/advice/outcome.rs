//! The advice rules about what a run achieved: every connection failed (naming the
//! dominant error, the target and the cause the engine saw: refused, never answered,
//! bodies stalled after the heads, HTTP/2 turned down by ALPN or by an HTTP/1 answer,
//! a certificate `--ssl-verify` rejected, TLS against a plain port), every reply an
//! error (with the `--uri` cause when that is it), and a short run without a
//! reply-rate sample (a note).
//!
//! Each rule is a pure function of the configuration, the workload and the run's
//! result, returning at most one `Advice`; `advice::assess` runs them with the other
//! rules. Texts are one line, with the figures and a remedy.

use super::{Advice, Finding};
use crate::model::config::Config;
use crate::model::run::RunResult;
use crate::model::stats::{ErrorKind, Stats, ERROR_KINDS};
use crate::model::workload::Workload;

/// httperf's reply-rate sampling interval, seconds (the engine's `SAMPLE_INTERVAL`).
const RATE_INTERVAL_S: f64 = 5.0;

/// How the target is named in advice: `host:port` as given (an IPv6 address in
/// brackets), or the `--servers` file.
fn target_name(cfg: &Config, work: &Workload) -> String {
    match (cfg.target().servers(), work.targets.as_slice()) {
        (None, [t]) if cfg.target().server().contains(':') => t.addr.to_string(),
        (None, [t]) => t.label.clone(),
        (Some(file), _) => format!("the servers of {file}"),
        (None, _) => "the server".to_string(),
    }
}

/// Every connection failed: no reply at all, one error per connection. Names the
/// dominant error and what usually causes it.
pub(super) fn all_failed(cfg: &Config, work: &Workload, run: &RunResult) -> Option<Advice> {
    let st = &run.stats;
    let failed = st.total_errors();
    if failed == 0 || st.all_replies() > 0 || failed < st.connections {
        return None;
    }
    let (top, count) = (0..ERROR_KINDS)
        .map(|i| (i, st.errors[i]))
        .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
        .expect("ERROR_KINDS is not zero");
    let target = target_name(cfg, work);
    // No route to the server: whatever counter the errno maps to, that is the cause.
    let unroutable = st.unroutable >= failed;
    // What happened, as a participle ("10 connections refused"), and whether a single
    // connection needs "was" ("the connection was refused", "… timed out").
    let (what, passive, remedy) = match top {
        i if i == ErrorKind::ConnRefused.index() => (
            "refused".to_string(),
            true,
            format!("is anything listening on {target}?"),
        ),
        i if i == ErrorKind::ClientTimo.index() => (
            "timed out (client-timo)".to_string(),
            false,
            timeout_remedy(st, count, &target),
        ),
        i if i == ErrorKind::SocketTimo.index() => (
            "timed out in the kernel (socket-timo)".to_string(),
            false,
            format!("is {target} reachable (a firewall dropping SYNs)?"),
        ),
        i if i == ErrorKind::ConnReset.index() => (
            "reset (connreset)".to_string(),
            true,
            protocol_remedy(cfg, st, &target),
        ),
        i if i == ErrorKind::Other.index() => (
            "failed (other)".to_string(),
            false,
            protocol_remedy(cfg, st, &target),
        ),
        i if i == ErrorKind::FdUnavail.index() => (
            "failed (fd-unavail)".to_string(),
            false,
            "out of file descriptors: raise `ulimit -n`".to_string(),
        ),
        i if i == ErrorKind::AddrUnavail.index() => (
            "failed (addrunavail)".to_string(),
            false,
            "no local address or port: check --myaddr and net.ipv4.ip_local_port_range".to_string(),
        ),
        _ => (
            format!("failed ({})", ErrorKind::ALL[top].name()),
            false,
            "the system's file table is full".to_string(),
        ),
    };
    let remedy = if unroutable {
        format!("there is no route to {target}: is the address right, and its network reachable from here?")
    } else {
        remedy
    };
    let text = if failed == 1 {
        let was = if passive { "was " } else { "" };
        format!("the connection {was}{what} — {remedy}")
    } else if count == failed {
        format!("all {failed} connections {what} — {remedy}")
    } else {
        let were = if passive { "were " } else { "" };
        format!("all {failed} connections failed, {count} of them {were}{what} — {remedy}")
    };
    Some(Advice {
        finding: Finding::AllFailed,
        text,
    })
}

/// The likely cause when `timed_out` connections timed out: connects the watchdog
/// ended before they were established (`connect_timeouts`: nobody answers), status
/// lines in (`responses`: the server stalled the bodies after the heads), or
/// connections established that got no status line.
fn timeout_remedy(st: &Stats, timed_out: u64, target: &str) -> String {
    let connects = st.connect_timeouts;
    if connects >= timed_out {
        let the = if connects == 1 {
            "the connect"
        } else {
            "the connects"
        };
        return format!(
            "nobody answers at {target}: {the} timed out unanswered (is it up, and does a \
             firewall drop the SYNs?)"
        );
    }
    match (st.responses, connects) {
        (0, 0) => format!(
            "{target} accepted the connections but sent no status line (is it stuck, or \
             --timeout too short?)"
        ),
        (0, k) => format!(
            "{k} connects timed out unanswered and the rest got no status line: is \
             {target} overloaded, or --timeout too short?"
        ),
        (1, _) => format!(
            "the status line arrived but the body did not complete: {target} stalled the \
             body after the head (is --timeout long enough for it?)"
        ),
        (n, _) => format!(
            "{n} status lines arrived but no body completed: {target} stalled the bodies \
             after the heads (is --timeout long enough for them?)"
        ),
    }
}

/// The likely cause when the server's bytes were not what the client expected: a
/// server that turned HTTP/2 down (by ALPN, or with an HTTP/1 answer) or a certificate
/// `--ssl-verify` rejected, when the engine saw it, else TLS against a plain port or
/// the other way round.
fn protocol_remedy(cfg: &Config, st: &Stats, target: &str) -> String {
    if st.http2.alpn_refused > 0 {
        format!(
            "{target} does not offer HTTP/2 over TLS (ALPN h2): drop --http-version 2, or \
             use a port that serves h2"
        )
    } else if st.http2.http1_answers > 0 {
        format!(
            "{target} answered HTTP/2 with HTTP/1: it does not speak h2c (drop \
             --http-version 2, or use a port that speaks HTTP/2)"
        )
    } else if st.cert_rejected > 0 {
        format!(
            "--ssl-verify rejected {target}'s certificate: give the CA that signed it with \
             --ssl-ca-file FILE (scripts/nginx.sh prints its CA's path), or leave out \
             --ssl-verify"
        )
    } else if st.responses > 0 {
        let (n, lines, them) = match st.responses {
            1 => ("the".to_string(), "status line", "it"),
            n => (n.to_string(), "status lines", "them"),
        };
        format!(
            "{n} {lines} arrived, then {target} ended the connection before the reply \
             ended: it cut {them} short (with --stream, the Stream line counts the cut \
             streams)"
        )
    } else if cfg.tls().enabled() {
        format!("did the TLS handshake fail? is {target} a TLS port (--ssl, https://)?")
    } else {
        format!("does {target} speak HTTP? a TLS port needs --ssl (or an https:// URL)")
    }
}

/// Every reply was a 4xx or 5xx: the URI, method or headers are probably wrong.
pub(super) fn all_error_status(cfg: &Config, _work: &Workload, run: &RunResult) -> Option<Advice> {
    let st = &run.stats;
    let replies = st.all_replies();
    let (c4, c5) = (st.replies_by_class[4], st.replies_by_class[5]);
    if replies == 0 || c4 + c5 != replies {
        return None;
    }
    let uri = cfg.target().uri();
    // --wlog and --wsesslog take their URIs from files; --uri is not sent then.
    let uri_used = cfg.request().wlog().is_none() && cfg.sessions().wsesslog().is_none();
    let cause = if uri_used && !uri.starts_with('/') && uri != "*" {
        if crate::wire::url::parse_url(uri).is_some() {
            format!("--uri {uri} is a URL: give the URL as an argument of its own instead")
        } else {
            format!("--uri {uri} has no leading / (try --uri /{uri})")
        }
    } else {
        "check --uri, --method and --add-header (--print-reply=header shows the replies)"
            .to_string()
    };
    let text = if replies == 1 {
        format!("the reply was an error (4xx={c4} 5xx={c5}) — {cause}")
    } else {
        format!("all {replies} replies were errors (4xx={c4} 5xx={c5}) — {cause}")
    };
    Some(Advice {
        finding: Finding::AllErrorStatus,
        text,
    })
}

/// A run of at most 5 s with replies but no reply-rate sample: httperf samples every
/// 5 s, so `Reply rate` says `0 samples`. Not said for one connection (a probe) or
/// an interrupted run.
pub(super) fn no_rate_sample(cfg: &Config, _work: &Workload, run: &RunResult) -> Option<Advice> {
    let st = &run.stats;
    let d = run.info.duration;
    if run.interrupted
        || d > RATE_INTERVAL_S
        || !st.rate_samples.is_empty()
        || st.all_replies() == 0
        || st.connections <= 1
    {
        return None;
    }
    // With --call-rate the calls, not the connections, are what --runtime replaces.
    let counted = if cfg.load().call_rate() > 0.0 {
        "--num-calls"
    } else {
        "--num-conns"
    };
    Some(Advice {
        finding: Finding::NoRateSample,
        text: format!(
            "the run took {d:.1} s: the reply rate is sampled every 5 s, so \"Reply rate\" \
             has no sample (its avg 0.0 is no measurement; run longer, e.g. --runtime 10 \
             without {counted})"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::super::assess;
    use super::*;
    use crate::model::config::{ConfigBuilder, HttpVersion};
    use crate::model::judge::judge_run;
    use crate::model::stats::{RateSample, Stats};
    use crate::wire::url;

    /// The configuration `edit` sets on a fresh builder, and its workload.
    fn setup(edit: impl FnOnce(&mut ConfigBuilder)) -> (Config, Workload) {
        let mut b = Config::builder();
        edit(&mut b);
        let cfg = b.build().expect("a valid test configuration").config;
        let work = Workload::from_config(&cfg).expect("workload");
        (cfg, work)
    }

    /// `n` connections, each with one error of `kind`.
    fn failing(n: u64, kinds: &[(ErrorKind, u64)]) -> Stats {
        let mut st = Stats::new();
        st.connections = n;
        for (kind, count) in kinds {
            st.errors[kind.index()] += count;
        }
        st
    }

    fn texts(cfg: &Config, work: &Workload, run: &RunResult) -> Vec<(Finding, String)> {
        assess(cfg, work, run, &judge_run(cfg, run, &[]))
            .into_iter()
            .map(|a| (a.finding, a.text))
            .collect()
    }

    #[test]
    fn all_connections_failed_names_the_error_and_the_target() {
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1").port(18099);
        });
        let run = RunResult::of(failing(10, &[(ErrorKind::ConnRefused, 10)]), 0.01);
        assert_eq!(
            texts(&cfg, &work, &run),
            [(
                Finding::AllFailed,
                "all 10 connections refused — is anything listening on 127.0.0.1:18099?".into()
            )]
        );
        let run = RunResult::of(
            failing(
                10,
                &[(ErrorKind::ClientTimo, 7), (ErrorKind::ConnRefused, 3)],
            ),
            6.0,
        );
        assert_eq!(
            texts(&cfg, &work, &run),
            [(
                Finding::AllFailed,
                "all 10 connections failed, 7 of them timed out (client-timo) — \
                 127.0.0.1:18099 accepted the connections but sent no status line (is it \
                 stuck, or --timeout too short?)"
                    .into()
            )]
        );
        // The same timeouts, all of them connects nobody answered; then some of them.
        let mut st = failing(
            10,
            &[(ErrorKind::ClientTimo, 7), (ErrorKind::ConnRefused, 3)],
        );
        st.connect_timeouts = 7;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st.clone(), 6.0))[0].1,
            "all 10 connections failed, 7 of them timed out (client-timo) — nobody answers at \
             127.0.0.1:18099: the connects timed out unanswered (is it up, and does a firewall \
             drop the SYNs?)"
        );
        st.connect_timeouts = 4;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st, 6.0))[0].1,
            "all 10 connections failed, 7 of them timed out (client-timo) — 4 connects timed \
             out unanswered and the rest got no status line: is 127.0.0.1:18099 overloaded, \
             or --timeout too short?"
        );
        let mut st = failing(1, &[(ErrorKind::ClientTimo, 1)]);
        st.connect_timeouts = 1;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st, 6.0))[0].1,
            "the connection timed out (client-timo) — nobody answers at 127.0.0.1:18099: the \
             connect timed out unanswered (is it up, and does a firewall drop the SYNs?)"
        );
        let (cfg, work) = setup(|b| {
            b.url(
                url::parse_url("https://[::1]:8443/")
                    .expect("a URL")
                    .expect("valid"),
            );
        });
        let run = RunResult::of(failing(3, &[(ErrorKind::Other, 3)]), 0.1);
        assert_eq!(
            texts(&cfg, &work, &run)[0].1,
            "all 3 connections failed (other) — did the TLS handshake fail? is [::1]:8443 a \
             TLS port (--ssl, https://)?"
        );
        let (cfg, work) = setup(|b| {
            b.server("localhost").port(8443);
        });
        let run = RunResult::of(failing(2, &[(ErrorKind::ConnReset, 2)]), 0.1);
        assert_eq!(
            texts(&cfg, &work, &run)[0].1,
            "all 2 connections reset (connreset) — does localhost:8443 speak HTTP? a TLS port \
             needs --ssl (or an https:// URL)"
        );
        // Status lines came: the server speaks HTTP and cut the replies short.
        let mut st = failing(3, &[(ErrorKind::Other, 3)]);
        st.responses = 3;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st, 0.1))[0].1,
            "all 3 connections failed (other) — 3 status lines arrived, then localhost:8443 \
             ended the connection before the reply ended: it cut them short (with --stream, \
             the Stream line counts the cut streams)"
        );
        let mut st = failing(1, &[(ErrorKind::ConnReset, 1)]);
        st.responses = 1;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st, 0.1))[0].1,
            "the connection was reset (connreset) — the status line arrived, then \
             localhost:8443 ended the connection before the reply ended: it cut it short \
             (with --stream, the Stream line counts the cut streams)"
        );
        // One connection, and a mix in which the dominant error is a passive one.
        let run = RunResult::of(failing(1, &[(ErrorKind::ConnRefused, 1)]), 0.01);
        assert_eq!(
            texts(&cfg, &work, &run)[0].1,
            "the connection was refused — is anything listening on localhost:8443?"
        );
        let run = RunResult::of(failing(1, &[(ErrorKind::ClientTimo, 1)]), 0.01);
        assert!(texts(&cfg, &work, &run)[0]
            .1
            .starts_with("the connection timed out (client-timo) — "));
        let run = RunResult::of(
            failing(5, &[(ErrorKind::ConnReset, 3), (ErrorKind::Other, 2)]),
            0.01,
        );
        assert!(texts(&cfg, &work, &run)[0]
            .1
            .starts_with("all 5 connections failed, 3 of them were reset (connreset) — "));
        // One reply, or fewer errors than connections: not every connection failed.
        let mut st = failing(10, &[(ErrorKind::ConnRefused, 9)]);
        assert!(texts(&cfg, &work, &RunResult::of(st.clone(), 6.0)).is_empty());
        st.errors[ErrorKind::ConnRefused.index()] = 10;
        st.replies_by_class[2] = 1;
        st.rate_samples.push(RateSample {
            replies: 1,
            sessions: 0,
            seconds: 5.0,
        });
        assert!(texts(&cfg, &work, &RunResult::of(st, 6.0)).is_empty());
    }

    #[test]
    fn failures_name_the_cause_the_engine_saw_and_no_other() {
        // HTTP/2 to a port that answered with HTTP/1.
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1")
                .port(8080)
                .http_version(HttpVersion::V2);
        });
        let mut st = failing(3, &[(ErrorKind::Other, 3)]);
        st.http2.protocol_errors = 3;
        st.http2.http1_answers = 3;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st, 0.1)),
            [(
                Finding::AllFailed,
                "all 3 connections failed (other) — 127.0.0.1:8080 answered HTTP/2 with \
                 HTTP/1: it does not speak h2c (drop --http-version 2, or use a port that \
                 speaks HTTP/2)"
                    .into()
            )]
        );
        // h2 over TLS to a server without h2 in ALPN: not "is it a TLS port?".
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1")
                .port(8443)
                .tls()
                .http_version(HttpVersion::V2);
        });
        let mut st = failing(2, &[(ErrorKind::Other, 2)]);
        st.http2.alpn_refused = 2;
        let found = texts(&cfg, &work, &RunResult::of(st, 0.1));
        assert_eq!(
            found[0].1,
            "all 2 connections failed (other) — 127.0.0.1:8443 does not offer HTTP/2 over TLS \
             (ALPN h2): drop --http-version 2, or use a port that serves h2"
        );
        assert!(!found[0].1.contains("TLS port"));
        // A certificate --ssl-verify rejected: the CA file, not "is it a TLS port?".
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1").port(8443).tls().tls_verify(true);
        });
        let mut st = failing(4, &[(ErrorKind::Other, 4)]);
        st.cert_rejected = 4;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st, 0.1)),
            [(
                Finding::AllFailed,
                "all 4 connections failed (other) — --ssl-verify rejected 127.0.0.1:8443's \
                 certificate: give the CA that signed it with --ssl-ca-file FILE \
                 (scripts/nginx.sh prints its CA's path), or leave out --ssl-verify"
                    .into()
            )]
        );
        // Status lines in, bodies stalled: not "is it up and reachable?".
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1").port(18080);
        });
        let mut st = failing(50, &[(ErrorKind::ClientTimo, 50)]);
        st.responses = 50;
        let found = texts(&cfg, &work, &RunResult::of(st.clone(), 6.0));
        assert_eq!(
            found[0].1,
            "all 50 connections timed out (client-timo) — 50 status lines arrived but no body \
             completed: 127.0.0.1:18080 stalled the bodies after the heads (is --timeout long \
             enough for them?)"
        );
        assert!(!found[0].1.contains("reachable"));
        st.connections = 1;
        st.errors[ErrorKind::ClientTimo.index()] = 1;
        st.responses = 1;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st, 6.0))[0].1,
            "the connection timed out (client-timo) — the status line arrived but the body did \
             not complete: 127.0.0.1:18080 stalled the body after the head (is --timeout long \
             enough for it?)"
        );
        // Out of descriptors, addresses or the system's file table.
        for (kind, want) in [
            (
                ErrorKind::FdUnavail,
                "all 4 connections failed (fd-unavail) — out of file descriptors: raise \
                 `ulimit -n`",
            ),
            (
                ErrorKind::AddrUnavail,
                "all 4 connections failed (addrunavail) — no local address or port: check \
                 --myaddr and net.ipv4.ip_local_port_range",
            ),
            (
                ErrorKind::FtabFull,
                "all 4 connections failed (ftab-full) — the system's file table is full",
            ),
            (
                ErrorKind::SocketTimo,
                "all 4 connections timed out in the kernel (socket-timo) — is 127.0.0.1:18080 \
                 reachable (a firewall dropping SYNs)?",
            ),
        ] {
            let found = texts(&cfg, &work, &RunResult::of(failing(4, &[(kind, 4)]), 0.1));
            assert_eq!(found, [(Finding::AllFailed, want.to_string())], "{kind:?}");
        }
    }

    #[test]
    fn connects_without_a_route_name_the_route_whatever_counter_they_hit() {
        let (cfg, work) = setup(|b| {
            b.server("198.18.0.1").port(80);
        });
        // ENETUNREACH counts as `other`, a blackhole route's EINVAL as `fd-unavail`.
        for (kind, what) in [
            (ErrorKind::Other, "failed (other)"),
            (ErrorKind::FdUnavail, "failed (fd-unavail)"),
        ] {
            let mut st = failing(3, &[(kind, 3)]);
            st.unroutable = 3;
            assert_eq!(
                texts(&cfg, &work, &RunResult::of(st, 0.1)),
                [(
                    Finding::AllFailed,
                    format!(
                        "all 3 connections {what} — there is no route to 198.18.0.1:80: is \
                         the address right, and its network reachable from here?"
                    )
                )]
            );
        }
        assert!(ErrorKind::is_unroutable(libc::ENETUNREACH));
        assert!(ErrorKind::is_unroutable(libc::EHOSTUNREACH));
        assert!(ErrorKind::is_unroutable(libc::EINVAL));
        assert!(!ErrorKind::is_unroutable(libc::ECONNREFUSED));
    }

    #[test]
    fn all_error_replies_point_at_the_uri() {
        let mut st = Stats::new();
        st.connections = 20;
        st.replies_by_class[4] = 20;
        let run = RunResult::of(st.clone(), 0.5);
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1").uri("index.html");
        });
        let found = texts(&cfg, &work, &run);
        assert_eq!(
            found[0],
            (
                Finding::AllErrorStatus,
                "all 20 replies were errors (4xx=20 5xx=0) — --uri index.html has no leading / \
                 (try --uri /index.html)"
                    .into()
            )
        );
        // A short run: the missing sample is said too, after.
        assert_eq!(found[1].0, Finding::NoRateSample);
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1").uri("/nope");
        });
        assert_eq!(
            texts(&cfg, &work, &run)[0].1,
            "all 20 replies were errors (4xx=20 5xx=0) — check --uri, --method and --add-header \
             (--print-reply=header shows the replies)"
        );
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1").uri("http://h/x");
        });
        assert_eq!(
            texts(&cfg, &work, &run)[0].1,
            "all 20 replies were errors (4xx=20 5xx=0) — --uri http://h/x is a URL: give the URL \
             as an argument of its own instead"
        );
        let mut one = Stats::new();
        one.connections = 1;
        one.replies_by_class[5] = 1;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(one, 0.01))[0].1,
            "the reply was an error (4xx=0 5xx=1) — --uri http://h/x is a URL: give the URL as \
             an argument of its own instead"
        );
        // One 2xx or 3xx reply and it is not "all".
        st.replies_by_class[3] = 1;
        let run = RunResult::of(st, 0.5);
        assert!(texts(&cfg, &work, &run)
            .iter()
            .all(|(f, _)| *f != Finding::AllErrorStatus));
    }

    #[test]
    fn short_runs_without_a_rate_sample_say_so_and_healthy_runs_are_silent() {
        let (cfg, work) = setup(|b| {
            b.server("127.0.0.1");
        });
        let mut st = Stats::new();
        st.connections = 50;
        st.replies_by_class[2] = 50;
        assert_eq!(
            texts(&cfg, &work, &RunResult::of(st.clone(), 2.45)),
            [(
                Finding::NoRateSample,
                "the run took 2.5 s: the reply rate is sampled every 5 s, so \"Reply rate\" has \
                 no sample (its avg 0.0 is no measurement; run longer, e.g. --runtime 10 \
                 without --num-conns)"
                    .into()
            )]
        );
        // A note, not a warning, and said without -v: a script that reads the
        // report's average gets 0.0.
        let r = RunResult::of(st.clone(), 2.45);
        let advice = assess(&cfg, &work, &r, &judge_run(&cfg, &r, &[]));
        assert_eq!(
            super::super::lines(&advice),
            [format!("rshperf: note: {}", advice[0].text)]
        );
        // Front ends without the classic report do not get it.
        let short = RunResult::of(st.clone(), 2.45);
        let judged = judge_run(&cfg, &short, &[]);
        assert!(
            super::super::assess_without_classic_report(&cfg, &work, &short, &judged).is_empty()
        );
        let mut interrupted = RunResult::of(st.clone(), 2.0);
        interrupted.interrupted = true;
        assert!(texts(&cfg, &work, &interrupted).is_empty());
        let mut one = st.clone();
        one.connections = 1;
        assert!(texts(&cfg, &work, &RunResult::of(one, 0.01)).is_empty());
        st.rate_samples.push(RateSample {
            replies: 50,
            sessions: 0,
            seconds: 5.0,
        });
        assert!(texts(&cfg, &work, &RunResult::of(st, 5.5)).is_empty());
    }
}
