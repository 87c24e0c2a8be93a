//! The built-in server's streaming endpoints (`/stream`, `/v1/chat/completions`) read
//! by a raw TCP client: the reply parsed by rshperf's own HTTP/1.x parser, its body cut
//! into events by the event splitter, as a streaming run will. Exact counts for every
//! variant (hostile ones too); the schedule checked as lower bounds only (nothing is
//! ever early: on the client's clock from the request's send, and on the server's own
//! clock in `--event-log`), never as upper bounds a loaded machine could miss.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rshperf::front::serve::{spawn, ServeHandle, ServeOptions};
use rshperf::wire::events::{Choice, Event, EventSink, EventSplitter, Finish, Format};
use rshperf::wire::http::response::{Progress, ReplyParser, ReplySink};

use crate::support::recorder::TempFile;
use crate::support::{self, HANG_GUARD};

/// The in-process server on a free port, optionally logging events to `log`.
fn server(log: Option<PathBuf>) -> ServeHandle {
    spawn(ServeOptions {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        event_log: log,
        ..ServeOptions::default()
    })
    .expect("spawn the server")
}

/// What the client saw of one streamed reply.
#[derive(Debug)]
struct Got {
    status: u16,
    /// The reply head, as text.
    head: String,
    /// The body, as text.
    body: String,
    events: Vec<Event>,
    finish: Finish,
    /// The reply ended by its framing (not cut by the connection's end).
    complete: bool,
    /// How the connection ended after the reply: None while open (the reply was
    /// complete), Some(true) for a reset, Some(false) for EOF.
    reset: Option<bool>,
    /// When the request was written.
    sent: Instant,
}

/// The sink between the parser and the splitter: body bytes to the splitter, stamped
/// with the time of the read they came in.
struct Tap {
    /// The body's format, or `auto`.
    choice: Choice,
    splitter: Option<EventSplitter>,
    now: Instant,
    head: Vec<u8>,
    body: Vec<u8>,
    events: Events,
}

/// The events the splitter dispatched.
struct Events(Vec<Event>);

impl EventSink for Events {
    fn event(&mut self, e: &Event) {
        self.0.push(*e);
    }
}

impl ReplySink for Tap {
    fn header_bytes(&mut self, bytes: &[u8]) {
        self.head.extend_from_slice(bytes);
    }
    fn body_bytes(&mut self, bytes: &[u8]) {
        self.body.extend_from_slice(bytes);
        let (choice, head) = (self.choice, &self.head);
        let s = self.splitter.get_or_insert_with(|| {
            let ct = content_type(head);
            let format = choice.format_for(Some(ct.as_bytes()));
            EventSplitter::new(format.expect("a stream's Content-Type"))
        });
        s.feed(bytes, self.now, &mut self.events);
    }
}

/// The value of the Content-Type header in a reply head.
fn content_type(head: &[u8]) -> String {
    String::from_utf8_lossy(head)
        .lines()
        .find_map(|l| l.strip_prefix("Content-Type: "))
        .expect("a Content-Type")
        .to_string()
}

/// Sends `request` on `conn` and reads one reply (and, if the reply does not end
/// it, the connection to its end), its body split as `choice` says.
fn read_reply(conn: &mut TcpStream, request: &[u8], choice: Choice) -> Got {
    conn.set_read_timeout(Some(HANG_GUARD)).expect("timeout");
    let sent = Instant::now();
    conn.write_all(request).expect("send the request");
    let mut parser = ReplyParser::new();
    parser.start(request.starts_with(b"HEAD "));
    let mut tap = Tap {
        choice,
        splitter: None,
        now: sent,
        head: Vec::new(),
        body: Vec::new(),
        events: Events(Vec::new()),
    };
    let mut buf = vec![0; 64 * 1024];
    let (complete, reset) = loop {
        let n = match conn.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break (false, Some(true)),
            Err(e) => panic!("read: {e}"),
        };
        tap.now = Instant::now();
        if n == 0 {
            break (parser.on_eof(), Some(false));
        }
        match parser
            .feed(&buf[..n], &mut tap)
            .expect("a well-formed reply")
        {
            Progress::Complete(used) => {
                assert_eq!(used, n, "nothing after the reply");
                break (true, None);
            }
            Progress::NeedMore => {}
        }
    };
    let mut splitter = tap
        .splitter
        .take()
        .unwrap_or_else(|| EventSplitter::new(Format::Sse));
    let finish = splitter.finish(complete, tap.now, &mut tap.events);
    let head = String::from_utf8_lossy(&tap.head).into_owned();
    Got {
        status: status_of(&head),
        head,
        body: String::from_utf8_lossy(&tap.body).into_owned(),
        events: tap.events.0,
        finish,
        complete,
        reset,
        sent,
    }
}

/// The status code of the final status line of a header block (0 if it has none).
fn status_of(head: &str) -> u16 {
    head.split("\r\n")
        .filter(|line| line.starts_with("HTTP/"))
        .last()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// `GET target` on a new connection, `Connection: close`, the body's format by its
/// Content-Type.
fn get(h: &ServeHandle, target: &str) -> Got {
    get_as(h, target, Choice::Auto)
}

/// `GET target` on a new connection, `Connection: close`, the body split as `choice`
/// says.
fn get_as(h: &ServeHandle, target: &str, choice: Choice) -> Got {
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    let req = format!("GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    read_reply(&mut conn, req.as_bytes(), choice)
}

fn finish(events: u64, done: bool, after_done: u64, partial: bool) -> Finish {
    Finish {
        events,
        done,
        after_done,
        partial,
    }
}

#[test]
fn stream_events_come_on_schedule_in_each_format() {
    let h = server(None);
    let (first, gap) = (Duration::from_millis(30), Duration::from_millis(10));
    let formats = [
        ("sse", "text/event-stream", Format::Sse),
        ("ndjson", "application/x-ndjson", Format::Ndjson),
        ("lines", "text/plain; charset=utf-8", Format::Lines),
    ];
    for (name, want_type, format) in formats {
        let got = get_as(
            &h,
            &format!("/stream?events=5&first=30ms&gap=10ms&size=64&format={name}"),
            Choice::Fixed(format),
        );
        assert_eq!(got.status, 200);
        assert!(got.complete, "{name}: ended by its last chunk");
        assert_eq!(got.finish, finish(5, false, 0, false), "{name}");
        for (k, e) in got.events.iter().enumerate() {
            assert_eq!(e.data_bytes, 64, "{name}");
            // Never early: the server counts from the request's arrival, after its send.
            let due = first + gap * k as u32;
            assert!(
                e.at - got.sent >= due,
                "{name} event {k}: {:?} < {due:?}",
                e.at - got.sent
            );
        }
        // In order: each event no earlier than the one before it.
        assert!(got.events.windows(2).all(|w| w[1].at >= w[0].at));
        let head = got.head.as_bytes();
        assert_eq!(content_type(head), want_type, "{}", got.head);
        // `auto` finds SSE and NDJSON by their types; plain text is no stream.
        let auto = Choice::Auto.format_for(Some(want_type.as_bytes()));
        assert_eq!(auto, (format != Format::Lines).then_some(format));
        assert!(
            got.head.contains("\r\nTransfer-Encoding: chunked\r\n"),
            "{}",
            got.head
        );
    }
    h.stop().expect("stop");
}

#[test]
fn done_sentinel_then_more_and_no_trailing_newline() {
    let h = server(None);
    let got = get(&h, "/stream?events=3&done=1");
    assert_eq!(got.finish, finish(3, true, 0, false));
    assert!(got.body.ends_with("data: [DONE]\n\n"), "{:?}", got.body);
    let got = get(&h, "/stream?events=2&done=1&after=3&gap=1ms");
    assert_eq!(got.finish, finish(2, true, 3, false));
    assert!(got.finish.proper(true));
    // SSE without the blank line at the end: the last event is never dispatched.
    let got = get(&h, "/stream?events=4&trail=0");
    assert!(got.complete);
    assert_eq!(got.finish, finish(3, false, 0, true));
    assert!(!got.finish.proper(false));
    assert!(got.body.ends_with("\"}"), "{:?}", got.body);
    // NDJSON and lines without the last LF: the body's end ends the line.
    let got = get(&h, "/stream?events=4&trail=0&format=ndjson");
    assert_eq!(got.finish, finish(4, false, 0, false));
    assert!(got.body.ends_with("\"}"), "{:?}", got.body);
    let got = get_as(
        &h,
        "/stream?events=4&trail=0&format=lines",
        Choice::Fixed(Format::Lines),
    );
    assert_eq!(got.finish, finish(4, false, 0, false));
    h.stop().expect("stop");
}

#[test]
fn a_cut_stream_ends_without_its_last_chunk() {
    let h = server(None);
    let got = get(&h, "/stream?events=5&cut=2&gap=1ms");
    assert!(!got.complete, "no terminating chunk");
    assert_eq!(got.reset, Some(false), "a FIN");
    // Two events and half of the third, which stays partial.
    assert_eq!(got.finish, finish(2, false, 0, true));
    assert!(got.body.ends_with("data: {\"event\""), "{:?}", got.body);
    let got = get(&h, "/stream?events=5&cut=5");
    assert_eq!(
        (got.complete, got.finish),
        (false, finish(5, false, 0, false))
    );
    h.stop().expect("stop");
}

#[test]
fn a_reset_stream_ends_with_rst() {
    let h = server(None);
    let got = get(&h, "/stream?events=3&cut=1&reset=1&first=20ms");
    assert!(!got.complete);
    assert_eq!(got.reset, Some(true), "{got:?}");
    // What was written before the reset is read before it: one event and a half.
    assert_eq!(got.finish, finish(1, false, 0, true), "{got:?}");
    assert!(got.body.ends_with("data: {\"event\""), "{:?}", got.body);
    h.stop().expect("stop");
}

#[test]
fn a_stalled_stream_sends_its_head_and_nothing_more() {
    let h = server(None);
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    conn.write_all(b"GET /stream?events=3&stall=0 HTTP/1.1\r\nHost: t\r\n\r\n")
        .expect("send");
    conn.set_read_timeout(Some(HANG_GUARD)).expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    while !got.ends_with(b"\r\n\r\n") {
        let n = conn.read(&mut buf).expect("the head");
        assert!(n > 0, "the server closed");
        got.extend_from_slice(&buf[..n]);
    }
    assert!(got.starts_with(b"HTTP/1.1 200 OK\r\n"));
    // The first event would be due at once (first=0): nothing comes.
    conn.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let e = conn.read(&mut buf).expect_err("no event");
    assert!(
        matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{e}"
    );
    // After one event, the same: the other two were due at once, with the first.
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    conn.set_read_timeout(Some(HANG_GUARD)).expect("timeout");
    let got = {
        conn.write_all(b"GET /stream?events=3&stall=1 HTTP/1.1\r\nHost: t\r\n\r\n")
            .expect("send");
        let mut text = Vec::new();
        while !text.ends_with(b"\n\n\r\n") {
            let n = conn.read(&mut buf).expect("the first event");
            assert!(n > 0, "the server closed");
            text.extend_from_slice(&buf[..n]);
        }
        text
    };
    assert_eq!(String::from_utf8_lossy(&got).matches("data: ").count(), 1);
    conn.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let e = conn.read(&mut buf).expect_err("no second event");
    assert!(
        matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{e}"
    );
    h.stop().expect("stop");
}

#[test]
fn a_one_megabyte_event() {
    let h = server(None);
    let got = get(&h, "/stream?events=2&size=1048576&done=1");
    assert_eq!(got.finish, finish(2, true, 0, false));
    assert!(got.events.iter().all(|e| e.data_bytes == 1 << 20));
    h.stop().expect("stop");
}

#[test]
fn chat_completions_stream_tokens_like_an_openai_server() {
    let h = server(None);
    let body =
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":7}"#;
    let req = format!(
        "POST /v1/chat/completions?gap=2ms&first=10ms HTTP/1.1\r\nHost: t\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    let got = read_reply(&mut conn, req.as_bytes(), Choice::Auto);
    assert_eq!(got.finish, finish(7, true, 0, false));
    assert!(got.events[0].at - got.sent >= Duration::from_millis(10));
    let chunks: Vec<serde_json::Value> = got
        .body
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("a JSON chunk"))
        .collect();
    assert_eq!(chunks.len(), 7);
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["choices"][0]["delta"]["content"], "tok ");
        let stop = if i == 6 {
            "stop".into()
        } else {
            serde_json::Value::Null
        };
        assert_eq!(c["choices"][0]["finish_reason"], stop);
    }
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    // The same connection, a request that does not stream: one completion.
    let body = r#"{"max_tokens":3}"#;
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut parser = ReplyParser::new();
    parser.start(false);
    conn.write_all(req.as_bytes()).expect("send");
    let mut text = Vec::new();
    let mut buf = [0; 4096];
    loop {
        let n = conn.read(&mut buf).expect("read");
        assert!(n > 0, "the server closed");
        text.extend_from_slice(&buf[..n]);
        if parser.feed(&buf[..n], &mut NoSink).expect("a reply") != Progress::NeedMore {
            break;
        }
    }
    let text = String::from_utf8_lossy(&text);
    let json = text.split("\r\n\r\n").nth(1).expect("a body");
    let v: serde_json::Value = serde_json::from_str(json).expect("JSON");
    assert_eq!(v["choices"][0]["message"]["content"], "tok tok tok ");
    assert_eq!(v["usage"]["completion_tokens"], 3);
    // HTTP/1.0, no body, the query asks to stream: the body ends with the connection.
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    let got = read_reply(
        &mut conn,
        b"POST /v1/chat/completions?stream=1&tokens=4 HTTP/1.0\r\n\r\n",
        Choice::Auto,
    );
    assert!(got.complete && got.reset == Some(false), "{got:?}");
    assert!(!got.head.contains("Transfer-Encoding"), "{}", got.head);
    assert_eq!(got.finish, finish(4, true, 0, false));
    // A body that is not JSON: 400, and the connection serves on.
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    conn.write_all(
        b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 5\r\n\r\n{nope\
          GET /stream?events=1 HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .expect("send");
    conn.set_read_timeout(Some(HANG_GUARD)).expect("timeout");
    let mut all = String::new();
    conn.read_to_string(&mut all).expect("read to the close");
    let parts: Vec<&str> = all.split("HTTP/1.1 ").skip(1).collect();
    assert_eq!(parts.len(), 2, "{all}");
    assert!(parts[0].starts_with("400 Bad Request\r\n"), "{all}");
    let (_, why) = parts[0].split_once("\r\n\r\n").expect("a body");
    assert!(
        why.starts_with("rshperf serve: /v1/chat/completions: request body: ")
            && why.ends_with('\n'),
        "{why}"
    );
    assert!(
        parts[1].starts_with("200 OK\r\n") && parts[1].ends_with("\r\n0\r\n\r\n"),
        "{all}"
    );
    h.stop().expect("stop");
}

/// A sink that keeps nothing.
struct NoSink;
impl ReplySink for NoSink {}

#[test]
fn streams_http10_pipelining_head_and_bad_parameters() {
    let h = server(None);
    // HTTP/1.0: no chunks, the body ends with the connection.
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    let got = read_reply(
        &mut conn,
        b"GET /stream?events=3&format=lines HTTP/1.0\r\n\r\n",
        Choice::Fixed(Format::Lines),
    );
    assert!(
        got.complete && got.head.contains("Connection: close\r\n"),
        "{got:?}"
    );
    assert_eq!(got.finish, finish(3, false, 0, false));
    // A stream, then a plain request pipelined behind it: answered in order.
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    conn.write_all(
        b"GET /stream?events=2&gap=1ms HTTP/1.1\r\n\r\nHEAD /stream HTTP/1.1\r\n\r\n\
          GET /stream?events=nine HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n",
    )
    .expect("send");
    let mut all = String::new();
    conn.set_read_timeout(Some(HANG_GUARD)).expect("timeout");
    conn.read_to_string(&mut all).expect("read to the close");
    let parts: Vec<&str> = all.split("HTTP/1.1 ").skip(1).collect();
    assert_eq!(parts.len(), 4, "{all}");
    assert!(parts[0].starts_with("200 OK") && parts[0].ends_with("\r\n0\r\n\r\n"));
    assert_eq!(parts[0].matches("data: ").count(), 2);
    assert!(parts[1].contains("Content-Type: text/event-stream") && parts[1].ends_with("\r\n\r\n"));
    assert!(!parts[1].contains("data: "));
    let bad = "rshperf serve: /stream: events: 'nine' is not a whole number from 0 to 1000000000\n";
    assert_eq!(
        parts[2],
        format!(
            "400 Bad Request\r\nServer: rshperf\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Length: {}\r\n\r\n{bad}",
            bad.len()
        )
    );
    assert!(
        parts[3].starts_with("200 OK") && parts[3].ends_with('a'),
        "{}",
        parts[3]
    );
    // A chat body larger than the server reads: 413 at once.
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    conn.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n")
        .expect("send");
    let mut text = String::new();
    conn.read_to_string(&mut text).expect("read to the close");
    assert!(
        text.starts_with("HTTP/1.1 413 Content Too Large\r\n"),
        "{text}"
    );
    h.stop().expect("stop");
}

#[test]
fn the_event_log_has_every_item_never_early() {
    let log = TempFile::new("event-log", b"");
    let h = server(Some(PathBuf::from(&log.path)));
    let (first, gap) = (Duration::from_millis(20), Duration::from_millis(5));
    let streams = 3;
    for _ in 0..streams {
        let got = get(&h, "/stream?events=10&first=20ms&gap=5ms&done=1");
        assert_eq!(got.finish, finish(10, true, 0, false));
    }
    // A stream cut after two events, and one that stalls after one (still open when
    // the server stops): only what was written is logged.
    let got = get(&h, "/stream?events=5&cut=2&done=1");
    assert_eq!(got.finish, finish(2, false, 0, true));
    let mut stalled = TcpStream::connect(h.addr()).expect("connect");
    stalled
        .write_all(b"GET /stream?events=3&stall=1 HTTP/1.1\r\n\r\n")
        .expect("send");
    stalled.set_read_timeout(Some(HANG_GUARD)).expect("timeout");
    let mut seen = Vec::new();
    let mut buf = [0; 4096];
    while !seen.ends_with(b"\n\n\r\n") {
        let n = stalled.read(&mut buf).expect("the first event");
        assert!(n > 0, "the server closed");
        seen.extend_from_slice(&buf[..n]);
    }
    h.stop().expect("stop");
    let text = std::fs::read_to_string(&log.path).expect("the log");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("stream,event,us"));
    let rows: Vec<(u64, String, u64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 3, "{l}");
            (
                f[0].parse().expect("a stream number"),
                f[1].to_string(),
                f[2].parse().expect("microseconds"),
            )
        })
        .collect();
    assert_eq!(rows.len(), streams * 11 + 2 + 1, "{text}");
    for s in 0..streams as u64 {
        let mine: Vec<_> = rows.iter().filter(|r| r.0 == s).collect();
        assert_eq!(mine.len(), 11);
        for (k, r) in mine.iter().enumerate() {
            let label = if k == 10 {
                "done".to_string()
            } else {
                k.to_string()
            };
            assert_eq!(r.1, label);
            // The server's own clock: never before the schedule, in order.
            let due = (first + gap * k as u32).as_micros() as u64;
            assert!(r.2 >= due, "stream {s} item {k}: {} us < {due} us", r.2);
            if k > 0 {
                assert!(r.2 >= mine[k - 1].2);
            }
        }
    }
    let label = |s: u64| -> Vec<&str> {
        rows.iter()
            .filter(|r| r.0 == s)
            .map(|r| r.1.as_str())
            .collect()
    };
    assert_eq!(label(3), ["0", "1"], "the cut stream");
    assert_eq!(label(4), ["0"], "the stalled stream");
}

/// Opens a connection that asks for `target` and reads the reply head: once it is in,
/// the server has started (and counts) the stream.
fn hold(h: &ServeHandle, target: &str) -> TcpStream {
    let mut conn = TcpStream::connect(h.addr()).expect("connect");
    conn.write_all(format!("GET {target} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .expect("send");
    conn.set_read_timeout(Some(HANG_GUARD)).expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    while !got.ends_with(b"\r\n\r\n") {
        let n = conn.read(&mut buf).expect("the head");
        assert!(n > 0, "the server closed");
        got.extend_from_slice(&buf[..n]);
    }
    assert!(got.starts_with(b"HTTP/1.1 200 OK\r\n"));
    conn
}

#[test]
fn first_per_open_delays_the_first_event_by_the_streams_open() {
    let log = TempFile::new("first-per-open", b"");
    let h = server(Some(PathBuf::from(&log.path)));
    // Streams that ended are no longer open: with an hour per open stream, these
    // come at once only if each earlier one was uncounted when it ended (a miscount
    // would hold the read past HANG_GUARD).
    for _ in 0..3 {
        let got = get(&h, "/stream?events=2&first_per_open=3600s&done=1");
        assert_eq!(got.finish, finish(2, true, 0, false));
    }
    // Two streams that stall before their first event stay open while their
    // connections do.
    let held: Vec<TcpStream> = (0..2)
        .map(|_| hold(&h, "/stream?events=1&stall=0"))
        .collect();
    let (first, per) = (Duration::from_millis(10), Duration::from_millis(40));
    let due = first + per * 2;
    for _ in 0..2 {
        let got = get(
            &h,
            "/stream?events=3&first=10ms&first_per_open=40ms&gap=5ms",
        );
        assert_eq!(got.finish, finish(3, false, 0, false));
        // Never early, on the client's clock from the send: two streams open.
        for (k, e) in got.events.iter().enumerate() {
            let at = due + Duration::from_millis(5) * k as u32;
            assert!(
                e.at - got.sent >= at,
                "event {k}: {:?} < {at:?}",
                e.at - got.sent
            );
        }
    }
    // A third held stream: the next one waits for three.
    let held3 = hold(&h, "/stream?events=1&stall=0");
    let got = get(
        &h,
        "/v1/chat/completions?stream=1&tokens=1&first=10ms&first_per_open=40ms",
    );
    assert_eq!(got.finish, finish(1, true, 0, false));
    let three = first + per * 3;
    assert!(
        got.events[0].at - got.sent >= three,
        "{:?}",
        got.events[0].at - got.sent
    );
    drop(held);
    drop(held3);
    h.stop().expect("stop");
    // The server's own clock (streams are numbered as they start: 0-2 ended, 3 and 4
    // held, 5 and 6 with two held, 7 held, 8 with three held): each first event was
    // written no earlier than the delay built.
    let text = std::fs::read_to_string(&log.path).expect("the log");
    let first_us = |stream: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{stream},0,")))
            .unwrap_or_else(|| panic!("stream {stream} in {text}"))
            .parse()
            .expect("microseconds")
    };
    for (stream, want) in [("5", due), ("6", due), ("8", three)] {
        let us = first_us(stream);
        assert!(
            us >= want.as_micros() as u64,
            "stream {stream}: {us} us < {want:?}"
        );
    }
    for stream in ["0", "1", "2"] {
        assert!(first_us(stream) < 3_600_000_000, "stream {stream}");
    }
}

#[test]
fn serve_event_log_option_and_its_errors() {
    let out = support::run(&[
        "serve",
        "--event-log",
        "/nonexistent-dir/x.csv",
        "--port",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "rshperf: serve: --event-log /nonexistent-dir/x.csv: No such file or directory (os error 2)\n"
    );
    let out = support::run(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--event-log <FILE>") && help.contains("/v1/chat/completions"),
        "{help}"
    );
}
