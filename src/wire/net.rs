//! Sockets and the few raw syscalls rshperf needs, behind small safe wrappers.
//!
//! Owns: creating and configuring a non-blocking client socket (socket2), in one step
//! or ahead of its connect, starting the connect, `--hog`'s own local-port
//! allocation, the descriptor limit (raised soft → hard), process and per-thread CPU
//! time (getrusage), a CLOCK_MONOTONIC timerfd for sub-millisecond deadlines, and the
//! engine threads' cores, scheduling policy (`--pin`, `--realtime`) and scheduler
//! slice. Every `unsafe` block of the crate lives here (and in `nss` and `uring`),
//! each with a SAFETY comment.
//! Called by the engine; knows nothing about HTTP or statistics.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::wire::stream::Stream;

/// Socket options applied to every connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SocketOptions {
    /// SO_SNDBUF, bytes (0: the kernel's default).
    pub(crate) send_buffer: usize,
    /// SO_RCVBUF, bytes (0: the kernel's default).
    pub(crate) recv_buffer: usize,
    /// SO_LINGER {on, 0}: close sends RST (`--close-with-reset`).
    pub(crate) reset_on_close: bool,
    /// TCP_NODELAY. Needless when a connection carries one request written by one
    /// `writev` to a fresh socket (Nagle holds a segment only while earlier data is
    /// unacknowledged): the engine turns it off then, saving a system call.
    pub(crate) nodelay: bool,
}

/// SO_RCVBUF asked for HTTP/3's UDP sockets.
const UDP_RECV_BUFFER: usize = 1 << 21;

/// How a connect attempt started.
#[derive(Debug)]
pub(crate) enum Connect {
    /// Connected at once (possible on loopback; always so for a unix socket).
    Done(Stream),
    /// In progress: wait for writability, then check `SO_ERROR`.
    InProgress(Stream),
}

/// A failure while setting up a connection, with the stage it happened in.
#[derive(Debug)]
pub(crate) enum SetupError {
    /// `socket()` itself failed: no connection object exists (httperf does not count it
    /// as a connection).
    Socket(io::Error),
    /// A later step (options, bind, connect) failed on a created socket.
    Connect(io::Error),
}

/// The first half of a TCP connect: a non-blocking TCP socket for `addr` with
/// `opts` applied, bound to `local` if given, not yet connecting (the engine makes
/// the next arrival's socket ahead of its time: `engine::spare`).
pub(crate) fn prepare_socket(
    addr: SocketAddr,
    local: Option<SocketAddr>,
    opts: &SocketOptions,
) -> Result<Socket, SetupError> {
    let domain = Domain::for_address(addr);
    let socket = Socket::new(domain, Type::STREAM.nonblocking(), Some(Protocol::TCP))
        .map_err(SetupError::Socket)?;
    configure(&socket, opts, local.is_some_and(|l| l.port() != 0)).map_err(SetupError::Connect)?;
    if let Some(local) = local {
        if local.port() == 0 {
            // Not fatal: without it the kernel picks the port at bind time.
            let _ = set_bind_address_no_port(&socket);
        }
        socket
            .bind(&SockAddr::from(local))
            .map_err(SetupError::Connect)?;
    }
    Ok(socket)
}

/// The second half of a TCP connect on epoll: starts connecting a socket made by
/// `prepare_socket` to `addr` (io_uring connects it with an operation instead:
/// `uring::Ring::connect`).
pub(crate) fn connect_prepared(socket: Socket, addr: SocketAddr) -> Result<Connect, SetupError> {
    let done = match socket.connect(&SockAddr::from(addr)) {
        Ok(()) => true,
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => false,
        Err(e) => return Err(SetupError::Connect(e)),
    };
    let stream = Stream::Tcp(mio::net::TcpStream::from_std(std::net::TcpStream::from(
        socket,
    )));
    Ok(if done {
        Connect::Done(stream)
    } else {
        Connect::InProgress(stream)
    })
}

/// Creates a non-blocking UDP socket for `addr` (HTTP/3), bound to `local` if given,
/// and connects it (a connected UDP socket reads only its server's datagrams and
/// reports ICMP errors as `ECONNREFUSED`). Always `Connect::Done`: there is no
/// handshake below QUIC. httperf's small TCP buffer defaults do not apply: the receive
/// buffer is raised (best effort, up to the kernel's `rmem_max`) so that a burst of
/// replies is not dropped before the engine reads it.
pub(crate) fn start_connect_udp(
    addr: SocketAddr,
    local: Option<SocketAddr>,
) -> Result<Connect, SetupError> {
    let domain = Domain::for_address(addr);
    let socket = Socket::new(domain, Type::DGRAM.nonblocking(), Some(Protocol::UDP))
        .map_err(SetupError::Socket)?;
    let _ = socket.set_recv_buffer_size(UDP_RECV_BUFFER);
    if let Some(local) = local {
        socket
            .bind(&SockAddr::from(local))
            .map_err(SetupError::Connect)?;
    }
    socket
        .connect(&SockAddr::from(addr))
        .map_err(SetupError::Connect)?;
    let udp = crate::wire::udp::UdpSock::new(std::net::UdpSocket::from(socket))
        .map_err(SetupError::Connect)?;
    Ok(Connect::Done(Stream::Udp(Box::new(udp))))
}

/// Creates a non-blocking unix domain stream socket, applies the buffer sizes and
/// linger of `opts`, and connects it to `path` (`--unix-socket`). A unix connect
/// completes at once or fails: a missing socket file (ENOENT) is reported as
/// ECONNREFUSED, as nobody listens there; a full listen backlog is EAGAIN, which the
/// caller counts as a failed connection (it never retries in a loop).
pub(crate) fn start_connect_unix(
    path: &std::path::Path,
    opts: &SocketOptions,
) -> Result<Connect, SetupError> {
    let socket =
        Socket::new(Domain::UNIX, Type::STREAM.nonblocking(), None).map_err(SetupError::Socket)?;
    configure_buffers(&socket, opts).map_err(SetupError::Connect)?;
    let addr = SockAddr::unix(path).map_err(SetupError::Connect)?;
    let done = match socket.connect(&addr) {
        Ok(()) => true,
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => false,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            return Err(SetupError::Connect(io::Error::from_raw_os_error(
                libc::ECONNREFUSED,
            )))
        }
        Err(e) => return Err(SetupError::Connect(e)),
    };
    let std_stream = std::os::unix::net::UnixStream::from(OwnedFd::from(socket));
    let stream = Stream::Unix(mio::net::UnixStream::from_std(std_stream));
    Ok(if done {
        Connect::Done(stream)
    } else {
        Connect::InProgress(stream)
    })
}

fn configure(socket: &Socket, opts: &SocketOptions, bound: bool) -> io::Result<()> {
    if opts.nodelay {
        socket.set_tcp_nodelay(true)?;
    }
    configure_buffers(socket, opts)?;
    if bound {
        // Ports of our own choosing may still be in TIME_WAIT from an earlier run.
        socket.set_reuse_address(true)?;
    }
    Ok(())
}

/// The options shared by TCP and unix sockets: buffer sizes and linger.
fn configure_buffers(socket: &Socket, opts: &SocketOptions) -> io::Result<()> {
    // 0 leaves the kernel's default (and its autotuning): ab without -b.
    if opts.send_buffer > 0 {
        socket.set_send_buffer_size(opts.send_buffer)?;
    }
    if opts.recv_buffer > 0 {
        socket.set_recv_buffer_size(opts.recv_buffer)?;
    }
    if opts.reset_on_close {
        socket.set_linger(Some(Duration::ZERO))?;
    }
    Ok(())
}

/// IP_BIND_ADDRESS_NO_PORT: a socket bound to (address, 0) gets its port at connect
/// time, from the 4-tuple space, so one source address is not limited to one
/// ephemeral-port range shared by all destinations (`--myaddr` without `--hog`).
fn set_bind_address_no_port(socket: &Socket) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: `one` is a valid c_int for the duration of the call and its size is
    // passed; the descriptor is owned by `socket`.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Loopback connections that may go out from one source address within a
/// TIME_WAIT period before its ephemeral ports are under pressure: half the
/// kernel's port range (`ip_local_port_range`), less the TIME_WAIT sockets the
/// machine has now (`/proc/net/sockstat`) unless the kernel reuses their ports for
/// loopback connects a second later (`tcp_tw_reuse` 1 or 2, 2 being Linux's
/// default): then earlier runs' TIME_WAIT sockets take no port from this one.
/// Linux's defaults when unreadable.
pub(crate) fn port_pressure_budget() -> u64 {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let range = read("/proc/sys/net/ipv4/ip_local_port_range")
        .and_then(|s| port_range_size(&s))
        .unwrap_or(60999 - 32768 + 1);
    let reuse = read("/proc/sys/net/ipv4/tcp_tw_reuse").is_none_or(|s| s.trim() != "0");
    let tw = if !reuse {
        read("/proc/net/sockstat")
            .and_then(|s| time_wait_count(&s))
            .unwrap_or(0)
    } else {
        0
    };
    (range / 2).saturating_sub(tw)
}

/// Ports of the kernel's ephemeral range (`ip_local_port_range`; 0: unreadable).
pub(crate) fn port_range() -> u64 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| port_range_size(&s))
        .unwrap_or(0)
}

/// `tcp_tw_reuse` (0, 1 or 2; Linux's default 2 when unreadable) and whether TCP
/// timestamps are on (`tcp_timestamps` not 0), which TIME_WAIT reuse needs.
pub(crate) fn time_wait_reuse() -> (u8, bool) {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let reuse = read("/proc/sys/net/ipv4/tcp_tw_reuse")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2);
    let timestamps = read("/proc/sys/net/ipv4/tcp_timestamps").is_none_or(|s| s.trim() != "0");
    (reuse, timestamps)
}

/// The number of ports in `ip_local_port_range`'s text ("32768\t60999").
fn port_range_size(text: &str) -> Option<u64> {
    let mut it = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    let (lo, hi) = (it.next()??, it.next()??);
    hi.checked_sub(lo).map(|d| d + 1)
}

/// The TIME_WAIT count of `/proc/net/sockstat` (the `tw` field of its TCP line).
fn time_wait_count(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("TCP:"))?;
    let mut words = line.split_whitespace();
    words.find(|w| *w == "tw")?;
    words.next()?.parse().ok()
}

/// The errno of an `io::Error` (EIO when it carries none).
pub(crate) fn errno(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// The unspecified local address of the same family as `addr`, with `port`.
pub(crate) fn any_local(addr: SocketAddr, port: u16) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port),
        IpAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port),
    }
}

/// Raises the soft RLIMIT_NOFILE to the hard limit and returns the resulting limit.
pub(crate) fn raise_nofile_limit() -> io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if lim.rlim_cur < lim.rlim_max {
        let want = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: `want` is a valid rlimit read by the call.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } == 0 {
            lim = want;
        }
    }
    Ok(lim.rlim_cur)
}

/// `getrusage(who)`, or None when the call fails.
fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage for the duration of the call, and `who`
    // is RUSAGE_SELF or RUSAGE_THREAD (the callers below), both valid on Linux.
    (unsafe { libc::getrusage(who, &mut ru) } == 0).then_some(ru)
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
        + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
}

/// User and system CPU time of `who` (zero when getrusage fails).
fn user_system(who: libc::c_int) -> (Duration, Duration) {
    rusage(who).map_or((Duration::ZERO, Duration::ZERO), |ru| {
        (timeval(ru.ru_utime), timeval(ru.ru_stime))
    })
}

/// User and system CPU time used by the whole process so far.
#[cfg(test)]
pub(crate) fn cpu_times() -> (Duration, Duration) {
    user_system(libc::RUSAGE_SELF)
}

/// User and system CPU time used by the calling thread so far (RUSAGE_THREAD): an
/// engine's own cost, without the other engines, the progress thread, start-up, or
/// other threads of the process (`demo`'s in-process server, a test harness).
pub fn thread_cpu_times() -> (Duration, Duration) {
    user_system(libc::RUSAGE_THREAD)
}

/// The cores the calling thread may run on (`sched_getaffinity`), in ascending order.
pub(crate) fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: an all-zero cpu_set_t is the empty set, a valid value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0 is the
    // calling thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads the set, for cpu numbers below its capacity.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Restricts the calling thread to `cpus` (`sched_setaffinity`).
pub(crate) fn set_thread_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is the empty set, a valid value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &c in cpus.iter().filter(|&&c| c < max) {
        // SAFETY: `c` is below the set's capacity (checked above).
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling
    // thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Scheduling policy of the calling thread: SCHED_FIFO at the lowest real-time
/// priority (`fifo`), or back to SCHED_OTHER.
pub(crate) fn set_thread_fifo(fifo: bool) -> io::Result<()> {
    let (policy, priority) = if fifo {
        // SAFETY: a plain query with a valid policy constant.
        (libc::SCHED_FIFO, unsafe {
            libc::sched_get_priority_min(libc::SCHED_FIFO)
        })
    } else {
        (libc::SCHED_OTHER, 0)
    };
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param read by the call; pid 0 is the calling
    // thread.
    let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `struct sched_attr` of sched_setattr(2), its first version (48 bytes).
#[repr(C)]
#[derive(Debug, Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
}

/// The scheduler time slice of the calling thread, if it runs SCHED_OTHER: `slice`
/// (the kernel clamps it to 0.1–100 ms), or the kernel's default (None). With the
/// EEVDF scheduler (Linux 6.12 and later) a thread with a shorter slice than the
/// running task preempts it when it wakes, instead of waiting for that task's
/// slice to end; older kernels ignore the value. Needs no privilege: the nice value
/// and the policy are kept. Threads started afterwards inherit it. Ok(false) when
/// the thread is not SCHED_OTHER (left as it is).
pub(crate) fn set_thread_slice(slice: Option<Duration>) -> io::Result<bool> {
    let size = std::mem::size_of::<SchedAttr>();
    let mut attr = sched_getattr()?;
    if attr.policy != libc::SCHED_OTHER as u32 {
        return Ok(false);
    }
    attr.size = size as u32;
    attr.flags = 0;
    attr.runtime = slice.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    // SAFETY: `attr` is a valid sched_attr of the size it states, read by the call;
    // pid 0 is the calling thread; flags must be 0.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(true)
}

/// The calling thread's scheduling attributes.
fn sched_getattr() -> io::Result<SchedAttr> {
    let size = std::mem::size_of::<SchedAttr>();
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is a writable sched_attr of `size` bytes; pid 0 is the calling
    // thread; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            size as libc::c_uint,
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(attr)
}

/// The calling thread's scheduler slice in ns as the kernel reports it (its
/// custom slice, or the default one), for tests.
#[cfg(test)]
pub(crate) fn thread_slice_ns() -> io::Result<u64> {
    Ok(sched_getattr()?.runtime)
}

/// A moment in local time, broken down (`localtime_r`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalTime {
    /// Year, e.g. 2026.
    pub(crate) year: i64,
    /// Month, 0 = January.
    pub(crate) month: usize,
    /// Day of the month, 1–31.
    pub(crate) mday: u32,
    /// Day of the week, 0 = Sunday.
    pub(crate) wday: usize,
    /// Hour, minute and second.
    pub(crate) hms: (u32, u32, u32),
}

/// `secs` after the Unix epoch in the local time zone (TZ), as C's `ctime` shows it.
pub(crate) fn local_time(secs: i64) -> Option<LocalTime> {
    let t: libc::time_t = secs;
    // SAFETY: an all-zero `tm` is a valid value (integers and a null zone pointer).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r is the re-entrant form.
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    let u = |v: libc::c_int| u32::try_from(v).ok();
    ok.then_some(())?;
    Some(LocalTime {
        year: i64::from(tm.tm_year) + 1900,
        month: usize::try_from(tm.tm_mon).ok()?,
        mday: u(tm.tm_mday)?,
        wday: usize::try_from(tm.tm_wday).ok()?,
        hms: (u(tm.tm_hour)?, u(tm.tm_min)?, u(tm.tm_sec)?),
    })
}

/// A non-blocking CLOCK_MONOTONIC timerfd: wakes the poll at sub-millisecond deadlines
/// (mio rounds poll timeouts up to whole milliseconds).
#[derive(Debug)]
pub(crate) struct TimerFd {
    fd: OwnedFd,
}

impl TimerFd {
    /// Creates a disarmed timer.
    pub(crate) fn new() -> io::Result<TimerFd> {
        // SAFETY: plain syscall with constant flags; the result is checked below.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a freshly created descriptor owned by nobody else.
        Ok(TimerFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Arms the timer to expire once, `after` from now (a zero delay fires at once);
    /// None disarms it.
    pub(crate) fn set(&self, after: Option<Duration>) -> io::Result<()> {
        let value = match after {
            // A zero it_value would disarm: use the smallest delay instead.
            Some(d) => libc::timespec {
                tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::from(d.subsec_nanos().max(u32::from(d.is_zero()))),
            },
            None => libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        // SAFETY: `spec` is a valid itimerspec; a null old-value pointer is allowed.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Arms the timer to expire `first` from now, then every `every` (non-zero) until
    /// disarmed: the kernel re-arms it, with no further system call.
    pub(crate) fn set_every(&self, first: Duration, every: Duration) -> io::Result<()> {
        let spec = |d: Duration| libc::timespec {
            tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_nsec: libc::c_long::from(d.subsec_nanos()),
        };
        let spec = libc::itimerspec {
            it_interval: spec(every.max(Duration::from_nanos(1))),
            // A zero it_value would disarm: use the smallest delay instead.
            it_value: spec(first.max(Duration::from_nanos(1))),
        };
        // SAFETY: `spec` is a valid itimerspec; a null old-value pointer is allowed.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Consumes pending expirations so the descriptor stops being readable.
    pub(crate) fn drain(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: `buf` is valid for 8 writable bytes; errors (EAGAIN) are ignored.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    }
}

impl AsRawFd for TimerFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// `--hog`: local ports chosen by rshperf instead of the kernel (1024–65535), handed out
/// in ascending order from a cursor that wraps, released when a connection closes.
#[derive(Debug, Clone)]
pub(crate) struct PortPool {
    used: Vec<u64>,
    cursor: u32,
    free: u32,
}

/// First port `--hog` uses (IPPORT_RESERVED).
const FIRST_PORT: u32 = 1024;
/// Number of ports in the pool.
const PORTS: u32 = 65536 - FIRST_PORT;

impl Default for PortPool {
    fn default() -> Self {
        Self::new()
    }
}

impl PortPool {
    /// All ports free, cursor at 1024.
    pub(crate) fn new() -> PortPool {
        PortPool {
            used: vec![0; (PORTS as usize).div_ceil(64)],
            cursor: 0,
            free: PORTS,
        }
    }

    /// The next free port after the cursor, marked used; None when all are in use.
    /// Never scans more than once around the pool.
    pub(crate) fn take(&mut self) -> Option<u16> {
        if self.free == 0 {
            return None;
        }
        let mut i = self.cursor;
        loop {
            let (w, b) = ((i / 64) as usize, i % 64);
            let word = self.used[w] | ((1u64 << b) - 1);
            if word != u64::MAX {
                let bit = (!word).trailing_zeros();
                let idx = (w as u32) * 64 + bit;
                if idx < PORTS {
                    self.used[w] |= 1 << bit;
                    self.free -= 1;
                    self.cursor = (idx + 1) % PORTS;
                    return u16::try_from(idx + FIRST_PORT).ok();
                }
            }
            i = ((w as u32) + 1) * 64;
            if i >= PORTS {
                i = 0;
            }
        }
    }

    /// Returns a port to the pool.
    pub(crate) fn release(&mut self, port: u16) {
        let Some(idx) = u32::from(port).checked_sub(FIRST_PORT) else {
            return;
        };
        let (w, b) = ((idx / 64) as usize, idx % 64);
        if self.used[w] & (1 << b) != 0 {
            self.used[w] &= !(1 << b);
            self.free += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_ascend_wrap_and_exhaust() {
        let mut p = PortPool::new();
        assert_eq!(p.take(), Some(1024));
        assert_eq!(p.take(), Some(1025));
        p.release(1024);
        // Released ports behind the cursor are reused only after the wrap.
        assert_eq!(p.take(), Some(1026));
        let mut n = 3;
        while p.take().is_some() {
            n += 1;
        }
        // Every port once, plus 1024 again after the wrap.
        assert_eq!(n, PORTS + 1);
        p.release(5000);
        assert_eq!(p.take(), Some(5000));
        assert_eq!(p.take(), None);
    }

    #[test]
    fn port_pressure_reads_the_range_and_time_wait_count() {
        assert_eq!(port_range_size("32768\t60999\n"), Some(28232));
        assert_eq!(port_range_size("40000 40009"), Some(10));
        assert_eq!(port_range_size("5 4"), None);
        assert_eq!(port_range_size("x"), None);
        let sockstat = "sockets: used 63\nTCP: inuse 5 orphan 0 tw 1234 alloc 7 mem 191\n";
        assert_eq!(time_wait_count(sockstat), Some(1234));
        assert_eq!(time_wait_count("TCP: inuse 5\n"), None);
        // This machine's figures give a budget below half the largest range.
        assert!(port_pressure_budget() <= 65536 / 2);
    }

    #[test]
    fn thread_slice_is_set_and_reset_for_this_thread_only() {
        // (Linux 6.12 and later report the slice back: this project's machines.)
        std::thread::spawn(|| {
            let default = thread_slice_ns().expect("getattr");
            assert_ne!(default, 200_000);
            assert!(set_thread_slice(Some(Duration::from_micros(200))).expect("setattr"));
            assert_eq!(thread_slice_ns().expect("getattr"), 200_000);
            // A thread it starts inherits it (the runner sets it in each engine
            // thread, after the clock thread is started).
            let other = std::thread::spawn(|| thread_slice_ns().expect("getattr"));
            assert_eq!(other.join().expect("thread"), 200_000);
            assert!(set_thread_slice(None).expect("setattr"));
            assert_eq!(thread_slice_ns().expect("getattr"), default);
        })
        .join()
        .expect("thread");
    }

    #[test]
    fn nofile_limit_is_raised_to_hard() {
        let got = raise_nofile_limit().expect("getrlimit works");
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: valid out-pointer for the call.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        assert_eq!(got, lim.rlim_cur);
        assert_eq!(lim.rlim_cur, lim.rlim_max);
    }

    #[test]
    fn local_time_advances_by_whole_days() {
        // Whatever the zone: a day later is the next weekday at the same time of day.
        let t = 1_796_099_083;
        let (a, b) = (local_time(t), local_time(t + 86_400));
        let (a, b) = (a.expect("localtime"), b.expect("localtime"));
        assert_eq!(b.wday, (a.wday + 1) % 7);
        assert_eq!(a.hms, b.hms);
        assert!(a.month < 12 && (1..=31).contains(&a.mday) && a.year >= 2026);
    }

    #[test]
    fn timerfd_fires_after_a_short_delay() {
        let t = TimerFd::new().expect("timerfd");
        t.set(Some(Duration::from_micros(200))).expect("arm");
        assert_eq!(poll_in(&t), 1);
        t.drain();
    }

    /// Waits up to 1 s for `t` to become readable; poll's result.
    fn poll_in(t: &TimerFd) -> i32 {
        let mut pfd = libc::pollfd {
            fd: t.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, 1000) }
    }

    #[test]
    fn a_periodic_timerfd_fires_again_once_read() {
        // Every 200 µs from 200 µs on: after each read it expires again.
        let t = TimerFd::new().expect("timerfd");
        t.set_every(Duration::from_micros(200), Duration::from_micros(200))
            .expect("arm");
        for _ in 0..2 {
            assert_eq!(poll_in(&t), 1);
            let mut buf = [0u8; 8];
            // SAFETY: `buf` is valid for 8 writable bytes.
            let got = unsafe { libc::read(t.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
            assert_eq!(got, 8);
            assert!(u64::from_ne_bytes(buf) >= 1);
        }
        t.set(None).expect("disarm");
    }

    #[test]
    fn thread_cpu_counts_this_thread_only() {
        // Another thread burns 200 ms of its own CPU time while this one waits for it;
        // the process is charged for it, this thread is not.
        let (user0, sys0) = thread_cpu_times();
        let (pu0, ps0) = cpu_times();
        let spun = std::thread::spawn(|| {
            let (u0, s0) = thread_cpu_times();
            let mut x = 0u64;
            loop {
                for _ in 0..100_000 {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
                let (u, s) = thread_cpu_times();
                let used = (u + s).saturating_sub(u0 + s0);
                if used >= Duration::from_millis(200) {
                    return used;
                }
            }
        })
        .join()
        .expect("spinner");
        let (user1, sys1) = thread_cpu_times();
        let (pu1, ps1) = cpu_times();
        let mine = (user1 + sys1).saturating_sub(user0 + sys0);
        let process = (pu1 + ps1).saturating_sub(pu0 + ps0);
        // (rusage scales user/system per thread and per process: allow rounding.)
        assert!(
            process + Duration::from_millis(5) >= spun,
            "process {process:?}, spinner {spun:?}"
        );
        assert!(mine < Duration::from_millis(20), "this thread {mine:?}");
    }
}
