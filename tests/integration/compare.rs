//! `rshperf compare` on real runs against the built-in server (`--delay` makes the
//! slower build), `--junit` of a run and of a comparison (parsed with roxmltree), the
//! markdown (parsed with pulldown-cmark), refusals; and the CI examples of
//! examples/ci/ (YAML parsed, the workflow's shell steps run against `rshperf serve`).

use std::fs;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use rshperf::front::serve::{spawn, ServeHandle, ServeOptions};
use serde_json::Value;

use crate::support;

/// A scratch directory under the system temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("rshperf-compare-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The built-in server on a free loopback port, answering after `delay_ms`.
fn server(delay_ms: u64) -> ServeHandle {
    spawn(ServeOptions {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        delay: Duration::from_millis(delay_ms),
        ..ServeOptions::default()
    })
    .expect("spawn the server")
}

/// A 3-s run at 200 conn/s against `port`, its document in `json`; extra `args`.
fn run_json(port: u16, json: &str, args: &[&str]) -> Output {
    run_json_on(support::QUIET_MACHINE, port, json, args)
}

/// `run_json` on the machine `machine` describes (`RSHPERF_TEST_MACHINE`).
fn run_json_on(machine: &str, port: u16, json: &str, args: &[&str]) -> Output {
    let port = port.to_string();
    let json = format!("--json={json}");
    let mut all = vec![
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--rate",
        "200",
        "--num-conns",
        "600",
        "--timeout",
        "5",
        &json,
    ];
    all.extend_from_slice(args);
    std::process::Command::new(env!("CARGO_BIN_EXE_rshperf"))
        .args(&all)
        .env(support::MACHINE_VAR, machine)
        .output()
        .expect("run rshperf")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (name, failure message) of every test case of a JUnit document, checked with an
/// XML parser: the counts on `testsuites` and `testsuite` agree with the cases.
fn junit_cases(xml: &str) -> Vec<(String, Option<String>)> {
    let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suite = root
        .children()
        .find(|n| n.has_tag_name("testsuite"))
        .expect("a testsuite");
    let cases: Vec<(String, Option<String>)> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|tc| {
            let f = tc
                .children()
                .find(|n| n.has_tag_name("failure"))
                .map(|f| f.attribute("message").unwrap_or("").to_string());
            (tc.attribute("name").unwrap_or("").to_string(), f)
        })
        .collect();
    let failures = cases.iter().filter(|c| c.1.is_some()).count().to_string();
    for el in [root, suite] {
        assert_eq!(
            el.attribute("tests"),
            Some(cases.len().to_string().as_str())
        );
        assert_eq!(el.attribute("failures"), Some(failures.as_str()));
    }
    cases
}

/// The cells of every row of the first table of a markdown text (header first),
/// through a CommonMark parser with GitHub's tables.
fn markdown_table(md: &str) -> Vec<Vec<String>> {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut in_cell = false;
    for ev in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::TableHead | Tag::TableRow) => rows.push(Vec::new()),
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                rows.last_mut().expect("row").push(String::new());
            }
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::End(TagEnd::Table) => break,
            Event::Text(t) | Event::Code(t) if in_cell => {
                rows.last_mut()
                    .and_then(|r| r.last_mut())
                    .expect("cell")
                    .push_str(&t);
            }
            _ => {}
        }
    }
    rows
}

#[test]
fn compare_tells_a_slower_server_and_gates_it() {
    let dir = Scratch::new("slower");
    // 1 ms against 50 ms: a difference that stands out of the noise of a busy machine
    // (a late client) in three seconds, at alpha 0.05.
    let (fast, slow) = (server(1), server(50));
    let (a, b) = (dir.file("a.json"), dir.file("b.json"));
    // A run's --junit: one case per --fail-on threshold.
    let junit_run = dir.file("run.xml");
    let out = run_json(
        fast.addr().port(),
        &a,
        &[
            "--fail-on",
            "errors>0",
            "--fail-on",
            "p50>0.5ms",
            &format!("--junit={junit_run}"),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let cases = junit_cases(&fs::read_to_string(&junit_run).expect("run junit"));
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0], ("errors>0".to_string(), None));
    assert_eq!(cases[1].0, "p50>0.5ms");
    let failure = cases[1]
        .1
        .as_deref()
        .expect("p50 is above 0.5 ms: 1 ms delay");
    assert!(
        failure.starts_with("threshold breached: p50>0.5ms (p50 = 1."),
        "{failure}"
    );
    let out = run_json(slow.addr().port(), &b, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // Two servers, two ports: different workloads, refused unless --force.
    let out = support::run(&["compare", &a, &b]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "rshperf: compare: runs of different workloads: {a} and {b} differ in port: "
        )) && err.ends_with(" (--force compares them anyway)\n"),
        "{err}"
    );

    let junit = dir.file("cmp.xml");
    let out = support::run(&[
        "compare",
        "--force",
        "--alpha=0.05",
        "--fail-on-regression",
        "p50>+10%",
        "--fail-on-regression",
        "reply-rate<-50%",
        "--junit",
        &junit,
        &a,
        &b,
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("\nwarning: workloads differ (--force): "),
        "{stdout}"
    );
    let p50 = stdout
        .lines()
        .find(|l| l.starts_with("response p50 [ms]"))
        .expect("a response p50 line");
    assert!(p50.contains(" slower "), "{p50}");
    assert!(stdout.contains("\nFAIL p50>+10%: +"), "{stdout}");
    assert!(stdout.contains("\npass reply-rate<-50%: "), "{stdout}");
    let cases = junit_cases(&fs::read_to_string(&junit).expect("compare junit"));
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].0, "p50>+10%");
    assert!(cases[0]
        .1
        .as_deref()
        .is_some_and(|m| m.ends_with("past the limit and significant")));
    assert_eq!(cases[1], ("reply-rate<-50%".to_string(), None));

    // Markdown: one table row per figure, the p50 row slower with an up arrow.
    let out = support::run(&[
        "compare",
        "--force",
        "--alpha=0.05",
        "--format",
        "markdown",
        &a,
        &b,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let rows = markdown_table(&text(&out.stdout));
    assert_eq!(rows[0][1], "figure");
    let p50 = rows
        .iter()
        .find(|r| r[1] == "response p50 (ms)")
        .expect("p50 row");
    assert_eq!((p50[0].as_str(), p50[6].as_str()), ("↑", "slower"));
    assert!(rows.iter().all(|r| r.len() == 7));

    // JSON, and the other way round: faster.
    let out = support::run(&[
        "compare",
        "--force",
        "--alpha=0.05",
        "--format=json",
        &b,
        &a,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let fig = doc["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .find(|f| f["figure"] == "percentiles_response_p50")
        .expect("p50");
    assert_eq!(fig["verdict"], "faster");
    assert!(
        fig["change_pct"].as_f64().is_some_and(|c| c < -80.0),
        "{fig}"
    );
}

#[test]
fn compare_of_a_run_with_itself_and_refusals() {
    let dir = Scratch::new("self");
    let srv = server(0);
    let a = dir.file("a.json");
    let out = run_json(srv.addr().port(), &a, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Pooled bases (--base twice) against the same run: nothing changed, no gate.
    let out = support::run(&[
        "compare",
        "--base",
        &a,
        "--base",
        &a,
        "--fail-on-regression",
        "p99>+10%",
        "--fail-on-regression",
        "reply-rate<-5%",
        &a,
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with(&format!(
            "rshperf compare: base 2 runs ({a}, {a}), new 1 run ({a})\n"
        )),
        "{stdout}"
    );
    for line in stdout
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with("Significant"))
    {
        assert!(
            line.contains("no significant change") || line.contains("not tested"),
            "{line}"
        );
    }
    // 600 calls: a handful of values above p99 (how many depends on ties among the
    // response times), too few for an interval.
    assert!(
        stdout.contains("\npass p99>+10%: not tested (") && stdout.contains(" values above)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\npass reply-rate<-5%: +0.0% (99% CI "),
        "{stdout}"
    );

    // A document of another schema version is refused by its version.
    let mut doc: Value =
        serde_json::from_str(&fs::read_to_string(&a).expect("read")).expect("json");
    doc["version"] = 1.into();
    let old = dir.file("old.json");
    fs::write(&old, doc.to_string()).expect("write");
    let out = support::run(&["compare", &old, &a]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "rshperf: compare: {old}: unsupported rshperf-result version 1 (this rshperf reads \
             2; write the document again with this rshperf)\n"
        )
    );
    // Bad gates, a single file, a missing file: option or input errors, exit 1.
    for (args, want) in [
        (
            vec!["compare", "--fail-on-regression", "p99>10ms", &a, &a],
            "rshperf: compare: --fail-on-regression: the limit in 'p99>10ms' is not a change in %",
        ),
        (
            vec!["compare", &a],
            "rshperf: compare: give a BASE and at least one NEW",
        ),
        (
            vec!["compare", "/nonexistent.json", &a],
            "rshperf: compare: cannot read /nonexistent.json: ",
        ),
    ] {
        let out = support::run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(text(&out.stderr).starts_with(want), "{}", text(&out.stderr));
    }
}

/// A run whose validity block says it is invalid is refused, naming the file and the
/// reasons; `--force` compares it and marks it in the text, markdown, JSON and JUnit
/// outputs, with the same line.
#[test]
fn invalid_runs_are_refused_or_compared_and_marked_with_force() {
    let dir = Scratch::new("invalid");
    let srv = server(0);
    let (a, b) = (dir.file("a.json"), dir.file("b.json"));
    let out = run_json(srv.addr().port(), &a, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // An engine at 97 % of a core, injected: invalid for engine_cpu.
    let saturated = format!("busiest=97,{}", support::QUIET_MACHINE);
    let out = run_json_on(&saturated, srv.addr().port(), &b, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = format!(
        "new {b} is invalid (engine_cpu): an engine thread used 97 % of a core (limit 90 %)"
    );
    let out = support::run(&["compare", &a, &b]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stderr),
        format!("rshperf: compare: {line} (--force compares them anyway and marks them)\n")
    );
    // Both sides invalid: each named, the base first.
    let out = support::run(&["compare", &b, &b]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "rshperf: compare: base {b} is invalid (engine_cpu): an engine thread used 97 % of \
             a core (limit 90 %). {line} (--force compares them anyway and marks them)\n"
        )
    );
    // --force: compared, and marked in every format.
    let junit = dir.file("c.xml");
    let out = support::run(&["compare", "--force", "--junit", &junit, &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[1], format!("warning: {line} (--force)"), "{stdout}");
    assert!(lines[2].starts_with("figure "), "{stdout}");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let xml = fs::read_to_string(&junit).expect("junit");
    assert_eq!(junit_cases(&xml), [(format!("valid: new {b}"), None)]);
    let doc = roxmltree::Document::parse(&xml).expect("xml");
    let skipped = doc
        .descendants()
        .find(|n| n.has_tag_name("skipped"))
        .and_then(|n| n.attribute("message"))
        .map(str::to_string);
    assert_eq!(skipped, Some(format!("{line} (--force)")));
    let out = support::run(&["compare", "--force", "--format", "markdown", &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!("rshperf: compare: warning: {line} (--force)\n")
    );
    let md = text(&out.stdout);
    let quote = md
        .lines()
        .find(|l| l.starts_with("> **Warning**: "))
        .unwrap_or_else(|| panic!("no warning: {md}"));
    let plain: String = quote.chars().filter(|c| *c != '\\').collect();
    let want_plain: String = format!("> **Warning**: {line} (--force)")
        .chars()
        .filter(|c| *c != '\\')
        .collect();
    assert_eq!(plain, want_plain, "{md}");
    let out = support::run(&["compare", "--force", "--format", "json", &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v["invalid"],
        serde_json::json!([{
            "side": "new",
            "file": b,
            "reasons": [{
                "reason": "engine_cpu",
                "text": "an engine thread used 97 % of a core (limit 90 %)",
                "measured": {"busiest_engine_pct": 97.0, "limit_pct": 90.0}
            }],
            "text": line,
        }])
    );
}

#[test]
fn run_junit_path_is_checked_before_the_load() {
    let srv = server(0);
    let port = srv.addr().port().to_string();
    let out = support::run(&[
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--num-conns",
        "1",
        "--junit=/nonexistent/dir/r.xml",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .starts_with("rshperf: cannot write --junit file /nonexistent/dir/r.xml: "),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "no run: {}", text(&out.stdout));
}

/// examples/ci/: the repository's path to the examples.
fn ci_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci")
}

/// Kills the server a workflow step started (its pid in `serve.pid`) if the test ends
/// before the workflow's own stop step.
struct KillServe(PathBuf);

impl Drop for KillServe {
    fn drop(&mut self) {
        if let Ok(pid) = fs::read_to_string(self.0.join("serve.pid")) {
            let _ = std::process::Command::new("kill").arg(pid.trim()).status();
        }
    }
}

/// The examples parse as YAML with the structure the docs describe; the GitHub
/// workflow's shell steps, run in order with bash (as Actions runs them) against
/// `rshperf serve`, make a baseline on the first run and compare against it on the
/// second, writing the markdown to the job summary and the JUnit reports.
#[test]
fn ci_examples_parse_and_the_workflow_steps_run_against_serve() {
    let script = r#"
import json, sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
on = gh.get("on", gh.get(True))
assert on["push"]["branches"] == ["main"] and "pull_request" in on, on
steps = gh["jobs"]["perf"]["steps"]
uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
assert uses == ["actions/checkout", "actions/cache", "actions/cache/restore",
                "actions/cache/save", "actions/upload-artifact"], uses
gl = yaml.safe_load(open(sys.argv[2]))
job = gl["perf"]
assert job["artifacts"]["reports"]["junit"] == "perf/*-junit.xml", job["artifacts"]
assert job["cache"][0]["paths"] == ["perf/baseline/"], job["cache"]
body = "\n".join(job["script"])
for needle in ["--json=", "--fail-on invalid", "compare", "--format markdown", "$PERF_GATES",
               "exit $status"]:
    assert needle in body, needle
runs = {s["id"]: s["run"] for s in steps if "id" in s and "run" in s}
print(json.dumps({"env": gh["env"], "steps": runs}))
"#;
    let dir = ci_dir();
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("github-actions.yml"))
        .arg(dir.join("gitlab-ci.yml"))
        .output();
    let out = match out {
        Ok(o) if text(&o.stderr).contains("No module named 'yaml'") => {
            return support::skip(
                "PyYAML not installed (package python3-yaml): CI examples not checked",
            )
        }
        Ok(o) => o,
        Err(e) => {
            return support::skip(&format!(
                "python3 not available ({e}): CI examples not checked"
            ))
        }
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("JSON from python");
    assert!(parsed["env"]["PERF_GATES"]
        .as_str()
        .is_some_and(|g| g.contains("p99>+10%")));

    let scratch = Scratch::new("ci");
    let _guard = KillServe(scratch.0.clone());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
        .to_string();
    let summary = scratch.file("summary.md");
    let step = |id: &str, sha: &str| -> Output {
        let body = parsed["steps"][id]
            .as_str()
            .unwrap_or_else(|| panic!("step {id}"));
        std::process::Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", body])
            .current_dir(&scratch.0)
            .env("RSHPERF", env!("CARGO_BIN_EXE_rshperf"))
            .env(support::MACHINE_VAR, support::QUIET_MACHINE)
            .env("PERF_PORT", &port)
            .env("PERF_DIR", "perf")
            .env(
                "PERF_ARGS",
                "--uri / --rate 200 --num-conns 400 --timeout 5",
            )
            .env(
                "PERF_WARMUP",
                "--uri / --rate 100 --num-conns 20 --timeout 5",
            )
            .env(
                "PERF_GATES",
                parsed["env"]["PERF_GATES"].as_str().unwrap_or(""),
            )
            .env("GITHUB_STEP_SUMMARY", &summary)
            // The machine's load is not this test's subject (--fail-on invalid).
            .env(support::MACHINE_VAR, support::QUIET_MACHINE)
            .env("GITHUB_SHA", sha)
            .output()
            .expect("run bash")
    };
    let perf = scratch.0.join("perf");
    for (pass, sha) in ["first", "second"].iter().enumerate() {
        let _ = fs::remove_file(&summary);
        for id in ["serve", "run", "compare", "keep", "stop"] {
            let out = step(id, sha);
            let code = out.status.code();
            let ok = if id == "compare" && pass == 1 {
                // Two runs of one server: no regression, or (rarely) noise past a gate.
                matches!(code, Some(0 | 3))
            } else {
                code == Some(0)
            };
            assert!(
                ok,
                "step {id} ({sha}): {code:?}\n{}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        let summary_text = fs::read_to_string(&summary).expect("job summary");
        if pass == 0 {
            assert_eq!(
                summary_text,
                "No baseline yet: the next run on main makes one.\n"
            );
            continue;
        }
        let rows = markdown_table(&summary_text);
        assert_eq!(rows.len(), 1 + 16, "{summary_text}");
        assert_eq!(rows[1][1], "reply rate (replies/s)");
        let gates =
            junit_cases(&fs::read_to_string(perf.join("compare-junit.xml")).expect("junit"));
        let names: Vec<&str> = gates.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["p99>+10%", "reply-rate<-5%"]);
    }
    let run_cases = junit_cases(&fs::read_to_string(perf.join("run-junit.xml")).expect("junit"));
    assert_eq!(
        run_cases,
        [
            ("errors>0".to_string(), None),
            ("invalid".to_string(), None)
        ]
    );
    let mut kept: Vec<String> = fs::read_dir(perf.join("baseline"))
        .expect("baseline dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["first.json", "second.json"]);
}
