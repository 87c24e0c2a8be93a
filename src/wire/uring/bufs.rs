//! The provided-buffer ring of an io_uring: the buffers multishot receives fill.
//!
//! Owns the ring of buffer descriptors shared with the kernel (page-aligned memory,
//! registered as buffer group `BGID`), the buffers themselves (one allocation), and
//! handing a buffer back once its bytes are read (`recycle`, published with the
//! ring's tail). The kernel picks the next buffer for each receive and names it in
//! the completion; `get` gives its bytes. Hand-written over the `io-uring` crate's
//! registration call: the crate has no safe buffer ring. Every `unsafe` block here
//! has a SAFETY comment. Used by `uring` (the ring) only.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types::BufRingEntry;
use io_uring::IoUring;

/// The buffer group id of the ring (one group per io_uring).
pub(super) const BGID: u16 = 1;

/// The buffer ring of one io_uring.
pub(super) struct BufRing {
    /// `count` descriptors, page-aligned (mmap), shared with the kernel.
    entries: *mut BufRingEntry,
    /// Bytes of the `entries` mapping.
    map_len: usize,
    /// The buffers, `size` bytes each, one after the other (a mapping of its own:
    /// the kernel writes into it behind any reference this side could hold).
    mem: *mut u8,
    size: u32,
    count: u16,
    /// The tail as this side counts it (published in `publish`).
    tail: u16,
}

impl BufRing {
    /// Maps `count` (a power of two, at most 32768) descriptors of `size`-byte
    /// buffers, registers them with `ring` and offers them all.
    pub(super) fn new(ring: &IoUring, count: u16, size: u32) -> io::Result<BufRing> {
        let map_len = usize::from(count) * std::mem::size_of::<BufRingEntry>();
        let addr = map(map_len)?;
        let mem = match map(usize::from(count) * size as usize) {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: the mapping just made, unmapped once.
                unsafe { libc::munmap(addr, map_len) };
                return Err(e);
            }
        };
        let mut bufs = BufRing {
            entries: addr.cast(),
            map_len,
            mem: mem.cast(),
            size,
            count,
            tail: 0,
        };
        // SAFETY: `entries` is a page-aligned mapping of `count` descriptors that
        // lives until `self` is dropped, which happens only after the ring is gone
        // (the ring's owner drops the ring first).
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(addr as u64, count, BGID, 0)?;
        }
        for bid in 0..count {
            bufs.put(bid);
        }
        bufs.publish();
        Ok(bufs)
    }

    /// The first `len` bytes of buffer `bid`, which a completion named (the kernel
    /// does not write it again before `recycle`).
    pub(super) fn get(&self, bid: u16, len: u32) -> &[u8] {
        if bid >= self.count {
            return &[];
        }
        let len = (len as usize).min(self.size as usize);
        // SAFETY: buffer `bid` lies inside the mapping (bid < count), and the kernel
        // filled it and hands it back only through `recycle`, after this slice is
        // gone (it borrows `self`, which `recycle` needs mutably).
        unsafe {
            std::slice::from_raw_parts(self.mem.add(usize::from(bid) * self.size as usize), len)
        }
    }

    /// Offers buffer `bid` to the kernel again (its bytes were read).
    pub(super) fn recycle(&mut self, bid: u16) {
        if bid < self.count {
            self.put(bid);
            self.publish();
        }
    }

    /// Writes the descriptor of buffer `bid` at the tail.
    fn put(&mut self, bid: u16) {
        let idx = usize::from(self.tail & (self.count - 1));
        let addr = self.mem as u64 + u64::from(bid) * u64::from(self.size);
        // SAFETY: `idx` < `count`, so the descriptor lies inside the mapping; the
        // kernel reads only descriptors before the published tail, and this one is at
        // or after it.
        let e = unsafe { &mut *self.entries.add(idx) };
        e.set_addr(addr);
        e.set_len(self.size);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Publishes the tail: the kernel may use every descriptor before it.
    fn publish(&self) {
        // SAFETY: the tail field overlays the first descriptor's reserved field,
        // inside the mapping; it is only ever accessed atomically here and by the
        // kernel.
        let tail = unsafe { &*(BufRingEntry::tail(self.entries).cast::<AtomicU16>()) };
        tail.store(self.tail, Ordering::Release);
    }
}

/// An anonymous private read-write mapping of `len` bytes (page-aligned).
fn map(len: usize) -> io::Result<*mut libc::c_void> {
    // SAFETY: an anonymous private mapping; the result is checked below.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
            -1,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(addr)
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: the mappings made in `new`, unmapped once; the ring that wrote
        // into them is gone (its owner drops it first).
        unsafe {
            libc::munmap(self.entries.cast(), self.map_len);
            libc::munmap(
                self.mem.cast(),
                usize::from(self.count) * self.size as usize,
            );
        }
    }
}
