//! The staged requests of a multiplexed connection (HTTP/2, HTTP/3): each queued call's
//! plain header field list and body, rendered at issue time and header-compressed
//! when the call gets a stream (blocks must be encoded in the order they are sent),
//! held until its stream ends. Used by `h2.rs` and `h3.rs` beside it.

/// Bytes of a staged record's header: field list length, body length, decoded
/// size (u32 LE each).
pub(super) const RECORD_HEAD: usize = 12;

/// The staged requests of one connection: each a record of `RECORD_HEAD` bytes, the
/// plain field list, the body. Buffers are recycled: nothing allocates per request
/// once warmed up.
#[derive(Debug, Default)]
pub(super) struct Staged {
    /// Records of the queued calls, in the order of `Conn::calls`.
    pub(super) queued: std::collections::VecDeque<Vec<u8>>,
    /// Records of open streams, by `Tagged::slot` (empty: a free slot).
    pub(super) held: Vec<Vec<u8>>,
    /// Free slots of `held`.
    free: Vec<u32>,
    /// Unused buffers.
    spare: Vec<Vec<u8>>,
}

impl Staged {
    /// A new record at the back of the queue, to be filled.
    pub(super) fn push(&mut self) -> &mut Vec<u8> {
        let mut rec = self.spare.pop().unwrap_or_default();
        rec.clear();
        self.queued.push_back(rec);
        let n = self.queued.len() - 1;
        &mut self.queued[n]
    }

    /// Moves the front record to a held slot.
    pub(super) fn hold_front(&mut self) -> u32 {
        let rec = self.queued.pop_front().unwrap_or_default();
        match self.free.pop() {
            Some(i) => {
                if let Some(h) = self.held.get_mut(i as usize) {
                    *h = rec;
                }
                i
            }
            None => {
                self.held.push(rec);
                u32_of(self.held.len() - 1)
            }
        }
    }

    /// Takes a held record out of its slot.
    /// The parts of held record `slot`: its encoded header fields, its body and the
    /// decoded header size (empty parts for a slot that holds nothing).
    pub(super) fn parts(&self, slot: u32) -> (&[u8], &[u8], usize) {
        let rec = self.held.get(slot as usize).map_or(&[][..], Vec::as_slice);
        let word = |k: usize| {
            rec.get(4 * k..4 * k + 4)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u32::from_le_bytes) as usize
        };
        let (fields, body, decoded) = (word(0), word(1), word(2));
        let start = RECORD_HEAD.min(rec.len());
        let mid = (start + fields).min(rec.len());
        let end = (mid + body).min(rec.len());
        (&rec[start..mid], &rec[mid..end], decoded)
    }

    pub(super) fn take(&mut self, slot: u32) -> Vec<u8> {
        match self.held.get_mut(slot as usize) {
            Some(h) => {
                self.free.push(slot);
                std::mem::take(h)
            }
            None => Vec::new(),
        }
    }

    /// The stream of `slot` ended: its record is done with.
    pub(super) fn release(&mut self, slot: u32) {
        let rec = self.take(slot);
        self.spare.push(rec);
    }

    /// The stream of `slot` was refused: its record goes back to the front.
    pub(super) fn requeue(&mut self, slot: u32) {
        let rec = self.take(slot);
        self.queued.push_front(rec);
    }

    /// Forgets every record, keeping the buffers.
    pub(super) fn clear(&mut self) {
        self.spare.extend(self.queued.drain(..));
        for h in &mut self.held {
            if h.capacity() > 0 {
                self.spare.push(std::mem::take(h));
            }
        }
        self.free.clear();
        self.free.extend((0..self.held.len()).rev().map(u32_of));
    }
}

/// `n` as u32, saturated.
pub(super) fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
