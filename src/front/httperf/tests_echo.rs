//! Tests of the echo line of httperf's command line (docs/compatibility.md §2.2).

use super::tests::{cfg, echo};

/// The echo lines of the golden runs of docs/compatibility.md appendix A.
#[test]
fn echo_lines_of_the_golden_outputs() {
    let cases = [
        // A.1
        (
            "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 200 --rate 100",
            "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=100 --send-buffer=4096 --recv-buffer=16384 --num-conns=200 --num-calls=1",
        ),
        // A.2
        (
            "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 20 --rate 10 --num-calls 5 --http-version 1.1",
            "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=20 --num-calls=5",
        ),
        // A.3
        (
            "--server 127.0.0.1 --port 18081 --num-conns 5 --rate 10",
            "rshperf --client=0/1 --server=127.0.0.1 --port=18081 --uri=/ --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=5 --num-calls=1",
        ),
        // A.5
        (
            "-v -v --server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 60 --rate 10 --num-calls 2",
            "rshperf --verbose --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=60 --num-calls=2",
        ),
        // A.6
        (
            "-v --server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 110 --rate 10 --client=0/2",
            "rshperf --verbose --client=0/2 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=10 --send-buffer=4096 --recv-buffer=16384 --num-conns=110 --num-calls=1",
        ),
        // A.7
        (
            r"--server 127.0.0.1 --port 18080 --uri /echo --print-request --print-reply --add-header 'X-Test: a\\b\101\n' --num-conns 1 --num-calls 2",
            r"rshperf --print-reply --print-request --client=0/1 --server=127.0.0.1 --port=18080 --uri=/echo --send-buffer=4096 --recv-buffer=16384 --add-header='X-Test: a\\b\101\n' --num-conns=1 --num-calls=2",
        ),
        // A.8 (four runs)
        (
            "--server 127.0.0.1 --port 18090 --uri /chunked --print-reply --timeout 3",
            "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/chunked --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
        ),
        (
            "--server 127.0.0.1 --port 18090 --uri /close --print-reply --timeout 3",
            "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/close --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
        ),
        (
            "--server 127.0.0.1 --port 18090 --uri /continue --print-reply --timeout 3",
            "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/continue --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
        ),
        (
            "--server 127.0.0.1 --port 18090 --uri /badstatus --print-reply --timeout 3",
            "rshperf --print-reply --timeout=3 --client=0/1 --server=127.0.0.1 --port=18090 --uri=/badstatus --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
        ),
        // A.9
        (
            "--server 127.0.0.1 --port 18080 --uri /1k.html --wsess=10,4,0.2 --burst-length 2 --rate 5",
            "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=5 --send-buffer=4096 --recv-buffer=16384 --wsess=10,4,0.200 --burst-length=2",
        ),
        // A.9b
        (
            "-v --server 127.0.0.1 --port 18080 --uri /1k.html --wsess=30,3,0.05 --burst-length 3 --rate 5 --max-connections 2 --max-piped-calls 1 --http-version 1.0",
            "rshperf --verbose --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --http-version=1.0 --max-connections=2 --max-piped-calls=1 --rate=5 --send-buffer=4096 --recv-buffer=16384 --wsess=30,3,0.050 --burst-length=3",
        ),
        // A.9c
        (
            "--server 127.0.0.1 --port 18090 --wsesslog=3,0.1,sess.log --rate 2 --print-request --print-reply",
            "rshperf --print-reply --print-request --client=0/1 --server=127.0.0.1 --port=18090 --uri=/ --rate=2 --send-buffer=4096 --recv-buffer=16384 --wsesslog=3,0.100,sess.log",
        ),
        // A.9d
        (
            "--server 127.0.0.1 --port 18090 --uri /cookie --wsess=1,3,0 --session-cookies --print-request=header",
            "rshperf --print-request=header --client=0/1 --server=127.0.0.1 --port=18090 --uri=/cookie --send-buffer=4096 --recv-buffer=16384 --session-cookies --wsess=1,3,0.000",
        ),
        // A.10
        (
            "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 1000 --rate 50",
            "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=50 --send-buffer=4096 --recv-buffer=16384 --num-conns=1000 --num-calls=1",
        ),
        // A.11 (master; rshperf prints --ssl-protocol only when given)
        (
            "--server 127.0.0.1 --port 18080 --uri /1k.html --num-conns 100000 --rate 50 --runtime 2.5 --periodic-stats -v",
            "rshperf --verbose --runtime=2.5 --client=0/1 --server=127.0.0.1 --port=18080 --uri=/1k.html --rate=50 --send-buffer=4096 --recv-buffer=16384 --num-conns=100000 --num-calls=1 --periodic-stats",
        ),
        // A.12 0.9.0, then master with --print-reply=body --http-version 1.0
        (
            "--server 127.0.0.1 --port 18080 --uri /echo --no-host-hdr --print-request=header --print-reply=header --timeout 2",
            "rshperf --print-reply=header --print-request=header --timeout=2 --client=0/1 --server=127.0.0.1 --port=18080 --uri=/echo --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
        ),
        (
            "--server 127.0.0.1 --port 18080 --uri /echo --no-host-hdr --print-request=header --print-reply=header --timeout 2 --print-reply=body --http-version 1.0",
            "rshperf --print-reply=body --print-request=header --timeout=2 --client=0/1 --server=127.0.0.1 --port=18080 --uri=/echo --http-version=1.0 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
        ),
        // A.13
        (
            "--ssl --server 127.0.0.1 --port 18443 --uri /1k.html --num-conns 10 --rate 20 --num-calls 2",
            "rshperf --client=0/1 --server=127.0.0.1 --port=18443 --uri=/1k.html --rate=20 --send-buffer=4096 --recv-buffer=16384 --ssl --num-conns=10 --num-calls=2",
        ),
        // A.15 (without -V, which stops rshperf)
        (
            "--server 127.0.0.1 --port 18080",
            "rshperf --client=0/1 --server=127.0.0.1 --port=18080 --uri=/ --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1",
        ),
    ];
    for (cmd, want) in cases {
        assert_eq!(echo(cmd), want, "{cmd}");
    }
}

#[test]
fn echo_formats_numbers_with_percent_g() {
    let base = "--server 127.0.0.1 --port 1";
    let tail = "--client=0/1 --server=127.0.0.1 --port=1 --uri=/";
    assert_eq!(
        echo(&format!("{base} --timeout 0.00001 --think-timeout 2.50")),
        format!("rshperf --think-timeout=2.5 --timeout=1e-05 {tail} --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
    );
    assert_eq!(
        echo(&format!("{base} --period e0.05")),
        format!("rshperf {tail} --period=e0.05 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
    );
    assert_eq!(
        echo(&format!("{base} --period=u1,2")),
        format!("rshperf {tail} --period=u1,2 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
    );
    assert_eq!(
        echo(&format!("{base} --period=V0.1,2,0.005,1e7")),
        format!("rshperf {tail} --period=v0.1,2,0.005,1e+07 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
    );
    assert_eq!(
        echo(&format!("{base} --period 0.25")),
        format!("rshperf {tail} --rate=4 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
    );
    assert_eq!(
        echo(&format!("{base} --rate 1234567 --rate=0.3")),
        format!("rshperf {tail} --rate=0.3 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
    );
    assert_eq!(
        echo(&format!("{base} --rate 1234567")),
        format!("rshperf {tail} --rate=1.23457e+06 --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1")
    );
    // Rate 0 and --period d0 are sequential: nothing is echoed.
    assert_eq!(
        echo(&format!("{base} --rate 5 --rate 0")),
        echo(&format!("{base} --period d5 --period d0"))
    );
    assert_eq!(
        echo(&format!("{base} --wset 1000,0.25 --runtime 1e-3")),
        format!("rshperf --runtime=0.001 {tail} --send-buffer=4096 --recv-buffer=16384 --num-calls=1 --wset=1000,0.250")
    );
}

#[test]
fn echo_of_every_other_option_in_order() {
    let c = cfg(&[
        "--hog",
        "--close-with-reset",
        "--server=::1",
        "--server-name=example.org",
        "--failure-status=503",
        "--retry-on-failure",
        "--ssl-protocol=tlsv1_3",
        "--ssl-ciphers=ALL",
        "--tls-server-name=sni.example",
        "--ssl-no-reuse",
        "--ssl-certificate=c.pem",
        "--ssl-key=k.pem",
        "--ssl-ca-file=ca.pem",
        "--ssl-ca-path=/etc/ssl",
        "--ssl-verify",
        "--add-header-file=h.txt",
        "--method=POST",
        "--use-timer-cache",
        "--wsesspage=2,3,1.5",
        "--burst-length=4",
        "--threads=8",
        "-n",
        "--myaddr=10.0.0.1",
        "--no-host-hdr",
        "-d3",
        "--wlog=y,f",
    ]);
    assert_eq!(
        c.echo_line(),
        "rshperf --hog --close-with-reset --client=0/1 --server=::1 \
         --server_name=example.org --port=443 --uri=/ --failure-status=503 \
         --send-buffer=4096 --retry-on-failure --recv-buffer=16384 --ssl \
         --ssl-ciphers=ALL --tls-server-name=sni.example --ssl-no-reuse \
         --ssl-cert=c.pem --ssl-key=k.pem --ssl-ca-file=ca.pem --ssl-ca-path=/etc/ssl \
         --ssl-verify --ssl-protocol=TLSv1.3 --add-header-file='h.txt' --method=POST \
         --use-timer-cache --wsesspage=2,3,1.500 --periodic-stats --threads=8"
    );
    let c = cfg(&["--servers", "list", "--method", "GET", "--threads", "1"]);
    assert_eq!(
        c.echo_line(),
        "rshperf --client=0/1 --servers=list --port=80 --uri=/ --send-buffer=4096 \
         --recv-buffer=16384 --method=GET --num-conns=1 --num-calls=1"
    );
    assert!(c.target().addrs().is_empty());
}
