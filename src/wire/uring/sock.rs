//! A connection's socket on the ring, read and written as a non-blocking socket.
//!
//! Owns `UringSock`: `read` copies what completed receives brought (provided
//! buffers, handed back as they empty) and then gives the end of the stream, the
//! receive's error or `WouldBlock`; `write`/`write_vectored` take the bytes into the
//! slot (sent by one send operation at the end of the loop turn's submission;
//! `WouldBlock` when `STAGE_MAX` is staged behind a send in flight); `take_error` and
//! `check_connected` answer as `SO_ERROR` and `getpeername` would after a
//! non-blocking connect. Dropping it cancels the socket's operations and closes it
//! through the ring. The connection machine above cannot tell it from a socket:
//! it is one more `Stream` variant.

use std::cell::RefCell;
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::{BorrowedFd, RawFd};
use std::rc::Rc;

use super::{Recv, Shared, STAGE_MAX};

/// A socket whose I/O goes through the engine's ring.
pub(crate) struct UringSock {
    shared: Rc<RefCell<Shared>>,
    slot: u32,
}

impl std::fmt::Debug for UringSock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UringSock({})", self.slot)
    }
}

impl UringSock {
    pub(super) fn new(shared: Rc<RefCell<Shared>>, slot: u32) -> UringSock {
        UringSock { shared, slot }
    }

    /// Why the connect failed, as `SO_ERROR` tells it.
    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        let sh = self.shared.borrow();
        let Some(s) = sh.slots.get(self.slot as usize) else {
            return Ok(None);
        };
        Ok((s.connect_err != 0).then(|| io::Error::from_raw_os_error(s.connect_err)))
    }

    /// Ok once the connect completed (`ENOTCONN` before).
    pub(crate) fn check_connected(&self) -> io::Result<()> {
        let sh = self.shared.borrow();
        match sh.slots.get(self.slot as usize) {
            Some(s) if s.open => Ok(()),
            _ => Err(io::Error::from_raw_os_error(libc::ENOTCONN)),
        }
    }
}

impl Read for UringSock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut guard = self.shared.borrow_mut();
        let sh = &mut *guard;
        let Some(s) = sh.slots.get_mut(self.slot as usize) else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let mut n = 0;
        while n < buf.len() {
            let Some(&(bid, len)) = s.inbox.front() else {
                break;
            };
            let bytes = sh.bufs.get(bid, len);
            let from = (s.head as usize).min(bytes.len());
            let k = (bytes.len() - from).min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&bytes[from..from + k]);
            n += k;
            s.head += k as u32;
            if s.head as usize >= bytes.len() {
                s.inbox.pop_front();
                s.head = 0;
                sh.bufs.recycle(bid);
            }
        }
        if n > 0 || buf.is_empty() {
            return Ok(n);
        }
        match s.recv {
            Recv::Ended(0) => Ok(0),
            Recv::Ended(e) => Err(io::Error::from_raw_os_error(e)),
            _ => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl Write for UringSock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut sh = self.shared.borrow_mut();
        let slot = self.slot;
        let Some(s) = sh.slots.get_mut(slot as usize) else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        if s.send_err != 0 {
            return Err(io::Error::from_raw_os_error(s.send_err));
        }
        if !s.open {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if total == 0 {
            return Ok(0);
        }
        let sending = s.sending;
        let into = if sending { &mut s.staged } else { &mut s.out };
        let room = STAGE_MAX.saturating_sub(into.len());
        if room == 0 {
            s.blocked = true;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let mut left = room.min(total);
        let taken = left;
        for b in bufs {
            let k = left.min(b.len());
            into.extend_from_slice(&b[..k]);
            left -= k;
            if left == 0 {
                break;
            }
        }
        if !sending {
            sh.send(slot);
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for UringSock {
    fn drop(&mut self) {
        self.shared.borrow_mut().release(self.slot);
    }
}

/// The pending error of descriptor `fd` (`SO_ERROR`), if any.
pub(super) fn so_error(fd: RawFd) -> Option<i32> {
    // SAFETY: `fd` is the slot's open descriptor, borrowed for this call only.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let sock = socket2::SockRef::from(&fd);
    match sock.take_error() {
        Ok(Some(e)) => e.raw_os_error(),
        _ => None,
    }
}

/// Closes descriptor `fd`, which the caller owned and no longer names.
pub(super) fn close(fd: RawFd) {
    // SAFETY: `fd` is a slot's descriptor, taken out of the slot (set to -1) by the
    // caller, so it is closed exactly once.
    drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
}
