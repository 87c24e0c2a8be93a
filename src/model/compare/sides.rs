//! Each side's data for one compared figure, built from its runs' statistics: the
//! pooled value as printed (the whole-run figure), its within-run noise from the
//! runs' windows (`stats::windows`; the timeline's seconds for documents written
//! before windows, which have none), and each run's own value and noise for the
//! run-noise estimate, for each way of pooling (`figure::Method`). The statistics
//! are `estimate`'s; which figures exist is the table of figures'
//! (`figure::compare`). Pure; called by `model::compare`.

use std::borrow::Cow;

use hdrhistogram::Histogram;

use crate::model::compare::estimate::{
    quantile_within, ratio_within, Batched, Batches, Events, Side, Within, MIN_BATCHES, MIN_RUNS,
};
use crate::model::compare::Run;
use crate::model::figure::second;
use crate::model::stats::timeline::{Interval, LogHist};
use crate::model::stats::windows::{FineHist, Window};
use crate::model::stats::{new_histogram, quantile_ms};

/// Decimals a value of `unit` is printed with (its resolution): µs for ms and the
/// error %, else a tenth.
pub(crate) fn decimals(unit: &str) -> usize {
    match unit {
        "ms" | "%" => 3,
        _ => 1,
    }
}

/// `v` at the resolution it is printed with, so that a change computed from it is
/// the change of the printed values.
pub(crate) fn printed(v: f64, unit: &str) -> f64 {
    let scale = 10f64.powi(decimals(unit) as i32);
    (v * scale).round() / scale
}

/// What a batch of `run` is: its windows, or its seconds when it has none.
fn batch_name(run: &Run) -> &'static str {
    if run.0.windows.windows.is_empty() {
        "seconds"
    } else {
        "windows"
    }
}

/// The batches of the count `name` per unit of time: (length in s, count) of each
/// window (`Window::count`), or of each timeline second (its column `name`) for
/// documents without windows, the lengths scaled to add up to the run's duration.
fn time_batches(run: &Run, name: &str) -> Batches {
    let (stats, info) = run;
    let raw: Batches = if stats.windows.windows.is_empty() {
        second::series(&stats.timeline, name)
    } else {
        stats
            .windows
            .spans()
            .map(|(len, w)| (len, w.count(name).unwrap_or(0) as f64))
            .collect()
    };
    let total: f64 = raw.iter().map(|b| b.0).sum();
    let scale = if total > 0.0 && info.duration > 0.0 {
        info.duration / total
    } else {
        1.0
    };
    raw.into_iter().map(|(x, y)| (x * scale, y)).collect()
}

/// The batches of a proportion (`window` and `second` give (trials, events)).
fn count_batches(
    run: &Run,
    window: &dyn Fn(&Window) -> (u64, u64),
    second: &dyn Fn(&Interval) -> (u64, u64),
) -> Batches {
    let pair = |(x, y): (u64, u64)| (x as f64, y as f64);
    let stats = &run.0;
    if stats.windows.windows.is_empty() {
        stats
            .timeline
            .intervals
            .iter()
            .map(|iv| pair(second(iv)))
            .collect()
    } else {
        stats
            .windows
            .windows
            .iter()
            .map(|w| pair(window(w)))
            .collect()
    }
}

/// The events of a count figure: the numerators of its batches.
fn events(batches: &[Batches], what: &'static str) -> Events {
    let all = batches.iter().flatten();
    Events {
        count: all.clone().map(|b| b.1).sum::<f64>() as u64,
        batches: all.filter(|b| b.1 > 0.0).count() as u64,
        what,
    }
}

/// A ratio side: each run's batches, the pooled value (as printed) and each run's.
fn ratio_side(runs: &[Run], batches: &[Batches], value: f64, one: &dyn Fn(&Run) -> f64) -> Side {
    let name = if runs.iter().any(|r| batch_name(r) == "seconds") {
        "seconds"
    } else {
        "windows"
    };
    let refs: Vec<&[(f64, f64)]> = batches.iter().map(Vec::as_slice).collect();
    let within = ratio_within(&refs, value, name, MIN_BATCHES, true);
    let each = if runs.len() < 2 {
        vec![None; runs.len()]
    } else {
        runs.iter()
            .zip(batches)
            .map(|(run, b)| {
                let v = one(run);
                let w = ratio_within(&[b.as_slice()], v, name, MIN_BATCHES, true).ok()?;
                Some((v, w.var))
            })
            .collect()
    };
    Side {
        value,
        events: None,
        within,
        runs: each,
        noise_in_within: false,
    }
}

/// A rate: the count `name` (`replies`, `connections`) per second of the runs'
/// durations.
pub(crate) fn rate(runs: &[Run], unit: &str, name: &'static str) -> Side {
    let batches: Vec<Batches> = runs.iter().map(|r| time_batches(r, name)).collect();
    let value_of = |bs: &[Batches], secs: f64| {
        let n: f64 = bs.iter().flatten().map(|b| b.1).sum();
        if secs > 0.0 {
            printed(n / secs, unit)
        } else {
            f64::NAN
        }
    };
    let secs: f64 = runs.iter().map(|r| r.1.duration).sum();
    let value = value_of(&batches, secs);
    let one = |run: &Run| value_of(&[time_batches(run, name)], run.1.duration);
    let mut side = ratio_side(runs, &batches, value, &one);
    side.events = Some(events(&batches, name));
    side
}

/// Errors per connection, %.
pub(crate) fn error_rate(runs: &[Run]) -> Side {
    let window = |w: &Window| (w.connections, w.errors);
    let second = |iv: &Interval| (iv.connections, iv.errors.iter().sum());
    let totals = |rs: &[Run]| {
        rs.iter().fold((0u64, 0u64), |(c, e), (s, _)| {
            (c + s.connections, e + s.total_errors())
        })
    };
    let pct = |(c, e): (u64, u64)| {
        if c == 0 {
            f64::NAN
        } else {
            printed(100.0 * e as f64 / c as f64, "%")
        }
    };
    let batches: Vec<Batches> = runs
        .iter()
        .map(|r| count_batches(r, &window, &second))
        .collect();
    let (c, e) = totals(runs);
    let one = |run: &Run| pct(totals(std::slice::from_ref(run)));
    let mut side = ratio_side(runs, &batches, pct((c, e)), &one);
    side.events = Some(events(&batches, "errors"));
    side
}

/// The client's CPU per reply, µs: the runs are the batches.
pub(crate) fn cpu_per_reply(runs: &[Run]) -> Side {
    let batches: Vec<[(f64, f64); 1]> = runs
        .iter()
        .map(|(s, r)| [(s.replies() as f64, r.cpu_user + r.cpu_system)])
        .collect();
    let (replies, secs) = batches
        .iter()
        .fold((0.0, 0.0), |(n, t), [(x, y)]| (n + x, t + y));
    let value = if replies > 0.0 {
        printed(1e6 * secs / replies, "µs")
    } else {
        f64::NAN
    };
    let refs: Vec<&[(f64, f64)]> = batches.iter().map(|b| b.as_slice()).collect();
    Side {
        value,
        events: None,
        within: ratio_within(&refs, value, "runs", MIN_RUNS, false),
        runs: vec![None; runs.len()],
        noise_in_within: true,
    }
}

/// One run's batches of a histogram figure.
enum RunHists<'a> {
    /// The run's windows.
    Windows(Vec<&'a FineHist>),
    /// The run's timeline seconds (documents without windows).
    Seconds(Vec<&'a LogHist>),
}

/// A histogram figure of some runs: their histograms added, and each run's batches.
pub(crate) struct HistRuns<'a> {
    /// The runs' whole histograms added together (one run's is borrowed).
    whole: Cow<'a, Histogram<u64>>,
    /// Each run's batches.
    runs: Vec<RunHists<'a>>,
}

impl<'a> HistRuns<'a> {
    /// The histogram `hist` (`response`, `connect`, `lateness`) of `runs`.
    pub(crate) fn of(runs: &'a [Run], hist: &str) -> HistRuns<'a> {
        let named = |stats: &'a crate::model::stats::Stats| {
            stats
                .hist
                .named()
                .into_iter()
                .find(|(n, _)| *n == hist)
                .map(|(_, h)| h)
        };
        let whole = match runs {
            [(stats, _)] => named(stats).map_or_else(|| Cow::Owned(new_histogram()), Cow::Borrowed),
            _ => {
                let mut sum = new_histogram();
                for one in runs.iter().filter_map(|(stats, _)| named(stats)) {
                    // Every histogram has rshperf's bounds, so adding cannot fail.
                    let _ = sum.add(one);
                }
                Cow::Owned(sum)
            }
        };
        let mut each = Vec::with_capacity(runs.len());
        for (stats, _) in runs {
            let w = &stats.windows.windows;
            each.push(if !w.is_empty() {
                RunHists::Windows(w.iter().filter_map(|w| w.hist(hist)).collect())
            } else {
                let seconds = stats.timeline.intervals.iter();
                RunHists::Seconds(match hist {
                    "response" => seconds.map(|iv| &iv.response).collect(),
                    "lateness" => seconds.map(|iv| &iv.lateness).collect(),
                    _ => Vec::new(),
                })
            });
        }
        HistRuns { whole, runs: each }
    }

    /// Whether no value was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.whole.is_empty()
    }
}

/// Each histogram's (values, values at or below `us`).
fn below<const B: u32>(hists: &[&LogHist<B>], us: f64) -> Batches {
    hists
        .iter()
        .map(|h| (h.count() as f64, h.count_at_or_below(us)))
        .collect()
}

/// The `q` quantile (ms) of each group of consecutive histograms holding
/// `min_above` values above it or more; the last, short group joins the one before.
fn groups<const B: u32>(hists: &[&LogHist<B>], q: f64, min_above: f64) -> Vec<f64> {
    let mut done: Vec<LogHist<B>> = Vec::new();
    let mut cur = LogHist::<B>::default();
    for h in hists {
        cur.merge(h);
        if cur.count() as f64 * (1.0 - q) >= min_above {
            done.push(std::mem::take(&mut cur));
        }
    }
    if cur.count() > 0 {
        match done.last_mut() {
            Some(last) => last.merge(&cur),
            None => done.push(cur),
        }
    }
    done.iter()
        .map(|g| g.quantile_us(q) as f64 / 1000.0)
        .collect()
}

impl Batched for HistRuns<'_> {
    fn quantile(&self, p: f64) -> f64 {
        quantile_ms(&self.whole, p)
    }

    fn count(&self) -> u64 {
        self.whole.len()
    }

    fn batches_below(&self, x: f64) -> Vec<Batches> {
        let us = x * 1000.0;
        self.runs
            .iter()
            .map(|r| match r {
                RunHists::Windows(h) => below(h, us),
                RunHists::Seconds(h) => below(h, us),
            })
            .collect()
    }

    fn resolution(&self, x: f64) -> f64 {
        self.whole.equivalent_range((x * 1000.0) as u64) as f64 / 1000.0
    }

    fn group_quantiles(&self, q: f64, min_above: f64) -> Vec<Vec<f64>> {
        self.runs
            .iter()
            .map(|r| match r {
                RunHists::Windows(h) => groups(h, q, min_above),
                RunHists::Seconds(h) => groups(h, q, min_above),
            })
            .collect()
    }

    fn batch_name(&self) -> &'static str {
        if self.runs.iter().any(|r| matches!(r, RunHists::Seconds(_))) {
            "seconds"
        } else {
            "windows"
        }
    }
}

/// The `q` quantile of histogram `hist`, ms.
pub(crate) fn quantile(runs: &[Run], hist: &str, q: f64) -> Side {
    let pooled = HistRuns::of(runs, hist);
    let value = |h: &HistRuns| {
        if h.is_empty() {
            f64::NAN
        } else {
            quantile_ms(&h.whole, q)
        }
    };
    let each = if runs.len() < 2 {
        vec![None; runs.len()]
    } else {
        runs.iter()
            .map(|run| {
                let one = HistRuns::of(std::slice::from_ref(run), hist);
                let Within { var, .. } = quantile_within(&one, q).ok()?;
                Some((value(&one), var))
            })
            .collect()
    };
    Side {
        value: value(&pooled),
        events: None,
        within: quantile_within(&pooled, q),
        runs: each,
        noise_in_within: false,
    }
}
