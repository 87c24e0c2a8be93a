//! A connection's unwritten request bytes: a byte buffer with shared bodies spliced
//! in, written with one `writev` per readiness.
//!
//! Owns the send side's bookkeeping only: rendered header bytes go into `buf`; a
//! large request body (`--body-file`, `--wsesslog` `contents=`, ab's `-p`) is not
//! copied but referenced (`call::Body`, an `Arc`), at the position in `buf` where it
//! belongs, so a 5 MB body sent by a thousand calls exists once in memory. Small
//! bodies are copied (cheaper than a reference to keep). HTTP/2 frames use `buf`
//! only. Does not know about calls or sockets: `Conn` asks for the next slices to
//! write and says how much was written. Called by `conn` and `call::Requests::render`
//! (through `call::RequestSink`).

use std::collections::VecDeque;
use std::io::IoSlice;

use crate::model::call::{Body, RequestSink};

/// Bodies up to this size are copied into the buffer; larger ones are shared.
pub(crate) const SHARE_ABOVE: usize = 16 * 1024;

/// Most slices handed to one `writev`.
pub(crate) const MAX_SLICES: usize = 8;

/// Unwritten bytes: `buf[off..]` with `bodies` spliced in.
#[derive(Debug, Default)]
pub(crate) struct SendQueue {
    /// Rendered bytes (request heads, small bodies, HTTP/2 frames).
    pub(crate) buf: Vec<u8>,
    /// Bytes of `buf` already written.
    off: usize,
    /// Shared bodies, each after `buf[..at]`, in order of `at`.
    bodies: VecDeque<(usize, Body)>,
    /// Bytes of the first body already written.
    body_off: usize,
}

impl SendQueue {
    /// An empty queue.
    pub(crate) fn new() -> SendQueue {
        SendQueue::default()
    }

    /// Forgets everything unwritten (keeps the buffer's capacity).
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.off = 0;
        self.bodies.clear();
        self.body_off = 0;
    }

    /// Whether bytes remain to be written.
    pub(crate) fn pending(&self) -> bool {
        self.off < self.buf.len() || !self.bodies.is_empty()
    }

    /// Fills `out` with the next slices to write, in order; returns how many.
    pub(crate) fn slices<'a>(&'a self, out: &mut [IoSlice<'a>; MAX_SLICES]) -> usize {
        let mut n = 0;
        let mut pos = self.off;
        let mut first_body = true;
        for (at, body) in &self.bodies {
            if n == MAX_SLICES {
                return n;
            }
            if *at > pos {
                out[n] = IoSlice::new(&self.buf[pos..*at]);
                n += 1;
                pos = *at;
                if n == MAX_SLICES {
                    return n;
                }
            }
            let skip = if first_body { self.body_off } else { 0 };
            first_body = false;
            out[n] = IoSlice::new(&body[skip..]);
            n += 1;
        }
        if n < MAX_SLICES && pos < self.buf.len() {
            out[n] = IoSlice::new(&self.buf[pos..]);
            n += 1;
        }
        n
    }

    /// The next contiguous piece to write (for TLS, which writes one slice at a time).
    pub(crate) fn first(&self) -> &[u8] {
        match self.bodies.front() {
            Some((at, _)) if *at > self.off => &self.buf[self.off..*at],
            Some((_, body)) => &body[self.body_off..],
            None => &self.buf[self.off..],
        }
    }

    /// `k` more bytes were written (or are to be skipped); returns how many of them
    /// there were (less than `k` only when the queue ran out).
    pub(crate) fn advance(&mut self, mut k: usize) -> usize {
        let asked = k;
        while k > 0 {
            match self.bodies.front() {
                Some((at, body)) if *at == self.off => {
                    let left = body.len() - self.body_off;
                    if k < left {
                        self.body_off += k;
                        return asked;
                    }
                    k -= left;
                    self.bodies.pop_front();
                    self.body_off = 0;
                }
                Some((at, _)) => {
                    let step = k.min(*at - self.off);
                    self.off += step;
                    k -= step;
                }
                None => {
                    let step = k.min(self.buf.len() - self.off);
                    self.off += step;
                    k -= step;
                    if step == 0 {
                        break;
                    }
                }
            }
        }
        if !self.pending() {
            self.buf.clear();
            self.off = 0;
        }
        asked - k
    }
}

impl RequestSink for SendQueue {
    fn bytes(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    fn body(&mut self, body: &Body) {
        if body.len() > SHARE_ABOVE {
            self.bodies.push_back((self.buf.len(), body.clone()));
        } else {
            self.buf.extend_from_slice(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut SendQueue, chunk: usize) -> Vec<u8> {
        let mut out = Vec::new();
        while q.pending() {
            let mut s = [IoSlice::new(&[]); MAX_SLICES];
            let n = q.slices(&mut s);
            let mut all: Vec<u8> = s[..n].iter().flat_map(|x| x.iter().copied()).collect();
            all.truncate(chunk);
            assert_eq!(
                &q.first()[..q.first().len().min(all.len())],
                &all[..q.first().len().min(all.len())]
            );
            let k = all.len();
            out.extend_from_slice(&all);
            assert_eq!(q.advance(k), k);
        }
        out
    }

    #[test]
    fn bodies_are_shared_and_come_out_in_order_at_every_write_size() {
        let big: Body = Body::from(vec![7u8; SHARE_ABOVE + 5]);
        for chunk in [1, 3, 100, SHARE_ABOVE, 1 << 20] {
            let mut q = SendQueue::new();
            let mut want = Vec::new();
            for head in [
                &b"POST / HTTP/1.1\r\n\r\n"[..],
                b"GET /x\r\n\r\n",
                b"P2\r\n\r\n",
            ] {
                q.bytes().extend_from_slice(head);
                want.extend_from_slice(head);
                q.body(&big);
                want.extend_from_slice(&big);
            }
            q.body(&Body::from(&b"small"[..]));
            want.extend_from_slice(b"small");
            assert_eq!(std::sync::Arc::strong_count(&big), 4, "shared, not copied");
            assert_eq!(drain(&mut q, chunk), want, "chunk {chunk}");
            assert_eq!(std::sync::Arc::strong_count(&big), 1);
        }
    }

    #[test]
    fn skipping_past_the_end_stops_there() {
        let mut q = SendQueue::new();
        q.bytes().extend_from_slice(b"abc");
        q.body(&Body::from(vec![1u8; SHARE_ABOVE + 1]));
        assert_eq!(q.advance(2), 2);
        assert_eq!(q.first(), b"c");
        assert_eq!(q.advance(SHARE_ABOVE + 10), SHARE_ABOVE + 2);
        assert!(!q.pending());
    }
}
