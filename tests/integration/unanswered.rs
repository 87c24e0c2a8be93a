//! Calls a hung server leaves unanswered when the run ends: under `--call-rate`
//! (a server that stops answering after its first replies, a server that never
//! reads) and under `--rate` (a server that never reads). Each call is counted once:
//! the scheduled calls are completed, lost, unsent or abandoned; the connections
//! still open are abandoned, not successful and not errors; the unanswered calls are
//! in the call rate's lateness and response figures up to the end, named by the
//! `unanswered` warning, and a `--fail-on` on them exits 3. Every count is checked
//! against what the server or the proxy saw.

use serde_json::Value;

use crate::support::fault_proxy::{Fault, FaultProxy, UpServer};
use crate::support::server::{Behavior, Server};
use crate::support::{run, wait_until, HANG_GUARD};

fn n(v: &Value, path: &[&str]) -> u64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("no number at {path:?} in {v}"))
}

fn ms(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64()
        .unwrap_or_else(|| panic!("no number at {path:?} in {v}"))
}

/// Runs rshperf against 127.0.0.1:`port` with `args` and `--json -`; the exit
/// status, the document and stderr.
fn run_json(port: u16, args: &[&str]) -> (Option<i32>, Value, String) {
    let port = port.to_string();
    let mut all = vec!["--server", "127.0.0.1", "--port", &port, "--json", "-"];
    all.extend_from_slice(args);
    let out = run(&all);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("rshperf {all:?}: {e}\n{text}\n{stderr}"));
    (out.status.code(), v, stderr)
}

/// Every connection still open at the end is abandoned; none ended or failed.
fn all_abandoned(v: &Value, conns: u64) {
    assert_eq!(n(v, &["connections", "total"]), conns, "{v}");
    assert_eq!(n(v, &["connections", "successful"]), 0, "{v}");
    assert_eq!(n(v, &["connections", "failed"]), 0, "{v}");
    assert_eq!(n(v, &["errors", "total"]), 0, "{v}");
    assert_eq!(n(v, &["abandoned"]), conns, "{v}");
    assert_eq!(
        n(v, &["connections", "total"]),
        n(v, &["connections", "successful"]) + n(v, &["errors", "total"]) + n(v, &["abandoned"]),
        "{v}"
    );
}

/// The call rate's own identities: every scheduled call ended once, lateness holds
/// every scheduled call, response every one but the lost.
fn calls_accounted(v: &Value) {
    let c = &v["call_rate"];
    let scheduled = n(c, &["scheduled"]);
    assert_eq!(
        scheduled,
        n(c, &["completed"]) + n(c, &["lost"]) + n(c, &["unsent"]) + n(c, &["abandoned"]),
        "{v}"
    );
    assert_eq!(n(c, &["lateness_ms", "count"]), scheduled, "{v}");
    assert_eq!(
        n(c, &["response_ms", "count"]),
        scheduled - n(c, &["lost"]),
        "{v}"
    );
    assert_eq!(n(c, &["completed"]), n(v, &["replies", "total"]), "{v}");
}

#[test]
fn call_rate_against_a_server_that_stops_answering() {
    // 19 replies, then every request hangs: each of the 5 pool connections has one
    // call in flight at the end (abandoned), the rest of the schedule never went out.
    let s = Server::start(Behavior::StallFrom(20, 100));
    let (code, v, stderr) = run_json(
        s.port(),
        &[
            "--call-rate",
            "100",
            "--num-conns",
            "5",
            "--runtime",
            "2",
            "--timeout",
            "10",
            "--fail-on",
            "errors>0",
            "--fail-on",
            "call_rate_abandoned>0",
            "--fail-on",
            "call_rate_unsent>0",
        ],
    );
    assert_eq!(code, Some(3), "{stderr}\n{v}");
    wait_until("the server's 24 requests", HANG_GUARD, || {
        s.requests() >= 24
    });
    assert_eq!(s.requests(), 24, "{v}");
    assert_eq!(s.connections(), 5);
    all_abandoned(&v, 5);
    calls_accounted(&v);
    let c = &v["call_rate"];
    assert_eq!(n(c, &["completed"]), 19, "{v}");
    assert_eq!(n(c, &["issued"]), 24, "{v}");
    assert_eq!(n(c, &["abandoned"]), 5, "{v}");
    assert_eq!(n(c, &["lost"]), 0, "{v}");
    let unsent = n(c, &["unsent"]);
    assert!(unsent > 0, "{v}");
    assert_eq!(n(&v, &["unanswered"]), 5, "{v}");
    // The first hung call was due about 0.2 s into a 2-s run: it waited most of it,
    // and so did the unsent calls due soon after.
    assert!(ms(c, &["response_ms", "max"]) >= 1_500.0, "{v}");
    assert!(ms(c, &["lateness_ms", "max"]) >= 1_500.0, "{v}");
    assert!(ms(&v, &["unanswered_max_ms"]) >= 1_500.0, "{v}");
    let warning = format!(
        "rshperf: warning: {} calls were unanswered when the run ended (5 sent and \
         waiting on connections still open, {unsent} never sent), the oldest after ",
        unsent + 5
    );
    assert!(stderr.contains(&warning), "{stderr}");
    assert_eq!(v["findings"][0]["finding"], "unanswered", "{v}");
    assert!(!stderr.contains("threshold breached: errors>0"), "{stderr}");
    assert!(
        stderr.contains("threshold breached: call_rate_abandoned>0 (call_rate_abandoned = 5)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "threshold breached: call_rate_unsent>0 (call_rate_unsent = {unsent})"
        )),
        "{stderr}"
    );
}

#[test]
fn call_rate_against_a_server_that_never_reads() {
    let up = UpServer::start(false);
    let proxy = FaultProxy::start(up.addr(), Fault::NeverRead, 1);
    let (code, v, stderr) = run_json(
        proxy.port(),
        &[
            "--call-rate",
            "100",
            "--num-conns",
            "2",
            "--runtime",
            "2",
            "--timeout",
            "10",
            "--fail-on",
            "call_rate_response_p99>100ms",
        ],
    );
    assert_eq!(code, Some(3), "{stderr}\n{v}");
    wait_until("the proxy's 2 accepts", HANG_GUARD, || proxy.faulted() == 2);
    all_abandoned(&v, 2);
    calls_accounted(&v);
    let c = &v["call_rate"];
    assert_eq!(n(c, &["issued"]), 2, "{v}");
    assert_eq!(n(c, &["completed"]), 0, "{v}");
    assert_eq!(n(c, &["abandoned"]), 2, "{v}");
    assert!(n(c, &["unsent"]) > 0, "{v}");
    assert!(ms(c, &["response_ms", "p99"]) >= 1_000.0, "{v}");
    assert!(
        stderr.contains("(2 sent and waiting on connections still open, "),
        "{stderr}"
    );
    assert!(stderr.contains("and no reply came at all"), "{stderr}");
    assert!(
        stderr.contains("threshold breached: call_rate_response_p99>100ms"),
        "{stderr}"
    );
    assert_eq!(up.get(|c| &c.connections), 0);
}

#[test]
fn rate_against_a_server_that_never_reads() {
    let up = UpServer::start(false);
    let proxy = FaultProxy::start(up.addr(), Fault::NeverRead, 1);
    let (code, v, stderr) = run_json(
        proxy.port(),
        &[
            "--rate",
            "5",
            "--runtime",
            "2",
            "--timeout",
            "10",
            "--fail-on",
            "unanswered>0",
        ],
    );
    assert_eq!(code, Some(3), "{stderr}\n{v}");
    let conns = n(&v, &["connections", "total"]);
    assert!(conns > 0, "{v}");
    wait_until("the proxy's accepts", HANG_GUARD, || {
        proxy.faulted() == conns
    });
    all_abandoned(&v, conns);
    assert_eq!(n(&v, &["requests", "total"]), conns, "{v}");
    assert_eq!(n(&v, &["unanswered"]), conns, "{v}");
    assert!(v.get("call_rate").is_none(), "{v}");
    assert!(
        stderr.contains(&format!(
            "rshperf: warning: {conns} calls were unanswered when the run ended ({conns} sent \
             and waiting on connections still open), the oldest after "
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "threshold breached: unanswered>0 (unanswered = {conns})"
        )),
        "{stderr}"
    );
    assert_eq!(v["findings"][0]["finding"], "unanswered", "{v}");
}
