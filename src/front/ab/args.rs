//! `rshperf ab`'s command line: ApacheBench 2.3's letters, meanings and diagnostics.
//!
//! Owns ab's option letters (scanned by `getopt` with APR's rules: grouped flags, a
//! value in the same word or the next, options before the URLs, `--` ends them), each
//! letter's effect on a `Bench` (in command-line order, so `-t` then `-n` differs from `-n` then
//! `-t` as in ab), ab's checks and messages with ab's exit statuses (22 after a usage
//! message, 1 for `Invalid number of requests` and friends), and the usage text.
//! Letters rshperf does not support get a clear error. Called by `ab::ab_main`.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use super::url::{parse_ab, Url};
use super::{read_body, Bench, Exit, Tool};
use crate::front::getopt::{Getopt, Item, Operands};
use crate::model::config::SslProtocol;

/// ab's letters; `:` marks those that take a value.
const OPTSTRING: &str = "n:c:t:s:b:T:p:u:v:lrkVhwiIx:y:z:C:H:P:A:g:X:de:SqB:m:Z:f:E:";

/// ab's limit on `-c` (the Debian build's; ab.c says 20000).
pub(crate) const MAX_CONCURRENCY: u64 = 200_000;

/// ab's request count for `-t` without a later `-n`.
const TIMED_REQUESTS: u64 = 50_000;

/// The program name in diagnostics and usage.
const PROG: &str = "rshperf ab";

/// The usage text (stderr for `-h` and after a usage error, as ab).
pub(crate) fn usage() -> String {
    format!(
        "Usage: {PROG} [options] [http[s]://]hostname[:port]/path [URL ...]
Options are:
    -n requests     Number of requests to perform
    -c concurrency  Number of multiple requests to make at a time
    -t timelimit    Seconds to max. to spend on benchmarking
                    This implies -n 50000
    -s timeout      Seconds to max. wait for each response
                    Default is 30 seconds
    -b windowsize   Size of TCP send/receive buffer, in bytes
    -B address      Address to bind to when making outgoing connections
    -p postfile     File containing data to POST. Remember also to set -T
    -u putfile      File containing data to PUT. Remember also to set -T
    -T content-type Content-type header to use for POST/PUT data, eg.
                    'application/x-www-form-urlencoded'
                    Default is 'text/plain'
    -v verbosity    How much troubleshooting info to print
    -i              Use HEAD instead of GET
    -C attribute    Add cookie, eg. 'Apache=1234'. (repeatable)
    -H attribute    Add Arbitrary header line, eg. 'Accept-Encoding: gzip'
                    Inserted after all normal header lines. (repeatable)
    -A attribute    Add Basic WWW Authentication, the attributes
                    are a colon separated username and password.
    -P attribute    Add Basic Proxy Authentication, the attributes
                    are a colon separated username and password.
    -X proxy:port   Proxyserver and port number to use
    -V              Print version number and exit
    -k              Use HTTP KeepAlive feature
    -d              Do not show percentiles served table.
    -S              Do not show confidence estimators and warnings.
    -q              Do not show progress when doing more than 150 requests
    -l              Accept variable document length (use this for dynamic pages)
    -g filename     Output collected data to gnuplot format file.
    -e filename     Output CSV file with percentages served
    -r              Don't exit on socket receive errors.
    -m method       Method name
    -h              Display usage information (this message)
    -I              Disable TLS Server Name Indication (SNI) extension
    -Z ciphersuite  Specify SSL/TLS cipher suite (See openssl ciphers)
    -f protocol     Specify SSL/TLS protocol
                    (TLS1.2, TLS1.3 or ALL)
    -E certfile     Specify optional client certificate chain and private key
rshperf: several URLs are benchmarked at the same time, -n and -c each, with a
report block per server; receive errors never end the run (-r is the default);
-w, -x, -y, -z (HTML output) are not supported.
"
    )
}

/// The `-V` text (stdout).
pub(crate) fn version() -> String {
    format!(
        "This is {PROG}, Version {} <ApacheBench 2.3 compatible>\n\
         rshperf: an httperf-compatible HTTP load generator with ab's command line\n\
         Licensed under the MIT License\n\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// A usage error: the message, then the usage text, exit status 22 (EINVAL).
fn usage_error(msg: &str) -> Exit {
    Exit {
        code: 22,
        stdout: String::new(),
        stderr: format!("{PROG}: {msg}\n{}", usage()),
    }
}

/// A fatal error reported as ab does with `err()`: the message, exit status 1.
fn fatal(msg: &str) -> Exit {
    Exit {
        code: 1,
        stdout: String::new(),
        stderr: format!("{PROG}: {msg}\n"),
    }
}

/// C's `atoi`: leading blanks, a sign, digits; anything else ends the number (0 when
/// there is none). Saturates instead of overflowing.
pub(crate) fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let v = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |acc, d| {
            acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg {
        -v
    } else {
        v
    }
}

/// The method so far (ab refuses to mix `-i`, `-p` and `-u`; `-m` overrides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    None,
    Head,
    Post,
    Put,
    Custom,
}

/// Parses `rshperf ab`'s arguments (`args[0]` is `ab`).
pub(crate) fn parse(args: &[String]) -> Result<Bench, Exit> {
    let mut b = Bench::new(Tool::Ab);
    b.timeout = 30.0;
    let mut method = Method::None;
    let mut concurrency: i64 = 1;
    let mut urls: Vec<&str> = Vec::new();
    let words = args.get(1..).unwrap_or_default();
    for item in Getopt::new(words, OPTSTRING, Operands::EndOptions).with_words(&["--help"]) {
        match item.map_err(|e| usage_error(&e.apr_text()))? {
            Item::Word(_) => {
                return Err(Exit {
                    code: 0,
                    stdout: usage(),
                    stderr: String::new(),
                })
            }
            Item::Opt(c, None) => flag(&mut b, c, &mut method)?,
            Item::Opt(c, Some(value)) => valued(&mut b, c, value, &mut method, &mut concurrency)?,
            Item::Operand(url) => urls.push(url),
            Item::Long(_) => unreachable!("the scanner is not asked for long options"),
        }
    }
    if urls.is_empty() {
        return Err(usage_error("wrong number of arguments"));
    }
    if let Some(late) = urls.iter().find(|u| u.starts_with('-') && u.len() > 1) {
        return Err(usage_error(&format!(
            "wrong number of arguments (options go before the URLs: {late})"
        )));
    }
    b.method = match method {
        Method::None => "GET".into(),
        Method::Head => "HEAD".into(),
        Method::Post => "POST".into(),
        Method::Put => "PUT".into(),
        Method::Custom => b.method.clone(),
    };
    for u in urls {
        let url: Url = parse_ab(u).ok_or_else(|| usage_error("invalid URL"))?;
        b.urls.push(url);
    }
    if !(1..=MAX_CONCURRENCY as i64).contains(&concurrency) {
        return Err(usage_error(&format!(
            "Invalid Concurrency [Range 1..{MAX_CONCURRENCY}]"
        )));
    }
    b.concurrency = concurrency as u64;
    if b.concurrency > b.requests {
        return Err(usage_error(
            "Cannot use concurrency level greater than total number of requests",
        ));
    }
    Ok(b)
}

/// A letter without a value.
fn flag(b: &mut Bench, c: char, method: &mut Method) -> Result<(), Exit> {
    match c {
        'l' => b.check_length = false,
        'r' => {}
        'k' => b.keep_alive = true,
        'V' => {
            return Err(Exit {
                code: 0,
                stdout: version(),
                stderr: String::new(),
            })
        }
        'h' => {
            return Err(Exit {
                code: 22,
                stdout: String::new(),
                stderr: usage(),
            })
        }
        'i' => {
            if *method != Method::None {
                return Err(fatal("Cannot mix HEAD with other methods"));
            }
            *method = Method::Head;
        }
        'I' => b.no_sni = true,
        'd' => b.percentiles = false,
        'S' => b.confidence = false,
        'q' => b.quiet = true,
        'w' => return Err(unsupported('w', "HTML output")),
        _ => unreachable!("every flag of OPTSTRING is handled"),
    }
    Ok(())
}

fn unsupported(c: char, what: &str) -> Exit {
    fatal(&format!("-{c} ({what}) is not supported"))
}

/// Basic credentials: `user:password` (leading blanks dropped), base64.
fn basic(value: &str) -> String {
    BASE64.encode(value.trim_start().as_bytes())
}

/// A letter with its value.
fn valued(
    b: &mut Bench,
    c: char,
    v: &str,
    method: &mut Method,
    concurrency: &mut i64,
) -> Result<(), Exit> {
    match c {
        'n' => {
            let n = atoi(v);
            if n <= 0 {
                return Err(fatal("Invalid number of requests"));
            }
            b.requests = n as u64;
        }
        'c' => *concurrency = atoi(v),
        't' => {
            let t = atoi(v);
            b.time_limit = (t > 0).then_some(t as f64);
            b.requests = TIMED_REQUESTS;
        }
        's' => {
            let s = atoi(v);
            if s < 0 {
                return Err(fatal(&format!("Invalid timeout {v}")));
            }
            b.timeout = s as f64;
        }
        'b' => {
            let w = atoi(v);
            b.window = u32::try_from(w).ok().filter(|w| *w > 0);
        }
        'T' => b.content_type = Some(v.to_string()),
        'p' | 'u' => {
            if *method != Method::None {
                let what = if c == 'p' { "POST" } else { "PUT" };
                return Err(fatal(&format!("Cannot mix {what} with other methods")));
            }
            b.body = Some(
                read_body(v)
                    .map_err(|e| fatal(&format!("Could not open POST data file ({v}): {e}")))?,
            );
            *method = if c == 'p' { Method::Post } else { Method::Put };
        }
        'v' => b.verbosity = u32::try_from(atoi(v)).unwrap_or(0),
        'x' | 'y' | 'z' => return Err(unsupported(c, "HTML output")),
        'C' => b.cookies.push(v.to_string()),
        'H' => b.headers.push(v.to_string()),
        'A' => b.auth.push(format!("Authorization: Basic {}", basic(v))),
        'P' => b
            .auth
            .push(format!("Proxy-Authorization: Basic {}", basic(v))),
        'g' => b.gnuplot = Some(v.to_string()),
        'e' => b.csv = Some(v.to_string()),
        'X' => {
            let (host, port) = match v.split_once(':') {
                Some((h, p)) => (h, u16::try_from(atoi(p)).unwrap_or(0)),
                None => (v, 0),
            };
            if host.is_empty() || port == 0 {
                return Err(fatal(&format!(
                    "-X {v}: expected proxy:port with a port from 1 to 65535"
                )));
            }
            b.proxy = Some((host.to_string(), port));
        }
        'B' => b.bind = Some(v.to_string()),
        'm' => {
            *method = Method::Custom;
            b.method = v.to_string();
        }
        'Z' => b.ciphers = Some(v.to_string()),
        'f' => b.tls_protocol = Some(tls_protocol(v)?),
        'E' => b.cert = Some(v.to_string()),
        _ => unreachable!("every valued letter of OPTSTRING is handled"),
    }
    Ok(())
}

/// `-f`: ab's protocol names (prefix match, case-insensitive, in ab's order).
fn tls_protocol(v: &str) -> Result<SslProtocol, Exit> {
    let up = v.to_ascii_uppercase();
    let table = [
        ("ALL", Some(SslProtocol::Auto)),
        ("SSL2", None),
        ("SSL3", None),
        ("TLS1.1", None),
        ("TLS1.2", Some(SslProtocol::Tls12)),
        ("TLS1.3", Some(SslProtocol::Tls13)),
        ("TLS1", None),
    ];
    match table.iter().find(|(name, _)| up.starts_with(name)) {
        Some((_, Some(p))) => Ok(*p),
        Some((name, None)) => Err(fatal(&format!(
            "-f {v}: {name} is not supported (rustls speaks TLS1.2 and TLS1.3)"
        ))),
        // ab ignores an unknown protocol name (and uses every version).
        None => Ok(SslProtocol::Auto),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Bench, Exit> {
        let mut v = vec!["ab".to_string()];
        v.extend(args.iter().map(|s| s.to_string()));
        parse(&v)
    }

    fn err(args: &[&str]) -> (i32, String) {
        match run(args) {
            Err(e) => (e.code, e.stderr.lines().next().unwrap_or("").to_string()),
            Ok(b) => panic!("{args:?} parsed: {b:?}"),
        }
    }

    const URL: &str = "http://127.0.0.1:8080/";

    #[test]
    fn letters_reach_the_bench() {
        let b = run(&[
            "-n",
            "100",
            "-c10",
            "-kqdSl",
            "-s",
            "5",
            "-H",
            "X-A: 1",
            "-C",
            "a=1",
            "-C",
            "b=2",
            "-A",
            " joe:pw",
            "-T",
            "text/x",
            "-g",
            "/tmp/g",
            "-e",
            "/tmp/e",
            "-B",
            "127.0.0.1",
            "-b",
            "65536",
            "-v",
            "2",
            "-m",
            "OPTIONS",
            URL,
            "http://[::1]:8080/x",
        ])
        .expect("valid");
        assert_eq!((b.requests, b.concurrency, b.timeout), (100, 10, 5.0));
        assert!(b.keep_alive && b.quiet && !b.percentiles && !b.confidence && !b.check_length);
        assert_eq!(b.headers, ["X-A: 1"]);
        assert_eq!(b.cookies, ["a=1", "b=2"]);
        assert_eq!(b.auth, ["Authorization: Basic am9lOnB3"]);
        assert_eq!(b.method, "OPTIONS");
        assert_eq!((b.window, b.verbosity), (Some(65536), 2));
        assert_eq!(b.urls.len(), 2);
        assert_eq!(b.urls[1].path, "/x");
        assert_eq!(b.gnuplot.as_deref(), Some("/tmp/g"));
    }

    #[test]
    fn order_matters_as_in_ab() {
        let b = run(&["-t", "5", "-n", "100", URL]).expect("valid");
        assert_eq!((b.requests, b.time_limit), (100, Some(5.0)));
        let b = run(&["-n", "100", "-t", "5", URL]).expect("valid");
        assert_eq!(b.requests, 50_000);
        let b = run(&["-i", "-m", "GET", URL]).expect("valid");
        assert_eq!(b.method, "GET");
        assert_eq!(run(&["-i", URL]).expect("valid").method, "HEAD");
        assert_eq!(run(&[URL]).expect("valid").method, "GET");
    }

    #[test]
    fn diagnostics_and_statuses_of_ab() {
        let cases: &[(&[&str], i32, &str)] = &[
            (&[], 22, "rshperf ab: wrong number of arguments"),
            (&["-n"], 22, "rshperf ab: option requires an argument -- n"),
            (&["-Q", URL], 22, "rshperf ab: illegal option -- Q"),
            (&["http://127.0.0.1:8080"], 22, "rshperf ab: invalid URL"),
            (&["-n", "0", URL], 1, "rshperf ab: Invalid number of requests"),
            (&["-n", "abc", URL], 1, "rshperf ab: Invalid number of requests"),
            (&["-c", "5", "-n", "2", URL], 22, "rshperf ab: Cannot use concurrency level greater than total number of requests"),
            (&["-n", "5", "-c", "0", URL], 22, "rshperf ab: Invalid Concurrency [Range 1..200000]"),
            (&["-c", "300000", URL], 22, "rshperf ab: Invalid Concurrency [Range 1..200000]"),
            (&["-i", "-p", "/etc/hostname", URL], 1, "rshperf ab: Cannot mix POST with other methods"),
            (&["-p", "/nonexistent/x", URL], 1, "rshperf ab: Could not open POST data file (/nonexistent/x): No such file or directory (os error 2)"),
            (&["-w", URL], 1, "rshperf ab: -w (HTML output) is not supported"),
            (&["-x", "border=1", URL], 1, "rshperf ab: -x (HTML output) is not supported"),
            (&["-f", "TLS1.1", URL], 1, "rshperf ab: -f TLS1.1: TLS1.1 is not supported (rustls speaks TLS1.2 and TLS1.3)"),
            (&[URL, "-n", "5"], 22, "rshperf ab: wrong number of arguments (options go before the URLs: -n)"),
            (&["-h"], 22, "Usage: rshperf ab [options] [http[s]://]hostname[:port]/path [URL ...]"),
        ];
        for (args, code, first) in cases {
            assert_eq!(err(args), (*code, first.to_string()), "{args:?}");
        }
        let usage_error = run(&["http://x"]).expect_err("invalid");
        assert!(usage_error.stderr.contains("\nOptions are:\n"));
        let v = run(&["-V"]).expect_err("version");
        assert_eq!(v.code, 0);
        assert!(v.stdout.starts_with("This is rshperf ab, Version "));
        let h = run(&["--help"]).expect_err("help");
        assert_eq!((h.code, h.stdout, h.stderr), (0, usage(), String::new()));
    }

    #[test]
    fn atoi_is_cs() {
        for (s, v) in [
            ("12", 12),
            (" 7x", 7),
            ("-3", -3),
            ("+4", 4),
            ("x", 0),
            ("", 0),
        ] {
            assert_eq!(atoi(s), v, "{s:?}");
        }
        assert_eq!(atoi("99999999999999999999999"), i64::MAX);
    }

    #[test]
    fn tls_protocol_names() {
        assert_eq!(tls_protocol("tls1.3").ok(), Some(SslProtocol::Tls13));
        assert_eq!(tls_protocol("TLS1.2").ok(), Some(SslProtocol::Tls12));
        assert_eq!(tls_protocol("ALL").ok(), Some(SslProtocol::Auto));
        assert!(tls_protocol("TLS1").is_err());
        assert!(tls_protocol("SSL3").is_err());
    }
}
