//! What the repository promises about itself: CI runs the test command the README
//! gives, and the scripts that need more than a clone say what they need.

use std::fs;
use std::path::Path;
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
    let empty = std::env::temp_dir().join(format!("rshperf-no-shared-{}", std::process::id()));
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/compat-suite.sh"))
        .arg(&empty)
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
