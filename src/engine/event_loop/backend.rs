//! The engine's I/O backend: how the loop learns what happened to its connections
//! (readiness from epoll, or completions from io_uring), one seam for both.
//!
//! The connection machines (`conn`), the timer wheel, the pacer and the protocol
//! code never see which backend runs: they read and write a `Stream` as a
//! non-blocking socket and handle `Ready` events. What the loop asks of a backend:
//! start a connect (`connect`), take in a socket it set up (`add`), watch an
//! auxiliary descriptor (the signal pipe, the call-rate tick: `watch`), wake it at
//! a deadline (`set_timer`, `timer_fired`), and wait for the next batch of events
//! (`wait`, `Batch`). With epoll (mio) a connect is the `connect()` system call,
//! sockets are registered edge-triggered, deadlines are a timerfd's and a batch is
//! what `epoll_wait` returns. With io_uring (`wire::uring`) a connect is an
//! operation on the ring, the socket's reads and writes are served by the ring's
//! receive and send operations (`UringSock`), a deadline is the wait's own timeout
//! and a batch is what the completions of one `io_uring_enter` mean, as `Ready`
//! events. HTTP/3 (UDP) always runs on epoll. Also owns the choice of backend for a
//! run (`choose`: what the `Config` asks for, and the io_uring probe). Called by `new`, `run`,
//! `connect` and `pool`; docs/internals.md, "Two backends".

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use socket2::Socket;

use crate::engine::error::StartupError;
use crate::model::config::{Config, HttpVersion};
use crate::model::pacing::Io;
use crate::wire::net::{self, Connect, SetupError, TimerFd};
use crate::wire::stream::Stream;
use crate::wire::uring::{probe, Ring, Wake};

use super::{Ready, TIMER_TOKEN};

/// The backend an engine runs (`--io` resolved by `choose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// epoll through mio.
    Epoll,
    /// io_uring.
    Uring,
}

/// The backend of a run's engines: the one `Config` asks for (`--io`, or
/// `RSHPERF_IO`, resolved by `build`); `uring` is refused where the probe says
/// io_uring cannot be used, `auto` falls back to epoll then (said once with `-v`).
/// HTTP/3 runs on epoll whatever is asked.
pub(crate) fn choose(cfg: &Config) -> Result<Kind, StartupError> {
    choose_with(cfg, &|| probe::decide(&probe::probe()))
}

/// `choose` with the probe given (tests inject it).
pub(crate) fn choose_with(
    cfg: &Config,
    allowed: &dyn Fn() -> Result<(), probe::Refusal>,
) -> Result<Kind, StartupError> {
    let asked = cfg.pacing().io();
    let verbose = cfg.output().verbose() > 0 && cfg.output().json() != Some("-");
    if asked == Io::Epoll {
        return Ok(Kind::Epoll);
    }
    if cfg.request().http_version() == HttpVersion::V3 {
        if verbose {
            crate::wire::note::note!("rshperf: --io {}: HTTP/3 runs on epoll", asked.name());
        }
        return Ok(Kind::Epoll);
    }
    match (allowed(), asked) {
        (Ok(()), _) => Ok(Kind::Uring),
        (Err(r), Io::Uring) => Err(StartupError::IoRefused(r)),
        (Err(r), _) => {
            if verbose {
                crate::wire::note::note!("rshperf: --io auto: using epoll: {r}");
            }
            Ok(Kind::Epoll)
        }
    }
}

/// One engine's backend.
pub(super) enum Backend {
    /// epoll, and the timerfd that wakes it at deadlines.
    Epoll { poll: Poll, timer: TimerFd },
    /// io_uring, and the deadline its next wait ends at.
    Uring {
        ring: Ring,
        deadline: Option<Instant>,
        wakes: Vec<Wake>,
    },
}

/// The events of one wait.
pub(super) enum Batch {
    Epoll(Events),
    Uring(Vec<(Token, Ready)>),
}

/// Iterates a `Batch` as (token, readiness).
pub(super) enum BatchIter<'a> {
    Epoll(mio::event::Iter<'a>),
    Uring(std::slice::Iter<'a, (Token, Ready)>),
}

impl Batch {
    /// The batch's events.
    pub(super) fn iter(&self) -> BatchIter<'_> {
        match self {
            Batch::Epoll(e) => BatchIter::Epoll(e.iter()),
            Batch::Uring(v) => BatchIter::Uring(v.iter()),
        }
    }
}

impl Iterator for BatchIter<'_> {
    type Item = (Token, Ready);

    #[inline]
    fn next(&mut self) -> Option<(Token, Ready)> {
        match self {
            BatchIter::Epoll(it) => it.next().map(|ev| {
                let hup = ev.is_error() || ev.is_read_closed() || ev.is_write_closed();
                let ready = Ready {
                    readable: ev.is_readable() || hup,
                    writable: ev.is_writable() || hup,
                    closed: hup,
                };
                (ev.token(), ready)
            }),
            BatchIter::Uring(it) => it.next().copied(),
        }
    }
}

impl Backend {
    /// A backend of `kind` with its timer.
    pub(super) fn new(kind: Kind) -> io::Result<Backend> {
        Ok(match kind {
            Kind::Epoll => {
                let poll = Poll::new()?;
                let timer = TimerFd::new()?;
                poll.registry().register(
                    &mut SourceFd(&timer.as_raw_fd()),
                    TIMER_TOKEN,
                    Interest::READABLE,
                )?;
                Backend::Epoll { poll, timer }
            }
            Kind::Uring => Backend::Uring {
                ring: Ring::new()?,
                deadline: None,
                wakes: Vec::new(),
            },
        })
    }

    /// An empty batch for `wait`.
    pub(super) fn batch(&self) -> Batch {
        match self {
            Backend::Epoll { .. } => Batch::Epoll(Events::with_capacity(1024)),
            Backend::Uring { .. } => Batch::Uring(Vec::with_capacity(1024)),
        }
    }

    /// Wakes the loop with `token` whenever `fd` becomes readable.
    pub(super) fn watch(&mut self, fd: RawFd, token: Token) -> io::Result<()> {
        match self {
            Backend::Epoll { poll, .. } => {
                poll.registry()
                    .register(&mut SourceFd(&fd), token, Interest::READABLE)
            }
            Backend::Uring { ring, .. } => {
                ring.watch(fd, token.0);
                Ok(())
            }
        }
    }

    /// Starts connecting `socket` (made by `net::prepare_socket`) to `addr` for the
    /// connection of `token`.
    pub(super) fn connect(
        &mut self,
        socket: Socket,
        addr: SocketAddr,
        token: Token,
    ) -> Result<Connect, SetupError> {
        match self {
            Backend::Epoll { .. } => net::connect_prepared(socket, addr),
            Backend::Uring { ring, .. } => Ok(Connect::InProgress(Stream::Uring(
                ring.connect(socket, addr, token.0),
            ))),
        }
    }

    /// Takes in the socket of a connection whose connect has started (`connected`:
    /// it completed at once); the loop hears `token` from now on.
    pub(super) fn add(
        &mut self,
        mut stream: Stream,
        token: Token,
        connected: bool,
    ) -> io::Result<Stream> {
        match self {
            Backend::Epoll { poll, .. } => {
                poll.registry().register(
                    &mut stream,
                    token,
                    Interest::READABLE | Interest::WRITABLE,
                )?;
                Ok(stream)
            }
            Backend::Uring { ring, .. } => {
                let fd = match stream {
                    Stream::Tcp(s) => OwnedFd::from(std::net::TcpStream::from(s)),
                    Stream::Unix(s) => OwnedFd::from(std::os::unix::net::UnixStream::from(s)),
                    other => return Ok(other),
                };
                Ok(Stream::Uring(ring.adopt(fd, token.0, connected)))
            }
        }
    }

    /// Wakes the loop `deadline` (from `now`) with `TIMER_TOKEN`.
    pub(super) fn set_timer(&mut self, now: Instant, deadline: Instant) -> io::Result<()> {
        match self {
            Backend::Epoll { timer, .. } => timer.set(Some(deadline - now)),
            Backend::Uring { deadline: d, .. } => {
                *d = Some(deadline);
                Ok(())
            }
        }
    }

    /// The loop handled `TIMER_TOKEN`.
    pub(super) fn timer_fired(&mut self) {
        match self {
            Backend::Epoll { timer, .. } => timer.drain(),
            Backend::Uring { deadline, .. } => *deadline = None,
        }
    }

    /// Waits for events into `batch`: at most `timeout` (None: until an event or the
    /// timer's deadline).
    pub(super) fn wait(&mut self, batch: &mut Batch, timeout: Option<Duration>) -> io::Result<()> {
        match (self, batch) {
            (Backend::Epoll { poll, .. }, Batch::Epoll(events)) => poll.poll(events, timeout),
            (
                Backend::Uring {
                    ring,
                    deadline,
                    wakes,
                },
                Batch::Uring(events),
            ) => {
                events.clear();
                let wait = match timeout {
                    Some(t) => Some(t),
                    None => deadline.map(|d| d.saturating_duration_since(Instant::now())),
                };
                wakes.clear();
                ring.wait(wait, wakes)?;
                events.extend(wakes.iter().map(|w| {
                    (
                        Token(w.token),
                        Ready {
                            readable: w.readable,
                            writable: w.writable,
                            closed: w.closed,
                        },
                    )
                }));
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    events.push((
                        TIMER_TOKEN,
                        Ready {
                            readable: true,
                            writable: false,
                            closed: false,
                        },
                    ));
                }
                Ok(())
            }
            _ => Err(io::ErrorKind::InvalidInput.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(io: Option<Io>, h3: bool) -> Config {
        Config::local(|b| {
            if let Some(io) = io {
                b.io(io);
            }
            if h3 {
                b.http_version(HttpVersion::V3);
            }
        })
    }

    fn refused() -> Result<(), probe::Refusal> {
        Err(probe::Refusal("not here".into()))
    }

    #[test]
    fn the_configured_backend_and_http3_on_epoll() {
        let ok = || Ok(());
        let k = |c: &Config| choose_with(c, &ok).expect("a backend");
        assert_eq!(k(&cfg(None, false)), Kind::Epoll);
        assert_eq!(k(&cfg(Some(Io::Epoll), false)), Kind::Epoll);
        assert_eq!(k(&cfg(Some(Io::Uring), false)), Kind::Uring);
        assert_eq!(k(&cfg(Some(Io::Auto), false)), Kind::Uring);
        // HTTP/3 runs on epoll whatever is asked.
        assert_eq!(k(&cfg(Some(Io::Uring), true)), Kind::Epoll);
    }

    #[test]
    fn where_io_uring_is_refused_uring_fails_and_auto_falls_back() {
        let e = choose_with(&cfg(Some(Io::Uring), false), &refused).expect_err("refused");
        assert_eq!(e.to_string(), "--io uring: not here");
        let auto = choose_with(&cfg(Some(Io::Auto), false), &refused).expect("falls back");
        assert_eq!(auto, Kind::Epoll);
        // epoll never probes.
        let never = || -> Result<(), probe::Refusal> { panic!("probed") };
        assert_eq!(
            choose_with(&cfg(None, false), &never).expect("epoll"),
            Kind::Epoll
        );
    }
}
