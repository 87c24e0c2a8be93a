//! Tests of httperf's command line through the builder: the messages of every option
//! (httperf's, and rshperf's stricter ones), combinations, URL operands. Helpers
//! shared with `tests_echo` and `tests_values`.

use crate::front::error::Error;
use crate::model::config::*;

pub(super) fn cfg(args: &[&str]) -> Config {
    let mut argv = vec!["rshperf"];
    argv.extend_from_slice(args);
    match super::from_argv(&argv) {
        Ok(Some(c)) => c,
        Ok(None) => panic!("{args:?}: not a run"),
        Err(e) => panic!("{args:?}: {e}"),
    }
}

/// The full message as `main` prints it.
pub(super) fn err(args: &[&str]) -> String {
    let mut argv = vec!["rshperf"];
    argv.extend_from_slice(args);
    match super::from_argv(&argv) {
        Ok(c) => panic!("{args:?} accepted: {c:?}"),
        Err(e) => e.to_string(),
    }
}

/// Splits a shell-like command line on spaces (single-quoted parts kept whole).
pub(super) fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in cmd.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub(super) fn echo(cmd: &str) -> String {
    let w = words(cmd);
    let args: Vec<&str> = w.iter().map(String::as_str).collect();
    cfg(&args).echo_line()
}

#[test]
fn option_errors_of_httperf() {
    // docs/compatibility.md A.16 (the getopt ones are tested in cli.rs, and here
    // end to end).
    let cases: [(&[&str], &str); 16] = [
        (
            &["--ser", "127.0.0.1", "--port", "18080", "--num-conns", "1"],
            "rshperf: option '--ser' is ambiguous; possibilities: '--server' '--server-name' '--servers'",
        ),
        (&["--bogus", "--port", "18080"], "rshperf: unrecognized option '--bogus'"),
        (&["--hog=1", "--port", "18080"], "rshperf: option '--hog' doesn't allow an argument"),
        (&["-x", "--port", "18080"], "rshperf: invalid option -- 'x'"),
        (&["--rate", "abc", "--port", "18080"], "rshperf: illegal request rate abc"),
        (
            &["--num-conns", "5x", "--port", "18080", "--num-conns", "1"],
            "rshperf: illegal number of connections 5x",
        ),
        (&["--port", "70000", "--port", "18080"], "rshperf: illegal port number 70000"),
        (&["--burst-length", "0"], "rshperf: illegal burst-length 0"),
        (&["--client", "2/2"], "rshperf: bad number of clients (rest: `2')"),
        (&["--client", "1"], "rshperf: client id not followed by `/' (rest: `')"),
        (
            &["--wsess", "1,2"],
            "rshperf: bad user think time (3rd param) in --wsess arg (rest: `')",
        ),
        (
            &["--wset", "10,2"],
            "rshperf: bad target miss rate (2nd parameter) in --wset arg (rest: `2')",
        ),
        (&["--period", "x1"], "rshperf: illegal interarrival distribution 'x' in x1"),
        (
            &["--period", "u1"],
            "rshperf: minimum interarrival time not followed by `,MAX_IAT' (rest: `')",
        ),
        (&["--failure-status", "0"], "rshperf: illegal failure status 0"),
        (
            &["--session-cookies", "--port", "18080"],
            "rshperf: --session-cookie requires session-oriented workload (e.g., --wsess)",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), want, "{args:?}");
    }
    assert!(err(&["--server", "--port", "18080"])
        .starts_with("rshperf: cannot resolve server address '--port': "));
    assert!(err(&["--server", "nonexistent.invalid"])
        .starts_with("rshperf: cannot resolve server address 'nonexistent.invalid': "));
    let e = super::from_argv(&["rshperf", "--server", "nonexistent.invalid"]);
    assert!(matches!(
        e,
        Err(Error::Config(ConfigError::Unresolvable { .. }))
    ));
    assert!(matches!(
        super::from_argv(&["rshperf", "--rate", "x"]),
        Err(Error::Config(ConfigError::Illegal { .. }))
    ));
}

#[test]
fn other_httperf_messages() {
    let cases: [(&[&str], &str); 31] = [
        (&["--num-calls", "x"], "rshperf: illegal number of calls x"),
        (&["--send-buffer", ""], "rshperf: illegal send buffer size "),
        (&["--recv-buffer", "1k"], "rshperf: illegal receive buffer size 1k"),
        (&["--max-connections", "a"], "rshperf: illegal max. # of connection a"),
        (&["--max-piped-calls", "2b"], "rshperf: illegal max. # of piped calls 2b"),
        (&["-d", "x"], "rshperf: illegal debug level x"),
        (&["--timeout", "1x"], "rshperf: illegal connect timeout 1x"),
        (&["--think-timeout", ""], "rshperf: illegal think timeout value "),
        (&["--runtime", "0"], "rshperf: illegal runtime value 0"),
        (&["--runtime", "-1"], "rshperf: illegal runtime value -1"),
        (&["--client", "x/2"], "rshperf: bad client id (rest: `x/2')"),
        (&["--client", "1-2"], "rshperf: client id not followed by `/' (rest: `-2')"),
        (&["--period", "d-1"], "rshperf: illegal mean interarrival time -1"),
        (&["--period", "e"], "rshperf: illegal mean interarrival time "),
        (&["--period", "ux,1"], "rshperf: illegal minimum interarrival time x,1"),
        (&["--period", "u1,"], "rshperf: illegal request period "),
        (&["--period", "v1"], "rshperf: interarrival time not followed by `,duration' (rest: `')"),
        (&["--period", "v1,x"], "rshperf: illegal duration x"),
        (&["--period", ".5"], "rshperf: illegal interarrival distribution '.' in .5"),
        (&["--period", ""], "rshperf: illegal interarrival distribution '' in "),
        (
            &["--wsess", "x"],
            "rshperf: bad number of sessions (1st param) in --wsess arg (rest: `x')",
        ),
        (
            &["--wsess", "1;2,3"],
            "rshperf: bad number of calls per session (2nd param) in --wsess arg (rest: `;2,3')",
        ),
        (
            &["--wsess", "1,2,3x"],
            "rshperf: extraneous parameter in --wsess arg (rest: `x')",
        ),
        (
            &["--wsess", "1,2,-3"],
            "rshperf: bad user think time (3rd param) in --wsess arg (rest: `')",
        ),
        (
            &["--wsesspage", "1,x,3"],
            "rshperf: bad number of user requests per session (2nd param) in --wsesspage arg (rest: `x,3')",
        ),
        (
            &["--wsesslog", "1,0.5"],
            "rshperf: bad session filename (3rd param) in --wsesslog arg (rest: `')",
        ),
        (
            &["--wsesslog", "1,,f"],
            "rshperf: bad user think time (2nd param) in --wsesslog arg (rest: `,f')",
        ),
        (
            &["--wsesslog", "1,1,f,g"],
            "rshperf: extraneous parameter in --wsesslog arg (rest: `g')",
        ),
        (
            &["--wset", "x,1"],
            "rshperf: bad working set size (1st parameter) in --wset arg (rest: `x,1')",
        ),
        (
            &["--wset", "10,0.5x"],
            "rshperf: extraneous parameter in --wset arg (rest: `0.5x')",
        ),
        (&["--ssl-protocol", "tls2"], "rshperf: illegal SSL protocol tls2"),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), want, "{args:?}");
    }
    assert_eq!(
        err(&["--wsess", "99999999999999999999,1,1"]),
        "rshperf: bad number of sessions (1st param) in --wsess arg (rest: `,1,1'): Numerical result out of range"
    );
}

#[test]
fn stricter_than_httperf() {
    let cases: [(&[&str], &str); 33] = [
        (&["--num-conns", "-1"], "rshperf: illegal number of connections -1 (expected an integer >= 1)"),
        (&["--num-conns", "0"], "rshperf: illegal number of connections 0 (expected an integer >= 1)"),
        (&["--num-calls", "0"], "rshperf: illegal number of calls 0 (expected an integer >= 1)"),
        (&["--num-calls", "+2"], "rshperf: illegal number of calls +2 (expected an integer >= 1)"),
        (&["--num-conns", " 2"], "rshperf: illegal number of connections  2 (expected an integer >= 1)"),
        (&["--port", "0"], "rshperf: illegal port number 0 (expected an integer from 1 to 65535)"),
        (&["--port", "-1"], "rshperf: illegal port number -1"),
        (&["--send-buffer", "0"], "rshperf: illegal send buffer size 0 (expected an integer from 1 to 2147483647)"),
        (&["--recv-buffer", "2147483648"], "rshperf: illegal receive buffer size 2147483648 (expected an integer from 1 to 2147483647)"),
        (&["--failure-status", "5000"], "rshperf: illegal failure status 5000 (expected an HTTP status code from 100 to 999)"),
        (&["--threads", "0"], "rshperf: illegal number of threads 0 (expected an integer from 1 to 1024)"),
        (&["--threads", "1025"], "rshperf: illegal number of threads 1025 (expected an integer from 1 to 1024)"),
        (&["--threads", "x"], "rshperf: illegal number of threads x (expected an integer from 1 to 1024)"),
        (&["--rate", "-5"], "rshperf: illegal request rate -5 (expected a number >= 0; 0 means sequential)"),
        (&["--rate", "nan"], "rshperf: illegal request rate nan (expected a number >= 0; 0 means sequential)"),
        (&["--rate", "inf"], "rshperf: illegal request rate inf (expected a number >= 0; 0 means sequential)"),
        (&["--rate", "1e-320"], "rshperf: illegal request rate 1e-320 (expected a number >= 0; 0 means sequential)"),
        (&["--timeout", "-1"], "rshperf: illegal connect timeout -1 (expected a number of seconds >= 0; 0 means none)"),
        (&["--timeout", "NaN"], "rshperf: illegal connect timeout NaN (expected a number of seconds >= 0; 0 means none)"),
        (&["--think-timeout", "-0.5"], "rshperf: illegal think timeout value -0.5 (expected a number of seconds >= 0)"),
        (&["--runtime", "nan"], "rshperf: illegal runtime value nan (expected a number of seconds > 0)"),
        (&["--runtime", "infinity"], "rshperf: illegal runtime value infinity (expected a number of seconds > 0)"),
        (&["--http-version", "1.2"], "rshperf: unsupported HTTP version 1.2 (expected 1.0, 1.1, 2 or 3)"),
        (&["--http-version", "4.0"], "rshperf: unsupported HTTP version 4.0 (expected 1.0, 1.1, 2 or 3)"),
        (&["--http-version", "1.1x"], "rshperf: unsupported HTTP version 1.1x (expected 1.0, 1.1, 2 or 3)"),
        (&["--period", "u2,1"], "rshperf: illegal request period 1 (expected a maximum >= the minimum 2)"),
        (&["--period", "einf"], "rshperf: illegal mean interarrival time inf (expected a number of seconds >= 0)"),
        (&["--period", "d1x"], "rshperf: illegal mean interarrival time 1x"),
        (&["--period", "v0,1"], "rshperf: illegal minimum interarrival time 0,1 (expected a number of seconds > 0)"),
        (&["--period", "v1,0"], "rshperf: illegal duration 0 (expected a number of seconds > 0)"),
        (&["--wlog", "yfile"], "rshperf: illegal --wlog argument yfile (expected y,FILE or n,FILE)"),
        (&["--wlog", "y,"], "rshperf: illegal --wlog argument y, (expected y,FILE or n,FILE)"),
        (&["--wsess", "1,1,1", "--wsesslog", "1,1,f"], "rshperf: only one of --wsess, --wsesslog, --wsesspage may be given"),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), want, "{args:?}");
    }
    let more: [(&[&str], &str); 12] = [
        (&["--wsess", "0,1,1"], "rshperf: bad number of sessions (1st param) in --wsess arg (rest: `0,1,1') (expected an integer >= 1)"),
        (&["--wsess", "1,0,1"], "rshperf: bad number of calls per session (2nd param) in --wsess arg (rest: `0,1') (expected an integer >= 1)"),
        (&["--wsess", "1,1,nan"], "rshperf: bad user think time (3rd param) in --wsess arg (rest: `') (expected a number of seconds >= 0)"),
        (&["--wsesslog", "1,1,"], "rshperf: bad session filename (3rd param) in --wsesslog arg (rest: `') (expected a file name)"),
        (&["--wset", "0,0.5"], "rshperf: bad working set size (1st parameter) in --wset arg (rest: `0,0.5') (expected an integer >= 1)"),
        (&["--wset", "10,nan"], "rshperf: bad target miss rate (2nd parameter) in --wset arg (rest: `nan') (expected a number from 0 to 1)"),
        (&["--client", "0/2x"], "rshperf: bad number of clients (rest: `2x')"),
        (&["--client", "-1/2"], "rshperf: bad client id (rest: `-1/2')"),
        (&["--wsesspage", "1,1,1", "--wsess", "1,1,1"], "rshperf: only one of --wsess, --wsesslog, --wsesspage may be given"),
        (&["--session-cookies", "--wlog=y,f"], "rshperf: --session-cookie requires session-oriented workload (e.g., --wsess)"),
        (&["--server", "a", "--servers", "f"], "rshperf: --server S or --servers file, not both"),
        (&["--tls-server-name", "x"], "rshperf: --tls-server-name requires --ssl (or --ssl-protocol)"),
    ];
    for (args, want) in more {
        assert_eq!(err(args), want, "{args:?}");
    }
    assert_eq!(
        err(&["--ssl-protocol", "SSLv3"]),
        "rshperf: illegal SSL protocol SSLv3 (SSLv2 and SSLv3 are not supported; expected auto, TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3)"
    );
    let mut many = String::from("v");
    for _ in 0..17 {
        many.push_str("1,1,");
    }
    many.pop();
    assert_eq!(err(&["--period", &many]), "rshperf: too many rates");
}

#[test]
fn first_bad_value_in_order_is_reported() {
    assert_eq!(
        err(&["--port", "70000", "--rate", "x"]),
        "rshperf: illegal port number 70000"
    );
    assert_eq!(
        err(&["--rate", "x", "--port", "70000"]),
        "rshperf: illegal request rate x"
    );
}

#[test]
fn a_url_argument_is_server_port_uri_and_tls() {
    let c = cfg(&["http://127.0.0.1:8080/foo?x=1", "--rate", "100"]);
    assert_eq!(
        (c.target().server(), c.target().port(), c.target().uri()),
        ("127.0.0.1", 8080, "/foo?x=1")
    );
    assert!(!c.tls().enabled());
    assert_eq!(
        c.echo_line(),
        "rshperf --client=0/1 --server=127.0.0.1 --port=8080 --uri=/foo?x=1 --rate=100 \
         --send-buffer=4096 --recv-buffer=16384 --num-conns=1 --num-calls=1"
    );
    let c = cfg(&["--num-conns", "3", "https://[::1]/"]);
    assert_eq!(
        (c.target().server(), c.target().port(), c.target().uri()),
        ("::1", 443, "/")
    );
    assert!(c.tls().enabled());
    assert_eq!(c.host_header(), "[::1]");
    assert_eq!(c.target().addrs(), vec!["[::1]:443".parse().expect("addr")]);
    // --port fills in a URL without a port; options that are not the target stay.
    let c = cfg(&["http://localhost/x", "--port", "8081", "--ssl-verify=no"]);
    assert_eq!((c.target().port(), c.target().uri()), (8081, "/x"));
    let c = cfg(&["https://127.0.0.1:8443/", "--ssl-protocol", "TLSv1.2"]);
    assert!(c.tls().enabled() && c.target().port() == 8443);
    let cases: &[(&[&str], &str)] = &[
        (
            &["http://127.0.0.1/", "--server", "h"],
            "rshperf: the URL http://127.0.0.1/ names the server, port and URI: give it or --server, not both",
        ),
        (
            &["--ur", "/x", "http://127.0.0.1/"],
            "rshperf: the URL http://127.0.0.1/ names the server, port and URI: give it or --uri, not both",
        ),
        (
            &["http://127.0.0.1/", "--servers", "f"],
            "rshperf: the URL http://127.0.0.1/ names the server, port and URI: give it or --servers, not both",
        ),
        (
            &["http://127.0.0.1:80/", "--port", "81"],
            "rshperf: the URL http://127.0.0.1:80/ has a port: give it or --port, not both",
        ),
        (
            &["--ssl", "http://127.0.0.1/"],
            "rshperf: --ssl with an http:// URL: use https://127.0.0.1/",
        ),
        (
            &["http://a/", "http://b/"],
            "rshperf: more than one URL (http://a/ and http://b/); use --servers FILE for several servers",
        ),
        (&["http://h:99999/"], "rshperf: URL http://h:99999/: illegal port number 99999"),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), *want, "{args:?}");
    }
}

#[test]
fn server_with_a_port_or_a_url_is_explained() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--server", "127.0.0.1:8080"],
            "rshperf: --server 127.0.0.1:8080: --server takes no port; use --server 127.0.0.1 --port 8080 (or the URL http://127.0.0.1:8080/)",
        ),
        (
            &["--server=localhost:80"],
            "rshperf: --server localhost:80: --server takes no port; use --server localhost --port 80 (or the URL http://localhost:80/)",
        ),
        (
            &["--server", "[::1]:8080"],
            "rshperf: --server [::1]:8080: --server takes no port; use --server ::1 --port 8080 (or the URL http://[::1]:8080/)",
        ),
        (
            &["--server", "http://127.0.0.1:8080/"],
            "rshperf: --server takes a host name, not a URL: give the URL on its own (rshperf http://127.0.0.1:8080/ ...) or --server, --port and --uri",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(err(args), *want, "{args:?}");
    }
    // IPv6 literals, bracketed or not, are addresses, not host:port.
    assert_eq!(cfg(&["--server", "::1"]).target().port(), 80);
    assert_eq!(cfg(&["--server", "[::1]"]).target().port(), 80);
    assert_eq!(
        cfg(&["--server", "fe80::1:8080"]).target().server(),
        "fe80::1:8080"
    );
}

#[test]
fn call_rate_sets_the_schedule_and_refuses_what_does_not_fit() {
    let ok = |args: &[&str]| {
        let mut argv = vec!["rshperf", "--server", "127.0.0.1"];
        argv.extend_from_slice(args);
        super::from_argv(&argv).expect("valid").expect("a run")
    };
    let c = ok(&["--call-rate", "250", "--num-conns", "5"]);
    assert_eq!(c.load().call_rate(), 250.0);
    assert_eq!(*c.load().period(), Period::Deterministic(0.004));
    assert!(!c.load().calls_until_runtime() && !c.load().until_runtime());
    assert!(c.echo_line().ends_with(" --num-calls=1 --call-rate=250"));
    assert!(!c.echo_line().contains("--rate"));
    let c = ok(&["--call-rate", "100", "--period", "e0.01", "--runtime", "5"]);
    assert_eq!(*c.load().period(), Period::Exponential(0.01));
    assert!(c.load().calls_until_runtime());
    assert!(c.echo_line().contains(" --period=e0.01 "));
    let c = ok(&["--call-rate", "100", "--runtime", "5", "--num-calls", "7"]);
    assert!(!c.load().calls_until_runtime());
    let bad = |args: &[&str]| {
        let mut argv = vec!["rshperf", "--server", "127.0.0.1"];
        argv.extend_from_slice(args);
        super::from_argv(&argv).expect_err("refused").to_string()
    };
    assert!(bad(&["--call-rate", "10", "--rate", "5"]).contains("--rate"));
    assert!(bad(&["--call-rate", "10", "--period", "u0.1,0.3"])
        .contains("the period's mean must be 1/R = 0.1 s (it is 0.2 s)"));
    assert!(bad(&["--call-rate", "10", "--wsesslog", "1,0,/dev/null"]).contains("sessions"));
    assert!(bad(&["--call-rate", "10", "--max-connections", "3"]).contains("--max-connections"));
    assert!(bad(&["--call-rate", "-1"]).contains("illegal call rate -1"));
    assert!(bad(&["--call-rate", "x"]).contains("illegal call rate x"));
}

#[test]
fn pacing_errors_say_what_pacing_says() {
    for v in ["drop", ""] {
        let typed = ConfigError::Overload { value: v.into() };
        let text = crate::model::pacing::parse_overload(v)
            .expect_err("refused")
            .to_string();
        assert_eq!(typed.to_string(), text);
        assert_eq!(err(&["--overload", v]), format!("rshperf: {text}"));
    }
    for v in ["fast", "20000", "-1"] {
        let typed = ConfigError::Spin { value: v.into() };
        let text = crate::model::pacing::parse_spin(v)
            .expect_err("refused")
            .to_string();
        assert_eq!(typed.to_string(), text);
        assert_eq!(err(&["--spin", v]), format!("rshperf: {text}"));
    }
}
