//! Parsers of the structured option values (httperf's syntax, and rshperf's own):
//! `--http-version`, `--ssl-protocol`, `--wlog`, `--add-header` escapes, `--client`,
//! the session options, `--wset`, `--partition`, `--start-at`, `--content-type`,
//! `--metrics-listen`.
//!
//! Each returns the typed value or a `ConfigError` naming the option, with httperf's
//! message where httperf has one. Used by the httperf front end (`front::httperf`) and
//! by any front end that takes the same syntax; the builder takes the typed values.

use std::net::{SocketAddr, ToSocketAddrs};

use super::duration::{duration_prefix, split_unit};
use super::error::ConfigError;
use super::number::{strtod_prefix, to_u32, uint0_prefix, Uint0};
use super::types::{
    HttpVersion, PrintWhat, StartAt, WlogSpec, WsessSpec, WsesslogSpec, WsesspageSpec, WsetSpec,
};
use crate::wire::events::Choice;
use crate::wire::tls::SslProtocol;

/// `--print-reply`/`--print-request` argument: only the first letter counts.
pub(crate) fn print_what(arg: Option<&str>) -> PrintWhat {
    match arg
        .and_then(|a| a.chars().next())
        .map(|c| c.to_ascii_lowercase())
    {
        Some('h') => PrintWhat::Header,
        Some('b') => PrintWhat::Body,
        _ => PrintWhat::Both,
    }
}

/// `--ssl-verify[=yes|no]`: no argument or `y…` is yes, anything else no.
pub(crate) fn yes_no(arg: Option<&str>) -> bool {
    match arg {
        None => true,
        Some(a) => a.starts_with(['y', 'Y']),
    }
}

/// `--request-log-format`: `jsonl`, `csv` or `binary`.
pub(crate) fn parse_request_log_format(
    arg: &str,
) -> Result<Option<super::RequestLogFormat>, ConfigError> {
    match arg {
        "jsonl" | "json" => Ok(Some(super::RequestLogFormat::Jsonl)),
        "csv" => Ok(Some(super::RequestLogFormat::Csv)),
        "binary" | "bin" => Ok(Some(super::RequestLogFormat::Binary)),
        _ => Err(bad(
            "--request-log-format",
            format!("unknown format {arg} (expected jsonl, csv or binary)"),
        )),
    }
}

pub(crate) fn parse_ssl_protocol(arg: &str) -> Result<SslProtocol, ConfigError> {
    match arg.to_ascii_lowercase().as_str() {
        "auto" => Ok(SslProtocol::Auto),
        "tlsv1" | "tlsv1.0" | "tlsv1_0" => Ok(SslProtocol::Tls10),
        "tlsv1.1" | "tlsv1_1" => Ok(SslProtocol::Tls11),
        "tlsv1.2" | "tlsv1_2" => Ok(SslProtocol::Tls12),
        "tlsv1.3" | "tlsv1_3" => Ok(SslProtocol::Tls13),
        "sslv2" | "sslv3" => Err(bad(
            "--ssl-protocol",
            format!(
                "illegal SSL protocol {arg} (SSLv2 and SSLv3 are not supported; \
             expected auto, TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3)"
            ),
        )),
        _ => Err(bad("--ssl-protocol", format!("illegal SSL protocol {arg}"))),
    }
}

/// `--http-version`: httperf's `%u.%u`, then only 1.0 and 1.1; and rshperf's `2`
/// (also `2.0`) and `3` (also `3.0`), which httperf rejects as illegal version numbers.
pub(crate) fn parse_http_version(arg: &str) -> Result<HttpVersion, ConfigError> {
    if arg == "2" || arg == "2.0" {
        return Ok(HttpVersion::V2);
    }
    if arg == "3" || arg == "3.0" {
        return Ok(HttpVersion::V3);
    }
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let nmaj = digits(arg);
    let after = &arg[nmaj..];
    let minor_text = after.strip_prefix('.').unwrap_or("");
    let nmin = digits(minor_text);
    if nmaj == 0 || !after.starts_with('.') || nmin == 0 {
        return Err(bad(
            "--http-version",
            format!("illegal version number {arg}"),
        ));
    }
    let num = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
    let version = (num(&arg[..nmaj]), num(&minor_text[..nmin]));
    match (version, minor_text.len() == nmin) {
        ((1, 0), true) => Ok(HttpVersion::V10),
        ((1, 1), true) => Ok(HttpVersion::V11),
        _ => Err(bad(
            "--http-version",
            format!("unsupported HTTP version {arg} (expected 1.0, 1.1, 2 or 3)"),
        )),
    }
}

/// `--wlog=B,F`: B `y`/`Y` loops; the comma and a file name are required
/// (compatibility.md, bug 20).
pub(crate) fn parse_wlog(arg: &str) -> Result<WlogSpec, ConfigError> {
    let mut chars = arg.chars();
    let flag = chars.next();
    let rest = chars.as_str();
    match (flag, rest.strip_prefix(',')) {
        (Some(b), Some(file)) if !file.is_empty() => Ok(WlogSpec::new(b == 'y' || b == 'Y', file)),
        _ => Err(bad(
            "--wlog",
            format!("illegal --wlog argument {arg} (expected y,FILE or n,FILE)"),
        )),
    }
}

/// `--add-header` escape processing (docs/compatibility.md §1.2): returns the bytes and
/// the warnings (without the program-name prefix) for unknown escapes.
pub(crate) fn unescape_header(raw: &str) -> (Vec<u8>, Vec<String>) {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len() + 2);
    let mut warnings = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        match b.get(i) {
            None => {
                warnings.push("ignoring trailing `\\' in --add-header".to_string());
                out.push(b'\\');
            }
            Some(b'\\') => {
                out.push(b'\\');
                i += 1;
            }
            Some(b'a') => {
                out.push(b'\n');
                i += 1;
            }
            Some(b'r') => {
                out.push(b'\r');
                i += 1;
            }
            Some(b'n') => {
                out.extend_from_slice(b"\r\n");
                i += 1;
            }
            Some(b'0'..=b'7') => {
                // strtol(…, 8) over the maximal octal run; the long is stored in a char.
                let mut v: u64 = 0;
                while let Some(d @ b'0'..=b'7') = b.get(i) {
                    v = v.saturating_mul(8).saturating_add(u64::from(d - b'0'));
                    i += 1;
                }
                out.push((v.min(i64::MAX as u64) & 0xff) as u8);
            }
            Some(_) => {
                let c = raw[i..].chars().next().unwrap_or('\\');
                warnings.push(format!(
                    "ignoring unknown escape sequence `\\{c}' in --add-header"
                ));
                out.extend_from_slice(&b[i..i + c.len_utf8()]);
                i += c.len_utf8();
            }
        }
    }
    (out, warnings)
}

/// `--client=I/N` with I < N.
pub(crate) fn parse_client(arg: &str) -> Result<(u32, u32), ConfigError> {
    let id = match uint0_prefix(arg) {
        Uint0::Value(v, used) if v <= u64::from(u32::MAX) => Some((v, used)),
        _ => None,
    };
    let Some((id, used)) = id else {
        return Err(bad("--client", format!("bad client id (rest: `{arg}')")));
    };
    let after = &arg[used..];
    let Some(n_text) = after.strip_prefix('/') else {
        return Err(bad(
            "--client",
            format!("client id not followed by `/' (rest: `{after}')"),
        ));
    };
    match uint0_prefix(n_text) {
        Uint0::Value(n, used) if used == n_text.len() && id < n && n <= u64::from(u32::MAX) => {
            Ok((to_u32(id), to_u32(n)))
        }
        _ => Err(bad(
            "--client",
            format!("bad number of clients (rest: `{n_text}')"),
        )),
    }
}

/// strerror(ERANGE), as httperf appends it.
const ERANGE_TEXT: &str = ": Numerical result out of range";

/// A count inside a session option (base 0, at least 1): value and bytes used, or the
/// error for `reason`, built by `fail(reason, rest, suffix)`.
fn session_count(
    text: &str,
    reason: &str,
    fail: &dyn Fn(&str, &str, &str) -> ConfigError,
) -> Result<(u64, usize), ConfigError> {
    match uint0_prefix(text) {
        Uint0::Empty => Err(fail(reason, text, "")),
        Uint0::Overflow(end) => Err(fail(reason, &text[end..], ERANGE_TEXT)),
        Uint0::Value(0, _) => Err(fail(reason, text, " (expected an integer >= 1)")),
        Uint0::Value(v, used) => Ok((v, used)),
    }
}

/// A think time inside a session option: value and bytes used.
fn session_think(
    text: &str,
    reason: &str,
    fail: &dyn Fn(&str, &str, &str) -> ConfigError,
) -> Result<(f64, usize), ConfigError> {
    match duration_prefix(text) {
        None => Err(fail(reason, text, "")),
        Some((v, used)) if v < 0.0 => Err(fail(reason, &text[used..], "")),
        Some((v, used)) if !v.is_finite() => Err(fail(
            reason,
            &text[used..],
            " (expected a number of seconds >= 0)",
        )),
        Some(ok) => Ok(ok),
    }
}

/// The second-parameter message of `--wsess`.
const WSESS_2ND: &str = "bad number of calls per session (2nd param)";
/// The second-parameter message of `--wsesspage`.
const WSESSPAGE_2ND: &str = "bad number of user requests per session (2nd param)";

/// `--wsess=N1,N2,X`: sessions, calls per session, think time.
pub(crate) fn parse_wsess(arg: &str) -> Result<WsessSpec, ConfigError> {
    let (sessions, calls, think) = parse_sess3(arg, "wsess", WSESS_2ND)?;
    Ok(WsessSpec::new(sessions, calls, think))
}

/// `--wsesspage=N1,N2,X`: sessions, pages per session, think time.
pub(crate) fn parse_wsesspage(arg: &str) -> Result<WsesspageSpec, ConfigError> {
    let (sessions, pages, think) = parse_sess3(arg, "wsesspage", WSESSPAGE_2ND)?;
    Ok(WsesspageSpec::new(sessions, pages, think))
}

/// `--wsess=N1,N2,X` / `--wsesspage=N1,N2,X`.
fn parse_sess3(arg: &str, option: &str, second: &str) -> Result<(u64, u64, f64), ConfigError> {
    let fail = |reason: &str, rest: &str, suffix: &str| {
        bad(
            option_name(option),
            format!("{reason} in --{option} arg (rest: `{rest}'){suffix}"),
        )
    };
    let (n1, used) = session_count(arg, "bad number of sessions (1st param)", &fail)?;
    let after = &arg[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(second, after, ""));
    };
    let (n2, used) = session_count(text, second, &fail)?;
    let third = "bad user think time (3rd param)";
    let after = &text[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(third, after, ""));
    };
    let (think, used) = session_think(text, third, &fail)?;
    let after = &text[used..];
    if !after.is_empty() {
        return Err(fail("extraneous parameter", after, ""));
    }
    Ok((n1, n2, think))
}

/// `--wsesslog=N,X,F`.
pub(crate) fn parse_wsesslog(arg: &str) -> Result<WsesslogSpec, ConfigError> {
    let fail = |reason: &str, rest: &str, suffix: &str| {
        bad(
            "--wsesslog",
            format!("{reason} in --wsesslog arg (rest: `{rest}'){suffix}"),
        )
    };
    let (sessions, used) = session_count(arg, "bad number of sessions (1st param)", &fail)?;
    let second = "bad user think time (2nd param)";
    let after = &arg[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(second, after, ""));
    };
    let (think, used) = session_think(text, second, &fail)?;
    let third = "bad session filename (3rd param)";
    let after = &text[used..];
    let Some(text) = after.strip_prefix(',') else {
        return Err(fail(third, after, ""));
    };
    let (file, extra) = match text.split_once(',') {
        Some((f, rest)) => (f, Some(rest)),
        None => (text, None),
    };
    if file.is_empty() {
        return Err(fail(third, text, " (expected a file name)"));
    }
    if let Some(rest) = extra {
        return Err(fail("extraneous parameter", rest, ""));
    }
    Ok(WsesslogSpec::new(sessions, think, file))
}

/// `--wset=N,X` (the message quotes the text from the current parameter on).
pub(crate) fn parse_wset(arg: &str) -> Result<WsetSpec, ConfigError> {
    let fail = |reason: &str, rest: &str, suffix: &str| {
        bad(
            "--wset",
            format!("{reason} in --wset arg (rest: `{rest}'){suffix}"),
        )
    };
    let first = "bad working set size (1st parameter)";
    let (files, used) = match uint0_prefix(arg) {
        Uint0::Empty => return Err(fail(first, arg, "")),
        Uint0::Overflow(_) => return Err(fail(first, arg, ERANGE_TEXT)),
        Uint0::Value(0, _) => return Err(fail(first, arg, " (expected an integer >= 1)")),
        Uint0::Value(v, used) => (v, used),
    };
    let second = "bad target miss rate (2nd parameter)";
    let Some(text) = arg[used..].strip_prefix(',') else {
        return Err(fail(second, arg, ""));
    };
    let (miss_rate, used) = match strtod_prefix(text) {
        Some((v, used)) if (0.0..=1.0).contains(&v) => (v, used),
        Some((v, _)) if v.is_nan() => {
            return Err(fail(second, text, " (expected a number from 0 to 1)"))
        }
        _ => return Err(fail(second, text, "")),
    };
    if used != text.len() {
        return Err(fail("extraneous parameter", text, ""));
    }
    Ok(WsetSpec::new(files, miss_rate))
}

/// `--content-type`: one header value, without line breaks.
pub(crate) fn parse_content_type(v: &str) -> Result<String, ConfigError> {
    if v.trim().is_empty() || v.contains(['\r', '\n']) {
        return Err(bad(
            "--content-type",
            format!(
                "--content-type: '{}' is not a header value (one line, not empty)",
                v.escape_debug()
            ),
        ));
    }
    Ok(v.trim().to_string())
}

/// `--stream`: a format's name or `auto`.
pub(crate) fn parse_stream(v: &str) -> Result<Choice, ConfigError> {
    Choice::from_name(v).ok_or_else(|| {
        bad(
            "--stream",
            format!(
                "--stream: '{}' is not a stream format (expected one of {})",
                v.escape_debug(),
                Choice::NAMES.join(", ")
            ),
        )
    })
}

/// `--metrics-listen ADDR:PORT` (a host name is resolved, first address).
pub(crate) fn parse_listen(v: &str) -> Result<SocketAddr, ConfigError> {
    let bad = || {
        bad(
            "--metrics-listen",
            format!("--metrics-listen: '{v}' is not ADDR:PORT (e.g. 127.0.0.1:9464)"),
        )
    };
    if let Ok(a) = v.parse::<SocketAddr>() {
        return Ok(a);
    }
    if !v.contains(':') {
        return Err(bad());
    }
    v.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(bad)
}

/// A file-name argument that must not be empty.
pub(crate) fn nonempty(v: &str, option: &'static str) -> Result<String, ConfigError> {
    if v.is_empty() {
        return Err(ConfigError::EmptyFileName { option });
    }
    Ok(v.to_string())
}

/// `--partition=I/N`: decimal I < N, N from 1 to 1,000,000.
pub(crate) fn parse_partition(v: &str) -> Result<(u32, u32), ConfigError> {
    let bad = || {
        bad(
            "--partition",
            format!("illegal partition {v} (expected I/N with 0 <= I < N, e.g. 0/4)"),
        )
    };
    let (i, n) = v.split_once('/').ok_or_else(bad)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(i) || !digits(n) {
        return Err(bad());
    }
    let i: u32 = i.parse().map_err(|_| bad())?;
    let n: u32 = n.parse().map_err(|_| bad())?;
    if n == 0 || i >= n || n > 1_000_000 {
        return Err(bad());
    }
    Ok((i, n))
}

/// `--start-at=UNIX_SECONDS` or `+SECONDS` (a duration: `+30s`, `+2m`).
pub(crate) fn parse_start_at(v: &str) -> Result<StartAt, ConfigError> {
    let bad = || {
        bad(
            "--start-at",
            format!("illegal start time {v} (expected UNIX_SECONDS or +SECONDS)"),
        )
    };
    let (rel, num, scale) = match v.strip_prefix('+') {
        Some(rest) => {
            let (num, scale) = split_unit(rest);
            (true, num, scale)
        }
        None => (false, v, 1.0),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let x = num.parse::<f64>().map_err(|_| bad())? * scale;
    if !x.is_finite() || (rel && x > 86_400.0 * 7.0) {
        return Err(bad());
    }
    Ok(if rel {
        StartAt::After(x)
    } else {
        StartAt::Unix(x)
    })
}

/// A malformed value of `option`.
fn bad(option: &'static str, message: String) -> ConfigError {
    ConfigError::Malformed { option, message }
}

/// `wsess` → `--wsess` (the session parsers are shared).
fn option_name(option: &str) -> &'static str {
    match option {
        "wsesspage" => "--wsesspage",
        _ => "--wsess",
    }
}
