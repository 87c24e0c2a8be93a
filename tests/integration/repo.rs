//! What the repository promises about itself: CI runs the test command the README
//! gives, the scripts that need more than a clone say what they need, and the
//! compatibility rules the code relies on are in the repository (docs/compatibility.md),
//! with every section the code cites present there.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_file(path: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// The first fenced block of README.md's "Testing" section.
fn readme_test_command() -> String {
    let readme = repo_file("README.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Testing\n"))
        .expect("README.md has a Testing section");
    let block = section
        .split("```")
        .nth(1)
        .expect("a fenced block in the Testing section");
    block.trim().to_string()
}

#[test]
fn ci_runs_the_readme_test_command_with_skips_forbidden() {
    let command = readme_test_command();
    assert_eq!(command, "cargo test --release --locked");
    let ci = repo_file(".ci/run");
    let mut lines = ci.lines();
    lines
        .find(|l| l.contains("The test command (kept identical to README.md"))
        .expect("the marked test command in .ci/run");
    assert_eq!(lines.next(), Some("step \"cargo test --release\""));
    assert_eq!(lines.next(), Some(command.as_str()));
    assert!(ci.contains("\nexport RSHPERF_CI=1\n"), "{ci}");
    assert!(ci.contains("\nset -euo pipefail\n"), "{ci}");
}

#[test]
fn compat_suite_names_what_it_misses_and_runs_nothing() {
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/compat-suite.sh"))
        .env("RSHPERF", "/nonexistent/rshperf")
        .output()
        .expect("run bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut lines = stderr.lines();
    assert_eq!(lines.next(), Some("compat-suite: cannot run:"));
    assert_eq!(
        lines.next(),
        Some(
            "  - no rshperf binary at /nonexistent/rshperf: cargo build --release \
             (or set RSHPERF)"
        )
    );
    // Whatever else this machine lacks (httperf, a server, the comparison script) is
    // named the same way, with how to get it.
    for l in lines {
        assert!(l.starts_with("  - "), "{stderr}");
        assert!(
            l.contains("apt-get install") || l.contains("scripts/compare.py"),
            "{stderr}"
        );
    }
}

#[test]
fn compat_suite_refuses_arguments() {
    // It once took a directory outside the repository as an argument; nothing it needs
    // lives there any more.
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/compat-suite.sh"))
        .arg("/some/dir")
        .output()
        .expect("run bash");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("usage: scripts/compat-suite.sh"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` (recursively), sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = fs::read_dir(&d).unwrap_or_else(|e| panic!("read {}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The text files of the parts of the repository a reader gets: src/, tests/,
/// scripts/, docs/, bench/, man/ and README.md, as (path relative to the root, text).
fn repository_texts() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in ["src", "tests", "scripts", "docs", "bench", "man"] {
        paths.extend(files_under(&root.join(dir)));
    }
    paths.push(root.join("README.md"));
    paths
        .into_iter()
        .filter_map(|p| {
            // Binary files (none today) have nothing to cite.
            let text = fs::read_to_string(&p).ok()?;
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            Some((rel, text))
        })
        .collect()
}

#[test]
fn the_rules_the_code_cites_are_in_the_repository() {
    // Built from pieces so that this file does not match itself.
    let outside = [
        format!("../{}", "shared"),
        format!("reference {}", '\u{a7}'),
        format!("Reference {}", '\u{a7}'),
        format!("reference{}md", '.'),
    ];
    let texts = repository_texts();
    assert!(texts.len() > 50, "only {} files found", texts.len());
    let mut found = Vec::new();
    for (path, text) in &texts {
        for (n, line) in text.lines().enumerate() {
            for needle in &outside {
                if line.contains(needle.as_str()) {
                    found.push(format!("{path}:{}: {line}", n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "cite docs/compatibility.md (its numbered sections, bugs and appendix A), not \
         a document outside the repository:\n{}",
        found.join("\n")
    );
}

/// The section numbers (`1.2`, `7`), bug numbers and appendix runs (`A.9c`) that are
/// headings of docs/compatibility.md.
fn compatibility_headings() -> (BTreeSet<String>, BTreeSet<u32>, BTreeSet<String>) {
    let doc = repo_file("docs/compatibility.md");
    let (mut sections, mut bugs, mut runs) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for line in doc
        .lines()
        .filter(|l| l.starts_with("## ") || l.starts_with("###"))
    {
        let title = line.trim_start_matches('#').trim_start();
        let first = title.split(' ').next().unwrap_or("");
        if let Some(n) = title.strip_prefix("Bug ") {
            let n = n.split(':').next().unwrap_or("");
            bugs.insert(n.parse().unwrap_or_else(|_| panic!("bug heading {line:?}")));
        } else if first.starts_with("A.") {
            runs.insert(first.to_string());
        } else if first.starts_with(|c: char| c.is_ascii_digit()) {
            sections.insert(first.trim_end_matches('.').to_string());
        }
    }
    (sections, bugs, runs)
}

/// Comment text with line breaks and comment markers removed, so a citation wrapped
/// onto the next comment line reads as one.
fn unwrapped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let t = line.trim_start();
        let t = ["//!", "///", "//"]
            .iter()
            .find_map(|m| t.strip_prefix(m))
            .unwrap_or(t);
        out.push_str(t.trim());
        out.push(' ');
    }
    out
}

/// The citations of docs/compatibility.md in `text`: section numbers, bug numbers and
/// appendix runs, as written after `compatibility.md` (`§2.3.2`, `§1.4.1 and §1.4.3`,
/// `, bug 12`, ` A.9c`, `§1.5–§1.7`).
fn citations(text: &str) -> (Vec<String>, Vec<u32>, Vec<String>) {
    let (mut sections, mut bugs, mut runs) = (Vec::new(), Vec::new(), Vec::new());
    let flat = unwrapped(text);
    for (i, m) in flat.match_indices("compatibility.md") {
        let mut rest = &flat[i + m.len()..];
        loop {
            let r = rest.trim_start_matches([' ', ',', '(', '\u{2013}']);
            let r = r.strip_prefix("and ").unwrap_or(r);
            if let Some(r) = r.strip_prefix('\u{a7}') {
                let n: String = r
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                sections.push(n.trim_end_matches('.').to_string());
                rest = &r[n.len()..];
            } else if let Some(r) = r.strip_prefix("bug ") {
                let n: String = r.chars().take_while(char::is_ascii_digit).collect();
                bugs.push(n.parse().unwrap_or(0));
                rest = &r[n.len()..];
            } else if let Some(r) = r.strip_prefix("A.") {
                let n: String = r.chars().take_while(char::is_ascii_alphanumeric).collect();
                runs.push(format!("A.{n}"));
                rest = &r[n.len()..];
            } else {
                break;
            }
        }
    }
    (sections, bugs, runs)
}

#[test]
fn citation_parser_reads_the_forms_the_code_uses() {
    let text = "//! see docs/compatibility.md §1.4.1 and §1.4.3, and\n\
                //! compatibility.md, bug\n//! 12 (compatibility.md A.9c); docs/compatibility.md\n\
                //! §1.2 and §7), compatibility.md §1.5\u{2013}§1.7.";
    let (sections, bugs, runs) = citations(text);
    assert_eq!(sections, ["1.4.1", "1.4.3", "1.2", "7", "1.5", "1.7"]);
    assert_eq!(bugs, [12]);
    assert_eq!(runs, ["A.9c"]);
}

#[test]
fn every_cited_compatibility_section_exists() {
    let (sections, bugs, runs) = compatibility_headings();
    // The document's own structure: sections 1-7, the bugs 1-24 of its section 6
    // (numbered as code and tests cite them), and the golden runs of appendix A.
    for s in [
        "1.1", "2.2", "2.3.2", "3.1", "3.2", "4.4", "4.7", "5", "6", "7",
    ] {
        assert!(sections.contains(s), "no section {s} in {sections:?}");
    }
    assert_eq!(bugs, (1..=24).collect::<BTreeSet<u32>>());
    assert!(runs.contains("A.1") && runs.contains("A.9c") && runs.contains("A.16"));
    let mut missing = Vec::new();
    let mut cited = 0;
    for (path, text) in repository_texts() {
        if !(path.starts_with("src") || path.starts_with("tests")) {
            continue;
        }
        let (s, b, r) = citations(&text);
        cited += s.len() + b.len() + r.len();
        missing.extend(
            s.iter()
                .filter(|x| !sections.contains(*x))
                .map(|x| format!("{path}: \u{a7}{x}")),
        );
        missing.extend(
            b.iter()
                .filter(|x| !bugs.contains(x))
                .map(|x| format!("{path}: bug {x}")),
        );
        missing.extend(
            r.iter()
                .filter(|x| !runs.contains(*x))
                .map(|x| format!("{path}: {x}")),
        );
    }
    assert!(cited > 30, "only {cited} citations found");
    assert!(
        missing.is_empty(),
        "cited but not a heading of docs/compatibility.md:\n{}",
        missing.join("\n")
    );
}
