//! The engine's io_uring: sockets whose connect, sends and receives are operations
//! submitted to one ring and completed in batches (`--io uring`).
//!
//! Owns the ring (`io-uring` crate; single issuer, deferred task work and a
//! registered ring descriptor where the kernel has them), the provided-buffer ring
//! multishot receives fill (`bufs`), and one slot per socket: what arrived and is
//! not yet read, what was written and is not yet sent, how its connect ended. A
//! connection reads and writes its slot through `UringSock` (`sock`), as it would a
//! non-blocking socket: reads give what completed receives brought (else
//! `WouldBlock`), writes are taken into the slot and leave as one send operation
//! (one in flight at a time; more is staged, up to `STAGE_MAX`). `Ring::wait`
//! submits every operation prepared since the last turn and waits for completions,
//! which it turns into readiness (`Wake`) for the engine. Knows nothing of HTTP or
//! statistics; whether io_uring may be used at all is `probe`'s. Every `unsafe`
//! block here and in `bufs` has a SAFETY comment (the crate's submission is unsafe:
//! an operation's memory must outlive it, which the slots guarantee). Longer than
//! 600 lines for that reason: submitting, completing and releasing a slot share the
//! one rule of when its memory may be reused, and are kept in one file.

mod bufs;
pub(crate) mod probe;
mod sock;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{IntoRawFd, OwnedFd, RawFd};
use std::rc::Rc;
use std::time::Duration;

use io_uring::types::{CancelBuilder, Fd, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, IoUring};
use socket2::{SockAddr, Socket};

use bufs::{BufRing, BGID};
pub(crate) use sock::UringSock;

/// Submission queue entries.
const SQ_ENTRIES: u32 = 1024;
/// Completion queue entries (the kernel keeps overflowing ones: IORING_FEAT_NODROP).
const CQ_ENTRIES: u32 = 8192;
/// Provided buffers and their size: 512 × 8 KiB.
const BUFS: u16 = 512;
const BUF_SIZE: u32 = 8192;
/// Bytes a slot takes in one send, and stages behind a send in flight: past that, a
/// write gives `WouldBlock` until the send completes (the engine then hears
/// "writable").
const STAGE_MAX: usize = 64 * 1024;

/// What an operation was, in its completion's user data (low 8 bits; the slot and
/// its generation above).
const OP_CONNECT: u64 = 1;
const OP_SEND: u64 = 2;
const OP_RECV: u64 = 3;
/// A watched descriptor's readiness (the watch's index in the slot field).
const OP_WATCH: u64 = 4;
/// Cancel and close of a released slot: only failures complete, and are ignored.
const OP_IGNORE: u64 = 5;

/// Readiness of one connection (its token) after a batch of completions: the same
/// three facts an epoll event gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wake {
    /// The engine's token of the connection (or of a watched descriptor).
    pub(crate) token: usize,
    /// Bytes (or the end of the stream, or an error) to read.
    pub(crate) readable: bool,
    /// The connect completed, or room to write again.
    pub(crate) writable: bool,
    /// The peer closed, or the connection failed.
    pub(crate) closed: bool,
}

const READABLE: u8 = 1;
const WRITABLE: u8 = 2;
const CLOSED: u8 = 4;

/// How a slot's receiving stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recv {
    /// No receive pending (not connected yet, or to be armed again).
    Idle,
    /// A multishot receive is pending.
    Armed,
    /// Ended: 0 at the end of the stream, else the errno.
    Ended(i32),
}

/// One socket of the ring.
struct Slot {
    /// Its descriptor (-1 once released).
    fd: RawFd,
    /// The engine's token for it.
    token: usize,
    /// Bumped when the slot is freed: completions of an earlier socket are told apart.
    gen: u32,
    /// Connected (the connect completed without error).
    open: bool,
    /// The connect's errno, if it failed.
    connect_err: i32,
    recv: Recv,
    /// Received and not yet read: (buffer id, length), the first read from `head`.
    inbox: VecDeque<(u16, u32)>,
    head: u32,
    /// The bytes of the send in flight (`sending`), from `out_at` on.
    out: Vec<u8>,
    out_at: usize,
    sending: bool,
    /// Written while a send was in flight.
    staged: Vec<u8>,
    /// The errno of a failed send (later writes fail with it).
    send_err: i32,
    /// A write got `WouldBlock`: tell the engine when there is room.
    blocked: bool,
    /// Operations whose last completion is still to come.
    ops: u32,
    /// The submission (`Shared::epoch`) its last operation was queued for.
    queued: u64,
    /// The socket was dropped: the slot is freed once `ops` is 0.
    released: bool,
    /// Readiness gathered for the engine in this batch.
    news: u8,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            fd: -1,
            token: 0,
            gen: 0,
            open: false,
            connect_err: 0,
            recv: Recv::Idle,
            inbox: VecDeque::new(),
            head: 0,
            out: Vec::new(),
            out_at: 0,
            sending: false,
            staged: Vec::new(),
            send_err: 0,
            blocked: false,
            ops: 0,
            queued: 0,
            released: false,
            news: 0,
        }
    }
}

/// The ring and everything its operations use, shared by the engine's `Ring` and
/// every `UringSock`. Field order matters: the ring is dropped before the memory
/// its operations may still use (`bufs`, `slots`, `addrs`).
struct Shared {
    ring: IoUring,
    bufs: BufRing,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots with news for the engine in this batch.
    touched: Vec<u32>,
    /// Slots whose receive must be armed again (ended early: no buffer was free).
    rearm: Vec<u32>,
    /// Connect addresses, kept for the ring's life (the kernel reads them at submit).
    addrs: Vec<(SocketAddr, Box<SockAddr>)>,
    /// Watched descriptors and their tokens.
    watches: Vec<(RawFd, usize)>,
    /// Submissions so far: operations queued since the last one have epoch `epoch`.
    epoch: u64,
    /// Tokens of watched descriptors that became readable in this batch.
    watch_news: Vec<usize>,
}

/// The engine's handle on its ring.
pub(crate) struct Ring {
    shared: Rc<RefCell<Shared>>,
}

fn tag(slot: u32, gen: u32, op: u64) -> u64 {
    (u64::from(slot) << 32) | (u64::from(gen & 0x00ff_ffff) << 8) | op
}

fn untag(data: u64) -> (u32, u32, u64) {
    (
        (data >> 32) as u32,
        ((data >> 8) & 0x00ff_ffff) as u32,
        data & 0xff,
    )
}

impl Ring {
    /// A ring for one engine.
    pub(crate) fn new() -> io::Result<Ring> {
        let ring = build()?;
        let bufs = BufRing::new(&ring, BUFS, BUF_SIZE)?;
        Ok(Ring {
            shared: Rc::new(RefCell::new(Shared {
                ring,
                bufs,
                slots: Vec::new(),
                free: Vec::new(),
                touched: Vec::new(),
                rearm: Vec::new(),
                addrs: Vec::new(),
                watches: Vec::new(),
                epoch: 0,
                watch_news: Vec::new(),
            })),
        })
    }

    /// Starts connecting `socket` (made by `net::prepare_socket`) to `addr` with a
    /// connect operation; the engine hears `token` writable when it completes (or
    /// closed when it failed: `take_error` tells why).
    pub(crate) fn connect(&self, socket: Socket, addr: SocketAddr, token: usize) -> UringSock {
        let mut sh = self.shared.borrow_mut();
        let fd = socket.into_raw_fd();
        let slot = sh.alloc(fd, token);
        let a = sh.addr(addr);
        sh.start(
            slot,
            opcode::Connect::new(Fd(fd), a.0, a.1).build(),
            OP_CONNECT,
        );
        drop(sh);
        UringSock::new(self.shared.clone(), slot)
    }

    /// Takes over `fd`, a TCP or unix socket whose connect the engine started itself
    /// (the ring closes it): `connected` when it completed at once, else a poll
    /// operation tells when it does.
    pub(crate) fn adopt(&self, fd: OwnedFd, token: usize, connected: bool) -> UringSock {
        let fd = fd.into_raw_fd();
        let mut sh = self.shared.borrow_mut();
        let slot = sh.alloc(fd, token);
        if connected {
            sh.slots[slot as usize].open = true;
            sh.arm_recv(slot);
        } else {
            let poll = opcode::PollAdd::new(Fd(fd), libc::POLLOUT as u32).build();
            sh.start(slot, poll, OP_CONNECT);
        }
        drop(sh);
        UringSock::new(self.shared.clone(), slot)
    }

    /// Wakes the engine with `token` readable whenever `fd` becomes readable (the
    /// signal pipe, the call-rate tick's timerfd).
    pub(crate) fn watch(&self, fd: RawFd, token: usize) {
        let mut sh = self.shared.borrow_mut();
        let i = sh.watches.len() as u32;
        sh.watches.push((fd, token));
        sh.arm_watch(i);
    }

    /// Submits what was prepared and waits for completions: until at least one
    /// comes, or `timeout` passes (None: no limit; zero: only what has come).
    /// Appends the readiness they bring to `out`; true when the wait timed out.
    pub(crate) fn wait(&self, timeout: Option<Duration>, out: &mut Vec<Wake>) -> io::Result<bool> {
        let mut sh = self.shared.borrow_mut();
        sh.epoch += 1;
        let got = match timeout {
            None => sh.ring.submit_and_wait(1),
            Some(d) => {
                let ts = Timespec::new().sec(d.as_secs()).nsec(d.subsec_nanos());
                sh.ring
                    .submitter()
                    .submit_with_args(1, &SubmitArgs::new().timespec(&ts))
            }
        };
        let timed_out = match got {
            Ok(_) => false,
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => true,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => false,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => false,
            Err(e) => return Err(e),
        };
        sh.reap(out);
        Ok(timed_out && out.is_empty())
    }
}

impl Shared {
    /// A slot for descriptor `fd` of `token`.
    fn alloc(&mut self, fd: RawFd, token: usize) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Slot::new());
                (self.slots.len() - 1) as u32
            }
        };
        let s = &mut self.slots[slot as usize];
        s.fd = fd;
        s.token = token;
        s.open = false;
        s.connect_err = 0;
        s.recv = Recv::Idle;
        s.inbox.clear();
        s.head = 0;
        s.out.clear();
        s.out_at = 0;
        s.sending = false;
        s.staged.clear();
        s.send_err = 0;
        s.blocked = false;
        s.ops = 0;
        s.queued = 0;
        s.released = false;
        s.news = 0;
        slot
    }

    /// The kept address `addr` as the kernel reads it (pointer, length).
    fn addr(&mut self, addr: SocketAddr) -> (*const libc::sockaddr, libc::socklen_t) {
        let i = match self.addrs.iter().position(|(a, _)| *a == addr) {
            Some(i) => i,
            None => {
                self.addrs.push((addr, Box::new(SockAddr::from(addr))));
                self.addrs.len() - 1
            }
        };
        let a = &self.addrs[i].1;
        (a.as_ptr().cast(), a.len())
    }

    /// Queues `e`, submitting what is queued first when the queue is full.
    fn push(&mut self, e: &squeue::Entry) {
        loop {
            // SAFETY: every operation queued here uses memory that outlives it: a
            // slot's `out` buffer is not touched while its send is in flight, a
            // slot is not reused before its last completion (`ops`), the addresses
            // and the buffer ring live as long as the ring, and the ring is dropped
            // (cancelling what is pending) before them.
            if unsafe { self.ring.submission().push(e) }.is_ok() {
                return;
            }
            self.epoch += 1;
            if self.ring.submit().is_err() {
                // Nothing can be queued: the operation completes as failed.
                return;
            }
        }
    }

    /// Queues operation `e` (an `op`) of slot `slot`; its last completion is awaited.
    fn start(&mut self, slot: u32, e: squeue::Entry, op: u64) {
        let s = &mut self.slots[slot as usize];
        s.ops += 1;
        s.queued = self.epoch;
        let e = e.user_data(tag(slot, s.gen, op));
        self.push(&e);
    }

    /// Arms slot `slot`'s multishot receive.
    fn arm_recv(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        if s.recv != Recv::Idle || s.released || s.fd < 0 {
            return;
        }
        s.recv = Recv::Armed;
        let e = opcode::RecvMulti::new(Fd(s.fd), BGID).build();
        self.start(slot, e, OP_RECV);
    }

    /// Arms watch `i`'s multishot poll.
    fn arm_watch(&mut self, i: u32) {
        let Some(&(fd, _)) = self.watches.get(i as usize) else {
            return;
        };
        let e = opcode::PollAdd::new(Fd(fd), libc::POLLIN as u32)
            .multi(true)
            .build()
            .user_data(tag(i, 0, OP_WATCH));
        self.push(&e);
    }

    /// Sends slot `slot`'s `out` from `out_at` on.
    fn send(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        let rest = &s.out[s.out_at..];
        let e = opcode::Send::new(Fd(s.fd), rest.as_ptr(), rest.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build();
        s.sending = true;
        self.start(slot, e, OP_SEND);
    }

    /// Adds readiness `bits` to slot `slot`'s news for the engine.
    fn notify(&mut self, slot: u32, bits: u8) {
        let s = &mut self.slots[slot as usize];
        if s.released {
            return;
        }
        if s.news == 0 {
            self.touched.push(slot);
        }
        s.news |= bits;
    }

    /// One operation of slot `slot` has completed for the last time.
    fn op_done(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        s.ops = s.ops.saturating_sub(1);
        if s.released && s.ops == 0 {
            s.gen = s.gen.wrapping_add(1);
            self.free.push(slot);
        }
    }

    /// Takes every completion, turns them into readiness on `out`.
    fn reap(&mut self, out: &mut Vec<Wake>) {
        loop {
            let next = self.ring.completion().next();
            let Some(cqe) = next else { break };
            self.complete(&cqe);
        }
        for slot in std::mem::take(&mut self.rearm) {
            self.arm_recv(slot);
        }
        let mut touched = std::mem::take(&mut self.touched);
        for &slot in &touched {
            let s = &mut self.slots[slot as usize];
            let bits = std::mem::take(&mut s.news);
            if bits != 0 && !s.released {
                out.push(Wake {
                    token: s.token,
                    readable: bits & READABLE != 0,
                    writable: bits & WRITABLE != 0,
                    closed: bits & CLOSED != 0,
                });
            }
        }
        touched.clear();
        self.touched = touched;
        for token in self.watch_news.drain(..) {
            out.push(Wake {
                token,
                readable: true,
                writable: false,
                closed: false,
            });
        }
    }

    /// What one completion means for its slot.
    fn complete(&mut self, cqe: &cqueue::Entry) {
        let (slot, gen, op) = untag(cqe.user_data());
        let res = cqe.result();
        let flags = cqe.flags();
        if op == OP_WATCH {
            if let Some(&(_, token)) = self.watches.get(slot as usize) {
                if !self.watch_news.contains(&token) {
                    self.watch_news.push(token);
                }
            }
            if !cqueue::more(flags) {
                self.arm_watch(slot);
            }
            return;
        }
        let bid = cqueue::buffer_select(flags);
        let live = self
            .slots
            .get(slot as usize)
            .is_some_and(|s| s.gen == gen && op != OP_IGNORE);
        if !live {
            if let Some(b) = bid {
                self.bufs.recycle(b);
            }
            return;
        }
        match op {
            OP_CONNECT => self.on_connect(slot, res),
            OP_SEND => self.on_send(slot, res),
            OP_RECV => self.on_recv(slot, res, bid, cqueue::more(flags)),
            _ => {}
        }
    }

    fn on_connect(&mut self, slot: u32, res: i32) {
        self.op_done(slot);
        let s = &mut self.slots[slot as usize];
        if s.released {
            return;
        }
        // A connect operation gives 0 or -errno; a poll (an adopted socket) the
        // events, of which an error or hang-up means the connect failed.
        let failed = res < 0 || (res as i16 & (libc::POLLERR | libc::POLLHUP)) != 0 && res > 0;
        if failed {
            s.connect_err = if res < 0 {
                -res
            } else {
                sock::so_error(s.fd).unwrap_or(libc::ECONNREFUSED)
            };
            self.notify(slot, READABLE | WRITABLE | CLOSED);
        } else {
            s.open = true;
            self.arm_recv(slot);
            self.notify(slot, WRITABLE);
        }
    }

    fn on_send(&mut self, slot: u32, res: i32) {
        self.op_done(slot);
        let s = &mut self.slots[slot as usize];
        s.sending = false;
        if s.released {
            return;
        }
        if res < 0 {
            s.send_err = -res;
            s.out.clear();
            s.out_at = 0;
            s.staged.clear();
            self.notify(slot, READABLE | WRITABLE | CLOSED);
            return;
        }
        s.out_at += res as usize;
        if s.out_at < s.out.len() && res > 0 {
            self.send(slot);
            return;
        }
        s.out.clear();
        s.out_at = 0;
        if !s.staged.is_empty() {
            std::mem::swap(&mut s.out, &mut s.staged);
            self.send(slot);
        }
        let s = &mut self.slots[slot as usize];
        if s.blocked {
            s.blocked = false;
            self.notify(slot, WRITABLE);
        }
    }

    fn on_recv(&mut self, slot: u32, res: i32, bid: Option<u16>, more: bool) {
        if !more {
            self.op_done(slot);
            let s = &mut self.slots[slot as usize];
            if s.recv == Recv::Armed {
                s.recv = Recv::Idle;
            }
        }
        let s = &mut self.slots[slot as usize];
        if s.released {
            if let Some(b) = bid {
                self.bufs.recycle(b);
            }
            return;
        }
        match (res, bid) {
            (n, Some(b)) if n > 0 => {
                s.inbox.push_back((b, n as u32));
                if !more {
                    self.rearm.push(slot);
                }
                self.notify(slot, READABLE);
            }
            (0, _) => {
                s.recv = Recv::Ended(0);
                self.notify(slot, READABLE | WRITABLE | CLOSED);
            }
            (n, _) if n == -libc::ENOBUFS => self.rearm.push(slot),
            (n, _) if n < 0 => {
                s.recv = Recv::Ended(-n);
                self.notify(slot, READABLE | WRITABLE | CLOSED);
            }
            _ => {}
        }
    }

    /// Slot `slot`'s socket was dropped: its descriptor is closed at once (so that
    /// the engine's count of descriptors holds, as on epoll), its pending
    /// operations are cancelled by the ring (they hold the socket open until then),
    /// and the slot is freed once its last completion is in.
    fn release(&mut self, slot: u32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        s.released = true;
        s.news = 0;
        s.staged.clear();
        let fd = std::mem::replace(&mut s.fd, -1);
        while let Some((b, _)) = self.slots[slot as usize].inbox.pop_front() {
            self.bufs.recycle(b);
        }
        let s = &self.slots[slot as usize];
        if fd >= 0 {
            if s.ops > 0 && s.queued == self.epoch {
                // Operations not yet submitted name the descriptor by its number:
                // the kernel takes their socket before the number is closed (and
                // perhaps given to the next socket).
                self.epoch += 1;
                let _ = self.ring.submit();
            }
            let s = &self.slots[slot as usize];
            let pending = [
                (!s.open && s.connect_err == 0, OP_CONNECT),
                (s.sending, OP_SEND),
                (s.recv == Recv::Armed, OP_RECV),
            ];
            let (gen, ops) = (s.gen, s.ops);
            let ignore = tag(slot, gen, OP_IGNORE);
            if ops > 0 {
                for (_, op) in pending.iter().filter(|(yes, _)| *yes) {
                    let cancel = opcode::AsyncCancel::new(tag(slot, gen, *op))
                        .build()
                        .flags(squeue::Flags::SKIP_SUCCESS)
                        .user_data(ignore);
                    self.push(&cancel);
                }
            }
            sock::close(fd);
        }
        let s = &mut self.slots[slot as usize];
        if s.ops == 0 {
            s.gen = s.gen.wrapping_add(1);
            self.free.push(slot);
        }
    }
}

impl Drop for Shared {
    /// Cancels what is still pending and waits (briefly) for it, so that the kernel
    /// writes into no buffer that is about to be freed.
    fn drop(&mut self) {
        let all = opcode::AsyncCancel2::new(CancelBuilder::any())
            .build()
            .user_data(tag(0, 0, OP_IGNORE));
        self.push(&all);
        let _ = self.ring.submit();
        for _ in 0..100 {
            let pending = self.slots.iter().any(|s| s.ops > 0);
            if !pending {
                break;
            }
            let ts = Timespec::new().nsec(1_000_000);
            let _ = self
                .ring
                .submitter()
                .submit_with_args(1, &SubmitArgs::new().timespec(&ts));
            while let Some(cqe) = self.ring.completion().next() {
                let (slot, gen, op) = untag(cqe.user_data());
                if op == OP_WATCH || op == OP_IGNORE {
                    continue;
                }
                if let Some(s) = self.slots.get_mut(slot as usize) {
                    if s.gen == gen && (op != OP_RECV || !cqueue::more(cqe.flags())) {
                        s.ops = s.ops.saturating_sub(1);
                    }
                }
            }
        }
    }
}

/// Builds the ring: single issuer with deferred task work (completion work runs
/// when the engine waits, not at interrupts) where the kernel has them (6.1), else
/// a plain ring. (The ring's descriptor is not registered: the crate keeps that
/// registration in a `Submitter` borrowed from the ring, not in the ring.)
fn build() -> io::Result<IoUring> {
    IoUring::builder()
        .setup_cqsize(CQ_ENTRIES)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(SQ_ENTRIES)
        .or_else(|_| {
            IoUring::builder()
                .setup_cqsize(CQ_ENTRIES)
                .build(SQ_ENTRIES)
        })
}
