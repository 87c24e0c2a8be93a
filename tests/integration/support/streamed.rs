//! A streamed reply body for the in-process HTTP/2 and HTTP/3 servers (`h2_server`,
//! `h3_server`): its Content-Type, its pieces (each written as its own DATA frame
//! after the delay the test sets) and how the stream ends (END_STREAM or FIN, or a
//! reset: RST_STREAM, or RESET_STREAM on QUIC).

use std::time::Duration;

/// How a streamed reply goes.
#[derive(Clone, Debug, Default)]
pub struct Streamed {
    /// The reply's Content-Type.
    pub content_type: String,
    /// Each piece is written as a DATA frame after waiting its delay.
    pub pieces: Vec<(Duration, Vec<u8>)>,
    /// The stream is reset after the pieces instead of ending.
    pub reset: bool,
    /// HTTP/3 server: the wait between the last piece and the reset. A QUIC receiver
    /// drops what it has not read of a reset stream (RFC 9000 §3.2), so a reset right
    /// behind the pieces may take the status and events with it.
    pub reset_after: Duration,
}

impl Streamed {
    /// `text/event-stream`: `n` events `data: eK` (K from 0), the first after `first`,
    /// the rest `gap` apart, then `data: [DONE]` if `done`.
    pub fn sse(n: usize, first: Duration, gap: Duration, done: bool) -> Streamed {
        let mut pieces: Vec<(Duration, Vec<u8>)> = (0..n)
            .map(|k| {
                let wait = if k == 0 { first } else { gap };
                (wait, format!("data: e{k}\n\n").into_bytes())
            })
            .collect();
        if done {
            pieces.push((Duration::ZERO, b"data: [DONE]\n\n".to_vec()));
        }
        Streamed {
            content_type: "text/event-stream".into(),
            pieces,
            reset: false,
            reset_after: Duration::ZERO,
        }
    }
}
