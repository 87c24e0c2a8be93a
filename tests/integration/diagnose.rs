//! Each diagnosis against the situation it names: an in-process server (or a process,
//! a namespace, a limit) builds the situation, and the test asserts that stderr names
//! that cause and no other. The decision rules themselves are unit-tested on values
//! in `output::advice`; here the engine has to see the cause for real.
//!
//! Situations: an operand that names a server, an HTTP/1-only port under h2c, a TLS
//! port without h2, bodies that stall after the head, every reply 5xx, a healthy run
//! (silent), an engine starved by a busy thread on its CPU (nice 19 behind it), an
//! address without a route (a network namespace), and a descriptor limit (`prlimit`:
//! failures under `--overload=queue`, a capped concurrency under the default policy).
//! Connects nobody answers are in `nobody_answers.rs`. A saturated engine: its CPU
//! share injected (`RSHPERF_TEST_MACHINE`), so that the verdict does not depend on the
//! machine's speed; a client with less CPU than its rate needs, for real: a cgroup CPU
//! quota of 5 % of a core. Refused connections and
//! 4xx replies are in `first_run.rs`; arrivals held for free connections in
//! `sweep.rs`.

use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::support::hostile_server::{HostileServer, Step};
use crate::support::server::{Behavior, Server};
use crate::support::tls_server::{Pki, TlsServer};
use crate::support::{self, run};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs rshperf against 127.0.0.1:`port` with `args`; exit 0 required; stderr.
fn stderr_of(port: u16, args: &[&str]) -> String {
    let port = port.to_string();
    let mut all = vec!["--server", "127.0.0.1", "--port", &port];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", text(&out.stderr));
    text(&out.stderr)
}

/// The `rshperf: warning:` lines of `stderr`.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("rshperf: warning: "))
        .collect()
}

#[test]
fn an_operand_that_names_a_server_is_an_error_before_anything_is_sent() {
    let s = Server::start(Behavior::Fixed(10));
    let p = s.port();
    for (operand, url) in [
        (format!("127.0.0.1:{p}"), format!("http://127.0.0.1:{p}/")),
        (
            format!("127.0.0.1:{p}/x"),
            format!("http://127.0.0.1:{p}/x"),
        ),
        ("localhost/x".to_string(), "http://localhost/x".to_string()),
    ] {
        let out = run(&[&operand, "--num-conns", "10"]);
        assert_eq!(out.status.code(), Some(1), "{operand}");
        assert_eq!(text(&out.stdout), "", "{operand}");
        assert_eq!(
            text(&out.stderr),
            format!("rshperf: {operand} names a server but is not a URL: give the URL: {url}\n")
        );
    }
    assert_eq!(s.connections(), 0);
    // Other stray operands keep the warning, and the run goes on.
    let out = run(&[
        &format!("http://127.0.0.1:{p}/"),
        "stray",
        "--num-conns",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        warnings(&text(&out.stderr)),
        [
            "rshperf: warning: ignoring argument 'stray': not an option (httperf ignores it \
          too; `rshperf --help` lists the options)"
        ]
    );
    assert_eq!(s.connections(), 1);
}

#[test]
fn a_healthy_short_run_says_only_the_missing_sample() {
    let s = Server::start(Behavior::Fixed(10));
    let err = stderr_of(s.port(), &["--num-conns", "20", "--rate", "200"]);
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("rshperf: note: "))
        .collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].starts_with("rshperf: note: the run took ")
            && notes[0].ends_with(
                " so \"Reply rate\" has no sample (its avg 0.0 is no measurement; run longer, \
                 e.g. --runtime 10 without --num-conns)"
            ),
        "{err}"
    );
    assert!(warnings(&err).is_empty(), "{err}");
}

#[test]
fn h2c_to_an_http1_only_port_says_it_does_not_speak_h2c() {
    // What nginx's HTTP/1 port does with the preface: 400 and close.
    let s = HostileServer::start(vec![
        Step::Request,
        Step::Send(
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
        ),
        Step::Close,
    ]);
    let err = stderr_of(
        s.port(),
        &[
            "--http-version",
            "2",
            "--num-conns",
            "3",
            "--rate",
            "100",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(
        warnings(&err),
        [format!(
            "rshperf: warning: all 3 connections failed (other) — 127.0.0.1:{} answered \
             HTTP/2 with HTTP/1: it does not speak h2c (drop --http-version 2, or use a port \
             that speaks HTTP/2)",
            s.port()
        )]
    );
    assert!(!err.contains("TLS"), "{err}");
}

#[test]
fn h2_to_a_tls_port_without_h2_names_alpn_and_not_the_tls_port() {
    let pki = Pki::new();
    let s = TlsServer::start(pki.server_config(false));
    let err = stderr_of(
        s.port(),
        &[
            "--ssl",
            "--http-version",
            "2",
            "--num-conns",
            "3",
            "--rate",
            "100",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(
        warnings(&err),
        [format!(
            "rshperf: warning: all 3 connections failed (other) — 127.0.0.1:{} does not \
             offer HTTP/2 over TLS (ALPN h2): drop --http-version 2, or use a port that \
             serves h2",
            s.port()
        )]
    );
    assert!(!err.contains("a TLS port"), "{err}");
}

#[test]
fn bodies_that_stall_after_the_head_are_named_not_an_unreachable_server() {
    let s = HostileServer::start(vec![
        Step::Request,
        Step::Send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc".to_vec()),
        Step::Hold,
    ]);
    let err = stderr_of(
        s.port(),
        &["--num-conns", "4", "--rate", "100", "--timeout", "1"],
    );
    assert_eq!(
        warnings(&err),
        [format!(
            "rshperf: warning: all 4 connections timed out (client-timo) — 4 status lines \
             arrived but no body completed: 127.0.0.1:{} stalled the bodies after the heads \
             (is --timeout long enough for them?)",
            s.port()
        )]
    );
    assert!(!err.contains("reachable"), "{err}");
}

#[test]
fn every_reply_5xx_points_at_the_request() {
    let s = Server::start(Behavior::Status(503, 0));
    let err = stderr_of(
        s.port(),
        &["--uri", "/x", "--num-conns", "5", "--rate", "200"],
    );
    assert_eq!(
        warnings(&err),
        [
            "rshperf: warning: all 5 replies were errors (4xx=0 5xx=5) — check --uri, --method \
          and --add-header (--print-reply=header shows the replies)"
        ]
    );
}

/// A busy loop pinned to `cpu` until `stop`.
fn spin_on(cpu: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        pin_to(cpu);
        let mut x = 0u64;
        while !stop.load(Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    })
}

/// Pins the calling thread to `cpu`.
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it, and
    // sched_setaffinity(0, …) reads it for the calling thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// An engine kept from its CPU by other work. A busy thread on CPU 0 and rshperf on
/// CPU 0 too, at nice 19: rshperf waits for the CPU most of its run, for certain, and
/// the kernel's own count of those waits (`/proc/thread-self/schedstat`) makes the run
/// invalid for `machine_starved`. How late its arrivals come depends on how the
/// kernel shares the CPU out, so the one warning names the machine either by the late
/// arrivals (`other work on this machine kept the engine waiting`) or by the waits
/// (`the machine kept the engine from a CPU`), never the engine's capacity.
#[test]
fn an_engine_starved_by_a_busy_process_is_named_as_kept_waiting() {
    for (tool, package) in [("taskset", "util-linux"), ("nice", "coreutils")] {
        if !support::installed(tool) {
            return support::skip(&format!("`{tool}` not installed (package {package})"));
        }
    }
    let s = Server::start(Behavior::Fixed(10));
    // A busy thread on CPU 0 and rshperf on CPU 0 too, at nice 19: it runs when the
    // busy thread's slice ends, so its arrivals start late while its own CPU use
    // stays low.
    // Not while the README's examples run: they must not be kept waiting.
    let _quiet = support::cpu_quiet();
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..1).map(|_| spin_on(0, stop.clone())).collect();
    let port = s.port().to_string();
    let dir = std::env::temp_dir().join(format!("rshperf-starved-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let json = dir.join("r.json");
    let json_arg = format!("--json={}", json.display());
    let out: Output = Command::new("taskset")
        .args(["-c", "0", "nice", "-n", "19"])
        .arg(env!("CARGO_BIN_EXE_rshperf"))
        .args([
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--rate",
            "200",
            "--num-conns",
            "400",
            "--timeout",
            "5",
            &json_arg,
        ])
        .output()
        .expect("run taskset nice rshperf");
    stop.store(true, Ordering::Relaxed);
    for t in spinners {
        t.join().expect("spinner");
    }
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let w = warnings(&err);
    assert_eq!(w.len(), 1, "{err}");
    assert!(
        w[0].starts_with("rshperf: warning: client-bound: "),
        "{err}"
    );
    let late = w[0]
        .starts_with("rshperf: warning: client-bound: arrivals started late (lateness p50 ")
        && w[0].contains(" % of a core: other work on this machine kept the engine waiting; ");
    let waits = w[0]
        .starts_with("rshperf: warning: client-bound: an engine thread waited for a CPU ")
        && w[0].contains("): the machine kept the engine from a CPU; ");
    assert!(late || waits, "{err}");
    assert!(
        w[0].ends_with(
            "the figures describe the client, not the server (run on a quieter machine, or \
             with fewer --threads than cores)"
        ),
        "{err}"
    );
    assert!(!w[0].contains("capacity"), "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let _ = std::fs::remove_dir_all(&dir);
    let v = &doc["validity"];
    assert_eq!(v["valid"], false, "{v}");
    let starved = v["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .find(|r| r["reason"] == "machine_starved")
        .unwrap_or_else(|| panic!("no machine_starved reason: {v}"));
    let waited = starved["measured"]["engine_wait_pct"]
        .as_f64()
        .expect("engine_wait_pct");
    assert!(waited >= 5.0, "{v}");
}

/// A saturated engine is named at its capacity. The busiest engine thread's share of
/// a core is injected (97 %, with a quiet machine), so the verdict depends neither on
/// this machine's speed nor on its load; the schedule (90 arrivals at 100/s: 0.9 s) is
/// shorter than the lateness rule's 1 s, so late arrivals of a loaded machine are not
/// judged either. The one warning says client-bound at capacity, the JSON's validity
/// block has the one reason with its measurements, and `--fail-on invalid` exits 3.
#[test]
fn an_engine_saturated_by_its_own_work_is_named_at_capacity() {
    let s = Server::start(Behavior::Fixed(10));
    let dir = std::env::temp_dir().join(format!("rshperf-saturated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let json = dir.join("r.json");
    let port = s.port().to_string();
    let json_arg = format!("--json={}", json.display());
    let out = Command::new(env!("CARGO_BIN_EXE_rshperf"))
        .args(["--server", "127.0.0.1", "--port", &port, "--rate", "100"])
        .args(["--num-conns", "90", "--timeout", "5", &json_arg])
        .args(["--fail-on", "invalid"])
        .env(
            "RSHPERF_TEST_MACHINE",
            format!("busiest=97,{}", support::QUIET_MACHINE),
        )
        .stdout(std::process::Stdio::null())
        .output()
        .expect("run rshperf");
    let err = text(&out.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(s.requests(), 90);
    let w = warnings(&err);
    assert_eq!(w.len(), 1, "{err}");
    assert!(
        w[0].starts_with(
            "rshperf: warning: client-bound: an engine thread used 97 % of a core (lateness p50 "
        ),
        "{err}"
    );
    assert!(
        w[0].contains(
            "): the client was at its capacity; the figures describe the client, not the server"
        ),
        "{err}"
    );
    assert!(!w[0].contains("kept the engine waiting"), "{err}");
    assert!(
        err.lines()
            .any(|l| l == "rshperf: threshold breached: invalid (validity_valid = 0)"),
        "{err}"
    );
    let v = &doc["validity"];
    assert_eq!(v["valid"], false, "{v}");
    assert_eq!(
        v["reasons"],
        serde_json::json!([{
            "reason": "engine_cpu",
            "text": "an engine thread used 97 % of a core (limit 90 %)",
            "measured": {"busiest_engine_pct": 97.0, "limit_pct": 90.0}
        }])
    );
}

/// A cgroup with a CPU quota of `pct` % of one core, made for a test and removed
/// when dropped: cgroup v2 (`cpu.max` under /sys/fs/cgroup) or v1 (`cpu.cfs_quota_us`
/// under /sys/fs/cgroup/cpu).
struct CpuQuota {
    dir: std::path::PathBuf,
}

impl CpuQuota {
    /// The cgroup, or why it cannot be made here (what is missing).
    fn new(name: &str, pct: u32) -> Result<CpuQuota, String> {
        use std::path::Path;
        let root = Path::new("/sys/fs/cgroup");
        let v2 = std::fs::read_to_string(root.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|x| x == "cpu"));
        let parent = if v2 {
            // The root may already delegate cpu to its children; if it cannot, the
            // quota file is missing below and says so.
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu");
            root.to_path_buf()
        } else if root.join("cpu/cpu.cfs_quota_us").exists() {
            root.join("cpu")
        } else {
            return Err(
                "no cgroup cpu controller (cgroup v2 with cpu, or v1 cpu at /sys/fs/cgroup/cpu)"
                    .into(),
            );
        };
        let dir = parent.join(format!("rshperf-test-{name}-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot make {} (root needed): {e}", dir.display()))?;
        let q = CpuQuota { dir };
        let period = 100_000;
        let quota = period * pct / 100;
        let set = if v2 {
            std::fs::write(q.dir.join("cpu.max"), format!("{quota} {period}"))
        } else {
            std::fs::write(q.dir.join("cpu.cfs_period_us"), period.to_string())
                .and_then(|()| std::fs::write(q.dir.join("cpu.cfs_quota_us"), quota.to_string()))
        };
        set.map_err(|e| format!("cannot set the quota of {}: {e}", q.dir.display()))?;
        Ok(q)
    }

    /// `program args…` started inside the cgroup: a shell that moves itself in, then
    /// execs it.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\""])
            .arg(&self.dir)
            .arg(program);
        c
    }
}

impl Drop for CpuQuota {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The one run that builds the client-bound situation for certain: rshperf in a
/// cgroup with 5 % of a core, asked for 5,000 connections a second (each costs the
/// engine tens of µs: several times the quota). Nothing is injected: the quota's own
/// throttling counters (`cpu.stat`) say so, the run is invalid for `engine_cpu`
/// naming the quota, the warning says the client had less CPU than the rate needs,
/// and `--fail-on invalid` exits 3.
#[test]
fn a_run_under_a_cpu_quota_it_cannot_keep_is_invalid() {
    let quota = match CpuQuota::new("quota", 5) {
        Ok(q) => q,
        Err(why) => return support::skip(&why),
    };
    let s = rshperf::front::serve::spawn(rshperf::front::serve::ServeOptions {
        addr: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        ..Default::default()
    })
    .expect("spawn rshperf serve");
    let dir = std::env::temp_dir().join(format!("rshperf-quota-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let json = dir.join("r.json");
    let port = s.addr().port().to_string();
    let json_arg = format!("--json={}", json.display());
    let out = quota
        .command(env!("CARGO_BIN_EXE_rshperf"))
        .args(["--server", "127.0.0.1", "--port", &port, "--rate", "5000"])
        .args(["--num-conns", "5000", "--timeout", "10", &json_arg])
        .args(["--fail-on", "invalid"])
        .stdout(std::process::Stdio::null())
        .output()
        .expect("run rshperf in the cgroup");
    drop(quota);
    let err = text(&out.stderr);
    let doc: Option<serde_json::Value> = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let doc = doc.expect("the JSON document");
    let v = &doc["validity"];
    assert_eq!(v["valid"], false, "{v}");
    let quota_reason = v["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .find(|r| r["reason"] == "engine_cpu" && r["measured"]["throttled_pct"].is_number())
        .unwrap_or_else(|| panic!("no engine_cpu reason of the quota: {v}"));
    assert_eq!(quota_reason["measured"]["quota_cores"], 0.05, "{v}");
    let throttled = quota_reason["measured"]["throttled_pct"]
        .as_f64()
        .expect("throttled_pct");
    assert!(throttled >= 10.0, "{v}");
    assert!(
        quota_reason["text"]
            .as_str()
            .expect("text")
            .starts_with("a CPU quota of 0.05 cores (cgroup) throttled the process in "),
        "{v}"
    );
    let w = warnings(&err);
    assert!(
        w.iter()
            .any(|l| l.starts_with("rshperf: warning: client-bound: ")
                && l.contains("a CPU quota of 0.05 cores throttled the process in ")
                && l.contains("the client had less CPU than the rate needs")),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l == "rshperf: threshold breached: invalid (validity_valid = 0)"),
        "{err}"
    );
}

/// Runs rshperf with `args` inside a new network namespace after the shell commands
/// `setup` (loopback up first); None (skipped) without `unshare`, `ip` or root.
fn in_namespace(setup: &str, args: &str) -> Option<Output> {
    for (tool, package) in [("unshare", "util-linux"), ("ip", "iproute2")] {
        if !support::installed(tool) {
            support::skip(&format!("`{tool}` not installed (package {package})"));
            return None;
        }
    }
    match Command::new("unshare").args(["-n", "true"]).output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            support::skip(&format!(
                "cannot make a network namespace (root needed): {}",
                text(&o.stderr).trim()
            ));
            return None;
        }
        Err(e) => {
            support::skip(&format!("cannot run unshare: {e}"));
            return None;
        }
    }
    let bin = env!("CARGO_BIN_EXE_rshperf");
    let script = format!("set -e; ip link set lo up; {setup}; set +e; {bin} {args}");
    Some(
        Command::new("timeout")
            .args(["20", "unshare", "-n", "sh", "-c", &script])
            .output()
            .expect("run timeout unshare sh"),
    )
}

#[test]
fn an_address_without_a_route_names_the_route() {
    let args = "--server 198.18.0.1 --port 80 --num-conns 3 --rate 100 --timeout 1";
    // No route at all (ENETUNREACH, counted as `other`), and a blackhole route
    // (EINVAL, counted as `fd-unavail`): the route is the cause either way.
    for (setup, what) in [
        ("true", "failed (other)"),
        (
            "ip route add blackhole 198.18.0.0/24",
            "failed (fd-unavail)",
        ),
    ] {
        let Some(out) = in_namespace(setup, args) else {
            return;
        };
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert_eq!(
            warnings(&err),
            [format!(
                "rshperf: warning: all 3 connections {what} — there is no route to \
                 198.18.0.1:80: is the address right, and its network reachable from here?"
            )],
            "{setup}"
        );
    }
}

#[test]
fn a_descriptor_limit_below_the_connections_needed_names_ulimit() {
    if !support::installed("prlimit") {
        return support::skip("`prlimit` not installed (package util-linux)");
    }
    // The server holds every connection; 16 descriptors leave the engine room for
    // a few connections only, and with --overload=queue (httperf's way) the rest are
    // fd-unavail at once.
    let s = HostileServer::start(vec![Step::Request, Step::Hold]);
    let port = s.port().to_string();
    let out = Command::new("prlimit")
        .args(["--nofile=16:16", "--"])
        .arg(env!("CARGO_BIN_EXE_rshperf"))
        .args([
            "--server",
            "127.0.0.1",
            "--port",
            &port,
            "--num-conns",
            "40",
            "--rate",
            "1000",
            "--timeout",
            "1",
            "--overload=queue",
        ])
        .output()
        .expect("run prlimit rshperf");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let w = warnings(&err);
    assert_eq!(w.len(), 1, "{err}");
    assert!(
        w[0].starts_with("rshperf: warning: all 40 connections failed, ")
            && w[0].ends_with(" failed (fd-unavail) — out of file descriptors: raise `ulimit -n`"),
        "{err}"
    );

    // The default policy (--overload=degrade) waits for a close instead of failing:
    // 24 descriptors leave a table of 4 connections (20 are kept for the process),
    // so 16 of the 20 arrivals (due within 20 ms; each reply takes 300 ms) wait.
    // Said once, also in the JSON findings.
    let s = Server::start(Behavior::Slow(std::time::Duration::from_millis(300), 10));
    let port = s.port().to_string();
    let doc = crate::support::recorder::TempFile::new("fd-limit-json", b"");
    let json = format!("--json={}", doc.path);
    let out = Command::new("prlimit")
        .args(["--nofile=24:24", "--"])
        .arg(env!("CARGO_BIN_EXE_rshperf"))
        .args(["--server", "127.0.0.1", "--port", &port])
        .args([
            "--num-conns",
            "20",
            "--rate",
            "1000",
            "--timeout",
            "5",
            &json,
        ])
        .output()
        .expect("run prlimit rshperf");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let want = "the descriptor limit 24 capped concurrency at 4 connections: 16 arrivals \
                waited for a connection to close (raise `ulimit -n`)";
    // The warning, then the short run's note.
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], format!("rshperf: warning: {want}"), "{err}");
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[1].starts_with("rshperf: note: the run took "),
        "{err}"
    );
    let report = text(&out.stdout);
    assert!(report.contains(", <=4 concurrent connections)"), "{report}");
    assert!(
        report.contains("Total: connections 20 requests 20 replies 20 "),
        "{report}"
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&doc.path).expect("read the JSON")).expect("JSON");
    // The short run's note (-v only on stderr) follows it there.
    assert_eq!(
        doc["findings"][0],
        serde_json::json!({ "finding": "fd_limit", "text": want })
    );
    assert_eq!(doc["findings"][1]["finding"], "no_rate_sample");
    assert_eq!(doc["findings"].as_array().map(Vec::len), Some(2));
    assert_eq!(doc["raw"]["pacing"]["table_waited"], 16);
    assert_eq!(doc["raw"]["pacing"]["fd_limit"], 24);
}
