//! Tests of `output::ab` (beside it, to keep that file about the code).

use super::*;
use crate::model::stats::ab::{AbFailure, CallTimes, Completed};

fn server(times: &[(u64, u64, u64)]) -> AbServer {
    let mut s = AbServer {
        software: Some("nginx/1.22.1".into()),
        ..AbServer::default()
    };
    for &(connect_us, total_us, wait_us) in times {
        s.on_complete(&Completed {
            times: CallTimes {
                connect_us,
                total_us,
                wait_us,
            },
            status: 200,
            header_bytes: 229,
            body_bytes: 6,
            sent_bytes: 82,
            keep_alive: false,
            end_us: 0,
            ..Completed::default()
        });
    }
    s
}

fn layout() -> AbLayout {
    AbLayout {
        concurrency: 2,
        check_length: true,
        keep_alive: false,
        send_body: false,
        percentiles: true,
        confidence: true,
        lb_line: false,
    }
}

fn text(s: &AbServer, t: &AbTarget<'_>, l: &AbLayout, seconds: f64) -> String {
    let mut out = Vec::new();
    write_ab_block(&mut out, s, t, l, seconds).expect("write");
    String::from_utf8(out).expect("utf8")
}

const LOCAL: AbTarget<'static> = AbTarget {
    hostname: "127.0.0.1",
    port: 8080,
    path: "/",
    tls_sni: None,
};

#[test]
fn block_is_abs_layout() {
    let s = server(&[
        (200, 1_100, 400),
        (300, 1_600, 500),
        (400, 2_400, 900),
        (100, 900, 300),
        (500, 6_000, 4_000),
    ]);
    assert_eq!(
        text(&s, &LOCAL, &layout(), 0.5),
        "Server Software:        nginx/1.22.1
Server Hostname:        127.0.0.1
Server Port:            8080

Document Path:          /
Document Length:        6 bytes

Concurrency Level:      2
Time taken for tests:   0.500 seconds
Complete requests:      5
Failed requests:        0
Total transferred:      1175 bytes
HTML transferred:       30 bytes
Requests per second:    10.00 [#/sec] (mean)
Time per request:       200.000 [ms] (mean)
Time per request:       100.000 [ms] (mean, across all concurrent requests)
Transfer rate:          2.29 [Kbytes/sec] received

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    0   0.2      0       1
Processing:     1    2   2.0      2       6
Waiting:        0    1   1.6      1       4
Total:          1    2   2.1      2       6

Percentage of the requests served within a certain time (ms)
  50%      2
  66%      2
  75%      2
  80%      6
  90%      6
  95%      6
  98%      6
  99%      6
 100%      6 (longest request)
"
    );
}

#[test]
fn lb_block_is_the_ab_block_with_lbs_line() {
    let s = server(&[
        (200, 1_100, 400),
        (300, 1_600, 500),
        (400, 2_400, 900),
        (100, 900, 300),
        (500, 6_000, 4_000),
    ]);
    let l = AbLayout {
        lb_line: true,
        ..layout()
    };
    let t = AbTarget {
        hostname: "::1",
        ..LOCAL
    };
    assert_eq!(
        text(&s, &t, &l, 0.5),
        "Server Software:        nginx/1.22.1
Server Hostname:        ::1
Server Port:            8080

Document Path:          /
Document Length:        6 bytes

Concurrency Level:      2
Time taken for tests:   0.500 seconds
Complete requests:      5
Failed requests:        0
Total transferred:      1175 bytes
HTML transferred:       30 bytes
Requests per second:    10.00 [#/sec] (mean)
Time per request:       200.000 [ms] (mean)
Time per request:       100.000 [ms] (mean, across all concurrent requests)
Transfer rate:          2.29 [Kbytes/sec] received
Time per request:       0.90/2.40/6.00 min/avg/max [msec]

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    0   0.2      0       1
Processing:     1    2   2.0      2       6
Waiting:        0    1   1.6      1       4
Total:          1    2   2.1      2       6

Percentage of the requests served within a certain time (ms)
  50%      2
  66%      2
  75%      2
  80%      6
  90%      6
  95%      6
  98%      6
  99%      6
 100%      6 (longest request)
"
    );
}

#[test]
fn failures_keep_alive_body_tls_and_warnings() {
    let mut s = server(&[(0, 1_000, 500), (0, 1_000, 500), (0, 9_000, 8_000)]);
    s.on_complete(&Completed {
        times: CallTimes {
            connect_us: 0,
            total_us: 1_000,
            wait_us: 500,
        },
        status: 404,
        header_bytes: 100,
        body_bytes: 10,
        sent_bytes: 82,
        keep_alive: true,
        ..Completed::default()
    });
    s.on_failure(AbFailure::Connect, 2, 0);
    s.on_failure(AbFailure::Exception, 1, 0);
    s.tls_protocol = Some("TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256".into());
    s.tls_temp_key = Some("X25519 253 bits".into());
    let t = AbTarget {
        hostname: "localhost",
        port: 8443,
        path: "/x?y",
        tls_sni: Some("localhost"),
    };
    let l = AbLayout {
        concurrency: 1,
        keep_alive: true,
        send_body: true,
        percentiles: false,
        ..layout()
    };
    assert_eq!(
        text(&s, &t, &l, 2.0),
        "Server Software:        nginx/1.22.1
Server Hostname:        localhost
Server Port:            8443
SSL/TLS Protocol:       TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256
Server Temp Key:        X25519 253 bits
TLS Server Name:        localhost

Document Path:          /x?y
Document Length:        6 bytes

Concurrency Level:      1
Time taken for tests:   2.000 seconds
Complete requests:      4
Failed requests:        4
   (Connect: 2, Receive: 0, Length: 1, Exceptions: 1)
Non-2xx responses:      1
Keep-Alive requests:    1
Total transferred:      815 bytes
Total body sent:        328
HTML transferred:       28 bytes
Requests per second:    2.00 [#/sec] (mean)
Time per request:       500.000 [ms] (mean)
Time per request:       500.000 [ms] (mean, across all concurrent requests)
Transfer rate:          0.40 [Kbytes/sec] received
                        0.16 kb/s sent
                        0.56 kb/s total

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    0   0.0      0       0
Processing:     1    3   4.0      1       9
Waiting:        1    2   3.8      1       8
Total:          1    3   4.0      1       9
"
    );
    // -l: Length failures are not failures, the length is variable.
    let l = AbLayout {
        check_length: false,
        ..l
    };
    let variable = text(&s, &t, &l, 2.0);
    assert!(variable.contains("Document Length:        Variable\n"));
    assert!(variable.contains(
        "Failed requests:        3\n   (Connect: 2, Receive: 0, Length: 0, Exceptions: 1)\n"
    ));
    // The warnings: medians far from the means (expected text from ab's formulas).
    let skewed = server(&[
        (499, 2_000, 100),
        (499, 2_000, 100),
        (499, 2_000, 100),
        (600, 2_000, 1_900),
    ]);
    let l = AbLayout {
        percentiles: false,
        ..layout()
    };
    let warned = text(&skewed, &LOCAL, &l, 1.0);
    assert!(
        warned.ends_with(
            "Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    1   0.1      0       1
Processing:     1    1   0.1      2       2
Waiting:        0    1   0.9      0       2
Total:          2    2   0.0      2       2
ERROR: The median and mean for the initial connection time are more than twice the standard
       deviation apart. These results are NOT reliable.
ERROR: The median and mean for the processing time are more than twice the standard
       deviation apart. These results are NOT reliable.
WARNING: The median and mean for the waiting time are not within a normal deviation
        These results are probably not that reliable.
"
        ),
        "{warned}"
    );
}

#[test]
fn no_confidence_nothing_done_and_lb_line() {
    let s = server(&[(1_000, 3_000, 1_500), (2_000, 5_000, 1_000)]);
    let l = AbLayout {
        confidence: false,
        percentiles: false,
        lb_line: true,
        ..layout()
    };
    let t = text(&s, &LOCAL, &l, 1.0);
    assert!(
        t.ends_with(
            "Transfer rate:          0.46 [Kbytes/sec] received
Time per request:       3.00/4.00/5.00 min/avg/max [msec]

Connection Times (ms)
              min   avg   max
Connect:        1     2    2
Processing:     2     3    3
Waiting:        1     1    2
Total:          3     4    5
"
        ),
        "{t}"
    );
    let mut none = AbServer::default();
    none.on_failure(AbFailure::Connect, 3, 0);
    let t = text(&none, &LOCAL, &layout(), 0.001);
    assert!(t.starts_with("Server Software:        \n"), "{t}");
    assert!(
        t.ends_with(
            "Document Length:        0 bytes

Concurrency Level:      2
Time taken for tests:   0.001 seconds
Complete requests:      0
Failed requests:        3
   (Connect: 3, Receive: 0, Length: 0, Exceptions: 0)
Total transferred:      0 bytes
HTML transferred:       0 bytes
"
        ),
        "{t}"
    );
}

#[test]
fn percentile_csv_is_abs_format() {
    let s = server(&[(0, 1_234, 0), (0, 2_000, 0), (0, 500, 0)]);
    let mut out = Vec::new();
    write_percentile_csv(&mut out, &[&s], &["a"]).expect("write");
    let t = String::from_utf8(out).expect("utf8");
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 102);
    assert_eq!(lines[0], "Percentage served,Time in ms");
    assert_eq!(lines[1], "0,0.500");
    assert_eq!(lines[2], "1,0.500");
    // ⌊0.5 + 3·50/100⌋ = 2: the largest.
    assert_eq!(lines[51], "50,2.000");
    assert_eq!(lines[17], "16,0.500");
    assert_eq!(lines[18], "17,1.234");
    assert_eq!(lines[101], "100,2.000");
    let mut out = Vec::new();
    write_percentile_csv(&mut out, &[&s, &s], &["a", "b,\"c\""]).expect("write");
    let t = String::from_utf8(out).expect("utf8");
    let head = "Percentage served,Time in ms (a),\"Time in ms (b,\"\"c\"\")\"\n";
    assert!(t.starts_with(&format!("{head}0,0.500,0.500\n")), "{t}");
}
