//! The output layer's typed errors: reading a result document back (`DocError`),
//! drawing a chart or report page (`RenderError`) and writing the report files
//! (`OutputError`).
//!
//! Owns their texts, byte for byte the ones printed (after `rshperf: merge: FILE: ` for
//! a document, after `rshperf: ` for the rest). Made by `json::stats_from_json`,
//! `chart::svg`, the `html` pages and the front ends that write the files;
//! `front::error::Error` prints them.

use std::io;

use thiserror::Error as ThisError;

/// Why a JSON document cannot be read back into the run it describes.
#[derive(Debug, ThisError)]
pub enum DocError {
    /// `format` is not rshperf's.
    #[error("not an {format} document")]
    NotADocument {
        /// The format expected (`rshperf-result`).
        format: &'static str,
    },
    /// A `version` this rshperf does not read.
    #[error(
        "unsupported {format} version {version} (this rshperf reads {reads}; \
         write the document again with this rshperf)"
    )]
    Version {
        /// The format (`rshperf-result`).
        format: &'static str,
        /// The document's version.
        version: u64,
        /// The version this rshperf reads.
        reads: u64,
    },
    /// A member that is not there.
    #[error("missing {path}{key}")]
    Missing {
        /// The path of the object it belongs to, with a trailing `.` (or empty).
        path: &'static str,
        /// The member.
        key: &'static str,
    },
    /// A member of the wrong type.
    #[error("{path}{key} is not {expected}")]
    WrongType {
        /// The path of the object it belongs to, with a trailing `.` (or empty).
        path: &'static str,
        /// The member.
        key: &'static str,
        /// What it should be, e.g. `a number`.
        expected: &'static str,
    },
    /// `raw` is not an object.
    #[error("raw is not an object")]
    RawNotObject,
    /// `raw` has a member that belongs at the top level.
    #[error("raw.{key}: unknown member (it belongs at the top level)")]
    Misplaced {
        /// The member.
        key: &'static str,
    },
    /// A member of the statistics that does not deserialize.
    #[error("{path}: {source}")]
    Member {
        /// Its path, e.g. `raw.errors`.
        path: String,
        /// serde's reason.
        #[source]
        source: serde_json::Error,
    },
    /// Statistics that contradict themselves (or a run's facts) or are out of range.
    #[error("{path}: {what} (the document contradicts itself)")]
    Contradiction {
        /// The member, e.g. `raw.replies_by_class`.
        path: String,
        /// What does not hold.
        what: String,
    },
}

/// Why a chart or an HTML page cannot be drawn.
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
pub enum RenderError {
    /// The plotting backend refused a chart.
    #[error("chart '{title}': {cause}")]
    Chart {
        /// The chart's title.
        title: String,
        /// The backend's reason (its error borrows the buffer, so it is kept as text).
        cause: String,
    },
}

/// Why a report (file or table) cannot be written.
#[derive(Debug, ThisError)]
pub enum OutputError {
    /// A report file (`--json`, `--csv`, `--timeline`, `--html`) cannot be written.
    #[error("cannot write {option} file {path}: {source}")]
    File {
        /// The option naming the file.
        option: &'static str,
        /// The file (or `-`).
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A file named by an option whose message does not say `file` (sweep's `--file`).
    #[error("cannot write {option} {path}: {source}")]
    Named {
        /// The option naming the file.
        option: &'static str,
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The text report cannot be written to stdout (a full disk, EIO; not a closed
    /// pipe, which ends the output quietly).
    #[error("cannot write the report to stdout: {0}")]
    Stdout(#[source] io::Error),
    /// The sweep's table cannot be written.
    #[error("cannot write the table: {0}")]
    Table(#[source] io::Error),
    /// A report page cannot be drawn.
    #[error("cannot draw the {option} report: {source}")]
    Draw {
        /// The option asking for it (`--html`).
        option: &'static str,
        /// Why.
        #[source]
        source: RenderError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_error_texts() {
        let io = || io::Error::from(io::ErrorKind::NotFound);
        let cases = [
            (
                OutputError::File {
                    option: "--csv",
                    path: "c".into(),
                    source: io(),
                },
                "cannot write --csv file c: entity not found",
            ),
            (
                OutputError::Named {
                    option: "--file",
                    path: "t".into(),
                    source: io(),
                },
                "cannot write --file t: entity not found",
            ),
            (
                OutputError::Stdout(io()),
                "cannot write the report to stdout: entity not found",
            ),
            (
                OutputError::Table(io()),
                "cannot write the table: entity not found",
            ),
            (
                OutputError::Draw {
                    option: "--html",
                    source: RenderError::Chart {
                        title: "x".into(),
                        cause: "y".into(),
                    },
                },
                "cannot draw the --html report: chart 'x': y",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn doc_error_texts() {
        assert_eq!(
            DocError::NotADocument {
                format: "rshperf-result"
            }
            .to_string(),
            "not an rshperf-result document"
        );
        assert_eq!(
            DocError::Version {
                format: "rshperf-result",
                version: 1,
                reads: 2
            }
            .to_string(),
            "unsupported rshperf-result version 1 (this rshperf reads 2; write the \
             document again with this rshperf)"
        );
        assert_eq!(
            DocError::Missing {
                path: "run.",
                key: "duration_s"
            }
            .to_string(),
            "missing run.duration_s"
        );
        assert_eq!(
            DocError::WrongType {
                path: "",
                key: "version",
                expected: "an unsigned integer"
            }
            .to_string(),
            "version is not an unsigned integer"
        );
        assert_eq!(DocError::RawNotObject.to_string(), "raw is not an object");
        assert_eq!(
            DocError::Misplaced { key: "histograms" }.to_string(),
            "raw.histograms: unknown member (it belongs at the top level)"
        );
        let serde = serde_json::from_str::<u8>("-1").expect_err("refused");
        let text = serde.to_string();
        assert_eq!(
            DocError::Member {
                path: "raw.x".into(),
                source: serde
            }
            .to_string(),
            format!("raw.x: {text}")
        );
    }

    #[test]
    fn render_error_text() {
        let e = RenderError::Chart {
            title: "Latency".into(),
            cause: "bad range".into(),
        };
        assert_eq!(e.to_string(), "chart 'Latency': bad range");
    }
}
