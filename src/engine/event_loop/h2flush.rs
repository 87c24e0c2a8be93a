//! HTTP/2 (and HTTP/3) write coalescing: one write per connection per poll turn.
//!
//! Over HTTP/1 the engine writes a connection's new requests as soon as the handler
//! that queued them returns (httperf's timing). Over HTTP/2 a connection carries many
//! streams, and its replies arrive one by one: writing each replacement request at
//! once sends one small TCP segment per reply (and costs the server one more
//! segment to receive and acknowledge). Here HTTP/2 connections made dirty while
//! the poll's events are handled are only written once every event of that turn
//! has been handled, so each connection's new streams, acknowledgements and
//! window updates leave in one write. A call's response time starts when its
//! stream is opened (before this wait), so the wait is measured, never hidden.

use super::Engine;
use crate::wire::table::ConnId;

/// HTTP/2 connections whose writes wait for the end of the poll turn.
#[derive(Debug, Default)]
pub(super) struct Held {
    /// Inside the handling of a poll's events: HTTP/2 writes are held.
    holding: bool,
    /// Held in this turn.
    later: Vec<ConnId>,
    /// Spare vector (kept so that no turn allocates).
    spare: Vec<ConnId>,
}

impl Held {
    /// Starts (true) or ends (false) the handling of a poll's events.
    pub(super) fn hold(&mut self, on: bool) {
        self.holding = on;
    }

    /// Whether HTTP/2 connection `id`'s write waits (it is then remembered).
    pub(super) fn held(&mut self, id: ConnId) -> bool {
        if !self.holding {
            return false;
        }
        if !self.later.contains(&id) {
            self.later.push(id);
        }
        true
    }
}

impl Engine<'_> {
    /// Writes the held connections (end of the poll turn).
    pub(super) fn flush_held(&mut self) {
        let mut ids = std::mem::take(&mut self.h2.spare);
        std::mem::swap(&mut ids, &mut self.h2.later);
        for &id in &ids {
            self.mark_dirty(id);
        }
        ids.clear();
        self.h2.spare = ids;
        self.flush();
    }
}
