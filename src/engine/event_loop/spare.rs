//! The next arrival's socket, made ahead of its time.
//!
//! Creating a socket, setting its options and binding it to its source address take
//! 10–20 µs, and more when the machine is busy; done when an arrival falls due,
//! that time would pass between the arrival's scheduled moment and its SYN, where
//! the lateness histogram does not see it. The engine therefore makes the socket of
//! its next scheduled arrival as soon as the previous arrival has started (and
//! again at the end of any turn that finds none made), so that the arrival itself
//! only calls `connect()`. A connection to another address, or a failure to make the
//! socket ahead, takes the ordinary way (`net::prepare_socket`), which reports errors
//! as before. Not with `--hog` (its ports are taken at connect time), unix sockets,
//! the closed loop or the `--call-rate` pool.
//!
//! Part of the engine (`impl Engine`); `connect::start_tcp` takes the socket.

use std::net::{IpAddr, SocketAddr};

use socket2::Socket;

use super::Engine;
use crate::wire::net;

/// A socket made ahead for a connection to `addr` (options applied, source bound).
#[derive(Debug)]
pub(super) struct Spare {
    addr: SocketAddr,
    socket: Socket,
    /// The source address it is bound to (None: the kernel's choice).
    source: Option<IpAddr>,
}

/// The spare socket of one engine.
#[derive(Debug, Default)]
pub(super) struct SpareSlot {
    spare: Option<Spare>,
    /// The engine's arrival count when making one last failed (no retry before the
    /// next arrival: a failing `socket()` is not called every turn).
    failed_at: Option<u64>,
}

impl SpareSlot {
    /// The spare if it was made for `addr` (one for another address is closed).
    fn take(&mut self, addr: SocketAddr) -> Option<(Socket, Option<IpAddr>)> {
        self.spare
            .take()
            .filter(|s| s.addr == addr)
            .map(|s| (s.socket, s.source))
    }
}

impl Engine<'_> {
    /// Makes the socket of the next scheduled arrival if none is ready.
    pub(super) fn prepare_spare(&mut self) {
        if self.spare.spare.is_some()
            || self.spare.failed_at == Some(self.pacer.started())
            || self.pacer.next().is_none()
            || self.stop.is_some()
            || self.closed.is_some()
            || self.pool.is_some()
            || self.cfg.target().unix_socket().is_some()
            || !self.ports.is_empty()
            || self.table.live() >= self.plan.capacity
        {
            return;
        }
        // The next arrival's global number picks its target, as in `open_conn`.
        let next =
            u64::from(self.plan.stripe) + self.pacer.started() * u64::from(self.plan.stripes);
        let targets = &self.work.targets;
        let Some(target) = usize::try_from(next % targets.len().max(1) as u64)
            .ok()
            .and_then(|i| targets.get(i))
        else {
            return;
        };
        let addr = target.addr;
        let (source, _) = self.next_source(addr);
        let local = source.map(|ip| SocketAddr::new(ip, 0));
        match net::prepare_socket(addr, local, &self.opts) {
            Ok(socket) => {
                self.spare.spare = Some(Spare {
                    addr,
                    socket,
                    source,
                })
            }
            Err(_) => self.spare.failed_at = Some(self.pacer.started()),
        }
    }

    /// The socket made ahead for a connection to `addr`, if any, with its source
    /// address.
    pub(super) fn take_spare(&mut self, addr: SocketAddr) -> Option<(Socket, Option<IpAddr>)> {
        self.spare.take(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spare(addr: &str) -> Spare {
        let addr: SocketAddr = addr.parse().expect("an address");
        let socket = net::prepare_socket(
            addr,
            None,
            &net::SocketOptions {
                send_buffer: 0,
                recv_buffer: 0,
                reset_on_close: false,
                nodelay: true,
            },
        )
        .expect("a socket");
        Spare {
            addr,
            socket,
            source: None,
        }
    }

    #[test]
    fn taken_only_for_its_own_address_and_only_once() {
        let a: SocketAddr = "127.0.0.1:8080".parse().expect("an address");
        let b: SocketAddr = "127.0.0.1:8081".parse().expect("an address");
        let mut slot = SpareSlot {
            spare: Some(spare("127.0.0.1:8080")),
            failed_at: None,
        };
        assert!(slot.take(a).is_some());
        assert!(slot.take(a).is_none());
        slot.spare = Some(spare("127.0.0.1:8080"));
        assert!(slot.take(b).is_none());
        assert!(
            slot.spare.is_none(),
            "a spare for another address is dropped"
        );
    }
}
