//! The output layer: turning a run's figures into text and files. The classic httperf
//! report, ab's blocks, JSON, CSV, the timeline, HTML, thresholds, findings and
//! advice. Nothing here measures anything. Imports wire and model only (the engine is a
//! sibling layer: neither imports the other).

pub(crate) mod ab;
pub(crate) mod advice;
pub(crate) mod chart;
pub(crate) mod classic;
pub(crate) mod compare;
pub(crate) mod csv;
pub(crate) mod error;
pub(crate) mod extras;
pub(crate) mod file;
pub(crate) mod html;
pub mod json;
pub(crate) mod junit;
pub(crate) mod percentiles;
pub(crate) mod reqlog;
pub(crate) mod servers;
pub(crate) mod session;
pub(crate) mod summary;
pub(crate) mod threshold;
pub(crate) mod timeline;

/// The names a documentation section lists in its tables: every backticked word in
/// the first cell of a table row, in order, from `heading` (a line of the file) to
/// the next heading of the same or a higher level. For the tests that the docs list
/// exactly the generated names.
#[cfg(test)]
pub(crate) fn doc_table(doc: &str, heading: &str) -> Vec<String> {
    doc_column(doc, heading, 0)
}

/// As `doc_table`, for the `column`th cell (from 0) of the rows.
#[cfg(test)]
pub(crate) fn doc_column(doc: &str, heading: &str, column: usize) -> Vec<String> {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut lines = doc.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "no heading {heading:?}");
    let mut fenced = false;
    let mut names = Vec::new();
    for line in lines {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !fenced && hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            break;
        }
        let Some(first) = line
            .strip_prefix('|')
            .and_then(|r| r.split('|').nth(column))
        else {
            continue;
        };
        names.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    names
}
