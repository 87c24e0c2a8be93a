//! `Rules`: the sweep's own options that walk the rates and judge the steps, and
//! `Parameters`, their record in the sweep's `--json` document (its `parameters`
//! member) with the facts of the workload that a merge needs.
//!
//! Owns the member names and order of `parameters` (written by `sweep::document`, read
//! back by serde): `rshperf merge` of a partitioned sweep's documents takes the rules
//! from there (`Rules::stored`), not from the sweep's command line, and the run
//! configuration from each step's stored `config` (`ConfigDoc`). Made by `args` (from
//! the command line) and `sweep_merge` (from a document); read by the walk (`plan`),
//! the judge (`step::judge`), the table, the page and the document.

use serde::{Deserialize, Serialize};

use crate::model::threshold::{self, Threshold, ThresholdError};

use super::args::OutputFmt;

/// The sweep's own options, checked: how it walks the rates, how it judges a step,
/// how it prints its table.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// `--low-rate`.
    pub(crate) low_rate: f64,
    /// `--high-rate`.
    pub(crate) high_rate: f64,
    /// `--rate-step`.
    pub(crate) rate_step: Option<f64>,
    /// `--find-max`.
    pub(crate) find_max: bool,
    /// `--precision`, percent.
    pub(crate) precision: f64,
    /// `--const-test-time` (5 s by default when neither `--num-conns` nor sessions fix
    /// a step's arrivals).
    pub(crate) const_test_time: Option<f64>,
    /// `--cool-down`, seconds.
    pub(crate) cool_down: f64,
    /// `--min-achieved`, percent.
    pub(crate) min_achieved: f64,
    /// `--max-errors`.
    pub(crate) max_errors: u64,
    /// `--slo`, as typed.
    pub(crate) slo: Vec<String>,
    /// `--slo`, parsed.
    pub(crate) thresholds: Vec<Threshold>,
    /// `--past-knee`.
    pub(crate) past_knee: u32,
    /// `--stop-after-step`.
    pub(crate) stop_after_step: Option<u32>,
    /// `--output-fmt`.
    pub(crate) output_fmt: OutputFmt,
    /// `--in-one-run`: the walk's rates as the levels of one profiled run
    /// (`super::levels`).
    pub(crate) in_one_run: bool,
    /// The command line as typed, for the report.
    pub(crate) command: String,
}

/// A sweep document's `parameters` member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Parameters {
    /// `--low-rate`.
    pub(crate) low_rate: f64,
    /// `--high-rate`.
    pub(crate) high_rate: f64,
    /// `--rate-step`.
    pub(crate) rate_step: Option<f64>,
    /// `--find-max`.
    pub(crate) find_max: bool,
    /// `--precision`.
    pub(crate) precision_pct: f64,
    /// `--const-test-time`.
    pub(crate) const_test_time_s: Option<f64>,
    /// The arrivals of every step, without `--const-test-time`.
    pub(crate) num_conns: Option<u64>,
    /// `--cool-down`.
    pub(crate) cool_down_s: f64,
    /// `--min-achieved`.
    pub(crate) min_achieved_pct: f64,
    /// `--max-errors`.
    pub(crate) max_errors: u64,
    /// `--slo`, as typed.
    pub(crate) slo: Vec<String>,
    /// `--past-knee`.
    pub(crate) past_knee: u32,
    /// This document's `--partition` (I, N); (0, 1) unpartitioned or merged.
    pub(crate) partition: (u32, u32),
    /// `--stop-after-step`.
    pub(crate) stop_after_step: Option<u32>,
    /// Requests per arrival of the workload.
    pub(crate) calls_per_arrival: f64,
    /// The workload's ideal tail after the last arrival, seconds.
    pub(crate) ideal_tail_s: f64,
    /// `--output-fmt` (documents of earlier releases lack it: `tsv`).
    #[serde(default)]
    pub(crate) output_fmt: OutputFmt,
    /// `--in-one-run` (absent when false, as in documents of earlier releases).
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) in_one_run: bool,
}

/// Whether a flag is off (left out of the record).
fn is_false(b: &bool) -> bool {
    !*b
}

/// The facts of a sweep's workload that its document records beside its rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Facts {
    /// `--num-conns` of the run options (every step's arrivals without
    /// `--const-test-time`).
    pub(crate) num_conns: u64,
    /// The partition (I, N) this process runs.
    pub(crate) partition: (u32, u32),
    /// Requests per arrival.
    pub(crate) calls_per_arrival: f64,
    /// The ideal tail after the last arrival, seconds.
    pub(crate) ideal_tail_s: f64,
}

impl Rules {
    /// The record of these rules and `facts`.
    pub(crate) fn parameters(&self, facts: Facts) -> Parameters {
        Parameters {
            low_rate: self.low_rate,
            high_rate: self.high_rate,
            rate_step: self.rate_step,
            find_max: self.find_max,
            precision_pct: self.precision,
            const_test_time_s: self.const_test_time,
            num_conns: self.const_test_time.is_none().then_some(facts.num_conns),
            cool_down_s: self.cool_down,
            min_achieved_pct: self.min_achieved,
            max_errors: self.max_errors,
            slo: self.slo.clone(),
            past_knee: self.past_knee,
            partition: facts.partition,
            stop_after_step: self.stop_after_step,
            calls_per_arrival: facts.calls_per_arrival,
            ideal_tail_s: facts.ideal_tail_s,
            output_fmt: self.output_fmt,
            in_one_run: self.in_one_run,
        }
    }

    /// The rules a sweep document records (`p`), with its `command`; fails on an
    /// `--slo` that does not parse.
    pub(crate) fn stored(p: &Parameters, command: &str) -> Result<Rules, ThresholdError> {
        Ok(Rules {
            low_rate: p.low_rate,
            high_rate: p.high_rate,
            rate_step: p.rate_step,
            find_max: p.find_max,
            precision: p.precision_pct,
            const_test_time: p.const_test_time_s,
            cool_down: p.cool_down_s,
            min_achieved: p.min_achieved_pct,
            max_errors: p.max_errors,
            slo: p.slo.clone(),
            thresholds: threshold::parse_all(&p.slo)?,
            past_knee: p.past_knee,
            stop_after_step: p.stop_after_step,
            output_fmt: p.output_fmt,
            in_one_run: p.in_one_run,
            command: command.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_read_back_from_their_record() {
        let rules = Rules {
            low_rate: 10.0,
            high_rate: 40.5,
            rate_step: Some(10.0),
            find_max: false,
            precision: 2.0,
            const_test_time: None,
            cool_down: 0.5,
            min_achieved: 95.0,
            max_errors: 3,
            slo: vec![" p99 < 50ms".into()],
            thresholds: threshold::parse_all(&[" p99 < 50ms".to_string()]).expect("an SLO"),
            past_knee: 2,
            stop_after_step: Some(4),
            output_fmt: OutputFmt::Csv,
            in_one_run: false,
            command: "rshperf sweep x".into(),
        };
        let facts = Facts {
            num_conns: 7,
            partition: (1, 2),
            calls_per_arrival: 3.0,
            ideal_tail_s: 0.25,
        };
        let p = rules.parameters(facts);
        let text = serde_json::to_string(&p).expect("serializes");
        assert_eq!(
            text,
            "{\"low_rate\":10.0,\"high_rate\":40.5,\"rate_step\":10.0,\"find_max\":false,\
             \"precision_pct\":2.0,\"const_test_time_s\":null,\"num_conns\":7,\
             \"cool_down_s\":0.5,\"min_achieved_pct\":95.0,\"max_errors\":3,\
             \"slo\":[\" p99 < 50ms\"],\"past_knee\":2,\"partition\":[1,2],\
             \"stop_after_step\":4,\"calls_per_arrival\":3.0,\"ideal_tail_s\":0.25,\
             \"output_fmt\":\"csv\"}"
        );
        let back: Parameters = serde_json::from_str(&text).expect("reads");
        assert_eq!(back, p);
        let again = Rules::stored(&back, "rshperf sweep x").expect("rules");
        assert_eq!(again.parameters(facts), p);
        assert_eq!(again.thresholds.len(), 1);
        // An earlier release's record has no output_fmt: the default table.
        let mut v = serde_json::to_value(&p).expect("serializes");
        v.as_object_mut().expect("an object").remove("output_fmt");
        let old: Parameters = serde_json::from_value(v).expect("reads");
        assert_eq!(old.output_fmt, OutputFmt::Tsv);
        let mut bad = p.clone();
        bad.slo = vec!["p99 <".into()];
        assert!(Rules::stored(&bad, "x").is_err());
    }
}
