//! The fixed-capacity connection table: slots addressed by `ConnId` (index +
//! generation), convertible to and from `mio::Token`.
//!
//! Owns slot allocation and reuse. Slots grow on demand up to the capacity fixed at
//! start (from RLIMIT_NOFILE) and are never freed, so the steady state allocates
//! nothing. They grow a chunk of `CHUNK` at a time and never move: growing copies
//! nothing, so 18,000 slots never exist twice during a reallocation (which would
//! count in the peak RSS). A stale id (its slot was freed or reused) finds nothing.
//! Knows nothing about what the slots hold.

use mio::Token;

/// Identifies a live slot: its index and the generation it was allocated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnId {
    index: u32,
    generation: u32,
}

impl ConnId {
    /// The poll token for this id (index in the low 32 bits, generation above).
    pub(crate) fn token(self) -> Token {
        Token((self.generation as usize) << 32 | self.index as usize)
    }

    /// The id encoded in a token made by `token`.
    pub(crate) fn from_token(t: Token) -> ConnId {
        ConnId {
            index: (t.0 & 0xffff_ffff) as u32,
            generation: (t.0 >> 32) as u32,
        }
    }

    /// Slot index (stable while the connection lives).
    pub(crate) fn index(self) -> u32 {
        self.index
    }
}

/// Slots per chunk (a power of two).
const CHUNK: usize = 256;

struct Slot<T> {
    generation: u32,
    live: bool,
    value: T,
}

/// A table of at most `capacity` live values of type `T`.
pub(crate) struct Table<T> {
    /// Chunks of at most `CHUNK` slots, each allocated at its full size once.
    chunks: Vec<Vec<Slot<T>>>,
    /// Slots made so far.
    made: usize,
    free: Vec<u32>,
    capacity: usize,
    live: usize,
}

impl<T> Table<T> {
    /// An empty table that will hold at most `capacity` values (capped below 2^31 so
    /// tokens never collide with the engine's reserved ones).
    pub(crate) fn new(capacity: usize) -> Table<T> {
        let capacity = capacity.min(1 << 31);
        Table {
            chunks: Vec::new(),
            made: 0,
            free: Vec::new(),
            capacity,
            live: 0,
        }
    }

    /// Takes a free slot (reusing the most recently freed one, whose value is handed
    /// back for reinitialisation) or creates one with `make`; None when full.
    pub(crate) fn alloc(&mut self, make: impl FnOnce() -> T) -> Option<(ConnId, &mut T)> {
        let index = match self.free.pop() {
            Some(i) => i,
            None if self.made < self.capacity => {
                if self.made.is_multiple_of(CHUNK) {
                    let size = CHUNK.min(self.capacity - self.made);
                    self.chunks.push(Vec::with_capacity(size));
                }
                let chunk = self
                    .chunks
                    .last_mut()
                    .expect("a chunk with room was just made");
                chunk.push(Slot {
                    generation: 0,
                    live: false,
                    value: make(),
                });
                self.made += 1;
                u32::try_from(self.made - 1).expect("capacity is below 2^31")
            }
            None => return None,
        };
        self.live += 1;
        let slot = self.slot(index).expect("a made slot exists");
        slot.live = true;
        Some((
            ConnId {
                index,
                generation: slot.generation,
            },
            &mut slot.value,
        ))
    }

    fn slot(&mut self, index: u32) -> Option<&mut Slot<T>> {
        let i = index as usize;
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    /// The live value for `id`, or None if the id is stale.
    pub(crate) fn get_mut(&mut self, id: ConnId) -> Option<&mut T> {
        match self.slot(id.index) {
            Some(s) if s.live && s.generation == id.generation => Some(&mut s.value),
            _ => None,
        }
    }

    /// Frees the slot of `id` (its value stays for reuse); stale ids are ignored.
    pub(crate) fn free(&mut self, id: ConnId) {
        if let Some(s) = self.slot(id.index) {
            if s.live && s.generation == id.generation {
                s.live = false;
                s.generation = s.generation.wrapping_add(1);
                self.live -= 1;
                self.free.push(id.index);
            }
        }
    }

    /// Number of live values.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Every live value.
    pub(crate) fn live_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.chunks
            .iter_mut()
            .flatten()
            .filter(|s| s.live)
            .map(|s| &mut s.value)
    }

    /// The ids of the live values, in slot order.
    pub(crate) fn ids(&self) -> Vec<ConnId> {
        let slots = self.chunks.iter().flatten().enumerate();
        slots
            .filter(|(_, s)| s.live)
            .map(|(i, s)| ConnId {
                index: u32::try_from(i).expect("capacity is below 2^31"),
                generation: s.generation,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_reuse_and_stale_ids() {
        let mut t: Table<u32> = Table::new(2);
        let (a, va) = t.alloc(|| 7).expect("room");
        *va = 1;
        let (b, _) = t.alloc(|| 7).expect("room");
        assert!(t.alloc(|| 7).is_none(), "full table");
        assert_eq!(t.live(), 2);
        t.free(a);
        assert!(t.get_mut(a).is_none(), "freed id is stale");
        let (c, vc) = t.alloc(|| 7).expect("room again");
        assert_eq!(*vc, 1, "value is reused, not remade");
        assert_eq!(c.index(), a.index());
        assert_ne!(c, a);
        assert!(t.get_mut(a).is_none(), "old generation stays stale");
        assert!(t.get_mut(c).is_some());
        assert!(t.get_mut(b).is_some());
        t.free(a);
        assert_eq!(t.live(), 2, "freeing a stale id does nothing");
        assert_eq!(t.ids(), [c, b]);
        *t.get_mut(b).expect("live") = 9;
        t.free(c);
        assert_eq!(t.ids(), [b]);
        let live: Vec<u32> = t.live_mut().map(|v| *v).collect();
        assert_eq!(live, [9], "only live values, not freed ones");
    }

    #[test]
    fn slots_never_move_as_the_table_grows_to_its_capacity() {
        let cap = 3 * CHUNK + 5;
        let mut t: Table<u64> = Table::new(cap);
        let (first, v) = t.alloc(|| 0).expect("room");
        let at = std::ptr::from_mut(v) as usize;
        let mut ids = vec![first];
        for k in 1..cap {
            let (id, v) = t.alloc(|| 0).expect("room");
            *v = k as u64;
            ids.push(id);
        }
        assert!(t.alloc(|| 0).is_none(), "full at {cap}");
        let v = t.get_mut(first).expect("live");
        assert_eq!(std::ptr::from_mut(v) as usize, at, "not moved");
        for (k, id) in ids.iter().enumerate() {
            assert_eq!(id.index() as usize, k);
            assert_eq!(t.get_mut(*id).copied(), Some(k as u64));
        }
        // The last chunk is only as large as the capacity needs.
        assert_eq!(t.chunks.len(), 4);
        assert_eq!(t.chunks[3].capacity(), 5);
    }

    #[test]
    fn token_round_trip() {
        let mut t: Table<()> = Table::new(10);
        for _ in 0..3 {
            let (id, _) = t.alloc(|| ()).expect("room");
            t.free(id);
        }
        let (id, _) = t.alloc(|| ()).expect("room");
        assert_eq!(ConnId::from_token(id.token()), id);
    }
}
