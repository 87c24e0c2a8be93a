//! Partitioned sweeps and `--partition auto`: two sweep partitions as processes on
//! loopback merged into the sweep of the whole (against a counting server), the merge's
//! refusals, `--partition auto` from a scheduler's variables, the Kubernetes sweep Jobs,
//! and `scripts/multihost.sh` (network namespaces, nginx, GNU parallel and Slurm; root).

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::recorder::TempFile;
use crate::support::server::{Behavior, Server};
use crate::support::{self, bin, run};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read_json(path: &str) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {path}: {e}"))
}

/// The sweep options of the loopback tests: 40 and 80 conn/s, 0.5 s each.
fn sweep_args(port: u16) -> Vec<String> {
    [
        "sweep",
        "--server",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--timeout",
        "5",
        "--low-rate",
        "40",
        "--high-rate",
        "80",
        "--rate-step",
        "40",
        "--const-test-time",
        "0.5",
        "--cool-down",
        "0.3",
        "--no-progress",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn two_sweep_partitions_merge_into_the_sweep_of_the_whole() {
    let server = Server::start(Behavior::Fixed(100));
    let parts: Vec<TempFile> = (0..2)
        .map(|i| TempFile::new(&format!("sw{i}"), b""))
        .collect();
    // A whole number of milliseconds, written and compared exactly: the moment as
    // the sweep parses it is the f64 nearest to that decimal, as `ms / 1000` is
    // (rounding a float's `{:.3}` text and `(x * 1000).round()` can disagree).
    let start_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis()
        + 1000;
    let start_text = format!("{}.{:03}", start_ms / 1000, start_ms % 1000);
    let start = start_ms as f64 / 1000.0;
    let children: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(i, f)| {
            bin()
                .args(sweep_args(server.port()))
                .args(["--partition", "auto", "--partitions", "2"])
                .args(["--start-at", &start_text, "--json", &f.path])
                // GNU parallel's job number, from 1.
                .env("PARALLEL_SEQ", (i + 1).to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start sweep")
        })
        .collect();
    let children: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("sweep"))
        .collect();
    for c in &children {
        assert_eq!(c.status.code(), Some(0), "{}", text(&c.stderr));
        assert!(
            text(&c.stderr).contains(": 2 steps at fixed moments, up to --high-rate"),
            "{}",
            text(&c.stderr)
        );
    }
    // 20 + 40 arrivals, split 10/10 and 20/20.
    assert_eq!(server.requests(), 60);
    for (i, f) in parts.iter().enumerate() {
        let d = read_json(&f.path);
        assert_eq!(d["parameters"]["partition"], serde_json::json!([i, 2]));
        let conns: Vec<u64> = d["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|s| s["run"]["raw"]["connections"].as_u64().expect("count"))
            .collect();
        assert_eq!(conns, [10, 20], "partition {i}");
        // Both steps of every partition start at the same planned moments: 0.5 s of
        // arrivals and 0.3 s of cool-down apart.
        let at: Vec<f64> = d["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|s| s["start_unix"].as_f64().expect("start"))
            .collect();
        assert_eq!(at[0], start, "{at:?}");
        assert!((at[1] - at[0] - 0.8).abs() < 1e-6, "{at:?}");
    }
    let merged = TempFile::new("sw-merged", b"");
    let html = TempFile::new("sw-html", b"");
    let out = run(&[
        "merge",
        &format!("--json={}", merged.path),
        &format!("--html={}", html.path),
        &parts[0].path,
        &parts[1].path,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(
        lines[0].starts_with("dem_req_rate\treq_rate_127.0.0.1\t"),
        "{table}"
    );
    assert!(lines[1].starts_with("40\t"), "{table}");
    assert!(lines[1].ends_with("\tpass"), "{table}");
    assert!(lines[2].starts_with("80\t"), "{table}");
    assert!(lines[2].ends_with("\tpass"), "{table}");
    assert_eq!(
        lines[3],
        "# no knee up to 80 conn/s: every step passed (the highest rate run was 80 conn/s)"
    );
    assert!(
        text(&out.stderr).starts_with("rshperf merge: 2 partitions of rshperf sweep "),
        "{}",
        text(&out.stderr)
    );
    let d = read_json(&merged.path);
    assert_eq!(d["format"], "rshperf-sweep");
    let steps = d["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2);
    for (s, n) in steps.iter().zip([20u64, 40]) {
        assert_eq!(s["run"]["raw"]["connections"], n);
        assert_eq!(s["run"]["raw"]["responses"], n);
        assert_eq!(
            s["run"]["run"]["merged_from"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(s["verdict"], "pass");
    }
    let page = fs::read_to_string(&html.path).expect("html");
    assert!(page.contains("<svg"), "the page has its charts");
    // The merged sweep merges again into the same table.
    let again = run(&["merge", &merged.path]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(text(&again.stdout), table);
}

#[test]
fn the_merge_refuses_what_is_not_one_partitioned_sweep() {
    let server = Server::start(Behavior::Fixed(10));
    let port = server.port().to_string();
    let whole = TempFile::new("sw-whole", b"");
    let mut args = sweep_args(server.port());
    args.extend(["--json".to_string(), whole.path.clone()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A sweep in one process is its own single partition: merging it alone gives its
    // table back, byte for byte.
    let again = run(&["merge", &whole.path]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(text(&again.stdout), text(&out.stdout));
    // A document without the members a merge rebuilds the sweep from is refused.
    let mut d = read_json(&whole.path);
    d.as_object_mut().expect("object").remove("argv");
    let old = TempFile::new("sw-old", d.to_string().as_bytes());
    let e = text(&run(&["merge", &old.path]).stderr);
    assert_eq!(
        e,
        format!(
            "rshperf: merge: {}: not a partitioned sweep (argv missing): run rshperf sweep \
             with --partition and --json\n",
            old.path
        )
    );
    let single = TempFile::new("sw-run", b"");
    let json = format!("--json={}", single.path);
    let out = run(&[
        "--server=127.0.0.1",
        "--port",
        &port,
        "--num-conns=2",
        &json,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(&["merge", &whole.path, &single.path]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "rshperf: merge: {} is a sweep document but {} is not: merge the partitions of \
             one sweep, or of one run\n",
            whole.path, single.path
        )
    );
    let out = run(&["merge", "--html=x.html", &single.path]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "rshperf: merge: --html is for the documents of a partitioned sweep\n"
    );
    // Run documents still merge as before.
    let out = run(&["merge", &single.path]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("rshperf merge: 1 partition of "));
}

#[test]
fn partition_auto_takes_a_run_s_partition_from_the_scheduler() {
    let server = Server::start(Behavior::Fixed(10));
    let port = server.port().to_string();
    let go = |part: &str, env: &[(&str, &str)]| {
        let mut c = bin();
        c.args(["--server=127.0.0.1", "--port", &port, "--num-conns=5", part]);
        for k in [
            "SLURM_PROCID",
            "SLURM_NTASKS",
            "JOB_COMPLETION_INDEX",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "PMI_RANK",
            "PMI_SIZE",
            "PARALLEL_SEQ",
        ] {
            c.env_remove(k);
        }
        c.envs(env.iter().copied()).output().expect("run")
    };
    let out = go(
        "--partition=auto",
        &[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(" --partition=1/2\n"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("Total: connections 2 requests 2 "));
    let out = go("--partition=auto/3", &[("JOB_COMPLETION_INDEX", "0")]);
    assert!(text(&out.stdout).contains("Total: connections 2 requests 2 "));
    let out = go("--partition=auto", &[("OMPI_COMM_WORLD_RANK", "0")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "rshperf: --partition auto: OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is \
         not\n"
    );
    let out = go("--partition=auto", &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("rshperf: --partition auto: no scheduler's"));
    assert_eq!(server.requests(), 4);
}

/// The Kubernetes sweep Jobs, checked against the Job schema's required structure with
/// python3-yaml: `kubectl apply --dry-run=client` still asks an API server for its
/// schema (kubectl 1.28+: "failed to download openapi"), and there is none in a test.
#[test]
fn kubernetes_sweep_jobs_are_valid_indexed_jobs() {
    if !support::installed("python3") {
        return support::skip("`python3` not installed (package python3)");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kubernetes");
    let script = r#"
import sys, yaml
def one(path):
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    assert len(docs) == 1, path
    d = docs[0]
    assert d["apiVersion"] == "batch/v1" and d["kind"] == "Job", d
    assert isinstance(d["metadata"]["name"], str)
    spec = d["spec"]
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] in ("Never", "OnFailure"), pod
    c = pod["containers"][0]
    assert all(isinstance(a, str) for a in c["args"]), c["args"]
    mounts = {m["name"] for m in c["volumeMounts"]}
    assert mounts <= {v["name"] for v in pod["volumes"]}, mounts
    return spec, c["args"]
spec, args = one(sys.argv[1])
assert spec["completionMode"] == "Indexed", spec
n = spec["completions"]
assert n == spec["parallelism"], spec
assert args[0] == "sweep", args
assert "--partition=auto" in args and f"--partitions={n}" in args, args
assert "--start-at=$(START_AT)" in args, args
assert "--json=/results/sweep-$(JOB_COMPLETION_INDEX).json" in args, args
spec, margs = one(sys.argv[2])
assert margs[0] == "merge", margs
assert [a for a in margs if a.startswith("/results/sweep-")] == \
    [f"/results/sweep-{i}.json" for i in range(n)], margs
print("ok", n)
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("sweep-job.yaml"))
        .arg(dir.join("sweep-merge-job.yaml"))
        .output()
        .expect("python3");
    if !out.status.success() && text(&out.stderr).contains("No module named 'yaml'") {
        return support::skip("python3 has no yaml module (package python3-yaml)");
    }
    assert_eq!(text(&out.stdout), "ok 4\n", "{}", text(&out.stderr));
}

/// `scripts/multihost.sh`: separate "machines" (network namespaces on a bridge, own
/// addresses), nginx in one, partitions started by GNU parallel and by Slurm, merged;
/// the script checks the counts, shares and schedule and says "all checks passed".
#[test]
fn partitions_on_separate_hosts_under_gnu_parallel_and_slurm() {
    for (tool, package) in [
        ("ip", "iproute2"),
        ("nginx", "nginx-light"),
        ("parallel", "parallel"),
        ("slurmctld", "slurmctld"),
        ("slurmd", "slurmd"),
        ("srun", "slurm-client"),
        ("munged", "munge"),
        ("python3", "python3"),
    ] {
        if !support::installed(tool) {
            return support::skip(&format!("`{tool}` not installed (package {package})"));
        }
    }
    if !support::is_root() {
        return support::skip("not root: network namespaces need root");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A guard against a hang, not a verdict: the script's stages take about 30 s
    // alone, several minutes beside the rest of the suite on two cores.
    let out = Command::new("timeout")
        .args(["600", "bash"])
        .arg(root.join("scripts/multihost.sh"))
        .arg("2")
        .env("RSHPERF", env!("CARGO_BIN_EXE_rshperf"))
        .env(support::MACHINE_VAR, support::QUIET_MACHINE)
        // cargo runs this beside other load tests: the schedule's median is judged,
        // its tail printed (the script alone, on a quiet machine, judges the p99).
        .env("MULTIHOST_TAILS", "show")
        .output()
        .expect("run scripts/multihost.sh");
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    for needle in [
        "== GNU parallel: partitioned run",
        "parallel run: merged counters equal the single-machine run's (400 connections, 400 replies)",
        "parallel: 198.18.0.2 made 200 requests = its share",
        "parallel: 198.18.0.3 made 200 requests = its share",
        "== GNU parallel: partitioned sweep",
        "parallel sweep: 2 steps, verdicts ['pass', 'pass'] as the single-machine sweep",
        "== Slurm: partitioned run",
        "slurm run: merged counters equal the single-machine run's (400 connections, 400 replies)",
        "slurm: 198.18.0.3 made 200 requests = its share",
        "== Slurm: partitioned sweep",
        "slurm sweep: 2 steps",
        "multihost: all checks passed",
    ] {
        assert!(stdout.contains(needle), "no {needle:?} in\n{stdout}");
    }
    assert_eq!(
        stdout
            .matches("rshperf merge: 2 partitions of rshperf --timeout=5")
            .count(),
        2
    );
    // Nothing is left behind: no namespace of the script's.
    let ns = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip");
    assert!(!text(&ns.stdout).contains("rshp"), "{}", text(&ns.stdout));
}
