//! The per-second timeline as a file: `--timeline=FILE` (CSV, a row per second).
//!
//! The figures of a second are the table of figures' `second` scope
//! (`model::figure::second`, the JSON document's `timeline` array); the columns are
//! their names, the JSON paths flattened with `_` (`response_ms.p99` →
//! `response_ms_p99`, documented in `docs/json.md` §5), so no column list is kept
//! here. Computes nothing. Called by the runner (the CSV, streamed a line per second
//! while the run lasts, then rewritten whole at the end when every second is still its
//! own interval).

use std::io::{self, Write};
use std::path::Path;

use crate::model::figure::second::{row, rows, table};
use crate::model::figure::Val;
use crate::model::stats::timeline::{Interval, Target, Timeline};

use super::csv::cell;

/// The CSV column names, in order: the second's figures.
pub(crate) fn columns() -> Vec<String> {
    table().specs.iter().map(|s| s.name.clone()).collect()
}

/// The CSV header line (with its LF).
fn header() -> String {
    let mut text = columns().join(",");
    text.push('\n');
    text
}

/// One second's CSV line (with its LF).
fn line(values: &[Val]) -> String {
    let cells: Vec<String> = table()
        .specs
        .iter()
        .zip(values)
        .map(|(s, v)| cell(v, s.decimals()))
        .collect();
    let mut text = cells.join(",");
    text.push('\n');
    text
}

/// The CSV text: header, then one line per second (LF line ends).
pub(crate) fn csv(t: &Timeline) -> String {
    let mut text = header();
    for (_, _, values) in rows(t) {
        text.push_str(&line(&values));
    }
    text
}

/// `--timeline=FILE`: writes the CSV (replaced atomically: `file::write_atomic`).
pub(crate) fn write_csv(path: &Path, t: &Timeline) -> io::Result<()> {
    super::file::write_bytes(path, csv(t).as_bytes())
}

/// Whether `--timeline=FILE` is streamed while the run lasts: a regular file (or one
/// still to be made), not a device or FIFO, which are written once at the end.
pub(crate) fn streams(path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.is_file())
}

/// `--timeline=FILE` while the run lasts: truncates `path`, writes the header, then a
/// line per second as `seconds` yields it (start, length in seconds, the interval;
/// `target` the run's rate profile, if any), each written at once, until it ends. Returns the number of seconds written. After
/// a write error the seconds are still taken (the engines never wait on the writer)
/// and the first error is returned.
pub(crate) fn stream(
    path: &Path,
    seconds: impl Iterator<Item = (u64, f64, Interval)>,
    target: Option<&Target>,
) -> io::Result<u64> {
    let mut out = std::fs::File::create(path).and_then(|mut f| {
        f.write_all(header().as_bytes())?;
        Ok(f)
    });
    let mut n = 0u64;
    for (start, len, iv) in seconds {
        n += 1;
        if let Ok(f) = &mut out {
            // An unbuffered file: each line is one write, seen by readers at once.
            if let Err(e) = f.write_all(line(&row(start, len, &iv, target)).as_bytes()) {
                out = Err(e);
            }
        }
    }
    out.map(|_| n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stats::timeline::Totals;
    use crate::model::stats::ERROR_KINDS;

    fn sample() -> Timeline {
        let mut t = Timeline::default();
        t.offered(0);
        t.offered(0);
        t.on_response(1000);
        t.on_response(3000);
        t.on_lateness(40);
        t.roll(
            Totals {
                connections: 2,
                replies: [0, 2, 0, 0, 0],
                errors: [0; ERROR_KINDS],
            },
            1,
            1.0,
        );
        t.offered(1);
        t.on_lateness(2000);
        t.roll(
            Totals {
                connections: 3,
                replies: [0, 2, 0, 0, 0],
                errors: [0, 0, 1, 0, 0, 0, 0, 0],
            },
            0,
            1.25,
        );
        t
    }

    #[test]
    fn a_profiled_run_has_its_target_beside_what_it_issued_and_keeps_it_in_json() {
        let mut t = sample();
        let profile = crate::model::config::parse_rate_profile("ramp:0..4/1s,hold:4/1s")
            .expect("a valid profile");
        t.target = Some(Target::new(&profile));
        let text = csv(&t);
        let names = columns();
        let at = |name: &str| names.iter().position(|c| c == name).expect("a column");
        let (target, issued) = (at("target"), at("issued"));
        let cells: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        // ∫₀¹ 4t dt = 2; the hold's whole second at 4/s, though the run ended a
        // quarter second into it (the target does not depend on when the run ended).
        assert_eq!([cells[0][target], cells[0][issued]], ["2", "1"]);
        assert_eq!([cells[1][target], cells[1][issued]], ["4", "1"]);
        let json = serde_json::to_string(&t).expect("serializes");
        assert!(
            json.contains(r#""target":"ramp:0..4/1s,hold:4/1s""#),
            "{json}"
        );
        let back: Timeline = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, t);
        assert_eq!(csv(&back), text);
        let bad = json.replace("ramp:0..4/1s", "ramp:0..4");
        assert!(serde_json::from_str::<Timeline>(&bad).is_err());
    }

    #[test]
    fn csv_has_a_header_and_a_row_per_second() {
        let text = csv(&sample());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "second,seconds,offered,target,issued,connections,replies,status_1xx,status_2xx,status_3xx,\
             status_4xx,status_5xx,errors_total,errors_client_timo,errors_socket_timo,\
             errors_connrefused,errors_connreset,errors_fd_unavail,errors_addrunavail,\
             errors_ftab_full,errors_other,response_ms_count,response_ms_p50,\
             response_ms_p90,response_ms_p99,response_ms_max,lateness_p99_ms,open"
        );
        assert_eq!(
            lines[1],
            "0,1,2,,1,2,2,0,2,0,0,0,0,0,0,0,0,0,0,0,0,2,1.023,3,3,3,0.041,1"
        );
        assert_eq!(
            lines[2],
            "1,0.25,1,,1,1,0,0,0,0,0,0,1,0,0,1,0,0,0,0,0,0,0,0,0,0,2.047,0"
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn the_streamed_file_is_the_csv() {
        let t = sample();
        let path = std::env::temp_dir().join(format!("rshperf-tl-{}.csv", std::process::id()));
        let seconds = t.spans().map(|(s, len, iv)| (s, len, iv.clone()));
        assert_eq!(stream(&path, seconds, None).expect("stream"), 2);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), csv(&t));
        std::fs::remove_file(&path).expect("clean");
        assert!(stream(
            Path::new("/proc/rshperf-no/x.csv"),
            std::iter::empty(),
            None
        )
        .is_err());
    }

    #[test]
    fn json_has_an_object_per_second() {
        let v = crate::model::figure::second::json(&sample());
        assert_eq!(v.as_array().map(Vec::len), Some(2));
        assert_eq!(v[0]["replies"], 2);
        assert_eq!(v[0]["response_ms"]["p99"], 3.0);
        assert_eq!(v[1]["errors"]["connrefused"], 1);
        assert_eq!(v[1]["errors"]["total"], 1);
        assert_eq!(v[1]["seconds"], 0.25);
    }

    #[test]
    fn every_column_is_in_the_documentation() {
        let doc = include_str!("../../docs/json.md");
        let documented = crate::output::doc_table(doc, "### 5.1 `--timeline=FILE` (CSV)");
        assert_eq!(documented, columns(), "docs/json.md §5.1");
    }
}
