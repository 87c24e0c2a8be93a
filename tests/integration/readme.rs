//! README.md's examples do what they say, on ports other than the defaults: the test
//! starts its own loopback nginx with `scripts/nginx.sh`, moved by one variable
//! (`HTTP_PORT`, set to a free port; scripts/ports.sh derives the others), and runs
//! every code block that runs `rshperf` as it stands, after `. scripts/ports.sh` as the
//! README's set-up does. Every rshperf in it must exit 0 with nothing on stderr but the
//! note a run of 5 s or less gets (its report's `Reply rate` has no sample).
//!
//! A block is run by bash as written (loops, pipes and all), in a scratch directory,
//! with `rshperf` a shell function that runs the binary under test and records its
//! exit status and stderr. A transcript block (`$ rshperf …` followed by output) runs
//! its `$ ` lines only. Needs nginx and openssl (`.ci/run` installs them); elsewhere
//! the test skips without them (`support::skip`). The nginx is stopped at the end, by
//! its pid file, whatever the outcome. A run that a busy machine kept waiting (the
//! client-bound warning that says so) is repeated, up to twice.

use std::net::{Ipv6Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;

/// The distances of the TLS, h2c and h2 ports from `HTTP_PORT` (scripts/ports.sh).
const PORT_OFFSETS: [u16; 4] = [0, 363, 2, 364];

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

/// Whether 127.0.0.1:`port` (and [::1]:`port`) can be bound now.
fn free(port: u16) -> bool {
    let v4 = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)));
    let v6 = TcpListener::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, port)));
    v4.is_ok() && v6.is_ok()
}

/// An `HTTP_PORT` whose four nginx ports are all free now, below the kernel's
/// ephemeral range (where the many outgoing connections of the other tests take
/// ports), starting from a place that differs per process.
fn free_http_port() -> u16 {
    let range =
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
    let low: u32 = range
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(32768);
    let (first, last) = (10_000u32, low.saturating_sub(365).max(10_001));
    let span = last - first;
    let start = std::process::id() % span;
    (0..span)
        .map(|k| first + (start + k * 7) % span)
        .filter_map(|p| u16::try_from(p).ok())
        .find(|&port| PORT_OFFSETS.iter().all(|d| free(port + d)))
        .expect("a free set of four ports for the test's nginx")
}

/// An nginx started by scripts/nginx.sh in a directory of its own, stopped (by its
/// pid file, with `nginx.sh stop`) when dropped.
struct Nginx {
    dir: PathBuf,
    http_port: u16,
}

impl Nginx {
    /// `command` with this nginx's environment: its directory and `HTTP_PORT` alone
    /// (scripts/ports.sh derives the other ports).
    fn environment<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .env("NGINX_DIR", &self.dir)
            .env("HTTP_PORT", self.http_port.to_string())
            .env_remove("TLS_PORT")
            .env_remove("H2C_PORT")
            .env_remove("H2_PORT")
            .env_remove("NGINX_SOCKET")
            .env_remove("RSHPERF_PORTS_FROM")
    }

    /// The `nginx.sh` command for this nginx.
    fn script(&self, cmd: &str) -> Command {
        let mut c = Command::new("bash");
        c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/nginx.sh"))
            .arg(cmd);
        self.environment(&mut c);
        c
    }

    fn start(dir: PathBuf) -> Nginx {
        let nginx = Nginx {
            dir,
            http_port: free_http_port(),
        };
        let out = nginx
            .script("start")
            .output()
            .expect("run scripts/nginx.sh");
        assert!(
            out.status.success(),
            "scripts/nginx.sh start: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        nginx
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.script("stop").output();
    }
}

#[test]
fn every_readme_example_runs_with_exit_0_and_an_empty_stderr() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let blocks = examples(&readme);
    // Quick start, URL, sweep, CSV, CI, JSON, HTTP/2, ab at least.
    assert!(blocks.len() >= 8, "{blocks:#?}");
    if !support::installed("nginx") || !support::installed("openssl") {
        return support::skip(
            "the README's examples need the loopback nginx of scripts/nginx.sh \
             (packages nginx-light, openssl)",
        );
    }
    if !support::installed("python3") {
        return support::skip("the README's JSON example pipes into python3 (package python3)");
    }
    let scratch = std::env::temp_dir().join(format!("rshperf-readme-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let nginx = Nginx::start(scratch.join("nginx"));
    // Its status knows it for its own (the default ports may hold another nginx).
    let status = nginx
        .script("status")
        .output()
        .expect("run scripts/nginx.sh");
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "listening on 127.0.0.1:{} (HTTP_PORT)",
            nginx.http_port
        )),
        "{said}"
    );
    let log = scratch.join("rshperf.log");
    // The README's set-up: `. scripts/ports.sh`, here with HTTP_PORT moved.
    let prelude = r#"set -o pipefail
. "$RSHPERF_REPO/scripts/ports.sh"
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
            let mut bash = Command::new("bash");
            bash.arg("-c")
                .arg(format!("{prelude}{block}\n"))
                .current_dir(&scratch)
                .env("RSHPERF_BIN", env!("CARGO_BIN_EXE_rshperf"))
                .env(support::MACHINE_VAR, support::QUIET_MACHINE)
                .env("RSHPERF_LOG", &log)
                .env("RSHPERF_REPO", env!("CARGO_MANIFEST_DIR"));
            let out = nginx.environment(&mut bash).output().expect("run bash");
            let record = std::fs::read_to_string(&log).unwrap_or_default();
            // (A sweep's warning names its step first: `at 2000 conn/s: client-bound:`.)
            let starved = record.lines().any(|l| {
                l.starts_with("rshperf: warning: ")
                    && l.contains("client-bound: ")
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
        // Every rshperf invocation: exit 0 and nothing on stderr but a short run's note.
        let mut runs = 0;
        let mut lines = record.lines().filter(|l| !is_no_sample_note(l)).peekable();
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
        // The examples aimed at the moved nginx, not at anything on the defaults.
        assert!(
            !record
                .lines()
                .any(|l| l.starts_with("@@ rshperf ") && names_default_port(l)),
            "{context}"
        );
    }
    drop(nginx);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The note of a run of 5 s or less: `rshperf: note: the run took D s: …`.
fn is_no_sample_note(line: &str) -> bool {
    line.starts_with("rshperf: note: the run took ")
        && line.contains("so \"Reply rate\" has no sample")
}

/// Whether `line` names one of the nginx's default ports (8080, 8443, 8082, 8444) as
/// a number of its own (`:8080`, ` 8080`; not 18080).
fn names_default_port(line: &str) -> bool {
    ["8080", "8443", "8082", "8444"].iter().any(|port| {
        line.match_indices(port).any(|(i, _)| {
            let before = line[..i].chars().next_back();
            let after = line[i + port.len()..].chars().next();
            matches!(before, Some(':' | ' ' | '=')) && !after.is_some_and(|c| c.is_ascii_digit())
        })
    })
}

#[test]
fn default_ports_are_told_from_others() {
    assert!(names_default_port("@@ rshperf --port 8080 --uri /"));
    assert!(names_default_port("@@ rshperf http://127.0.0.1:8443/"));
    assert!(!names_default_port("@@ rshperf --port 18080 --rate 80800"));
}

/// `scripts/nginx.sh start` with another server on two of its ports: one line per
/// port naming the variable that moves it, exit 1, nothing started; `status` says the
/// ports are another server's, not its nginx's.
#[test]
fn nginx_sh_names_the_ports_another_server_holds() {
    if !support::installed("nginx") || !support::installed("openssl") {
        return support::skip("scripts/nginx.sh needs nginx and openssl (nginx-light, openssl)");
    }
    let http_port = free_http_port();
    // Another server on the HTTP and h2c ports (listening, so connects succeed).
    let _http = TcpListener::bind(("127.0.0.1", http_port)).expect("bind");
    let _h2c = TcpListener::bind(("127.0.0.1", http_port + 2)).expect("bind");
    let scratch = std::env::temp_dir().join(format!("rshperf-nginx-clash-{}", std::process::id()));
    let nginx = Nginx {
        dir: scratch.clone(),
        http_port,
    };
    let out = nginx
        .script("start")
        .output()
        .expect("run scripts/nginx.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert_eq!(
        lines[0],
        format!(
            "nginx.sh: 127.0.0.1:{http_port} is taken by another server (not this script's \
             nginx): set HTTP_PORT to move it"
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "nginx.sh: 127.0.0.1:{} is taken by another server (not this script's nginx): \
             set H2C_PORT to move it",
            http_port + 2
        )
    );
    assert!(
        lines[2].starts_with("nginx.sh: or move all four ports at once: export HTTP_PORT="),
        "{stderr}"
    );
    assert!(!scratch.join("nginx.pid").exists(), "nothing is started");
    let out = nginx
        .script("status")
        .output()
        .expect("run scripts/nginx.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "127.0.0.1:{http_port} (HTTP_PORT): another server listens here, not this nginx"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "not listening on 127.0.0.1:{} (TLS_PORT)",
            http_port + 363
        )),
        "{stdout}"
    );
    drop(nginx);
    let _ = std::fs::remove_dir_all(&scratch);
}
