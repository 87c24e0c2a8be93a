//! rshperf's own `--request-log` in JSON lines as a replay source: each record's
//! `scheduled_us` (else `send_us`, a call that had no schedule) is its time, in
//! microseconds from the logged run's start, and its `uri` what it requested.
//!
//! The log has no method, headers or body (they were the run's options: give them
//! again to `replay`), so calls replay as `GET` … of the options' method; its
//! connection (`conn`) stands for the client. A record that ended `closed` is skipped:
//! its call went out again as another record with the same schedule. Owns only the
//! mapping; the JSON is read by `model::reqlog::from_json_line`. Pure; called by
//! `replay::Parser`.

use super::time::Stamp;
use super::Entry;
use crate::model::reqlog::{from_json_line, End};

/// One JSON line of a request log: `Ok(None)` for a record that is not replayed (a
/// call that went out again), else its `Entry` or what is wrong with it.
pub(crate) fn parse(line: &str) -> Result<Option<Entry>, String> {
    let r = from_json_line(line)?;
    if r.end == End::Closed {
        return Ok(None);
    }
    let us = r
        .scheduled_us
        .or(r.send_us)
        .ok_or("neither scheduled_us nor send_us")?;
    let ns = i64::try_from(us)
        .ok()
        .and_then(|us| us.checked_mul(1000))
        .ok_or_else(|| format!("a time out of range: {us} µs"))?;
    if r.uri.is_empty() {
        return Err("an empty uri".into());
    }
    Ok(Some(Entry {
        at: Stamp { ns, precise: true },
        request_time: None,
        client: format!("conn {}", r.conn),
        method: String::new(),
        uri: r.uri,
        headers: Vec::new(),
        body: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::reqlog::{Format, Record};

    fn line(r: &Record) -> String {
        let mut out = Vec::new();
        Format::Jsonl.write(r, &mut out);
        String::from_utf8(out)
            .expect("JSON is UTF-8")
            .trim_end()
            .to_string()
    }

    #[test]
    fn records_written_by_a_run_read_back_as_entries() {
        let r = Record {
            id: 3,
            conn: 7,
            uri: "/a?b=1".into(),
            scheduled_us: Some(1_500_000),
            send_us: Some(1_500_040),
            ..Record::default()
        };
        let e = parse(&line(&r)).expect("parses").expect("replayed");
        assert_eq!(
            e.at,
            Stamp {
                ns: 1_500_000_000,
                precise: true
            }
        );
        assert_eq!((e.client.as_str(), e.uri.as_str()), ("conn 7", "/a?b=1"));
        // Without a schedule, the time its request began.
        let unscheduled = Record {
            scheduled_us: None,
            ..r.clone()
        };
        assert_eq!(
            parse(&line(&unscheduled)).expect("ok").expect("some").at.ns,
            1_500_040_000
        );
        // A call that went out again is not replayed twice.
        let closed = Record {
            end: End::Closed,
            ..r.clone()
        };
        assert_eq!(parse(&line(&closed)), Ok(None));
        let neither = Record {
            scheduled_us: None,
            send_us: None,
            ..r.clone()
        };
        assert!(parse(&line(&neither))
            .expect_err("no time")
            .contains("scheduled_us"));
        let empty = Record {
            uri: String::new(),
            ..r
        };
        assert!(parse(&line(&empty)).expect_err("no uri").contains("uri"));
    }

    #[test]
    fn malformed_lines_are_refused() {
        for bad in ["", "{", "[]", "{}", "{\"id\":1}", "null", "not json"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
