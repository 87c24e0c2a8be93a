//! README.md's examples do what they say: every code block that runs `rshperf` is run
//! as it stands, against the loopback nginx of `scripts/nginx.sh` (the ports the
//! README names), and every rshperf in it must exit 0 with nothing on stderr.
//!
//! A block is run by bash as written (loops, pipes and all), in a scratch directory,
//! with `rshperf` a shell function that runs the binary under test and records its
//! exit status and stderr. A transcript block (`$ rshperf …` followed by output) runs
//! its `$ ` lines only. `.ci/run` starts the nginx; elsewhere the test skips when it
//! does not answer (`support::skip`). A run that a busy machine kept waiting (the
//! client-bound warning that says so) is repeated, up to twice.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support;

/// The nginx ports the README's examples aim at (HTTP, TLS, h2c, h2).
const NGINX_PORTS: [u16; 4] = [8080, 8443, 8082, 8444];

/// The shell scripts of the README's code blocks that run rshperf, in order.
fn examples(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if !line.trim_start().starts_with("```") {
            continue;
        }
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .collect();
        let prompts: Vec<&str> = body.iter().filter_map(|l| l.strip_prefix("$ ")).collect();
        let script: Vec<&str> = if prompts.is_empty() { body } else { prompts };
        let runs_rshperf = script
            .iter()
            .any(|l| l.trim_start().starts_with("rshperf "));
        if runs_rshperf {
            blocks.push(script.join("\n"));
        }
    }
    blocks
}

#[test]
fn examples_are_the_code_blocks_that_run_rshperf() {
    let md = "intro\n```sh\ncargo build   # target/release/rshperf\n```\n\
              ```\n$ rshperf --server h --num-conns 1\nrshperf --client=0/1 ...\nTotal: 1\n```\n\
              ```sh\nfor r in 1 2; do\n  rshperf --rate $r \\\n    --num-conns 1\ndone\n```\n\
              ```\ncargo test\n```\n";
    assert_eq!(
        examples(md),
        [
            "rshperf --server h --num-conns 1".to_string(),
            "for r in 1 2; do\n  rshperf --rate $r \\\n    --num-conns 1\ndone".to_string(),
        ]
    );
}

/// Whether something accepts connections on 127.0.0.1:`port`.
fn listens(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

#[test]
fn every_readme_example_runs_with_exit_0_and_an_empty_stderr() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let blocks = examples(&readme);
    // Quick start, URL, sweep, CSV, CI, JSON, HTTP/2, ab at least.
    assert!(blocks.len() >= 8, "{blocks:#?}");
    if let Some(port) = NGINX_PORTS.iter().find(|&&p| !listens(p)) {
        return support::skip(&format!(
            "the README's examples need the loopback nginx (nothing on 127.0.0.1:{port}): \
             bash scripts/nginx.sh start (packages nginx-light, openssl)"
        ));
    }
    if !support::installed("python3") {
        return support::skip("the README's JSON example pipes into python3 (package python3)");
    }
    let scratch = std::env::temp_dir().join(format!("rshperf-readme-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let log = scratch.join("rshperf.log");
    let prelude = r#"set -o pipefail
rshperf() {
  "$RSHPERF_BIN" "$@" 2>"$RSHPERF_LOG.err"
  local rc=$?
  printf '@@ rshperf %s\n@@ exit %s\n' "$*" "$rc" >>"$RSHPERF_LOG"
  cat "$RSHPERF_LOG.err" >>"$RSHPERF_LOG"
  return "$rc"
}
"#;
    let _quiet = support::cpu_quiet();
    for block in &blocks {
        // On a machine busy with other work (the rest of this suite), rshperf rightly
        // says so ("other work on this machine kept the engine waiting"): that is
        // the machine, not the example, so such a run is repeated, up to twice.
        let mut tries = 0;
        let (out, record) = loop {
            let _ = std::fs::remove_file(&log);
            let out = Command::new("bash")
                .arg("-c")
                .arg(format!("{prelude}{block}\n"))
                .current_dir(&scratch)
                .env("RSHPERF_BIN", env!("CARGO_BIN_EXE_rshperf"))
                .env("RSHPERF_LOG", &log)
                .output()
                .expect("run bash");
            let record = std::fs::read_to_string(&log).unwrap_or_default();
            let starved = record.lines().any(|l| {
                l.starts_with("rshperf: warning: client-bound: ")
                    && l.contains(": other work on this machine kept the engine waiting;")
            });
            tries += 1;
            if !starved || tries == 3 {
                break (out, record);
            }
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let tail: String = {
            let chars: Vec<char> = stdout.chars().collect();
            chars[chars.len().saturating_sub(2000)..].iter().collect()
        };
        let context = format!(
            "README example:\n{block}\n--- rshperf runs, exit statuses and stderr:\n{record}\
             --- bash stderr:\n{}\n--- stdout (end):\n{}",
            String::from_utf8_lossy(&out.stderr),
            tail
        );
        assert!(out.status.success(), "{context}");
        assert!(out.stderr.is_empty(), "{context}");
        // Every rshperf invocation: exit 0 and nothing on stderr.
        let mut runs = 0;
        let mut lines = record.lines().peekable();
        while let Some(line) = lines.next() {
            assert!(line.starts_with("@@ rshperf "), "stderr output: {context}");
            assert_eq!(lines.next(), Some("@@ exit 0"), "{context}");
            runs += 1;
            assert!(
                lines.peek().is_none_or(|l| l.starts_with("@@ rshperf ")),
                "stderr output: {context}"
            );
        }
        assert!(runs > 0, "{context}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
