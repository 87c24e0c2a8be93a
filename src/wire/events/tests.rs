//! Tests of the event splitter: a table of bodies, each fed whole, one byte at a time,
//! cut at every boundary and (when short) at every pair of boundaries, all of which
//! must agree with each other, with the expected counts and with a plain reference
//! (a transcription of the WHATWG algorithm that keeps whole lines and data); seeded
//! random bodies against the same reference; times and gaps; a 1 MB event.

use std::time::{Duration, Instant};

use super::*;

/// Everything a sink saw.
#[derive(Debug, Default)]
struct Rec {
    events: Vec<Event>,
    done: Vec<Instant>,
}

impl EventSink for Rec {
    fn event(&mut self, event: &Event) {
        self.events.push(*event);
    }
    fn done(&mut self, at: Instant) {
        self.done.push(at);
    }
}

/// What must not depend on how the body was split: each event's data and wire bytes
/// (indices in order), and how the stream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    events: Vec<(u64, u64)>,
    finish: Finish,
}

/// Feeds `body` cut at `cuts` (sorted), piece k at `t0 + k ms`, then finishes.
fn run(format: Format, body: &[u8], cuts: &[usize], complete: bool) -> (Outcome, Rec) {
    let t0 = Instant::now();
    let mut s = EventSplitter::new(format);
    let mut rec = Rec::default();
    let mut from = 0;
    let ends = cuts.iter().copied().chain([body.len()]);
    for (k, to) in ends.enumerate() {
        s.feed(
            &body[from..to],
            t0 + Duration::from_millis(k as u64),
            &mut rec,
        );
        from = to;
    }
    let end = t0 + Duration::from_millis(cuts.len() as u64 + 1);
    let finish = s.finish(complete, end, &mut rec);
    // Later calls change nothing.
    s.feed(b"data: x\n\n{}\n", end, &mut rec);
    assert_eq!(s.finish(!complete, end, &mut rec), finish);
    assert_eq!(finish.events, rec.events.len() as u64);
    assert_eq!(finish.done, !rec.done.is_empty());
    assert!(rec.done.len() <= 1);
    assert_eq!(s.body_bytes(), body.len() as u64);
    for (i, e) in rec.events.iter().enumerate() {
        assert_eq!(e.index, i as u64);
    }
    let events = rec.events.iter().map(|e| (e.data_bytes, e.wire_bytes));
    let out = Outcome {
        events: events.collect(),
        finish,
    };
    (out, rec)
}

/// Runs `body` whole, a byte at a time, cut at every boundary (a sample for large
/// bodies) and at every pair of boundaries (short bodies); all must agree.
fn split_invariant(format: Format, body: &[u8], complete: bool) -> Outcome {
    let (whole, _) = run(format, body, &[], complete);
    let n = body.len();
    let ones: Vec<usize> = (1..n).collect();
    let show = String::from_utf8_lossy(body);
    assert_eq!(
        run(format, body, &ones, complete).0,
        whole,
        "bytes {show:?}"
    );
    let cuts: Vec<usize> = if n <= 4000 {
        (0..=n).collect()
    } else {
        (0..=n)
            .filter(|&k| k < 300 || n - k < 300 || k % 4099 == 0)
            .collect()
    };
    for &k in &cuts {
        assert_eq!(
            run(format, body, &[k], complete).0,
            whole,
            "cut {k} {show:?}"
        );
    }
    if n <= 48 {
        for a in 0..=n {
            for b in a..=n {
                let out = run(format, body, &[a, b], complete).0;
                assert_eq!(out, whole, "cuts {a},{b} {show:?}");
            }
        }
    }
    whole
}

/// The WHATWG algorithm (and the line rules) kept literal: whole lines, a real data
/// buffer. Each dispatch is (data bytes, offset just past its dispatching byte, done).
fn reference(format: Format, body: &[u8], complete: bool) -> Outcome {
    let skip = if body.starts_with(&BOM) { 3 } else { 0 };
    // (line, offset just past the first byte of its line end); then the unended rest.
    let mut lines: Vec<(&[u8], usize)> = Vec::new();
    let (mut start, mut i) = (skip, skip);
    while i < body.len() {
        let b = body[i];
        let ends = match format {
            Format::Sse => b == b'\r' || b == b'\n',
            Format::Ndjson | Format::Lines => b == b'\n',
        };
        if ends {
            lines.push((&body[start..i], i + 1));
            if b == b'\r' && body.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    let rest = &body[start.min(body.len())..];
    let mut dispatched: Vec<(u64, usize, bool)> = Vec::new();
    let partial = match format {
        Format::Sse => {
            let mut data: Vec<u8> = Vec::new();
            // The field a line holds: (name, value).
            let field = |line: &[u8]| -> (Vec<u8>, Vec<u8>) {
                match line.iter().position(|&b| b == b':') {
                    Some(c) => {
                        let v = &line[c + 1..];
                        (
                            line[..c].to_vec(),
                            v.strip_prefix(b" ").unwrap_or(v).to_vec(),
                        )
                    }
                    None => (line.to_vec(), Vec::new()),
                }
            };
            for &(line, end) in &lines {
                if line.is_empty() {
                    if !data.is_empty() {
                        data.pop();
                        dispatched.push((data.len() as u64, end, data == b"[DONE]"));
                        data.clear();
                    }
                } else if line[0] != b':' {
                    let (name, value) = field(line);
                    if name == b"data" {
                        data.extend_from_slice(&value);
                        data.push(b'\n');
                    }
                }
            }
            !data.is_empty() || (!rest.starts_with(b":") && field(rest).0 == b"data")
        }
        Format::Ndjson | Format::Lines => {
            let event = |line: &[u8]| -> Option<u64> {
                let data = line.strip_suffix(b"\r").unwrap_or(line);
                let counts = if format == Format::Ndjson {
                    line.iter().any(|b| !b" \t\r".contains(b))
                } else {
                    !data.is_empty()
                };
                counts.then_some(data.len() as u64)
            };
            for &(line, end) in &lines {
                if let Some(n) = event(line) {
                    dispatched.push((n, end, false));
                }
            }
            match event(rest) {
                Some(n) if complete => {
                    dispatched.push((n, body.len(), false));
                    false
                }
                Some(_) => true,
                None => false,
            }
        }
    };
    let (mut events, mut done, mut after_done, mut last_end) = (Vec::new(), false, 0, 0);
    for (data, end, is_done) in dispatched {
        let wire = (end - last_end) as u64;
        last_end = end;
        if done {
            after_done += 1;
        } else if is_done {
            done = true;
        } else {
            events.push((data, wire));
        }
    }
    Outcome {
        finish: Finish {
            events: events.len() as u64,
            done,
            after_done,
            partial,
        },
        events,
    }
}

/// One table row.
struct Case {
    format: Format,
    body: Vec<u8>,
    /// The body ended by its framing (not cut).
    complete: bool,
    /// (data bytes, wire bytes) of each event.
    events: Vec<(u64, u64)>,
    done: bool,
    after_done: u64,
    partial: bool,
}

fn case(format: Format, body: &[u8], events: &[(u64, u64)]) -> Case {
    Case {
        format,
        body: body.to_vec(),
        complete: true,
        events: events.to_vec(),
        done: false,
        after_done: 0,
        partial: false,
    }
}

fn sse(body: &[u8], events: &[(u64, u64)]) -> Case {
    case(Format::Sse, body, events)
}

impl Case {
    fn done(mut self, after_done: u64) -> Case {
        self.done = true;
        self.after_done = after_done;
        self
    }
    fn partial(mut self) -> Case {
        self.partial = true;
        self
    }
    fn cut(mut self) -> Case {
        self.complete = false;
        self
    }
}

fn cases() -> Vec<Case> {
    use Format::{Lines, Ndjson};
    let big = [b"data: ".as_slice(), &[b'y'; 5000], b"\n\n"].concat();
    vec![
        sse(b"", &[]),
        sse(b"data: hello\n\n", &[(5, 13)]),
        sse(b"data:hello\n\ndata: x\n\n", &[(5, 12), (1, 9)]),
        // One space is dropped, not two; a colon in the value is data.
        sse(b"data:  x\n\ndata: a:b\n\n", &[(2, 10), (3, 11)]),
        // Multi-line data is joined with LF.
        sse(b"data: a\ndata: bc\ndata:\n\n", &[(5, 24)]),
        // CRLF, CR and LF line ends, mixed; the LF of a CRLF counts to what follows.
        sse(b"data: a\r\n\r\n", &[(1, 10)]),
        sse(b"data: a\r\rdata: b\r\r", &[(1, 9), (1, 9)]),
        sse(b"data: a\r\ndata: b\rdata: c\n\r\n", &[(5, 26)]),
        sse(b"data: a\n\r\r\ndata: b\r\n\n", &[(1, 9), (1, 12)]),
        // Comments and keep-alive blank lines are not events.
        sse(b": ping\n\n:\n\n\n\r\ndata: x\n\n: bye\n", &[(1, 23)]),
        sse(b":data: x\n\n", &[]),
        // Fields other than data make no event; `data` with no colon is empty data.
        sse(b"event: e\nid: 1\nretry: 10\n\n", &[]),
        sse(b"event: e\ndata\n\n", &[(0, 15)]),
        sse(b"data:\n\ndata\r\n\r\n", &[(0, 7), (0, 7)]),
        sse(b"id: 7\ndata: x\nevent: e\nwhat: ever\n\n", &[(1, 35)]),
        // Names are case-sensitive and exact.
        sse(
            b"Data: x\n\ndata : x\n\n data: x\n\ndat: x\n\ndatas: x\n\n",
            &[],
        ),
        // A BOM at the start is skipped (a second one is data, a partial one too).
        sse(b"\xEF\xBB\xBFdata: x\n\n", &[(1, 12)]),
        sse(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n", &[]),
        sse(b"\xEF\xBBdata: x\n\ndata: y\n\n", &[(1, 20)]),
        sse(b"\xEF\xBB\xBF", &[]),
        sse(b"\xEF\xBB", &[]),
        // [DONE] ends the stream and is no event; what follows is counted apart.
        sse(b"data: a\n\ndata: [DONE]\n\n", &[(1, 9)]).done(0),
        sse(b"data:[DONE]\r\n\r\n", &[]).done(0),
        sse(b"data: [DONE]\n\ndata: b\n\ndata: [DONE]\n\n", &[]).done(2),
        sse(b"data: [DONE]\n\ndata: b", &[]).done(0).partial(),
        sse(b"event: end\ndata: [DONE]\nid: 9\n\n", &[]).done(0),
        // Anything but exactly [DONE] is an ordinary event.
        sse(b"data: [DONE] \n\n", &[(7, 15)]),
        sse(b"data:  [DONE]\n\n", &[(7, 15)]),
        sse(b"data: [DONE]\ndata: x\n\n", &[(8, 22)]),
        sse(b"data: x\ndata: [DONE]\n\n", &[(8, 22)]),
        sse(b"data: [DON\n\ndata: [DONE]]\n\n", &[(4, 12), (7, 15)]),
        sse(b"data\n\ndata: \n\n", &[(0, 6), (0, 8)]),
        // The body ends inside an event: not dispatched.
        sse(b"data: a\n\ndata: b", &[(1, 9)]).partial(),
        sse(b"data: a\n\ndata: b\n", &[(1, 9)]).partial(),
        sse(b"data: a\n\ndata: b\r", &[(1, 9)]).partial(),
        sse(b"data: a\n\ndata", &[(1, 9)]).partial(),
        sse(b"data: a\n\ndata:", &[(1, 9)]).partial(),
        sse(b"data: [DONE]\n", &[]).partial(),
        sse(b"data: a\n\ndat", &[(1, 9)]),
        sse(b"data: a\n\n: comment", &[(1, 9)]),
        sse(b"data: a\n\nevent: x\n", &[(1, 9)]),
        sse(b"data: a\n\nid: 1", &[(1, 9)]).cut(),
        sse(b"data: a\n\ndata: b", &[(1, 9)]).partial().cut(),
        sse(&big, &[(5000, 5008)]),
        // NUL and bytes that are not UTF-8 are data like any other.
        sse(b"data: \0\xFF\n\n", &[(2, 10)]),
        // NDJSON: white-space-only lines are not events; CRLF; no trailing LF.
        case(Ndjson, b"{\"a\":1}\n{\"b\":2}\n", &[(7, 8), (7, 8)]),
        case(Ndjson, b"\n\n{}\n\r\n \t\r\n{}\r\n", &[(2, 5), (2, 10)]),
        case(Ndjson, b"{}\n{}", &[(2, 3), (2, 2)]),
        case(Ndjson, b"{}\n{}", &[(2, 3)]).partial().cut(),
        case(Ndjson, b"{}\n  ", &[(2, 3)]).cut(),
        case(Ndjson, b"data: [DONE]\n", &[(12, 13)]),
        case(Ndjson, b"\xEF\xBB\xBF{}\n", &[(2, 6)]),
        case(Ndjson, b" 1 \n\r\r\n", &[(3, 4)]),
        // Lines: every non-empty line; white space is content.
        case(Lines, b"a\n\nb\r\n\r\nc", &[(1, 2), (1, 4), (1, 3)]),
        case(Lines, b" \n\t\n", &[(1, 2), (1, 2)]),
        case(Lines, b"a\rb\n\r", &[(3, 4)]),
        case(Lines, b"x\nlast", &[(1, 2)]).partial().cut(),
    ]
}

#[test]
fn table_cases_split_invariant_and_as_the_reference_says() {
    for c in cases() {
        let show = String::from_utf8_lossy(&c.body);
        let out = split_invariant(c.format, &c.body, c.complete);
        let want = Outcome {
            events: c.events.clone(),
            finish: Finish {
                events: c.events.len() as u64,
                done: c.done,
                after_done: c.after_done,
                partial: c.partial,
            },
        };
        assert_eq!(out, want, "{:?} {show:?}", c.format);
        assert_eq!(
            reference(c.format, &c.body, c.complete),
            want,
            "reference {show:?}"
        );
    }
}

#[test]
fn times_and_gaps_come_from_the_feeds() {
    let t0 = Instant::now();
    let ms = |n: u64| t0 + Duration::from_millis(n);
    let mut s = EventSplitter::new(Format::Sse);
    let mut rec = Rec::default();
    s.feed(b": hello\n\ndata: a\n", ms(5), &mut rec);
    assert_eq!((s.events(), s.first_at()), (0, None));
    // The blank line arrives later: the event is as late as it.
    s.feed(b"\r", ms(7), &mut rec);
    s.feed(b"\ndata: b\n\ndata: c\n\n", ms(10), &mut rec);
    s.feed(b"data: [DONE]\n\n", ms(25), &mut rec);
    s.feed(b"data: late\n\n", ms(30), &mut rec);
    let f = s.finish(true, ms(40), &mut rec);
    let at: Vec<_> = rec.events.iter().map(|e| (e.index, e.at, e.gap)).collect();
    let d = Duration::from_millis;
    assert_eq!(
        at,
        [
            (0, ms(7), None),
            (1, ms(10), Some(d(3))),
            (2, ms(10), Some(d(0)))
        ]
    );
    assert_eq!(rec.done, [ms(25)]);
    assert_eq!(
        (s.first_at(), s.last_at(), s.done_at()),
        (Some(ms(7)), Some(ms(10)), Some(ms(25)))
    );
    assert_eq!(s.after_done(), 1);
    let want = Finish {
        events: 3,
        done: true,
        after_done: 1,
        partial: false,
    };
    assert_eq!(f, want);
    assert!(f.proper(true) && f.proper(false));
    // An unterminated NDJSON line is dispatched when the body ends properly, then.
    let mut s = EventSplitter::new(Format::Ndjson);
    let mut rec = Rec::default();
    s.feed(b"{}\n{", ms(1), &mut rec);
    s.feed(b"}", ms(2), &mut rec);
    s.finish(true, ms(3), &mut rec);
    let at: Vec<_> = rec.events.iter().map(|e| (e.at, e.gap)).collect();
    assert_eq!(at, [(ms(1), None), (ms(3), Some(d(2)))]);
}

#[test]
fn proper_endings() {
    let f = |done, partial| Finish {
        events: 1,
        done,
        after_done: 0,
        partial,
    };
    assert!(f(false, false).proper(false));
    assert!(!f(false, false).proper(true));
    assert!(!f(false, true).proper(false));
    assert!(f(true, true).proper(true));
}

#[test]
fn a_one_megabyte_event_is_counted_not_kept() {
    const MB: usize = 1 << 20;
    let body = [
        b"data: ".as_slice(),
        &vec![b'z'; MB],
        b"\n\ndata: [DONE]\n\n",
    ]
    .concat();
    let want = Outcome {
        events: vec![(MB as u64, MB as u64 + 8)],
        finish: Finish {
            events: 1,
            done: true,
            after_done: 0,
            partial: false,
        },
    };
    assert_eq!(split_invariant(Format::Sse, &body, true), want);
    let line = [&vec![b'{'; MB][..], b"\r\n"].concat();
    let (out, _) = run(Format::Lines, &line, &[1, MB / 2, MB + 1], true);
    assert_eq!(out.events, [(MB as u64, MB as u64 + 2)]);
    // The state is a handful of counters: no buffer grows with an event.
    assert!(std::mem::size_of::<EventSplitter>() <= 160);
}

/// Seeded xorshift64*.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[test]
fn random_bodies_agree_with_the_reference_at_every_split() {
    const PIECES: [&[u8]; 22] = [
        b"data",
        b"data:",
        b"data: ",
        b":",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"[DONE]",
        b"x",
        b"event: e",
        b"id: 1",
        b"\xEF\xBB\xBF",
        b"\xEF",
        b"{}",
        b"\t",
        b"dat",
        b"[DONE",
        b"retry: 5",
        b"\n\n",
        b"\ndata: [DONE]\r",
        b"\rdata:[DONE]\n\n",
    ];
    let mut rng = 0x5EED_0036_u64;
    // How many bodies had events, a sentinel, something after it, a partial event.
    let mut seen = [0; 4];
    for round in 0..600 {
        let len = (next(&mut rng) % 24) as usize;
        let body: Vec<u8> = (0..len)
            .flat_map(|_| PIECES[(next(&mut rng) % PIECES.len() as u64) as usize].iter())
            .copied()
            .collect();
        for format in Format::ALL {
            for complete in [true, false] {
                let (out, _) = run(format, &body, &[], complete);
                let show = String::from_utf8_lossy(&body);
                let want = reference(format, &body, complete);
                assert_eq!(out, want, "round {round} {format:?} {show:?}");
                let f = out.finish;
                let facts = [f.events > 0, f.done, f.after_done > 0, f.partial];
                for (n, fact) in seen.iter_mut().zip(facts) {
                    *n += u32::from(fact);
                }
                if round % 10 == 0 {
                    split_invariant(format, &body, complete);
                }
            }
        }
    }
    // The bodies reach every outcome, often.
    assert!(seen.iter().all(|&n| n >= 50), "{seen:?}");
}

#[test]
fn formats_by_name_and_content_type() {
    for f in Format::ALL {
        assert_eq!(Format::from_name(f.name()), Some(f));
    }
    assert_eq!(Format::from_name("jsonl"), Some(Format::Ndjson));
    assert_eq!(Format::from_name("SSE"), None);
    assert_eq!(Format::from_name("auto"), None);
    let ct = |v: &str| Format::from_content_type(v.as_bytes());
    assert_eq!(ct("text/event-stream"), Some(Format::Sse));
    assert_eq!(ct(" Text/Event-Stream ; charset=utf-8"), Some(Format::Sse));
    for v in [
        "application/x-ndjson",
        "application/ndjson; charset=utf-8",
        "application/jsonl",
        "application/x-jsonl",
        "APPLICATION/JSONLINES",
        "application/x-jsonlines",
    ] {
        assert_eq!(ct(v), Some(Format::Ndjson), "{v}");
    }
    for v in [
        "application/json-seq",
        "application/json",
        "text/plain",
        "text/event-streams",
        "",
        ";text/event-stream",
    ] {
        assert_eq!(ct(v), None, "{v}");
    }
}

#[test]
fn choices_by_name_and_auto_by_content_type() {
    for name in Choice::NAMES {
        let c = Choice::from_name(name).expect("a listed name");
        let canonical = if name == "jsonl" { "ndjson" } else { name };
        assert_eq!(c.name(), canonical);
    }
    assert_eq!(Choice::from_name("json"), None);
    assert_eq!(Choice::from_name("Auto"), None);
    let sse = Some(&b"text/event-stream; charset=utf-8"[..]);
    let plain = Some(&b"text/plain"[..]);
    let lines = Choice::Fixed(Format::Lines);
    assert_eq!(lines.format_for(sse), Some(Format::Lines));
    assert_eq!(lines.format_for(None), Some(Format::Lines));
    assert_eq!(Choice::Auto.format_for(sse), Some(Format::Sse));
    assert_eq!(
        Choice::Auto.format_for(Some(b"application/jsonl")),
        Some(Format::Ndjson)
    );
    assert_eq!(Choice::Auto.format_for(plain), None);
    assert_eq!(Choice::Auto.format_for(None), None);
}
