//! `sweep --in-one-run`: the walk run as one profiled run.
//!
//! Owns the run: the base configuration with the walk's profile
//! (`levels::profile`, `step:L..H+S/T`) through the builder, one `execute` with every
//! run option the sweep took (`--metrics-listen` publishes it without a step label,
//! `--csv` gets one row), the run's findings and its JSON document, then the steps:
//! one per level the run reached, judged from its timeline (`levels::judge`). Called
//! by `sweep::run`; the table, conclusion, document and page are the walk's.

use serde_json::Value;

use crate::engine::execute::{self, ExecOptions, Hooks};
use crate::engine::metrics::Exporter;
use crate::front::error::Error;
use crate::model::config::Config;
use crate::model::workload::Workload;
use crate::output::advice::Advice;

use super::args::Sweep;
use super::levels::{self, Level, RunWide, Second};
use super::step::{self, Step};
use super::SweepError;

/// What the one run showed.
pub(crate) struct OneRun {
    /// The profile as run (`step:…`).
    pub(crate) profile: String,
    /// Its levels' windows, in order (those the run reached first).
    pub(crate) levels: Vec<Level>,
    /// One step per level the run reached.
    pub(crate) steps: Vec<Step>,
    /// The run's own findings (client-bound, …), for the warnings.
    pub(crate) advice: Vec<Advice>,
    /// The run's document (when the sweep writes `--json`).
    pub(crate) doc: Option<Value>,
    /// Whether SIGINT/SIGTERM stopped it.
    pub(crate) interrupted: bool,
}

/// The configuration of the one run: the sweep's base with the walk's profile.
pub(crate) fn config(sweep: &Sweep) -> Result<(Config, String), Error> {
    let profile = levels::profile(&sweep.rules)
        .ok_or(SweepError::InOneRunNeedsWalk)?
        .map_err(|e| SweepError::InOneRunProfile(e.0))?;
    let text = profile.text().to_string();
    let mut b = sweep.base.to_builder();
    b.rate_profile(profile);
    Ok((b.build().map_err(|r| r.error)?.config, text))
}

/// Runs the sweep's walk as one profiled run and judges its levels; `metrics`: where
/// it publishes (`--metrics-listen`).
pub(crate) fn run(sweep: &Sweep, metrics: Option<&Exporter>) -> Result<OneRun, Error> {
    let (cfg, profile) = config(sweep)?;
    let work = Workload::from_config(&cfg)?;
    let hooks = Hooks {
        metrics: metrics.map(|e| (e, None)),
        ..Hooks::default()
    };
    let result = execute::execute_with(&cfg, &work, ExecOptions { echo: false }, hooks)?;
    let stats = &result.stats;
    // The SLOs are judged per level, from the timeline: none for the run as a whole.
    let step::RunOutputs { advice, doc, .. } = step::outputs(sweep, &cfg, &work, &result, &[])?;
    let levels = cfg
        .load()
        .rate_profile()
        .map(levels::levels_of)
        .unwrap_or_default();
    let replies = stats.replies();
    let net_io = stats.request_bytes + stats.reply_header_bytes + stats.reply_content_bytes;
    let run = RunWide {
        calls_per_arrival: step::calls_per_arrival(&cfg, &work),
        client_cpu_pct: stats.client.busiest_pct,
        bytes_per_reply: if replies == 0 {
            0.0
        } else {
            net_io as f64 / replies as f64
        },
        interrupted: result.interrupted,
    };
    let seconds: Vec<Second<'_>> = stats.timeline.spans().collect();
    let steps = levels::judge(&sweep.rules, &levels, &seconds, &run);
    Ok(OneRun {
        profile,
        levels,
        steps,
        advice,
        doc,
        interrupted: result.interrupted,
    })
}
