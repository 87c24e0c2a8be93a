//! Writing one streamed reply of the built-in server on its own schedule.
//!
//! Owns the reply head of a stream, the bytes of each item (an event, the `[DONE]`
//! sentinel, the events after it; OpenAI chunks for chat; the single chat completion
//! when the client did not ask to stream), their chunked framing, and when each is
//! due: item i at the request's arrival + `first` + i × `gap`, an absolute schedule
//! that never drifts (a late write does not delay the next). Also the hostile endings:
//! a cut mid-event, a stall, no trailing line end. Does not own the socket, the timers
//! or the log file (`server.rs`, `log.rs`). Driven by `server::Conn`.

use std::io::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::log::{EventLog, Item};
use super::spec::StreamSpec;
use crate::wire::events::Format;

/// What the stream wants from its connection after a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// More items are due later (`Streamer::due`).
    More,
    /// The reply is complete; the connection closes after it (`close`) or serves the
    /// next request.
    End { close: bool },
    /// Close without ending the body (with a TCP reset if `reset`).
    Cut { reset: bool },
    /// Nothing more will be written; the connection stays open until the client leaves.
    Stall,
}

/// One stream being written.
#[derive(Debug)]
pub(crate) struct Streamer {
    spec: StreamSpec,
    /// The stream's number (log lines, chat ids).
    id: u64,
    /// When the request arrived: the schedule counts from here.
    t0: Instant,
    /// Seconds since 1970 when the request arrived (chat `created`).
    created: u64,
    /// Items written.
    written: u64,
    /// HTTP/1.1: the body is chunked; HTTP/1.0: it ends with the connection.
    chunked: bool,
    /// The connection closes after the reply.
    close: bool,
    /// HEAD: the reply head only.
    head_only: bool,
}

impl Streamer {
    /// A stream for a request that arrived at `t0`; writes its reply head to `out`
    /// unless the reply is a whole chat completion (written when due).
    pub(crate) fn start(
        spec: StreamSpec,
        id: u64,
        t0: Instant,
        http10: bool,
        close: bool,
        head_only: bool,
        out: &mut Vec<u8>,
    ) -> Streamer {
        let s = Streamer {
            spec,
            id,
            t0,
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            written: 0,
            chunked: !http10,
            // A body that ends with the connection: HTTP/1.0 has no chunks.
            close: close || http10,
            head_only,
        };
        if !spec.whole || head_only {
            s.head(out);
        }
        s
    }

    /// Items in the reply: events, the sentinel, the events after it (a whole chat
    /// completion is one item).
    fn items(&self) -> u64 {
        if self.spec.whole {
            return 1;
        }
        self.spec.events + u64::from(self.spec.done) + self.spec.after
    }

    /// When the next write is due; None once nothing more will be written.
    pub(crate) fn due(&self) -> Option<Instant> {
        if self.head_only {
            return Some(self.t0);
        }
        let slot = if self.spec.whole {
            self.spec.events.max(1) - 1
        } else {
            if self
                .spec
                .stall
                .is_some_and(|k| self.written >= k.min(self.items()))
            {
                return None;
            }
            self.written.min(self.items().saturating_sub(1))
        };
        let after = self.spec.first + mul(self.spec.gap, slot);
        Some(self.t0 + after)
    }

    /// Writes to `out` everything due at `now` (`scratch` is a reusable buffer); logs
    /// each item written.
    pub(crate) fn write_due(
        &mut self,
        now: Instant,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
        log: &mut Option<EventLog>,
    ) -> Step {
        if self.head_only {
            return Step::End { close: self.close };
        }
        if self.spec.whole {
            if self.due().is_some_and(|t| t <= now) {
                self.whole(out, scratch);
                self.log(log, Item::Event(0));
                return Step::End { close: self.close };
            }
            return Step::More;
        }
        let items = self.items();
        loop {
            let i = self.written;
            if i == items {
                return self.end(out);
            }
            if self.spec.stall.is_some_and(|k| i >= k) {
                return Step::Stall;
            }
            match self.due() {
                Some(t) if t <= now => {}
                _ => return Step::More,
            }
            if self.spec.cut.is_some_and(|k| i >= k) {
                self.render(i, scratch);
                let half = scratch.len() / 2;
                scratch.truncate(half);
                self.frame(out, scratch);
                return Step::Cut {
                    reset: self.spec.reset,
                };
            }
            self.render(i, scratch);
            if i + 1 == items && !self.spec.trail {
                let kept = scratch
                    .iter()
                    .rposition(|&b| b != b'\n')
                    .map_or(0, |p| p + 1);
                scratch.truncate(kept);
            }
            self.frame(out, scratch);
            self.written += 1;
            let item = if self.spec.done && i == self.spec.events {
                Item::Done
            } else {
                Item::Event(i)
            };
            self.log(log, item);
        }
    }

    /// Every item is written: end the body, or (a `stall` or `cut` beyond the last
    /// item) do not.
    fn end(&self, out: &mut Vec<u8>) -> Step {
        if self.spec.stall.is_some() {
            return Step::Stall;
        }
        if self.spec.cut.is_some() {
            return Step::Cut {
                reset: self.spec.reset,
            };
        }
        if self.chunked {
            out.extend_from_slice(b"0\r\n\r\n");
        }
        Step::End { close: self.close }
    }

    /// Records that `item` was handed to the connection just now.
    fn log(&self, log: &mut Option<EventLog>, item: Item) {
        if let Some(log) = log {
            log.record(
                self.id,
                item,
                Instant::now().saturating_duration_since(self.t0),
            );
        }
    }

    /// The reply head.
    fn head(&self, out: &mut Vec<u8>) {
        let kind = match (self.spec.chat, self.spec.format) {
            (true, _) | (false, Format::Sse) => "text/event-stream",
            (false, Format::Ndjson) => "application/x-ndjson",
            (false, Format::Lines) => "text/plain; charset=utf-8",
        };
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nServer: rshperf\r\nContent-Type: {kind}\r\n\
             Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n"
        );
        if self.chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        }
        out.extend_from_slice(self.connection());
        out.extend_from_slice(b"\r\n");
    }

    /// The `Connection:` header line, if any.
    fn connection(&self) -> &'static [u8] {
        if self.close {
            b"Connection: close\r\n"
        } else {
            b""
        }
    }

    /// Item `i`'s bytes into `scratch`.
    fn render(&self, i: u64, scratch: &mut Vec<u8>) {
        scratch.clear();
        let s = &self.spec;
        if s.done && i == s.events {
            scratch.extend_from_slice(b"data: [DONE]\n\n");
            return;
        }
        let sse = s.chat || s.format == Format::Sse;
        if sse {
            scratch.extend_from_slice(b"data: ");
        }
        if s.chat {
            self.chunk(i, scratch);
        } else {
            event_data(i, s.size, scratch);
        }
        scratch.extend_from_slice(if sse { b"\n\n" } else { b"\n" });
    }

    /// An OpenAI `chat.completion.chunk` carrying token `i`.
    fn chunk(&self, i: u64, out: &mut Vec<u8>) {
        let role = if i == 0 { r#""role":"assistant","# } else { "" };
        let finish = if i + 1 == self.spec.events {
            r#""stop""#
        } else {
            "null"
        };
        let _ = write!(
            out,
            r#"{{"id":"chatcmpl-rshperf-{}","object":"chat.completion.chunk","created":{},"model":"rshperf","choices":[{{"index":0,"delta":{{{role}"content":"tok "}},"finish_reason":{finish}}}]}}"#,
            self.id, self.created
        );
    }

    /// The whole reply of a chat request that did not ask to stream.
    fn whole(&self, out: &mut Vec<u8>, body: &mut Vec<u8>) {
        body.clear();
        let n = self.spec.events;
        let _ = write!(
            body,
            r#"{{"id":"chatcmpl-rshperf-{}","object":"chat.completion","created":{},"model":"rshperf","choices":[{{"index":0,"message":{{"role":"assistant","content":""#,
            self.id, self.created
        );
        for _ in 0..n {
            body.extend_from_slice(b"tok ");
        }
        let _ = write!(
            body,
            r#""}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":0,"completion_tokens":{n},"total_tokens":{n}}}}}"#
        );
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nServer: rshperf\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n",
            body.len()
        );
        out.extend_from_slice(self.connection());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
    }

    /// `bytes` on the wire: one chunk (HTTP/1.1) or as they are (HTTP/1.0).
    fn frame(&self, out: &mut Vec<u8>, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.chunked {
            let _ = write!(out, "{:x}\r\n", bytes.len());
        }
        out.extend_from_slice(bytes);
        if self.chunked {
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// `gap × n`, saturating (the schedule's limits keep it far from overflow).
fn mul(gap: Duration, n: u64) -> Duration {
    gap.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The data of generic event `i`: `{"event":i,"text":"…"}`, its text `a`s enough to
/// make it `size` bytes (when `size` is more than the event with an empty text).
pub(crate) fn event_data(i: u64, size: u64, out: &mut Vec<u8>) {
    let start = out.len();
    let _ = write!(out, r#"{{"event":{i},"text":""#);
    let natural = (out.len() - start + 2) as u64;
    let pad = usize::try_from(size.saturating_sub(natural)).unwrap_or(0);
    out.resize(out.len() + pad, b'a');
    out.extend_from_slice(b"\"}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::serve::spec::spec_of as spec;

    /// Runs a stream to its end, writing whatever is due at each due time; returns the
    /// bytes, the (time after t0, step) of each write and the log.
    fn play(target: &str, http10: bool) -> (String, Vec<(Duration, Step)>, String) {
        let t0 = Instant::now();
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let mut log = Some(EventLog::in_memory());
        let mut s = Streamer::start(spec(target), 7, t0, http10, false, false, &mut out);
        let mut steps = Vec::new();
        while let Some(t) = s.due() {
            let step = s.write_due(t, &mut out, &mut scratch, &mut log);
            steps.push((t - t0, step));
            if step != Step::More {
                break;
            }
        }
        let log = log.map(|l| l.memory()).unwrap_or_default();
        (String::from_utf8(out).unwrap(), steps, log)
    }

    const SSE_HEAD: &str =
        "HTTP/1.1 200 OK\r\nServer: rshperf\r\nContent-Type: text/event-stream\r\n\
        Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n";

    #[test]
    fn events_on_schedule_in_chunks() {
        let (text, steps, _) = play("/stream?events=2&first=5ms&gap=10ms&done=1", false);
        let want = format!(
            "{SSE_HEAD}1d\r\ndata: {{\"event\":0,\"text\":\"\"}}\n\n\r\n\
             1d\r\ndata: {{\"event\":1,\"text\":\"\"}}\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"
        );
        assert_eq!(text, want);
        let ms = Duration::from_millis;
        assert_eq!(
            steps,
            [
                (ms(5), Step::More),
                (ms(15), Step::More),
                (ms(25), Step::End { close: false })
            ]
        );
    }

    #[test]
    fn sizes_formats_and_http10() {
        let mut d = Vec::new();
        event_data(3, 64, &mut d);
        assert_eq!(d.len(), 64);
        assert!(d.starts_with(br#"{"event":3,"text":"aaa"#) && d.ends_with(br#"a"}"#));
        d.clear();
        event_data(12, 5, &mut d);
        assert_eq!(d, br#"{"event":12,"text":""}"#);
        let (text, _, _) = play("/stream?events=2&format=ndjson&size=24", true);
        let body = "{\"event\":0,\"text\":\"aaa\"}\n{\"event\":1,\"text\":\"aaa\"}\n";
        assert_eq!(
            text,
            format!(
                "HTTP/1.1 200 OK\r\nServer: rshperf\r\nContent-Type: application/x-ndjson\r\n\
                 Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\nConnection: close\r\n\r\n{body}"
            )
        );
    }

    #[test]
    fn hostile_endings() {
        // Cut after one event: half the next, no terminating chunk.
        let (text, steps, _) = play("/stream?events=3&cut=1&reset=1", false);
        assert!(
            text.ends_with("\n\n\r\ne\r\ndata: {\"event\"\r\n"),
            "{text:?}"
        );
        assert_eq!(steps.last().unwrap().1, Step::Cut { reset: true });
        // Stall before the first event: the head only, then nothing is due.
        let (text, steps, _) = play("/stream?events=3&stall=0", false);
        assert_eq!((text.as_str(), steps.len()), (SSE_HEAD, 0));
        let (text, steps, _) = play("/stream?events=2&stall=1&gap=1ms", false);
        assert_eq!(text.matches("data: ").count(), 1);
        assert_eq!(steps.last().unwrap().1, Step::Stall);
        // [DONE] then more; no trailing line end on the last.
        let (text, _, log) = play("/stream?events=1&done=1&after=1&trail=0&format=sse", false);
        assert!(
            text.ends_with(
                "e\r\ndata: [DONE]\n\n\r\n1b\r\ndata: {\"event\":2,\"text\":\"\"}\r\n0\r\n\r\n"
            ),
            "{text:?}"
        );
        let items: Vec<&str> = log.lines().map(|l| l.split(',').nth(1).unwrap()).collect();
        assert_eq!(items, ["event", "0", "done", "2"]);
    }

    #[test]
    fn chat_chunks_and_the_whole_completion() {
        let (text, steps, _) = play("/v1/chat/completions?tokens=2&stream=1&gap=3ms", false);
        let body: Vec<&str> = text
            .split("\r\n")
            .filter(|l| l.starts_with("data: "))
            .collect();
        assert_eq!(
            body,
            [
                "data: {\"id\":\"chatcmpl-rshperf-7\",\"object\":\"chat.completion.chunk\",\"created\":CREATED,\"model\":\"rshperf\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"tok \"},\"finish_reason\":null}]}\n\n",
                "data: {\"id\":\"chatcmpl-rshperf-7\",\"object\":\"chat.completion.chunk\",\"created\":CREATED,\"model\":\"rshperf\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"},\"finish_reason\":\"stop\"}]}\n\n",
                "data: [DONE]\n\n",
            ]
            .map(|l| l.replace("CREATED", &created(&text)))
        );
        assert_eq!(steps.len(), 3);
        let (text, steps, _) = play("/v1/chat/completions?tokens=3&first=2ms&gap=5ms", false);
        let ms = Duration::from_millis;
        assert_eq!(steps, [(ms(12), Step::End { close: false })]);
        let body = format!(
            "{{\"id\":\"chatcmpl-rshperf-7\",\"object\":\"chat.completion\",\"created\":{},\"model\":\"rshperf\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":\"tok tok tok \"}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":0,\"completion_tokens\":3,\"total_tokens\":3}}}}",
            created(&text)
        );
        assert_eq!(
            text,
            format!(
                "HTTP/1.1 200 OK\r\nServer: rshperf\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
        );
    }

    /// The `created` value in a rendered reply.
    fn created(text: &str) -> String {
        let at = text.find("\"created\":").expect("created") + 10;
        text[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect()
    }
}
