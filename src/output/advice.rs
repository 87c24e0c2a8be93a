//! Advice about a finished run: the `rshperf: warning: …` lines on stderr that say when
//! a run is probably not what was meant (every connection failed, every reply an
//! error) or when its figures do not describe the server (the client was the limit, a
//! budget of descriptors or ports ran low, a threshold's figure has too few samples:
//! the validity judgement's reasons), and the notes (`rshperf: note:`, no reply-rate
//! sample): a run that did what was asked prints nothing.
//!
//! Owns the wording: the judgement itself (`model::validity`: which reasons hold, what
//! limited the client) is the model's, the outcome rules (`outcome`) are pure
//! functions of the configuration and what the run measured. The classic report and
//! the exit status never change because of them; `--fail-on` (`invalid` among its
//! names) is for exit codes. JSON and CSV carry the same findings (by `Finding` kind).
//! Called by every front end after a run (`runner::run`, sweep steps, `ab`, `demo`).

mod outcome;
mod unanswered;

use crate::model::config::Config;
use crate::model::run::RunResult;
use crate::model::validity::{client_limit, Cause, Judged, Limit};
use crate::model::workload::Workload;

/// What a finding is about (stable names for JSON and CSV: `Finding::key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finding {
    /// The client could not keep its schedule: the figures describe the client.
    ClientBound,
    /// Every connection failed.
    AllFailed,
    /// Every reply had a 4xx or 5xx status.
    AllErrorStatus,
    /// A short run had no reply-rate sample.
    NoRateSample,
    /// The descriptor limit capped the connections open at once: arrivals waited
    /// for a free slot of the connection table.
    FdLimit,
    /// The local ports towards one destination came close to the ephemeral range.
    PortLimit,
    /// A threshold names a figure the run has too few samples for.
    TooShort,
    /// Calls were unanswered at the end, longer than any reply took: the server
    /// stopped answering.
    Unanswered,
}

impl Finding {
    /// Whether it is a fact about a run that did what was asked (`rshperf: note:` on
    /// stderr; JSON and CSV carry it too) rather than a warning.
    pub(crate) fn is_note(self) -> bool {
        matches!(self, Finding::NoRateSample)
    }

    /// Every finding.
    pub(crate) const ALL: [Finding; 8] = [
        Finding::ClientBound,
        Finding::AllFailed,
        Finding::AllErrorStatus,
        Finding::NoRateSample,
        Finding::FdLimit,
        Finding::PortLimit,
        Finding::TooShort,
        Finding::Unanswered,
    ];

    /// The finding a JSON or CSV name (`key`) stands for.
    pub(crate) fn from_key(key: &str) -> Option<Finding> {
        Finding::ALL.into_iter().find(|f| f.key() == key)
    }

    /// The finding's name in JSON and CSV.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Finding::ClientBound => "client_bound",
            Finding::AllFailed => "all_failed",
            Finding::AllErrorStatus => "all_error_status",
            Finding::NoRateSample => "no_rate_sample",
            Finding::FdLimit => "fd_limit",
            Finding::PortLimit => "port_limit",
            Finding::TooShort => "too_short",
            Finding::Unanswered => "unanswered",
        }
    }
}

/// One warning: its kind and the line printed after `rshperf: warning: `.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Advice {
    /// What it is about.
    pub(crate) finding: Finding,
    /// The text, one line, with the figures and the remedy.
    pub(crate) text: String,
}

/// The warnings a finished run deserves (empty for a healthy run), from the run and
/// its validity judgement (`judged`): whether the client was the limit (first: the
/// sweep's table quotes the first finding of a client-bound step), the descriptor and
/// port budgets, figures the run is too short for, then what the run achieved
/// (`outcome`; a run whose every connection failed is not told about its budgets
/// again) and the missing reply-rate sample (which concerns the classic report only:
/// front ends that print none use `assess_without_classic_report`). An interruption
/// is the front end's own line.
pub(crate) fn assess(
    cfg: &Config,
    work: &Workload,
    run: &RunResult,
    judged: &Judged,
) -> Vec<Advice> {
    let failed = outcome::all_failed(cfg, work, run);
    let mut out: Vec<Advice> = client_bound(judged).into_iter().collect();
    if failed.is_none() {
        out.extend(fd_limit(judged));
        out.extend(port_limit(judged));
    }
    out.extend(too_short(judged));
    out.extend(failed);
    out.extend(unanswered::unanswered(run));
    out.extend(outcome::all_error_status(cfg, work, run));
    out.extend(outcome::no_rate_sample(cfg, work, run));
    out
}

/// `assess` for a front end that prints no classic report (sweep steps, `ab`, `lb`):
/// without `NoRateSample`, which concerns httperf's `Reply rate` line only.
pub(crate) fn assess_without_classic_report(
    cfg: &Config,
    work: &Workload,
    run: &RunResult,
    judged: &Judged,
) -> Vec<Advice> {
    let mut advice = assess(cfg, work, run, judged);
    advice.retain(|a| a.finding != Finding::NoRateSample);
    advice
}

/// The findings' keys joined with `;` (the CSV `findings` cell; empty when none).
pub(crate) fn keys(advice: &[Advice]) -> String {
    let keys: Vec<&str> = advice.iter().map(|a| a.finding.key()).collect();
    keys.join(";")
}

/// The JSON `findings` member: `[{"finding": key, "text": line}, …]`.
pub(crate) fn to_json(advice: &[Advice]) -> serde_json::Value {
    advice
        .iter()
        .map(|a| serde_json::json!({ "finding": a.finding.key(), "text": a.text }))
        .collect()
}

/// The findings a JSON `findings` member holds (`to_json`'s reverse; entries of
/// findings this release does not know, or without their text, are left out).
pub(crate) fn from_json(findings: &serde_json::Value) -> Vec<Advice> {
    findings
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| {
            Some(Advice {
                finding: Finding::from_key(f["finding"].as_str()?)?,
                text: f["text"].as_str()?.to_string(),
            })
        })
        .collect()
}

/// Client-bound: the judgement's `client_limit` (a saturated or throttled engine,
/// arrivals late for want of connections or of a core), or, with none of those, the
/// machine starving the engine (`machine_starved`). One line, naming the cause with
/// its figures and the remedy. With the connection table full (`fd_limit`) held
/// arrivals are that line's.
fn client_bound(j: &Judged) -> Option<Advice> {
    let e = &j.evidence;
    let busy = e.busiest_pct.min(100.0);
    let (cause, remedy) = match client_limit(e) {
        Some((Limit::Held, _)) if e.table_waited > 0 => return None,
        Some((limit, slip)) => {
            let late = format!(
                "lateness p50 {:.3} ms, p99 {:.3} ms, limit {:.3} ms",
                slip.p50_ms, slip.p99_ms, slip.limit_ms
            );
            let behind = slip.behind;
            let quota = format!(
                "a CPU quota{} throttled the process in {:.0} % of its periods",
                e.quota_cores
                    .map(|q| format!(" of {q:.2} cores"))
                    .unwrap_or_default(),
                e.throttled_pct.unwrap_or(0.0)
            );
            match limit {
                Limit::Saturated if behind => (
                    format!(
                        "arrivals started late ({late}) and an engine thread used {busy:.0} % \
                         of a core: the client was at its capacity"
                    ),
                    REMEDY_SATURATED,
                ),
                Limit::Saturated => (
                    format!(
                        "an engine thread used {busy:.0} % of a core ({late}): the client was \
                         at its capacity"
                    ),
                    REMEDY_SATURATED,
                ),
                Limit::Throttled if behind => (
                    format!(
                        "arrivals started late ({late}) and {quota}: the client had less CPU \
                         than the rate needs"
                    ),
                    REMEDY_THROTTLED,
                ),
                Limit::Throttled => (
                    format!("{quota} ({late}): the client had less CPU than the rate needs"),
                    REMEDY_THROTTLED,
                ),
                Limit::Held => (
                    format!(
                        "arrivals started late ({late}) while the busiest engine thread used \
                         only {busy:.0} % of a core: {} arrivals waited for connections to \
                         close (the connection table or --overload=degrade's cap on \
                         connections in flight was full: the server holds connections longer \
                         than the schedule allows)",
                        e.held
                    ),
                    "a higher descriptor limit, a shorter --timeout, or --overload=queue for \
                     httperf's fd-unavail errors instead",
                ),
                Limit::Starved => (
                    format!(
                        "arrivals started late ({late}) while the busiest engine thread used \
                         only {busy:.0} % of a core: other work on this machine kept the \
                         engine waiting"
                    ),
                    REMEDY_STARVED,
                ),
            }
        }
        None => {
            let starved: Vec<&str> = j
                .validity
                .of(Cause::MachineStarved)
                .map(|r| r.text.as_str())
                .collect();
            if starved.is_empty() {
                return None;
            }
            (
                format!(
                    "{}: the machine kept the engine from a CPU",
                    starved.join(" and ")
                ),
                REMEDY_STARVED,
            )
        }
    };
    Some(Advice {
        finding: Finding::ClientBound,
        text: format!(
            "client-bound: {cause}; the figures describe the client, not the server ({remedy})"
        ),
    })
}

/// The descriptor limit capped concurrency: arrivals waited because the connection
/// table, sized from `ulimit -n`, was full (under `--overload=degrade`; with
/// `--overload=queue` they fail as `fd-unavail` instead), or it came within the
/// judgement's margin of full (`fd_budget`).
fn fd_limit(j: &Judged) -> Option<Advice> {
    let e = &j.evidence;
    let reason = j.validity.of(Cause::FdBudget).next()?;
    if e.table_waited == 0 {
        return Some(Advice {
            finding: Finding::FdLimit,
            text: format!("{} (raise `ulimit -n`)", reason.text),
        });
    }
    let limit = match e.fd_limit {
        0 => String::new(),
        n => format!(" {n}"),
    };
    let plural = |n: u64, one: &'static str, many: &'static str| if n == 1 { one } else { many };
    let size = e.table_size * e.engines.max(1);
    Some(Advice {
        finding: Finding::FdLimit,
        text: format!(
            "the descriptor limit{limit} capped concurrency at {size} {}: {} {} waited for a \
             connection to close (raise `ulimit -n`)",
            plural(size, "connection", "connections"),
            e.table_waited,
            plural(e.table_waited, "arrival", "arrivals"),
        ),
    })
}

/// The ephemeral ports towards one destination (`port_budget`).
fn port_limit(j: &Judged) -> Option<Advice> {
    let reason = j.validity.of(Cause::PortBudget).next()?;
    Some(Advice {
        finding: Finding::PortLimit,
        text: format!(
            "{} (spread connections over more source addresses with --myaddr, keep them open \
             longer with --num-calls, or let the kernel reuse TIME_WAIT ports: \
             net.ipv4.tcp_tw_reuse=1)",
            reason.text
        ),
    })
}

/// Figures the run's thresholds name that it has too few samples for (`too_short`).
fn too_short(j: &Judged) -> Option<Advice> {
    let texts: Vec<&str> = j
        .validity
        .of(Cause::TooShort)
        .map(|r| r.text.as_str())
        .collect();
    (!texts.is_empty()).then(|| Advice {
        finding: Finding::TooShort,
        text: format!(
            "{}: a threshold on it judges an extreme value, not the figure (run longer)",
            texts.join("; ")
        ),
    })
}

/// The lines `advice` puts on stderr: `rshperf: warning: …` for each warning, and
/// `rshperf: note: …` for each note (`Finding::is_note`: a short run's report line a
/// script could misread); a run that did what was asked otherwise prints nothing.
pub(crate) fn lines(advice: &[Advice]) -> Vec<String> {
    advice
        .iter()
        .map(|a| match a.finding.is_note() {
            false => format!("rshperf: warning: {}", a.text),
            true => format!("rshperf: note: {}", a.text),
        })
        .collect()
}

/// The remedy for an engine at its capacity.
const REMEDY_SATURATED: &str =
    "use --threads N, more source addresses with --myaddr, or more machines with --partition";
/// The remedy for a throttling CPU quota.
const REMEDY_THROTTLED: &str =
    "give the client more CPU: raise or remove its cgroup's cpu.max, or run it elsewhere";
/// The remedy for an engine kept from its core by other work.
const REMEDY_STARVED: &str = "run on a quieter machine, or with fewer --threads than cores";

/// Prints `lines(advice)` on stderr.
pub(crate) fn print(advice: &[Advice]) {
    for line in lines(advice) {
        crate::wire::note::note!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::judge::judge_run;
    use crate::model::stats::Stats;
    use std::time::Duration;

    fn run(lateness_us: &[u64], busiest_pct: f64, wall_s: f64) -> RunResult {
        let mut stats = Stats::new();
        for &us in lateness_us {
            stats.on_lateness(Duration::from_micros(us));
        }
        stats
            .client
            .add_engine(busiest_pct / 100.0 * wall_s, wall_s);
        RunResult::of(stats, wall_s)
    }

    fn assess_at(rate: f64, r: &RunResult) -> Vec<Advice> {
        let cfg = Config::local(|b| {
            b.rate(rate);
        });
        let work = Workload::from_config(&cfg).expect("workload");
        assess(&cfg, &work, r, &judge_run(&cfg, r, &[]))
    }

    /// Whether the judgement of `r` at `rate` says the client was the limit.
    fn client_bound_at(rate: f64, r: &RunResult) -> bool {
        let cfg = Config::local(|b| {
            b.rate(rate);
        });
        judge_run(&cfg, r, &[]).validity.client_bound()
    }

    #[test]
    fn a_healthy_run_gets_no_advice() {
        let mut late = vec![50; 990];
        late.extend([900; 10]);
        assert!(assess_at(600.0, &run(&late, 20.0, 10.0)).is_empty());
    }

    #[test]
    fn arrivals_that_waited_for_closes_are_named_as_the_cause() {
        let mut r = run(&[1500; 1000], 10.0, 10.0);
        r.stats.pacing.deferred = 700;
        r.stats.pacing.waited = 600;
        let advice = assess_at(600.0, &r);
        assert_eq!(advice.len(), 1);
        assert_eq!(
            advice[0].text,
            "client-bound: arrivals started late (lateness p50 1.500 ms, p99 1.500 ms, limit \
             1.000 ms) while the busiest engine thread used only 10 % of a core: 600 arrivals \
             waited for connections to close (the connection table or --overload=degrade's \
             cap on connections in flight was full: the server holds connections longer \
             than the schedule allows); the figures describe the client, not the server (a \
             higher descriptor limit, a shorter --timeout, or --overload=queue for httperf's \
             fd-unavail errors instead)"
        );
    }

    #[test]
    fn a_full_connection_table_names_the_descriptor_limit_once() {
        // Behind, the arrivals held by a full table of 4 connections (ulimit -n 24):
        // one line, about the descriptor limit, not a second one about held arrivals.
        let mut r = run(&[1500; 1000], 10.0, 10.0);
        r.stats.pacing.deferred = 700;
        r.stats.pacing.waited = 600;
        r.stats.pacing.table_waited = 996;
        r.stats.pacing.conn_table = 4;
        r.stats.pacing.fd_limit = 24;
        let advice = assess_at(600.0, &r);
        assert!(client_bound_at(600.0, &r));
        assert_eq!(
            advice,
            [Advice {
                finding: Finding::FdLimit,
                text: "the descriptor limit 24 capped concurrency at 4 connections: 996 \
                       arrivals waited for a connection to close (raise `ulimit -n`)"
                    .into()
            }]
        );
        assert_eq!(to_json(&advice)[0]["finding"], "fd_limit");
        assert_eq!(
            lines(&advice),
            [format!("rshperf: warning: {}", advice[0].text)]
        );
        // On schedule (too few arrivals to judge lateness), it is said all the same;
        // a document without the limit says so without the number.
        let mut short = run(&[50; 10], 10.0, 10.0);
        short.stats.pacing.table_waited = 1;
        short.stats.pacing.conn_table = 1;
        assert_eq!(
            assess_at(600.0, &short)[0].text,
            "the descriptor limit capped concurrency at 1 connection: 1 arrival waited for a \
             connection to close (raise `ulimit -n`)"
        );
    }

    #[test]
    fn a_late_tail_alone_is_jitter_not_a_finding() {
        let mut late = vec![50; 900];
        late.extend([30_000; 100]);
        assert!(assess_at(600.0, &run(&late, 20.0, 10.0)).is_empty());
    }

    #[test]
    fn late_arrivals_make_a_run_client_bound() {
        // p50 1.5 ms at 600/s: above 1 ms (10 % of 1.67 ms is less).
        let mut late = vec![50; 400];
        late.extend([1500; 600]);
        let advice = assess_at(600.0, &run(&late, 40.0, 10.0));
        assert_eq!(advice.len(), 1);
        assert_eq!(advice[0].finding, Finding::ClientBound);
        assert!(
            advice[0].text
                == "client-bound: arrivals started late (lateness p50 1.500 ms, p99 1.500 ms, \
                    limit 1.000 ms) while the busiest engine thread used only 40 % of a core: \
                    other work \
                    on this machine kept the engine waiting; the figures describe the client, \
                    not the server (run on a quieter machine, or with fewer --threads than \
                    cores)",
            "{}",
            advice[0].text
        );
        assert!(client_bound_at(600.0, &run(&late, 40.0, 10.0)));
        assert_eq!(keys(&advice), "client_bound");
        assert_eq!(to_json(&advice)[0]["finding"], "client_bound");
        // At 50/s the limit is 10 % of 20 ms = 2 ms: 1.5 ms is on time.
        assert!(assess_at(50.0, &run(&late, 40.0, 10.0)).is_empty());
        // Too few arrivals.
        assert!(assess_at(600.0, &run(&late[920..], 40.0, 10.0)).is_empty());
        // A schedule shorter than 1 s (500 arrivals at 600/s) that a single stall can
        // upset: no finding, unless the lag exceeds the whole schedule.
        assert!(assess_at(600.0, &run(&late[500..], 40.0, 10.0)).is_empty());
        let lag = vec![900_000; 500];
        assert_eq!(assess_at(600.0, &run(&lag, 40.0, 10.0)).len(), 1);
    }

    #[test]
    fn an_engine_at_93_percent_is_saturated_not_kept_waiting() {
        let mut late = vec![50; 400];
        late.extend([2000; 600]);
        let advice = assess_at(1000.0, &run(&late, 93.0, 3.0));
        assert_eq!(advice.len(), 1);
        assert_eq!(
            advice[0].text,
            "client-bound: arrivals started late (lateness p50 2.000 ms, p99 2.000 ms, limit \
             1.000 ms) and an engine thread used 93 % of a core: the client was at its \
             capacity; the figures describe the client, not the server (use --threads N, \
             more source addresses with --myaddr, or more machines with --partition)"
        );
        assert!(!advice[0].text.contains("other work"));
    }

    #[test]
    fn a_saturated_engine_makes_a_run_client_bound() {
        let late = vec![50; 1000];
        let advice = assess_at(10000.0, &run(&late, 99.0, 3.0));
        assert_eq!(advice.len(), 1);
        assert_eq!(
            advice[0].text,
            "client-bound: an engine thread used 99 % of a core (lateness p50 0.050 ms, p99 \
             0.050 ms, limit 1.000 ms): the client was at its capacity; the figures describe \
             the client, not \
             the server (use --threads N, more source addresses with --myaddr, or more \
             machines with --partition)"
        );
        let mut behind = vec![50; 400];
        behind.extend([2000; 600]);
        let both = assess_at(1000.0, &run(&behind, 99.0, 3.0));
        assert!(both[0].text.starts_with(
            "client-bound: arrivals started late (lateness p50 2.000 ms, p99 2.000 ms, limit \
             1.000 ms) and an engine thread used 99 % of a core: the client was at its \
             capacity;"
        ));
        // A very short run is dominated by start-up.
        assert!(assess_at(10000.0, &run(&late, 99.0, 0.1)).is_empty());
        // Sequential runs have no schedule.
        assert!(assess_at(0.0, &run(&late, 100.0, 3.0)).is_empty());
    }

    #[test]
    fn findings_read_back_from_json_as_written() {
        let advice: Vec<Advice> = Finding::ALL
            .iter()
            .map(|&finding| Advice {
                finding,
                text: format!("about {}", finding.key()),
            })
            .collect();
        assert_eq!(from_json(&to_json(&advice)), advice);
        let unknown = serde_json::json!([
            { "finding": "from_a_later_release", "text": "x" },
            { "finding": "all_failed" },
            { "finding": "fd_limit", "text": "y" },
        ]);
        assert_eq!(
            from_json(&unknown),
            [Advice {
                finding: Finding::FdLimit,
                text: "y".into()
            }]
        );
        assert!(from_json(&serde_json::Value::Null).is_empty());
    }
}
