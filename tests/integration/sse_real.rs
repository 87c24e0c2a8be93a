//! `--stream` against a real streaming server over every HTTP version:
//! scripts/sse.sh starts scripts/sse_server.py (uvicorn and sse-starlette) behind an
//! nginx that does not buffer (HTTP/1.1, h2c, h2) and a caddy (HTTP/3), on ports and
//! in a directory of each test's own, stopped at the end by its pid files. The counts
//! are exact, as the server's parameters ask: streams, events per reply, `[DONE]`
//! ends counted as the end and not as an event, streams the server cuts counted as
//! cut, and the server's own event log agrees. Times are checked as lower bounds only
//! (nothing arrives before the server's first-event delay). Needs nginx, openssl,
//! caddy and a python with scripts/sse-requirements.txt (`SSE_PYTHON`, which
//! `.ci/run` sets); elsewhere the tests skip (`support::skip`), under `RSHPERF_CI=1`
//! they fail.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

use crate::support::{self, recorder::TempFile};

/// The five ports' distances from `SSE_PORT` (app, HTTP/1.1, h2c, h2, h3).
const SPAN: u16 = 5;

/// The HTTP versions the stack serves: a name and the rshperf options that reach it,
/// given the stack's first port.
fn versions(base: u16) -> [(&'static str, Vec<String>); 4] {
    let port = |d: u16| vec!["--port".to_string(), (base + d).to_string()];
    let with = |mut v: Vec<String>, more: &[&str]| {
        v.extend(more.iter().map(|s| s.to_string()));
        v
    };
    [
        ("HTTP/1.1 (nginx)", port(1)),
        ("h2c (nginx)", with(port(2), &["--http-version", "2"])),
        (
            "h2 (nginx)",
            with(port(3), &["--http-version", "2", "--ssl"]),
        ),
        ("HTTP/3 (caddy)", with(port(4), &["--http-version", "3"])),
    ]
}

/// The python scripts/sse.sh runs the server with (`SSE_PYTHON`, else python3).
fn python() -> String {
    std::env::var("SSE_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// What the stack needs that is missing, with what provides it; None when all is there.
fn missing() -> Option<String> {
    for tool in ["nginx", "openssl", "caddy"] {
        if !support::installed(tool) {
            return Some(format!(
                "scripts/sse.sh needs {tool} (apt-get install nginx-light openssl caddy)"
            ));
        }
    }
    let ok = Command::new(python())
        .args(["-c", "import uvicorn, sse_starlette"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return Some(format!(
            "{} lacks uvicorn or sse-starlette (pip install -r scripts/sse-requirements.txt, \
             or SSE_PYTHON naming a python that has them)",
            python()
        ));
    }
    None
}

/// Whether TCP port `port` on 127.0.0.1 can be bound now (and, for the HTTP/3 port,
/// UDP too).
fn free(port: u16, udp: bool) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
        && (!udp || UdpSocket::bind(("127.0.0.1", port)).is_ok())
}

/// A first port whose five ports are free now, below the kernel's ephemeral range,
/// from a place that differs per process and per call (tests run in parallel).
fn free_base() -> u16 {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let range =
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
    let low: u32 = range
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(32768);
    let (first, last) = (10_000u32, low.saturating_sub(u32::from(SPAN)).max(10_001));
    let span = last - first;
    let start = (std::process::id() * 97 + CALLS.fetch_add(1, Ordering::Relaxed) * 1009) % span;
    (0..span)
        .map(|k| first + (start + k * 11) % span)
        .filter_map(|p| u16::try_from(p).ok())
        .find(|&p| (0..SPAN).all(|d| free(p + d, d == SPAN - 1)))
        .expect("five free ports for the test's streaming server")
}

/// A stack started by scripts/sse.sh in a directory of its own, stopped (by its pid
/// files, with `sse.sh stop`) when dropped.
struct Stack {
    dir: PathBuf,
    base: u16,
    /// The app's event log, written when it stops.
    log: PathBuf,
}

impl Stack {
    /// The `sse.sh` command for this stack.
    fn script(&self, cmd: &str) -> Command {
        let mut c = Command::new("bash");
        c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sse.sh"))
            .arg(cmd)
            .env("SSE_DIR", &self.dir)
            .env("SSE_PORT", self.base.to_string())
            .env("SSE_EVENT_LOG", &self.log);
        for var in [
            "SSE_APP_PORT",
            "SSE_HTTP_PORT",
            "SSE_H2C_PORT",
            "SSE_H2_PORT",
            "SSE_H3_PORT",
        ] {
            c.env_remove(var);
        }
        c
    }

    /// Starts a stack on free ports (another start on the ports it chose, by a test
    /// running beside, is refused by sse.sh: then it tries other ports).
    fn start(name: &str) -> Stack {
        let dir = std::env::temp_dir().join(format!("rshperf-sse-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the stack's directory");
        let mut said = String::new();
        for _ in 0..3 {
            let stack = Stack {
                log: dir.join("events.csv"),
                dir: dir.clone(),
                base: free_base(),
            };
            let out = stack.script("start").output().expect("run scripts/sse.sh");
            if out.status.success() {
                return stack;
            }
            said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            std::mem::forget(stack);
            if !said.contains("is taken by another server") {
                break;
            }
        }
        let _ = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sse.sh"))
            .arg("stop")
            .env("SSE_DIR", &dir)
            .output();
        panic!("scripts/sse.sh start: {said}");
    }

    /// Stops the stack and returns the app's event log: (stream, event, monotonic ns,
    /// tag) per row.
    fn stop_and_log(&self) -> Vec<(u64, String, u64, String)> {
        let out = self.script("stop").output().expect("run scripts/sse.sh");
        assert!(out.status.success(), "{out:?}");
        let text = std::fs::read_to_string(&self.log).expect("the app's event log");
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("stream,event,monotonic_ns,time_ns,tag"),
            "{text}"
        );
        lines
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                assert_eq!(f.len(), 5, "{l}");
                (
                    f[0].parse().expect("stream"),
                    f[1].to_string(),
                    f[2].parse().expect("monotonic_ns"),
                    f[4].to_string(),
                )
            })
            .collect()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let _ = self.script("stop").output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs rshperf on 127.0.0.1 with `target` (port and version options) and `args`,
/// `--json FILE`; returns the JSON document's `stream` member and the whole document.
/// It must exit 0 with nothing on stderr.
fn run_stream(target: &[String], args: &[&str]) -> (Value, Value) {
    run_stream_warned(target, args, &[])
}

/// `run_stream`, where stderr may hold the lines that start with one of `warnings`.
fn run_stream_warned(target: &[String], args: &[&str], warnings: &[&str]) -> (Value, Value) {
    let json = TempFile::new("sse-real-json", b"");
    let out = support::bin()
        .args(["--server", "127.0.0.1"])
        .args(target)
        .args(args)
        .args(["--json", &json.path])
        .output()
        .expect("run rshperf");
    let stderr = support::without_short_run_note(&String::from_utf8_lossy(&out.stderr));
    let stderr: String = stderr
        .lines()
        .filter(|l| !warnings.iter().any(|w| l.starts_with(w)))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "{target:?} {args:?}: {}{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = std::fs::read_to_string(&json.path).expect("the JSON document");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    (doc["stream"].clone(), doc)
}

/// The integer at `key` of the `stream` member.
fn count(stream: &Value, key: &str) -> u64 {
    stream[key]
        .as_u64()
        .unwrap_or_else(|| panic!("stream.{key} in {stream}"))
}

/// streams, events, done, cut, stalled, empty, after_done, open_at_end.
fn counts(stream: &Value) -> [u64; 8] {
    [
        "streams",
        "events",
        "done",
        "cut",
        "stalled",
        "empty",
        "after_done",
        "open_at_end",
    ]
    .map(|k| count(stream, k))
}

#[test]
fn sse_streams_over_every_http_version_count_what_the_server_wrote() {
    if let Some(why) = missing() {
        return support::skip(&why);
    }
    let stack = Stack::start("sse");
    for (k, (name, target)) in versions(stack.base).iter().enumerate() {
        let uri = format!("/stream?events=12&first_ms=30&gap_ms=2&size=64&done=1&tag=v{k}");
        let (s, doc) = run_stream(
            target,
            &[
                "--uri",
                &uri,
                "--stream",
                "sse",
                "--num-conns",
                "6",
                "--rate",
                "20",
                "--timeout",
                "10",
            ],
        );
        // 6 streams of 12 events, each ended by `data: [DONE]`, none cut.
        assert_eq!(counts(&s), [6, 72, 6, 0, 0, 0, 0, 0], "{name}: {s}");
        assert_eq!(s["events_per_stream"].as_f64(), Some(12.0), "{name}");
        assert_eq!(doc["replies"]["total"].as_u64(), Some(6), "{name}");
        assert_eq!(s["gap_ms"]["count"].as_u64(), Some(6 * 11), "{name}: {s}");
        // No first event before the server's 30 ms (less the histogram's 1/1000).
        for q in ["p50", "p90", "max"] {
            let v = s["first_event_ms"][q].as_f64().expect("first_event_ms");
            assert!(v >= 30.0 * 0.999, "{name}: first_event_ms.{q} = {v}");
        }
    }
    // The server's own log: per run, 6 requests, 72 events and 6 [DONE], none cut.
    let rows = stack.stop_and_log();
    for k in 0..4 {
        let tag = format!("v{k}");
        let of = |e: &dyn Fn(&str) -> bool| {
            rows.iter()
                .filter(|(_, ev, _, t)| *t == tag && e(ev))
                .count()
        };
        assert_eq!(of(&|e| e == "request"), 6, "{tag}");
        assert_eq!(of(&|e| e.parse::<u32>().is_ok()), 72, "{tag}");
        assert_eq!(of(&|e| e == "done"), 6, "{tag}");
        assert_eq!(of(&|e| e == "cut"), 0, "{tag}");
    }
}

#[test]
fn ndjson_streams_end_with_the_body() {
    if let Some(why) = missing() {
        return support::skip(&why);
    }
    let stack = Stack::start("ndjson");
    for (name, target) in versions(stack.base) {
        let (s, _) = run_stream(
            &target,
            &[
                "--uri",
                "/stream?events=9&gap_ms=1&format=ndjson",
                "--stream",
                "ndjson",
                "--num-conns",
                "4",
                "--rate",
                "20",
                "--timeout",
                "10",
            ],
        );
        // No [DONE] in NDJSON: the end of the body ends each stream.
        assert_eq!(counts(&s), [4, 36, 0, 0, 0, 0, 0, 0], "{name}: {s}");
    }
}

#[test]
fn llm_chat_streams_count_done_as_the_end_not_a_token() {
    if let Some(why) = missing() {
        return support::skip(&why);
    }
    let stack = Stack::start("chat");
    // Two prompts of 7 and 9 tokens, sent in turn: 4 calls, 32 tokens, 4 [DONE].
    let prompts = TempFile::new(
        "sse-real-prompts",
        b"{\"model\":\"m\",\"stream\":true,\"max_tokens\":7,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}\n\
          {\"model\":\"m\",\"stream\":true,\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"b\"}]}\n",
    );
    let one = TempFile::new(
        "sse-real-prompt",
        b"{\"model\":\"m\",\"stream\":true,\"max_tokens\":5,\"first_ms\":20,\"messages\":[]}",
    );
    for (name, target) in versions(stack.base) {
        let (s, _) = run_stream(
            &target,
            &[
                "--uri",
                "/v1/chat/completions?gap_ms=1",
                "--body-lines",
                &prompts.path,
                "--content-type",
                "application/json",
                "--stream",
                "sse",
                "--num-conns",
                "4",
                "--rate",
                "20",
                "--timeout",
                "10",
            ],
        );
        assert_eq!(counts(&s), [4, 32, 4, 0, 0, 0, 0, 0], "{name}: {s}");
        // --method POST --body-file: one prompt of 5 tokens, its first after 20 ms.
        let (s, _) = run_stream(
            &target,
            &[
                "--uri",
                "/v1/chat/completions",
                "--method",
                "POST",
                "--body-file",
                &one.path,
                "--content-type",
                "application/json",
                "--stream",
                "sse",
                "--num-conns",
                "3",
                "--rate",
                "20",
                "--timeout",
                "10",
            ],
        );
        assert_eq!(counts(&s), [3, 15, 3, 0, 0, 0, 0, 0], "{name}: {s}");
        let first = s["first_event_ms"]["p50"].as_f64().expect("p50");
        assert!(first >= 20.0 * 0.999, "{name}: first token at {first} ms");
    }
}

#[test]
fn a_stream_the_server_cuts_is_counted_cut_over_every_http_version() {
    if let Some(why) = missing() {
        return support::skip(&why);
    }
    let stack = Stack::start("cut");
    for (k, (name, target)) in versions(stack.base).iter().enumerate() {
        // 5 whole events, half of the sixth, then the app closes its connection: the
        // proxy ends the reply early (HTTP/1.1: no last chunk; h2: RST_STREAM) or
        // with the half event (HTTP/3): cut either way.
        let uri = format!("/stream?events=20&gap_ms=1&cut_after=5&tag=c{k}");
        // (rshperf warns that every call failed: a reset over HTTP/1.1, `other` over h2.)
        let (s, _) = run_stream_warned(
            target,
            &[
                "--uri",
                &uri,
                "--stream",
                "sse",
                "--num-conns",
                "3",
                "--rate",
                "20",
                "--timeout",
                "10",
            ],
            &[
                "rshperf: warning: all 3 connections reset (connreset)",
                "rshperf: warning: all 3 connections failed (other)",
            ],
        );
        assert_eq!(counts(&s), [3, 15, 0, 3, 0, 0, 0, 0], "{name}: {s}");
    }
    let rows = stack.stop_and_log();
    for k in 0..4 {
        let tag = format!("c{k}");
        let cuts = rows
            .iter()
            .filter(|(_, e, _, t)| *t == tag && e == "cut")
            .count();
        assert_eq!(cuts, 3, "{tag}");
    }
}

#[test]
fn sse_sh_refuses_a_taken_port_and_names_its_variable() {
    if let Some(why) = missing() {
        return support::skip(&why);
    }
    let base = free_base();
    // Another server on the h2c port (base + 2).
    let holder = TcpListener::bind(("127.0.0.1", base + 2)).expect("bind");
    let dir = std::env::temp_dir().join(format!("rshperf-sse-{}-taken", std::process::id()));
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sse.sh"))
        .arg("start")
        .env("SSE_DIR", &dir)
        .env("SSE_PORT", base.to_string())
        .env_remove("SSE_H2C_PORT")
        .output()
        .expect("run scripts/sse.sh");
    drop(holder);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "sse.sh: 127.0.0.1:{} is taken by another server: set SSE_H2C_PORT to move it \
             (or SSE_PORT to move all five)\n",
            base + 2
        )
    );
    assert!(out.stdout.is_empty(), "{out:?}");
}
