//! The streaming endpoints of the built-in server and their parameters: which request
//! targets stream (`/stream`, `/v1/chat/completions`), what their query parameters and
//! an OpenAI-style chat request body ask for, and the limits on them.
//!
//! Owns `Route` (what a request-target asks for), `StreamSpec` (one stream, fully
//! decided) and the texts of the `400` replies that explain a bad parameter. Does not
//! render or write anything (`stream.rs`). Called by `server::Conn::process`.

use std::time::Duration;

use serde::Deserialize;

use crate::wire::events::Format;

/// Path of the generic stream endpoint.
pub(crate) const STREAM_PATH: &[u8] = b"/stream";
/// Path of the OpenAI-style chat-completions endpoint.
pub(crate) const CHAT_PATH: &[u8] = b"/v1/chat/completions";
/// Largest chat request body read; a larger one is answered 413.
pub(crate) const MAX_CHAT_BODY: u64 = 4 << 20;
/// Largest `size`.
const MAX_SIZE: u64 = 16 << 20;
/// Largest `events`, `tokens`, `after`, `cut` and `stall`.
const MAX_COUNT: u64 = 1_000_000_000;
/// Largest `first` and `gap`.
const MAX_DELAY: Duration = Duration::from_secs(3600);
/// Chat tokens when neither the query nor the body says.
const DEFAULT_TOKENS: u64 = 16;
/// `/stream` events when the query does not say.
const DEFAULT_EVENTS: u64 = 10;

/// One stream, fully decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamSpec {
    /// How events are written (`format=`; chat: SSE).
    pub(crate) format: Format,
    /// Events before the end (`events=`, chat: `tokens=` or the body's `max_tokens`).
    pub(crate) events: u64,
    /// From the request's arrival to the first event (`first=`).
    pub(crate) first: Duration,
    /// Added to `first` for each other stream open on the server when this one
    /// starts (`first_per_open=`): a server whose first event slows under load.
    pub(crate) first_per_open: Duration,
    /// Between events (`gap=`).
    pub(crate) gap: Duration,
    /// Data bytes of each generic event, at least its natural size (`size=`).
    pub(crate) size: u64,
    /// `data: [DONE]` follows the last event (`done=`; chat: on unless `done=0`).
    pub(crate) done: bool,
    /// Events written after the `[DONE]`, a gap apart (`after=`).
    pub(crate) after: u64,
    /// After this many events, write the first half of the next and close without
    /// ending the body (`cut=`).
    pub(crate) cut: Option<u64>,
    /// The cut closes with a TCP reset instead of a FIN (`reset=1`).
    pub(crate) reset: bool,
    /// After this many events, write nothing more and keep the connection open
    /// (`stall=`; 0: the first event never comes).
    pub(crate) stall: Option<u64>,
    /// The last thing written ends with its line end(s) (`trail=0`: it does not).
    pub(crate) trail: bool,
    /// Events are OpenAI `chat.completion.chunk` objects.
    pub(crate) chat: bool,
    /// Chat without `"stream": true`: one `chat.completion` reply when the last token
    /// would have been written.
    pub(crate) whole: bool,
}

impl StreamSpec {
    /// From the request's arrival to the first event when `open` other streams are
    /// open on the server: `first` + `first_per_open` × `open` (the count taken at
    /// most `u32::MAX`, so the sum stays far inside `Instant`'s range).
    pub(crate) fn first_after(&self, open: u64) -> Duration {
        let n = u32::try_from(open).unwrap_or(u32::MAX);
        self.first
            .saturating_add(self.first_per_open.saturating_mul(n))
    }
}

/// What a request-target asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// Any other path: the pre-rendered reply.
    Plain,
    /// A stream; for chat, `Ask::resolve` still reads the request body.
    Stream(Ask),
    /// A bad parameter: `400` with this explanation.
    Bad(String),
}

/// A streaming request as its target asks, before its body is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ask {
    spec: StreamSpec,
    /// Chat: the query's `tokens=` (overrides the body's `max_tokens`).
    tokens: Option<u64>,
    /// Chat: the query's `stream=` (overrides the body's `stream`).
    stream: Option<bool>,
}

impl Ask {
    /// A chat request: its body (JSON) is read.
    pub(crate) fn reads_body(&self) -> bool {
        self.spec.chat
    }

    /// The stream, given the request body (empty when there is none); Err: the text
    /// of the `400` that explains a bad body.
    pub(crate) fn resolve(&self, body: &[u8]) -> Result<StreamSpec, String> {
        let mut spec = self.spec;
        if !spec.chat {
            return Ok(spec);
        }
        let asked: ChatBody = if body.trim_ascii().is_empty() {
            ChatBody::default()
        } else {
            serde_json::from_slice(body)
                .map_err(|e| explain(CHAT_PATH, &format!("request body: {e}")))?
        };
        let tokens = self
            .tokens
            .or(asked.max_completion_tokens)
            .or(asked.max_tokens)
            .unwrap_or(DEFAULT_TOKENS);
        if tokens > MAX_COUNT {
            let e = format!("max_tokens: at most {MAX_COUNT}");
            return Err(explain(CHAT_PATH, &e));
        }
        spec.events = tokens;
        spec.whole = !self.stream.or(asked.stream).unwrap_or(false);
        Ok(spec)
    }
}

/// The fields of a chat request body that matter; the rest is ignored.
#[derive(Debug, Default, Deserialize)]
struct ChatBody {
    stream: Option<bool>,
    max_tokens: Option<u64>,
    max_completion_tokens: Option<u64>,
}

/// What `target` (a request-target, path and query) asks for.
pub(crate) fn route(target: &[u8]) -> Route {
    let (path, query) = match target.iter().position(|&b| b == b'?') {
        Some(q) => (&target[..q], &target[q + 1..]),
        None => (target, &b""[..]),
    };
    let chat = path == CHAT_PATH;
    if !chat && path != STREAM_PATH {
        return Route::Plain;
    }
    match ask(chat, query) {
        Ok(a) => Route::Stream(a),
        Err(e) => Route::Bad(explain(path, &e)),
    }
}

/// The text of the `400` for a bad parameter `e` of the endpoint at `path`.
fn explain(path: &[u8], e: &str) -> String {
    format!("rshperf serve: {}: {e}\n", String::from_utf8_lossy(path))
}

/// The parameters each endpoint takes, as listed in the explanation of a bad one.
const STREAM_PARAMS: &str =
    "events, first, first_per_open, gap, size, format, done, after, cut, reset, stall, trail";
const CHAT_PARAMS: &str =
    "tokens, stream, first, first_per_open, gap, done, after, cut, reset, stall, trail";

/// Parses `query` (`name=value&…`) for the stream endpoint or the chat one.
fn ask(chat: bool, query: &[u8]) -> Result<Ask, String> {
    let mut a = Ask {
        spec: StreamSpec {
            format: Format::Sse,
            events: DEFAULT_EVENTS,
            first: Duration::ZERO,
            first_per_open: Duration::ZERO,
            gap: Duration::ZERO,
            size: 0,
            done: chat,
            after: 0,
            cut: None,
            reset: false,
            stall: None,
            trail: true,
            chat,
            whole: false,
        },
        tokens: None,
        stream: None,
    };
    let query = std::str::from_utf8(query).map_err(|_| "the query is not UTF-8".to_string())?;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let s = &mut a.spec;
        match (name, chat) {
            ("events", false) => s.events = count(name, value)?,
            ("size", false) => s.size = number(name, value, MAX_SIZE)?,
            ("format", false) => {
                s.format = Format::from_name(value).ok_or_else(|| {
                    format!("format: '{value}' is not sse, ndjson (or jsonl) or lines")
                })?
            }
            ("tokens", true) => a.tokens = Some(count(name, value)?),
            ("stream", true) => a.stream = Some(flag(name, value)?),
            ("first", _) => s.first = duration(name, value)?,
            ("first_per_open", _) => s.first_per_open = duration(name, value)?,
            ("gap", _) => s.gap = duration(name, value)?,
            ("done", _) => s.done = flag(name, value)?,
            ("after", _) => s.after = count(name, value)?,
            ("cut", _) => s.cut = Some(count(name, value)?),
            ("reset", _) => s.reset = flag(name, value)?,
            ("stall", _) => s.stall = Some(count(name, value)?),
            ("trail", _) => s.trail = flag(name, value)?,
            _ => {
                let known = if chat { CHAT_PARAMS } else { STREAM_PARAMS };
                return Err(format!("unknown parameter '{name}' (known: {known})"));
            }
        }
    }
    let s = &a.spec;
    if s.done && s.format != Format::Sse {
        return Err("done: the [DONE] sentinel is for format=sse only".into());
    }
    if s.after > 0 && !s.done {
        return Err("after: events after [DONE] need done=1".into());
    }
    Ok(a)
}

/// A whole number up to `max`.
fn number(name: &str, value: &str, max: u64) -> Result<u64, String> {
    match value.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!(
            "{name}: '{value}' is not a whole number from 0 to {max}"
        )),
    }
}

/// A count of events.
fn count(name: &str, value: &str) -> Result<u64, String> {
    number(name, value, MAX_COUNT)
}

/// `1`/`true` or `0`/`false`.
fn flag(name: &str, value: &str) -> Result<bool, String> {
    match value {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("{name}: '{value}' is not 1, 0, true or false")),
    }
}

/// A duration: a number with `us`, `ms` (the default) or `s`, up to an hour.
fn duration(name: &str, value: &str) -> Result<Duration, String> {
    let (number, unit) = if let Some(n) = value.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = value.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = value.strip_suffix('s') {
        (n, 1.0)
    } else {
        (value, 1e-3)
    };
    let bad =
        || format!("{name}: '{value}' is not a time such as 250us, 10ms or 1.5s (at most 1 hour)");
    let n: f64 = number.parse().map_err(|_| bad())?;
    let d = Duration::try_from_secs_f64(n * unit).map_err(|_| bad())?;
    if d > MAX_DELAY {
        return Err(bad());
    }
    Ok(d)
}

/// Tests: the stream a request for `target` with no body gets.
#[cfg(test)]
pub(crate) fn spec_of(target: &str) -> StreamSpec {
    match route(target.as_bytes()) {
        Route::Stream(a) => a.resolve(b"").expect("resolves"),
        other => panic!("{target}: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::spec_of as spec;

    fn bad(target: &str) -> String {
        match route(target.as_bytes()) {
            Route::Bad(e) => e,
            other => panic!("{target}: {other:?}"),
        }
    }

    #[test]
    fn routes() {
        for t in [
            "/",
            "/streams",
            "/stream/",
            "/v1/chat",
            "/x?stream=1",
            "/Stream",
        ] {
            assert_eq!(route(t.as_bytes()), Route::Plain, "{t}");
        }
        let s = spec("/stream");
        assert_eq!(
            (s.format, s.events, s.first, s.gap),
            (Format::Sse, 10, Duration::ZERO, Duration::ZERO)
        );
        assert!(!s.done && !s.chat && !s.whole && s.trail && s.cut.is_none() && s.stall.is_none());
        let s = spec("/stream?events=200&first=50ms&gap=250us&size=64&format=ndjson&trail=0&");
        assert_eq!(s.events, 200);
        assert_eq!(s.first, Duration::from_millis(50));
        assert_eq!(s.gap, Duration::from_micros(250));
        assert_eq!((s.size, s.format, s.trail), (64, Format::Ndjson, false));
        let s = spec("/stream?done=1&after=2&cut=3&reset=true&stall=0&gap=1.5s&first=7");
        assert!(s.done && s.reset);
        assert_eq!((s.after, s.cut, s.stall), (2, Some(3), Some(0)));
        assert_eq!(
            (s.gap, s.first),
            (Duration::from_millis(1500), Duration::from_millis(7))
        );
        assert_eq!(spec("/stream?format=jsonl").format, Format::Ndjson);
    }

    #[test]
    fn first_per_open_delays_the_first_event_by_the_streams_open() {
        let s = spec("/stream?first=5ms&first_per_open=2ms");
        assert_eq!(s.first_per_open, Duration::from_millis(2));
        let ms = Duration::from_millis;
        assert_eq!(s.first_after(0), ms(5));
        assert_eq!(s.first_after(1), ms(7));
        assert_eq!(s.first_after(250), ms(505));
        // Without the parameter the load changes nothing.
        assert_eq!(spec("/stream?first=5ms").first_after(9999), ms(5));
        let s = spec("/v1/chat/completions?first_per_open=1.5s");
        assert_eq!(s.first_after(2), ms(3000));
        // Saturates instead of overflowing.
        let s = spec("/stream?first_per_open=3600s");
        assert_eq!(
            s.first_after(u64::MAX),
            Duration::from_secs(3600) * u32::MAX
        );
        assert_eq!(
            bad("/stream?first_per_open=x"),
            "rshperf serve: /stream: first_per_open: 'x' is not a time such as 250us, 10ms or 1.5s (at most 1 hour)\n"
        );
    }

    #[test]
    fn chat_takes_tokens_from_the_query_or_the_body() {
        let Route::Stream(a) = route(b"/v1/chat/completions?gap=2ms") else {
            panic!("a chat stream");
        };
        assert!(a.reads_body());
        let s = a.resolve(b"").unwrap();
        assert!(s.chat && s.done && s.whole);
        assert_eq!(
            (s.events, s.format, s.gap),
            (16, Format::Sse, Duration::from_millis(2))
        );
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":5}"#;
        let s = a.resolve(body).unwrap();
        assert!(!s.whole);
        assert_eq!(s.events, 5);
        let s = a
            .resolve(br#"{"max_tokens":5,"max_completion_tokens":7}"#)
            .unwrap();
        assert_eq!(s.events, 7);
        let Route::Stream(q) = route(b"/v1/chat/completions?tokens=3&stream=1&done=0") else {
            panic!("a chat stream");
        };
        let s = q.resolve(br#"{"stream":false,"max_tokens":99}"#).unwrap();
        assert!(!s.whole && !s.done);
        assert_eq!(s.events, 3);
        assert!(a
            .resolve(b"{not json")
            .unwrap_err()
            .starts_with("rshperf serve: /v1/chat/completions: request body: "));
        assert!(a.resolve(br#"{"stream":"yes"}"#).is_err());
        assert_eq!(
            a.resolve(br#"{"max_tokens":2000000000}"#).unwrap_err(),
            "rshperf serve: /v1/chat/completions: max_tokens: at most 1000000000\n"
        );
    }

    #[test]
    fn bad_parameters_are_explained() {
        let cases = [
            ("/stream?events=x", "rshperf serve: /stream: events: 'x' is not a whole number from 0 to 1000000000\n"),
            ("/stream?size=99999999999", "rshperf serve: /stream: size: '99999999999' is not a whole number from 0 to 16777216\n"),
            ("/stream?gap=-1ms", "rshperf serve: /stream: gap: '-1ms' is not a time such as 250us, 10ms or 1.5s (at most 1 hour)\n"),
            ("/stream?first=2h", "rshperf serve: /stream: first: '2h' is not a time such as 250us, 10ms or 1.5s (at most 1 hour)\n"),
            ("/stream?first=3601s", "rshperf serve: /stream: first: '3601s' is not a time such as 250us, 10ms or 1.5s (at most 1 hour)\n"),
            ("/stream?format=xml", "rshperf serve: /stream: format: 'xml' is not sse, ndjson (or jsonl) or lines\n"),
            ("/stream?done=2", "rshperf serve: /stream: done: '2' is not 1, 0, true or false\n"),
            ("/stream?done=1&format=lines", "rshperf serve: /stream: done: the [DONE] sentinel is for format=sse only\n"),
            ("/stream?after=1", "rshperf serve: /stream: after: events after [DONE] need done=1\n"),
            ("/stream?tokens=1", "rshperf serve: /stream: unknown parameter 'tokens' (known: events, first, first_per_open, gap, size, format, done, after, cut, reset, stall, trail)\n"),
            ("/v1/chat/completions?size=1", "rshperf serve: /v1/chat/completions: unknown parameter 'size' (known: tokens, stream, first, first_per_open, gap, done, after, cut, reset, stall, trail)\n"),
            ("/stream?%FF", "rshperf serve: /stream: unknown parameter '%FF' (known: events, first, first_per_open, gap, size, format, done, after, cut, reset, stall, trail)\n"),
        ];
        for (target, want) in cases {
            assert_eq!(bad(target), want, "{target}");
        }
        assert_eq!(
            route(b"/stream?\xFF"),
            Route::Bad("rshperf serve: /stream: the query is not UTF-8\n".into())
        );
    }
}
