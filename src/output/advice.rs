//! Advice about a finished run: the `rshperf: warning: …` lines on stderr that say when
//! a run is probably not what was meant (every connection failed, every reply an
//! error) or when the client, not the server, was the limit, and the notes `-v` adds
//! (no reply-rate sample): a run that did what was asked prints nothing.
//!
//! Owns the rules (pure functions of the configuration and what the run measured) and
//! their texts. The classic report and the exit status never change because of them;
//! `--fail-on` is for exit codes. JSON and CSV carry the same findings (by `Finding`
//! kind). Called by every front end after a run (`runner::run`, sweep steps, `demo`).

mod outcome;

use crate::model::config::Config;
use crate::model::run::RunResult;
use crate::model::stats::quantile_ms;
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
}

impl Finding {
    /// Whether it is a fact about a run that did what was asked (`rshperf: note:` on
    /// stderr; JSON and CSV carry it too) rather than a warning.
    pub(crate) fn is_note(self) -> bool {
        matches!(self, Finding::NoRateSample)
    }

    /// Every finding.
    pub(crate) const ALL: [Finding; 5] = [
        Finding::ClientBound,
        Finding::AllFailed,
        Finding::AllErrorStatus,
        Finding::NoRateSample,
        Finding::FdLimit,
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

/// Lateness beyond which an arrival is late in any case, µs.
const LATE_FLOOR_US: f64 = 1000.0;
/// Share of the mean inter-arrival time beyond which an arrival is late.
const LATE_SHARE: f64 = 0.10;
/// Fewest arrivals for the lateness rule.
const LATE_MIN_ARRIVALS: u64 = 100;
/// Shortest schedule for the lateness rule, s: in a shorter one a single stall of the
/// machine makes most arrivals late (unless the lag outgrows the whole schedule).
const LATE_MIN_SPAN_S: f64 = 1.0;
/// Busiest engine thread's CPU share (% of one core) that counts as saturated,
/// whatever else runs on the machine: an engine that busy has no room left.
const SATURATED_PCT: f64 = 90.0;
/// Shortest engine run (seconds of wall time summed over the engines) for the CPU
/// rule: start-up work dominates shorter ones.
const SATURATED_MIN_WALL_S: f64 = 0.5;

/// One rule: a pure function of what was asked and what the run measured.
type Rule = fn(&Config, &Workload, &RunResult) -> Option<Advice>;

/// The warnings a finished run deserves (empty for a healthy run), one rule after
/// the other: whether the client was the limit (first: the sweep's table quotes the
/// first finding of a client-bound step), what the run achieved (`outcome`), then
/// the missing reply-rate sample (which concerns the classic report only: front ends
/// that print none use `assess_without_classic_report`).
pub(crate) fn assess(cfg: &Config, work: &Workload, run: &RunResult) -> Vec<Advice> {
    let rules: [Rule; 5] = [
        |cfg, _, run| client_bound(cfg, run),
        |_, _, run| fd_limit(run),
        outcome::all_failed,
        outcome::all_error_status,
        outcome::no_rate_sample,
    ];
    rules
        .iter()
        .filter_map(|rule| rule(cfg, work, run))
        .collect()
}

/// `assess` for a front end that prints no classic report (sweep steps, `ab`, `lb`):
/// without `NoRateSample`, which concerns httperf's `Reply rate` line only.
pub(crate) fn assess_without_classic_report(
    cfg: &Config,
    work: &Workload,
    run: &RunResult,
) -> Vec<Advice> {
    let mut advice = assess(cfg, work, run);
    advice.retain(|a| a.finding != Finding::NoRateSample);
    advice
}

/// Whether `advice` says the client was the limit: a `ClientBound` finding, or the
/// descriptor limit capping the connections (`FdLimit`).
pub(crate) fn is_client_bound(advice: &[Advice]) -> bool {
    advice
        .iter()
        .any(|a| matches!(a.finding, Finding::ClientBound | Finding::FdLimit))
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

/// Client-bound: the client did not keep its schedule. Either arrivals fell behind
/// (lateness p50 above both 1 ms and 10 % of the mean inter-arrival time, over at
/// least 100 arrivals and a schedule of at least 1 s or a lag longer than the whole
/// schedule: most arrivals late, as when the client cannot sustain the rate and the
/// lag builds up), or an engine thread kept a core saturated (≥ 90 % of its
/// wall time in CPU). A late tail alone (p99 over the limit, p50 within it, engine
/// not saturated) is wake-up jitter of a shared machine, shown by the lateness
/// percentiles but not warned about. Sequential runs (`--rate 0`) have no schedule to
/// keep, and with `--max-connections` arrivals wait for the server by design. The
/// text names the cause (`limit`): an engine at its capacity (remedy: more engines,
/// addresses, machines), arrivals held for free connections, or an engine kept
/// waiting by other work on the machine (remedy: a quieter one).
fn client_bound(cfg: &Config, run: &RunResult) -> Option<Advice> {
    // Under a rate profile, the mean over the whole profile: the lateness span then
    // covers the profile's length (lateness itself is from the profiled schedule).
    let mean_s = cfg.mean_period();
    if mean_s <= 0.0 {
        return None;
    }
    let late = &run.stats.hist.lateness;
    let p50_ms = quantile_ms(late, 0.5);
    let p99_ms = quantile_ms(late, 0.99);
    let limit_ms = LATE_FLOOR_US.max(LATE_SHARE * mean_s * 1e6) / 1000.0;
    let span_ms = late.len() as f64 * mean_s * 1000.0;
    let sustained = span_ms >= LATE_MIN_SPAN_S * 1000.0 || p50_ms > span_ms;
    let behind = cfg.load().max_connections() == 0
        && late.len() >= LATE_MIN_ARRIVALS
        && sustained
        && p50_ms > limit_ms;
    let cpu = &run.stats.client;
    let busy = cpu.busiest_pct.min(100.0);
    let late_text =
        format!("lateness p50 {p50_ms:.3} ms, p99 {p99_ms:.3} ms, limit {limit_ms:.3} ms");
    // Arrivals the overload policy held back while the engine itself was idle: they
    // waited for connections to close, not for CPU.
    let held = run.stats.pacing.waited;
    let (cause, remedy) = match limit(behind, busy, cpu.wall_s, held)? {
        // The connection table was full: `fd_limit` names the descriptor limit.
        Limit::Held if run.stats.pacing.table_waited > 0 => return None,
        Limit::Saturated if behind => (
            format!(
                "arrivals started late ({late_text}) and an engine thread used {busy:.0} % \
                 of a core: the client was at its capacity"
            ),
            REMEDY_SATURATED,
        ),
        Limit::Saturated => (
            format!(
                "an engine thread used {busy:.0} % of a core ({late_text}): the client was \
                 at its capacity"
            ),
            REMEDY_SATURATED,
        ),
        Limit::Held => (
            format!(
                "arrivals started late ({late_text}) while the busiest engine thread used \
                 only {busy:.0} % of a core: {held} arrivals waited for connections to close \
                 (the connection table or --overload=degrade's cap on connections in flight \
                 was full: the server holds connections longer than the schedule allows)"
            ),
            "a higher descriptor limit, a shorter --timeout, or --overload=queue for \
             httperf's fd-unavail errors instead",
        ),
        Limit::Starved => (
            format!(
                "arrivals started late ({late_text}) while the busiest engine thread used \
                 only {busy:.0} % of a core: other work on this machine kept the engine \
                 waiting"
            ),
            "run on a quieter machine, or with fewer --threads than cores",
        ),
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
/// `--overload=queue` they fail as `fd-unavail` instead, which `all_failed` names).
fn fd_limit(run: &RunResult) -> Option<Advice> {
    let p = &run.stats.pacing;
    if p.table_waited == 0 {
        return None;
    }
    let limit = match p.fd_limit {
        0 => String::new(),
        n => format!(" {n}"),
    };
    let arrivals = if p.table_waited == 1 {
        "arrival"
    } else {
        "arrivals"
    };
    let conns = if p.conn_table == 1 {
        "connection"
    } else {
        "connections"
    };
    Some(Advice {
        finding: Finding::FdLimit,
        text: format!(
            "the descriptor limit{limit} capped concurrency at {} {conns}: {} {arrivals} \
             waited for a connection to close (raise `ulimit -n`)",
            p.conn_table, p.table_waited
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

/// What limited a client that did not keep its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// An engine thread used at least `SATURATED_PCT` of a core: the client's
    /// capacity, whatever else ran.
    Saturated,
    /// Arrivals late while the engine had CPU to spare, and the overload policy held
    /// some back for want of a free connection.
    Held,
    /// Arrivals late while the engine had CPU to spare and nothing held them: the
    /// engine was kept waiting for a core by other work.
    Starved,
}

/// The limit, from whether most arrivals were late (`behind`), the busiest engine's
/// share of a core (`busy_pct`) over `wall_s` seconds of engine time, and the
/// arrivals held for a free connection (`held`); None when the client kept its
/// schedule. A saturated engine is the verdict whether or not arrivals were late;
/// runs shorter than `SATURATED_MIN_WALL_S` are dominated by start-up and are not
/// judged on CPU.
fn limit(behind: bool, busy_pct: f64, wall_s: f64, held: u64) -> Option<Limit> {
    let saturated = wall_s >= SATURATED_MIN_WALL_S && busy_pct >= SATURATED_PCT;
    match (behind, saturated) {
        (_, true) => Some(Limit::Saturated),
        (false, false) => None,
        (true, false) if held > 0 => Some(Limit::Held),
        (true, false) => Some(Limit::Starved),
    }
}

/// Prints `lines(advice)` on stderr.
pub(crate) fn print(advice: &[Advice]) {
    for line in lines(advice) {
        eprintln!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assess(&cfg, &work, r)
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
        assert_eq!(
            advice,
            [Advice {
                finding: Finding::FdLimit,
                text: "the descriptor limit 24 capped concurrency at 4 connections: 996 \
                       arrivals waited for a connection to close (raise `ulimit -n`)"
                    .into()
            }]
        );
        assert!(is_client_bound(&advice));
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
        assert!(is_client_bound(&advice));
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
    fn the_limit_is_decided_on_measured_cpu_lateness_and_held_arrivals() {
        use Limit::{Held, Saturated, Starved};
        let cases = [
            // (behind, busy %, engine wall s, held) → limit
            (false, 10.0, 10.0, 0, None),
            (false, 89.9, 10.0, 0, None),
            (false, 90.0, 10.0, 0, Some(Saturated)),
            (true, 90.0, 10.0, 0, Some(Saturated)),
            (true, 93.0, 10.0, 500, Some(Saturated)),
            (true, 95.0, 3.0, 0, Some(Saturated)),
            (true, 89.9, 10.0, 0, Some(Starved)),
            (true, 40.0, 10.0, 0, Some(Starved)),
            (true, 40.0, 10.0, 1, Some(Held)),
            // Too short to judge on CPU: only lateness counts.
            (false, 99.0, 0.49, 0, None),
            (true, 99.0, 0.49, 0, Some(Starved)),
        ];
        for (behind, busy, wall, held, want) in cases {
            assert_eq!(
                limit(behind, busy, wall, held),
                want,
                "{behind} {busy} {wall} {held}"
            );
        }
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
