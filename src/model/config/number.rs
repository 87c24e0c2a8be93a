//! C-compatible number parsing and httperf's per-option number rules.
//!
//! httperf parses with strtoul/strtod; rshperf is stricter: integers are decimal digits
//! only (`--client` and the session options: C base-0 digits only), floats are Rust
//! floats and never NaN or infinite. When httperf would have accepted a value that
//! rshperf rejects, the message says what is expected; values httperf rejects too get
//! httperf's exact message. Owns `IntRule`/`FloatRule` and their constants (one per
//! option), `strtod_prefix` and `uint0_prefix`. Used by `config::value`,
//! `config::period` and `ConfigBuilder::build` (which checks typed values by the same
//! rules).

use super::duration::seconds;
use super::error::ConfigError;

/// C `isspace`.
pub(crate) fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// What `strtoul(s, &end, 10)` with `*end == 0` and no ERANGE yields, if anything.
pub(crate) fn c_strtoul10(s: &str) -> Option<u64> {
    let t = s.trim_start_matches(is_c_space);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v = t.parse::<u64>().ok()?;
    Some(if neg { v.wrapping_neg() } else { v })
}

/// A decimal-integer option: rshperf's range, httperf's range and messages.
pub(crate) struct IntRule {
    /// The long option, for the error.
    pub(crate) option: &'static str,
    /// httperf's message prefix, e.g. `illegal number of connections`.
    pub(crate) what: &'static str,
    /// rshperf's accepted range (lowest).
    pub(crate) min: u64,
    /// rshperf's accepted range (highest).
    pub(crate) max: u64,
    /// httperf's accepted range (empty: an rshperf-only option, always explained).
    c_min: u64,
    /// httperf's accepted range (highest).
    c_max: u64,
    /// What is expected, for values httperf accepted.
    pub(crate) expect: &'static str,
}

impl IntRule {
    /// The value of `arg`, or httperf's message (with what is expected when httperf
    /// would have accepted it).
    pub(crate) fn parse(&self, arg: &str) -> Result<u64, ConfigError> {
        let digits = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_digit());
        if let (true, Ok(v)) = (digits, arg.parse::<u64>()) {
            if (self.min..=self.max).contains(&v) {
                return Ok(v);
            }
        }
        let c_ok = c_strtoul10(arg).is_some_and(|v| (self.c_min..=self.c_max).contains(&v));
        Err(ConfigError::Illegal {
            option: self.option,
            what: self.what,
            value: arg.to_string(),
            expected: (c_ok || self.c_min > self.c_max).then_some(self.expect),
        })
    }

    /// A typed value checked against the rule (the message as if it had been typed).
    pub(crate) fn check(&self, v: u64) -> Result<u64, ConfigError> {
        if (self.min..=self.max).contains(&v) {
            return Ok(v);
        }
        self.parse(&v.to_string())
    }
}

/// The largest socket buffer size.
const MAX_BUFFER: u64 = (1 << 31) - 1;

/// `--num-conns`.
pub(crate) const NUM_CONNS: IntRule = IntRule {
    option: "--num-conns",
    what: "illegal number of connections",
    min: 1,
    max: u64::MAX,
    c_min: 0,
    c_max: u64::MAX,
    expect: "expected an integer >= 1",
};
/// `--num-calls`.
pub(crate) const NUM_CALLS: IntRule = IntRule {
    option: "--num-calls",
    what: "illegal number of calls",
    ..NUM_CONNS
};
/// `--burst-length`.
pub(crate) const BURST_LENGTH: IntRule = IntRule {
    option: "--burst-length",
    what: "illegal burst-length",
    c_min: 1,
    ..NUM_CONNS
};
/// `--port`.
pub(crate) const PORT: IntRule = IntRule {
    option: "--port",
    what: "illegal port number",
    min: 1,
    max: 65535,
    c_min: 0,
    c_max: 65535,
    expect: "expected an integer from 1 to 65535",
};
/// `--send-buffer`.
pub(crate) const SEND_BUFFER: IntRule = IntRule {
    option: "--send-buffer",
    what: "illegal send buffer size",
    min: 1,
    max: MAX_BUFFER,
    c_min: 0,
    c_max: u64::MAX,
    expect: "expected an integer from 1 to 2147483647",
};
/// `--recv-buffer`.
pub(crate) const RECV_BUFFER: IntRule = IntRule {
    option: "--recv-buffer",
    what: "illegal receive buffer size",
    ..SEND_BUFFER
};
/// `--max-connections`.
pub(crate) const MAX_CONNECTIONS: IntRule = IntRule {
    option: "--max-connections",
    what: "illegal max. # of connection",
    min: 0,
    max: u64::MAX,
    c_min: 0,
    c_max: u64::MAX,
    expect: "expected an integer >= 0",
};
/// Most connections of one session (httperf's MAX_CONN).
pub(crate) const SESSION_MAX_CONNS: u64 = 4;
/// Most pipelined calls per connection of a session workload (httperf's MAX_PIPED).
pub(crate) const SESSION_MAX_PIPED: u64 = 32;

/// `--max-piped-calls`.
pub(crate) const MAX_PIPED_CALLS: IntRule = IntRule {
    option: "--max-piped-calls",
    what: "illegal max. # of piped calls",
    ..MAX_CONNECTIONS
};
/// `--failure-status`.
pub(crate) const FAILURE_STATUS: IntRule = IntRule {
    option: "--failure-status",
    what: "illegal failure status",
    min: 100,
    max: 999,
    c_min: 1,
    c_max: u64::MAX,
    expect: "expected an HTTP status code from 100 to 999",
};
/// `--debug`.
pub(crate) const DEBUG: IntRule = IntRule {
    option: "--debug",
    what: "illegal debug level",
    max: u32::MAX as u64,
    expect: "expected an integer from 0 to 4294967295",
    ..MAX_CONNECTIONS
};
/// `--threads`.
pub(crate) const THREADS: IntRule = IntRule {
    option: "--threads",
    what: "illegal number of threads",
    min: 1,
    max: 1024,
    c_min: 1,
    c_max: 0,
    expect: "expected an integer from 1 to 1024",
};

/// `--call-rate`.
pub(crate) const CALL_RATE: FloatRule = FloatRule {
    option: "--call-rate",
    what: "illegal call rate",
    ok: |v| v > 0.0 && (1.0 / v).is_finite() && v <= 1e9,
    c_ok: any,
    expect: "expected a number of calls per second > 0 and <= 1e9",
    duration: false,
};

/// `--concurrency`.
pub(crate) const CONCURRENCY: IntRule = IntRule {
    option: "--concurrency",
    what: "illegal concurrency",
    min: 1,
    max: 1_000_000,
    c_min: 1,
    c_max: 0,
    expect: "expected an integer from 1 to 1000000",
};

/// The longest prefix of `s` that C `strtod` would convert (decimal forms, `inf`,
/// `infinity`, `nan`, with an optional sign; no leading blanks, no hex floats), as
/// (value, bytes used); None when nothing converts.
pub(crate) fn strtod_prefix(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let lower = s[i..].to_ascii_lowercase();
    if lower.starts_with("infinity") {
        i += 8;
    } else if lower.starts_with("inf") || lower.starts_with("nan") {
        i += 3;
    } else {
        let digits = |mut j: usize| {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            j
        };
        let int_end = digits(i);
        let mut end = int_end;
        let mut frac = 0;
        if b.get(end) == Some(&b'.') {
            let frac_end = digits(end + 1);
            frac = frac_end - (end + 1);
            end = frac_end;
        }
        if int_end == i && frac == 0 {
            return None;
        }
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut j = end + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let exp_end = digits(j);
            if exp_end > j {
                end = exp_end;
            }
        }
        i = end;
    }
    s[..i].parse::<f64>().ok().map(|v| (v, i))
}

/// What `strtod(s, &end)` with `*end == 0` and no ERANGE yields, if anything.
pub(crate) fn c_strtod(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(is_c_space);
    let (v, used) = strtod_prefix(t)?;
    let overflow = v.is_infinite() && !t.to_ascii_lowercase().contains("inf");
    (used == t.len() && !overflow).then_some(v)
}

/// A floating-point option: rshperf's acceptance test, httperf's, and messages.
pub(crate) struct FloatRule {
    /// The long option, for the error.
    pub(crate) option: &'static str,
    /// httperf's message prefix.
    pub(crate) what: &'static str,
    /// rshperf's acceptance test.
    ok: fn(f64) -> bool,
    /// httperf's acceptance test.
    c_ok: fn(f64) -> bool,
    /// What is expected, for values httperf accepted.
    pub(crate) expect: &'static str,
    /// A duration in seconds: a unit may follow the number (`duration::seconds`).
    duration: bool,
}

impl FloatRule {
    /// The value of `arg`, or httperf's message. A duration may carry a unit
    /// (`seconds`); a number without one is read as httperf reads it.
    pub(crate) fn parse(&self, arg: &str) -> Result<f64, ConfigError> {
        let value = match self.duration {
            true => seconds(arg),
            false => arg.parse::<f64>().ok(),
        };
        if let Some(v) = value {
            if v.is_finite() && (self.ok)(v) {
                return Ok(v);
            }
        }
        Err(ConfigError::Illegal {
            option: self.option,
            what: self.what,
            value: arg.to_string(),
            expected: c_strtod(arg).is_some_and(self.c_ok).then_some(self.expect),
        })
    }

    /// A typed value checked against the rule (the message as if it had been typed).
    pub(crate) fn check(&self, v: f64) -> Result<f64, ConfigError> {
        if v.is_finite() && (self.ok)(v) {
            return Ok(v);
        }
        self.parse(&crate::wire::cfmt::g(v))
    }
}

/// An acceptance test.
fn non_negative(v: f64) -> bool {
    v >= 0.0
}
/// An acceptance test.
fn positive(v: f64) -> bool {
    v > 0.0
}
/// An acceptance test.
fn any(_: f64) -> bool {
    true
}
/// httperf tests `runtime <= 0`, which lets NaN through.
fn c_runtime_ok(v: f64) -> bool {
    v > 0.0 || v.is_nan()
}

/// `--rate`.
pub(crate) const RATE: FloatRule = FloatRule {
    option: "--rate",
    what: "illegal request rate",
    ok: non_negative,
    c_ok: any,
    expect: "expected a number >= 0; 0 means sequential",
    duration: false,
};
/// `--timeout`.
pub(crate) const TIMEOUT: FloatRule = FloatRule {
    option: "--timeout",
    what: "illegal connect timeout",
    ok: non_negative,
    c_ok: any,
    expect: "expected a number of seconds >= 0; 0 means none",
    duration: true,
};
/// `--think-timeout`.
pub(crate) const THINK_TIMEOUT: FloatRule = FloatRule {
    option: "--think-timeout",
    what: "illegal think timeout value",
    expect: "expected a number of seconds >= 0",
    ..TIMEOUT
};
/// `--stream-gap-timeout`.
pub(crate) const STREAM_GAP_TIMEOUT: FloatRule = FloatRule {
    option: "--stream-gap-timeout",
    what: "illegal stream gap timeout",
    ok: non_negative,
    c_ok: any,
    expect: "expected a number of seconds >= 0; 0 means none",
    duration: true,
};
/// `--quic-idle-timeout`.
pub(crate) const QUIC_IDLE_TIMEOUT: FloatRule = FloatRule {
    option: "--quic-idle-timeout",
    what: "illegal QUIC idle timeout",
    ok: non_negative,
    c_ok: any,
    expect: "expected a number of seconds >= 0; 0 means none",
    duration: true,
};
/// `--metrics-linger`.
pub(crate) const METRICS_LINGER: FloatRule = FloatRule {
    option: "--metrics-linger",
    what: "illegal metrics linger",
    ok: non_negative,
    c_ok: non_negative,
    expect: "expected a number of seconds >= 0",
    duration: true,
};
/// `--runtime`.
pub(crate) const RUNTIME: FloatRule = FloatRule {
    option: "--runtime",
    what: "illegal runtime value",
    ok: positive,
    c_ok: c_runtime_ok,
    expect: "expected a number of seconds > 0",
    duration: true,
};

/// C `strtoul(s, &end, 0)` restricted to digits (no blanks, no sign).
pub(crate) enum Uint0 {
    /// No digits at the start.
    Empty,
    /// Value and bytes used.
    Value(u64, usize),
    /// Too large (ERANGE); bytes of the digit run.
    Overflow(usize),
}

/// C `strtoul(s, &end, 0)` over the digits at the start of `s`.
pub(crate) fn uint0_prefix(s: &str) -> Uint0 {
    let b = s.as_bytes();
    let hex =
        b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') && b[2].is_ascii_hexdigit();
    let (radix, start) = match (hex, b.first()) {
        (true, _) => (16, 2),
        (false, Some(b'0')) => (8, 0),
        _ => (10, 0),
    };
    let run = b[start..]
        .iter()
        .take_while(|c| char::from(**c).is_digit(radix))
        .count();
    if run == 0 {
        return Uint0::Empty;
    }
    let end = start + run;
    match u64::from_str_radix(&s[start..end], radix) {
        Ok(v) => Uint0::Value(v, end),
        Err(_) => Uint0::Overflow(end),
    }
}

/// Values come from rules whose maximum fits; saturate rather than panic anyway.
pub(crate) fn to_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_options_read_units_and_keep_httperfs_messages() {
        assert_eq!(TIMEOUT.parse("5ms"), Ok(0.005));
        assert_eq!(RUNTIME.parse("3s"), Ok(3.0));
        assert_eq!(THINK_TIMEOUT.parse("2m"), Ok(120.0));
        assert_eq!(METRICS_LINGER.parse("500ms"), Ok(0.5));
        assert_eq!(QUIC_IDLE_TIMEOUT.parse("30s"), Ok(30.0));
        // Refused as httperf refuses it, word for word.
        assert_eq!(
            TIMEOUT.parse("5x").map_err(|e| e.to_string()),
            Err("illegal connect timeout 5x".to_string())
        );
        assert_eq!(
            RUNTIME.parse("0s").map_err(|e| e.to_string()),
            Err("illegal runtime value 0s".to_string())
        );
        // A rate is no duration.
        assert!(RATE.parse("5s").is_err());
        assert!(CALL_RATE.parse("5s").is_err());
    }
}
