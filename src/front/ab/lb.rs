//! `rshperf lb`'s command line and servers file: lb 0.2's letters and meanings.
//!
//! Owns lb's option letters (scanned by `getopt` with glibc's rules: grouped flags, a
//! value in the same word or the next, options anywhere, `--` ends them), each letter's
//! effect on a `Bench`, lb's timeout syntax (`value[l|s|m|h]`: milliseconds, seconds (the default),
//! minutes, hours), lb's servers file (`-f FILE`, `-` for stdin: a URL a line, `#`
//! comments and blank lines skipped), and lb's usage and version texts. Where lb
//! prints a warning and ignores bad input (a header without `:`, an unparsable URL),
//! rshperf stops with an error instead. Called by `ab::lb_main`.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use super::args::atoi;
use super::url::parse_lb;
use super::{Bench, Exit, Tool};
use crate::front::getopt::{Getopt, Item, Operands};

/// lb's letters; `:` marks those that take a value. (lb 0.2's own string lacks the
/// `s:` its usage and code have, so `-s` fails there; here it works.)
const OPTSTRING: &str = "hvqf:n:c:m:r:s:I:t:ikH:C:X:P:";

/// The program name in diagnostics.
pub(crate) const PROG: &str = "rshperf lb";

/// lb's defaults: one request, one at a time, three retries, 2 s reply timeout.
const DEFAULT_RETRIES: u8 = 3;
const DEFAULT_REPLY_MS: u64 = 2_000;

/// The `-h` text (stdout).
pub(crate) fn usage() -> String {
    format!(
        "{PROG} {}, a very small and efficient benchmark tool for HTTP servers (lb 0.2 compatible)
Usage:
    {PROG} [option(s)] url [url [url [url ... ]]]
    {PROG} [option(s)] -f serverfile

      Use the first syntax to specify any number of HTTP servers on the command line
      or the second to specify a file containing the lists of HTTP servers to benchmark.

Startup:
   -h               show this help message and exit
   -v               show version number and exit
   -q               quiet: no banner, no started/stopped lines

Files:
   -f filename      file containing the list of servers to benchmark (a URL a line,
                    '#' comments; '-' for stdin)

Limits:
   -n num           # of requests per benchmark to perform (default 1; 0 unlimited)
   -c num           # of multiple requests per server to perform at a time (default 1)
   -m num           max # of retries in the event a server does not respond (default 3)

HTTP Protocol:
   -i               enable HTTP HEAD instead of GET
   -k               enable HTTP Keep-Alive feature
   -H               add arbitrary HTTP header in colon separated key and value (repeteable)
   -C               add arbitrary HTTP cookie (repeteable)
   -X proxy:port    use HTTP proxy on given port
   -P user:passwd   use basic proxy authetication

Timeouts:
   -r timeout       HTTP reply timeout (default 2)
   -s timeout       initial timeout to start the benchmark session at (default 0 that means immediately)
   -t timeout       time limit execution (default 0 that means unlimited - could be an alternative to -n option)

    timeout syntax is:
     value[l]  with value expressed in milliseconds
     value     with value expressed in seconds       (default suffix specification)
     value[s]  with value expressed in seconds
     value[m]  with value expressed in minutes
     value[h]  with value expressed in hours

    url syntax is [http[s]://[userid:passwd@]]hostname[:port][/path]

    Note: in the event both -n and -t options have been specified the benchmark
          will be interrupted by the termination event that will come first
",
        env!("CARGO_PKG_VERSION")
    )
}

/// The `-v` text (stdout).
pub(crate) fn version() -> String {
    format!(
        "{PROG} ver. {} (lb 0.2 compatible)\nrshperf: an httperf-compatible HTTP load generator\nLicensed under the MIT License\n",
        env!("CARGO_PKG_VERSION")
    )
}

fn error(msg: &str, with_usage: bool) -> Exit {
    Exit {
        code: 1,
        stdout: String::new(),
        stderr: format!(
            "{PROG}: {msg}\n{}",
            if with_usage { usage() } else { String::new() }
        ),
    }
}

/// lb's timeout syntax in milliseconds: digits, then optionally one of `l` (ms), `s`,
/// `m`, `h`; no suffix means seconds. None for anything else.
pub(crate) fn timeout_ms(v: &str) -> Option<u64> {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let n: u64 = v[..digits].parse().ok()?;
    let unit = match &v[digits..] {
        "" | "s" => 1_000,
        "l" => 1,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// Parses `rshperf lb`'s arguments (`args[0]` is `lb`); `stdin` supplies `-f -`.
pub(crate) fn parse(args: &[String], stdin: &mut dyn std::io::Read) -> Result<Bench, Exit> {
    let mut b = Bench::new(Tool::Lb);
    b.requests = 1;
    b.retries = DEFAULT_RETRIES;
    b.timeout = DEFAULT_REPLY_MS as f64 / 1000.0;
    b.percentiles = true;
    let mut file: Option<String> = None;
    let mut operands: Vec<String> = Vec::new();
    let words = args.get(1..).unwrap_or_default();
    for item in Getopt::new(words, OPTSTRING, Operands::Anywhere) {
        match item.map_err(|e| error(&e.glibc_text(), true))? {
            Item::Opt('h', _) => return Err(Exit::stdout(usage())),
            Item::Opt('v', _) => return Err(Exit::stdout(version())),
            Item::Opt('q', _) => b.quiet = true,
            Item::Opt('i', _) => b.method = "HEAD".into(),
            Item::Opt('k', _) => b.keep_alive = true,
            Item::Opt(c, Some(value)) => valued(&mut b, c, value, &mut file)?,
            Item::Opt(_, None) => unreachable!("every flag of OPTSTRING is handled"),
            Item::Operand(word) | Item::Word(word) => operands.push(word.to_string()),
            Item::Long(_) => unreachable!("the scanner is not asked for long options"),
        }
    }
    match (&file, operands.is_empty()) {
        (None, true) => return Err(error("missing argument", true)),
        (Some(_), false) => {
            return Err(error(
                "command line arguments and file are mutually exclusive",
                true,
            ))
        }
        _ => {}
    }
    if let Some(f) = &file {
        let text = if f == "-" {
            let mut s = String::new();
            stdin
                .read_to_string(&mut s)
                .map_err(|e| error(&format!("cannot read stdin: {e}"), false))?;
            s
        } else {
            std::fs::read_to_string(f)
                .map_err(|e| error(&format!("cannot open '{f}': {e}"), false))?
        };
        let name = if f == "-" { "stdin" } else { f.as_str() };
        operands = servers_file(name, &text)?;
        b.servers_file = Some(f.clone());
    }
    for u in &operands {
        let url = parse_lb(u)
            .ok_or_else(|| error(&format!("syntax error while processing [{u}]"), false))?;
        if let Some(user) = &url.userinfo {
            b.auth.push(format!(
                "Authorization: Basic {}",
                BASE64.encode(user.as_bytes())
            ));
        }
        b.urls.push(url);
    }
    if b.urls.iter().any(|u| u.userinfo != b.urls[0].userinfo) {
        return Err(error(
            "all URLs must carry the same user:password (one request is sent to every server)",
            false,
        ));
    }
    if b.requests != u64::MAX && b.concurrency > b.requests {
        b.concurrency = b.requests;
    }
    Ok(b)
}

/// The URLs of lb's servers file `name`: the first word of every line that is neither
/// blank nor a `#` comment.
fn servers_file(name: &str, text: &str) -> Result<Vec<String>, Exit> {
    let mut urls = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let url = words.next().unwrap_or_default();
        if words.next().is_some() {
            return Err(error(
                &format!("{name}:{}: expected one URL per line, got [{line}]", n + 1),
                false,
            ));
        }
        urls.push(url.to_string());
    }
    if urls.is_empty() {
        return Err(error(
            &format!("No HTTP server to benchmark in {name}. Exiting!"),
            false,
        ));
    }
    Ok(urls)
}

/// A letter with its value.
fn valued(b: &mut Bench, c: char, v: &str, file: &mut Option<String>) -> Result<(), Exit> {
    let timeout = |what: &str| {
        timeout_ms(v).ok_or_else(|| error(&format!("illegal {what} timeout [{v}]"), false))
    };
    match c {
        'f' => *file = Some(v.to_string()),
        'n' => {
            let n = atoi(v);
            b.requests = match n {
                0 => u64::MAX,
                n if n > 0 => n as u64,
                _ => return Err(error(&format!("illegal # of requests [{v}]"), false)),
            };
        }
        'c' => {
            let n = atoi(v);
            if n <= 0 {
                return Err(error(
                    &format!("illegal # of concurrency requests [{v}]"),
                    false,
                ));
            }
            b.concurrency = n as u64;
        }
        'm' => b.retries = u8::try_from(atoi(v).max(0)).unwrap_or(u8::MAX),
        'r' => {
            let ms = timeout("reply")?;
            if ms == 0 {
                return Err(error(&format!("illegal reply timeout [{v}]"), false));
            }
            b.timeout = ms as f64 / 1000.0;
        }
        's' => b.start_delay = Some(timeout("initial")? as f64 / 1000.0),
        't' => {
            let ms = timeout("time limit")?;
            b.time_limit = (ms > 0).then_some(ms as f64 / 1000.0);
        }
        'I' => {
            return Err(error(
                "-I is not supported (lb 0.2 accepts it but has no such option)",
                false,
            ))
        }
        'H' => {
            if !v.contains(':') {
                return Err(error(
                    &format!("illegal header [{v}] (expected Name: value)"),
                    false,
                ));
            }
            b.headers.push(v.to_string());
        }
        'C' => b.cookies.push(v.to_string()),
        'X' => {
            let (host, port) = match v.split_once(':') {
                Some((h, p)) => (h, u16::try_from(atoi(p)).unwrap_or(0)),
                None => (v, 3128),
            };
            if host.is_empty() || port == 0 {
                return Err(error(&format!("illegal proxy server [{v}]"), false));
            }
            b.proxy = Some((host.to_string(), port));
        }
        'P' => {
            if !v.contains(':') {
                return Err(error(&format!("illegal proxy authentication [{v}]"), false));
            }
            b.auth.push(format!(
                "Proxy-Authorization: Basic {}",
                BASE64.encode(v.as_bytes())
            ));
        }
        _ => unreachable!("every valued letter of OPTSTRING is handled"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Bench, Exit> {
        let mut v = vec!["lb".to_string()];
        v.extend(args.iter().map(|s| s.to_string()));
        parse(&v, &mut &b"http://127.0.0.1:1/a\n# c\n\n  [::1]:2  \n"[..])
    }

    fn err(args: &[&str]) -> String {
        match run(args) {
            Err(e) => e.stderr.lines().next().unwrap_or("").to_string(),
            Ok(b) => panic!("{args:?} parsed: {b:?}"),
        }
    }

    #[test]
    fn timeouts_take_lbs_suffixes() {
        for (v, ms) in [
            ("3", 3_000),
            ("3s", 3_000),
            ("250l", 250),
            ("2m", 120_000),
            ("1h", 3_600_000),
            ("0", 0),
        ] {
            assert_eq!(timeout_ms(v), Some(ms), "{v}");
        }
        for v in ["", "s", "3x", "3ss", "-1", "1.5"] {
            assert_eq!(timeout_ms(v), None, "{v}");
        }
    }

    #[test]
    fn options_anywhere_and_the_servers_file() {
        let b = run(&[
            "http://127.0.0.1:8080/",
            "-n",
            "20",
            "-c5",
            "-k",
            "[::1]:8080",
            "-r",
            "500l",
            "-t",
            "1m",
            "-s",
            "2",
            "-m",
            "0",
        ])
        .expect("valid");
        assert_eq!((b.requests, b.concurrency, b.retries), (20, 5, 0));
        assert_eq!(
            (b.timeout, b.time_limit, b.start_delay),
            (0.5, Some(60.0), Some(2.0))
        );
        assert!(b.keep_alive);
        assert_eq!(b.urls.len(), 2);
        assert_eq!(b.urls[1].path, "/");
        let b = run(&["-f", "-", "-c", "4"]).expect("valid");
        assert_eq!(b.urls.len(), 2);
        assert_eq!((b.urls[0].port, b.urls[1].host.as_str()), (1, "::1"));
        // -c is cut to -n, as lb does; -n 0 is unlimited.
        assert_eq!(b.concurrency, 1);
        assert_eq!(
            run(&["-n", "0", "-c", "9", "h:1"]).expect("valid").requests,
            u64::MAX
        );
        let b = run(&["http://u:p@h:1/"]).expect("valid");
        assert_eq!(b.auth, ["Authorization: Basic dTpw"]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(err(&[]), "rshperf lb: missing argument");
        assert_eq!(
            err(&["-f", "x", "h:1"]),
            "rshperf lb: command line arguments and file are mutually exclusive"
        );
        assert_eq!(
            err(&["-c", "0", "h:1"]),
            "rshperf lb: illegal # of concurrency requests [0]"
        );
        assert_eq!(
            err(&["-r", "0", "h:1"]),
            "rshperf lb: illegal reply timeout [0]"
        );
        assert_eq!(
            err(&["-t", "x", "h:1"]),
            "rshperf lb: illegal time limit timeout [x]"
        );
        assert_eq!(
            err(&["-s", "1d", "h:1"]),
            "rshperf lb: illegal initial timeout [1d]"
        );
        assert_eq!(
            err(&["-H", "nocolon", "h:1"]),
            "rshperf lb: illegal header [nocolon] (expected Name: value)"
        );
        assert_eq!(err(&["-Z", "h:1"]), "rshperf lb: invalid option -- 'Z'");
        assert_eq!(
            err(&["-n"]),
            "rshperf lb: option requires an argument -- 'n'"
        );
        assert_eq!(
            err(&["http://h:x/"]),
            "rshperf lb: syntax error while processing [http://h:x/]"
        );
        assert_eq!(err(&["-f", "/nonexistent/servers"]), "rshperf lb: cannot open '/nonexistent/servers': No such file or directory (os error 2)");
        assert!(servers_file("f", "# only\n\n").is_err());
        assert_eq!(
            servers_file("f", "h:1 extra\n").err().map(|e| e.stderr),
            Some("rshperf lb: f:1: expected one URL per line, got [h:1 extra]\n".into())
        );
        assert_eq!(run(&["-h"]).err().map(|e| e.code), Some(0));
        assert!(run(&["-v"])
            .err()
            .is_some_and(|e| e.stdout.contains("lb 0.2 compatible")));
    }
}
