//! The fixed-capacity connection table: slots addressed by `ConnId` (index +
//! generation), convertible to and from `mio::Token`.
//!
//! Owns slot allocation and reuse. Slots grow on demand up to the capacity fixed at
//! start (from RLIMIT_NOFILE) and are never freed, so a slot's buffers are reused by
//! later connections and the steady state allocates nothing. A stale id (its slot was
//! freed or reused) finds nothing. Knows nothing about what the slots hold.

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

struct Slot<T> {
    generation: u32,
    live: bool,
    value: T,
}

/// A table of at most `capacity` live values of type `T`.
pub(crate) struct Table<T> {
    slots: Vec<Slot<T>>,
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
            slots: Vec::new(),
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
            None if self.slots.len() < self.capacity => {
                self.slots.push(Slot {
                    generation: 0,
                    live: false,
                    value: make(),
                });
                u32::try_from(self.slots.len() - 1).expect("capacity is below 2^31")
            }
            None => return None,
        };
        let slot = &mut self.slots[index as usize];
        slot.live = true;
        self.live += 1;
        Some((
            ConnId {
                index,
                generation: slot.generation,
            },
            &mut slot.value,
        ))
    }

    /// The live value for `id`, or None if the id is stale.
    pub(crate) fn get_mut(&mut self, id: ConnId) -> Option<&mut T> {
        match self.slots.get_mut(id.index as usize) {
            Some(s) if s.live && s.generation == id.generation => Some(&mut s.value),
            _ => None,
        }
    }

    /// Frees the slot of `id` (its value stays for reuse); stale ids are ignored.
    pub(crate) fn free(&mut self, id: ConnId) {
        if let Some(s) = self.slots.get_mut(id.index as usize) {
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
