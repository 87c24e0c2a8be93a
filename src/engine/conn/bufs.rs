//! The engine's pool of connection buffers: send queues, call queues and the
//! HTTP/2 and HTTP/3 sides (HPACK/QPACK state, staged requests).
//!
//! A connection takes its buffers from the pool when it first needs them (a call is
//! rendered, an HTTP/2 or HTTP/3 connection starts) and gives them back when it
//! closes, and an HTTP/1.x connection also while it sits idle (no call outstanding,
//! nothing to write: a session's think time). So memory follows the connections
//! that are busy, not the slots ever opened, and the steady state allocates
//! nothing: a returned buffer keeps its capacity for the next connection.
//!
//! Bounded: a buffer enters the pool only when a connection gives back what it took,
//! so buffers in use plus idle never exceed the peak number of connections using
//! them at once; the idle ones are capped at `IDLE_MAX` per kind, and a buffer
//! grown past its kind's size cap (a large request body copied in, a long pipeline)
//! is freed instead of kept. Everything is cleared before it is pooled, so nothing
//! of one connection's data reaches another. Owned by the engine (one pool per
//! engine thread, no locks); used by `Conn::lend`, `Conn::park` and `Conn::release`.

use std::collections::VecDeque;

use super::h2::H2Side;
use super::h3::H3Side;
use super::send::SendQueue;
use crate::model::call::Call;

/// Idle buffers kept per kind; more are freed.
pub(crate) const IDLE_MAX: usize = 1024;

/// A send queue whose byte buffer grew past this is freed, not pooled.
pub(crate) const SEND_KEEP_MAX: usize = 64 * 1024;

/// A call queue whose capacity grew past this many calls is freed, not pooled.
pub(crate) const CALLS_KEEP_MAX: usize = 256;

/// A buffer the pool can hold: cleared before it is kept, and too large to keep
/// past some size.
pub(crate) trait Recycle: Default {
    /// A new buffer (when none is idle).
    fn fresh() -> Self {
        Self::default()
    }
    /// Forgets the contents (keeps the capacity).
    fn recycle(&mut self);
    /// Whether it grew too large to keep.
    fn oversized(&self) -> bool {
        false
    }
}

impl Recycle for SendQueue {
    fn recycle(&mut self) {
        self.clear();
    }
    fn oversized(&self) -> bool {
        self.buf.capacity() > SEND_KEEP_MAX
    }
}

impl Recycle for VecDeque<Call> {
    /// Room for one call: most connections carry one at a time (a `--wsess` burst of
    /// one, a connection per request), and a queue grown for a pipeline returns to
    /// the pool at its grown size. (Growing from empty would make room for four.)
    fn fresh() -> Self {
        VecDeque::with_capacity(1)
    }
    fn recycle(&mut self) {
        self.clear();
    }
    fn oversized(&self) -> bool {
        self.capacity() > CALLS_KEEP_MAX
    }
}

impl Recycle for Box<H2Side> {
    fn recycle(&mut self) {
        self.reset();
    }
}

impl Recycle for Box<H3Side> {
    fn recycle(&mut self) {
        self.reset();
    }
}

/// Idle buffers of one kind, and how many are out.
#[derive(Debug, Default)]
pub(crate) struct Spares<T> {
    idle: Vec<T>,
    out: usize,
    peak_out: usize,
    made: u64,
}

impl<T: Recycle> Spares<T> {
    /// An idle buffer, or a new one when none is idle.
    #[inline]
    pub(crate) fn take(&mut self) -> T {
        self.out += 1;
        self.peak_out = self.peak_out.max(self.out);
        self.idle.pop().unwrap_or_else(|| {
            self.made += 1;
            T::fresh()
        })
    }

    /// Takes `b` back (cleared), or frees it when the pool is full or it is oversized.
    #[inline]
    pub(crate) fn give(&mut self, mut b: T) {
        self.out = self.out.saturating_sub(1);
        if self.idle.len() < IDLE_MAX && !b.oversized() {
            b.recycle();
            self.idle.push(b);
        }
    }

    /// Fills `slot` (cleared, or taken from the pool) when `on`, else gives what it
    /// holds back: a connection slot's optional protocol side for its next connection.
    pub(crate) fn switch(&mut self, slot: &mut Option<T>, on: bool) {
        match (on, slot.as_mut()) {
            (true, Some(b)) => b.recycle(),
            (true, None) => *slot = Some(self.take()),
            (false, _) => {
                if let Some(b) = slot.take() {
                    self.give(b);
                }
            }
        }
    }

    /// Buffers idle in the pool.
    pub(crate) fn idle(&self) -> usize {
        self.idle.len()
    }

    /// Buffers out now.
    #[cfg(test)]
    pub(crate) fn out(&self) -> usize {
        self.out
    }

    /// The most buffers out at once.
    pub(crate) fn peak_out(&self) -> usize {
        self.peak_out
    }

    /// Buffers allocated (taken when none was idle).
    pub(crate) fn made(&self) -> u64 {
        self.made
    }
}

/// One engine's pool of connection buffers, by kind.
#[derive(Debug, Default)]
pub(crate) struct BufPool {
    /// Send queues (request bytes, HTTP/2 frames).
    pub(crate) send: Spares<SendQueue>,
    /// Call queues.
    pub(crate) calls: Spares<VecDeque<Call>>,
    /// HTTP/2 sides.
    pub(crate) h2: Spares<Box<H2Side>>,
    /// HTTP/3 sides.
    pub(crate) h3: Spares<Box<H3Side>>,
}

impl BufPool {
    /// An empty pool.
    pub(crate) fn new() -> BufPool {
        BufPool::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::call::RequestSink;

    #[test]
    fn a_buffer_given_back_is_the_next_one_taken_and_comes_back_empty() {
        let mut p = BufPool::new();
        let mut a = p.send.take();
        a.bytes()
            .extend_from_slice(b"GET /one-connection's-secret HTTP/1.1\r\n\r\n");
        let (ptr, cap) = (a.buf.as_ptr(), a.buf.capacity());
        p.send.give(a);
        let b = p.send.take();
        assert_eq!((b.buf.as_ptr(), b.buf.capacity()), (ptr, cap), "reused");
        assert!(b.buf.is_empty() && !b.pending(), "cleared");
        assert_eq!((p.send.made(), p.send.peak_out(), p.send.out()), (1, 1, 1));
    }

    #[test]
    fn the_pool_never_holds_more_than_the_peak_in_use_nor_more_idle_than_the_cap() {
        let mut p = BufPool::new();
        // Waves of 3, 7 and 2 connections at once: 7 buffers are ever made.
        for wave in [3, 7, 2, 7, 5] {
            let taken: Vec<_> = (0..wave).map(|_| p.calls.take()).collect();
            assert_eq!(p.calls.out(), wave);
            for b in taken {
                p.calls.give(b);
            }
            assert_eq!(p.calls.out(), 0);
            assert!(p.calls.idle() <= p.calls.peak_out());
        }
        assert_eq!(
            (p.calls.made(), p.calls.peak_out(), p.calls.idle()),
            (7, 7, 7)
        );
        // More than the cap at once: the surplus is freed when it comes back.
        let many: Vec<_> = (0..IDLE_MAX + 10).map(|_| p.send.take()).collect();
        for b in many {
            p.send.give(b);
        }
        assert_eq!(p.send.idle(), IDLE_MAX);
        assert_eq!(p.send.made(), (IDLE_MAX + 10) as u64);
    }

    #[test]
    fn a_new_call_queue_has_room_for_one_call() {
        let mut p = BufPool::new();
        assert_eq!(p.calls.take().capacity(), 1);
    }

    #[test]
    fn an_oversized_buffer_is_freed_not_pooled() {
        let mut p = BufPool::new();
        let mut big = p.send.take();
        big.bytes().resize(SEND_KEEP_MAX + 1, b'x');
        p.send.give(big);
        let mut calls = p.calls.take();
        calls.reserve(CALLS_KEEP_MAX + 1);
        p.calls.give(calls);
        assert_eq!((p.send.idle(), p.calls.idle()), (0, 0));
        let mut fits = p.send.take();
        fits.bytes().resize(SEND_KEEP_MAX, b'x');
        p.send.give(fits);
        assert_eq!(p.send.idle(), 1);
    }
}
