//! Whether io_uring may be used here, and if not, why (`--io uring` refuses with it,
//! `--io auto` falls back to epoll).
//!
//! Owns the probe (the `kernel.io_uring_disabled` sysctl, a real ring, the kernel's
//! supported operations and a provided-buffer ring) and the decision from its
//! findings (`decide`, pure, so that every refusal is tested with injected
//! findings). Called by the engine's backend choice once per run.

use std::io;

use io_uring::{opcode, IoUring, Probe};

/// Where the sysctl lives.
const DISABLED_SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Findings {
    /// `kernel.io_uring_disabled` (None: not readable, as on kernels before 6.6).
    pub(crate) disabled: Option<u8>,
    /// The errno of creating a ring (None: it worked).
    pub(crate) setup_errno: Option<i32>,
    /// Operations the engine needs that the kernel lacks (by name).
    pub(crate) missing: Vec<&'static str>,
    /// The errno of registering a provided-buffer ring (None: it worked).
    pub(crate) buf_ring_errno: Option<i32>,
}

/// Why io_uring cannot be used: printed after `rshperf: --io uring: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub(crate) String);

/// How to check, appended to every refusal.
const CHECK: &str = "check with `sysctl kernel.io_uring_disabled` (0 allows it) and, in a \
                     container, whether its seccomp profile allows io_uring_setup; \
                     or use --io epoll (or --io auto)";

/// The operations the engine submits, with the kernel that brought each.
const NEEDED: [(u8, &str); 6] = [
    (opcode::Connect::CODE, "connect (Linux 5.5)"),
    (opcode::Send::CODE, "send (Linux 5.6)"),
    (opcode::Recv::CODE, "recv (Linux 5.6; multishot 6.0)"),
    (opcode::PollAdd::CODE, "poll (Linux 5.1)"),
    (
        opcode::AsyncCancel::CODE,
        "cancel (Linux 5.5; by descriptor 5.19)",
    ),
    (opcode::Close::CODE, "close (Linux 5.6)"),
];

/// Probes this machine.
pub(crate) fn probe() -> Findings {
    let disabled = std::fs::read_to_string(DISABLED_SYSCTL)
        .ok()
        .and_then(|s| s.trim().parse::<u8>().ok());
    let mut f = Findings {
        disabled,
        setup_errno: None,
        missing: Vec::new(),
        buf_ring_errno: None,
    };
    let ring = match IoUring::new(8) {
        Ok(r) => r,
        Err(e) => {
            f.setup_errno = Some(e.raw_os_error().unwrap_or(libc::EIO));
            return f;
        }
    };
    let mut p = Probe::new();
    if ring.submitter().register_probe(&mut p).is_err() {
        f.missing.push("the operation probe (Linux 5.6)");
        return f;
    }
    f.missing = NEEDED
        .iter()
        .filter(|(code, _)| !p.is_supported(*code))
        .map(|(_, name)| *name)
        .collect();
    if f.missing.is_empty() {
        if let Err(e) = super::bufs::BufRing::new(&ring, 2, 64) {
            f.buf_ring_errno = Some(e.raw_os_error().unwrap_or(libc::EIO));
        }
    }
    f
}

/// Whether io_uring may be used, from what the probe found.
pub(crate) fn decide(f: &Findings) -> Result<(), Refusal> {
    if let Some(errno) = f.setup_errno {
        let why = match (errno, f.disabled) {
            (_, Some(2)) => {
                "io_uring is disabled on this machine (kernel.io_uring_disabled = 2)".to_string()
            }
            (libc::EPERM, Some(1)) => "io_uring is disabled for this user \
                 (kernel.io_uring_disabled = 1 and the user is not in kernel.io_uring_group)"
                .to_string(),
            (libc::ENOSYS, _) => "the kernel has no io_uring, or a seccomp filter blocks \
                 io_uring_setup (ENOSYS)"
                .to_string(),
            (libc::EPERM, _) => "io_uring_setup is not permitted (EPERM: a seccomp filter, \
                 as in a container's default profile, or a security module)"
                .to_string(),
            (e, _) => format!(
                "cannot create an io_uring: {}",
                io::Error::from_raw_os_error(e)
            ),
        };
        return Err(Refusal(format!("{why}; {CHECK}")));
    }
    if !f.missing.is_empty() {
        return Err(Refusal(format!(
            "the kernel lacks io_uring operations rshperf needs: {} (Linux 6.0 or later \
             has them all); or use --io epoll",
            f.missing.join(", ")
        )));
    }
    if let Some(errno) = f.buf_ring_errno {
        return Err(Refusal(format!(
            "the kernel has no provided-buffer rings ({}; Linux 5.19 or later); or use \
             --io epoll",
            io::Error::from_raw_os_error(errno)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(disabled: Option<u8>, setup_errno: Option<i32>) -> Findings {
        Findings {
            disabled,
            setup_errno,
            missing: Vec::new(),
            buf_ring_errno: None,
        }
    }

    #[test]
    fn each_refusal_says_why_and_how_to_check() {
        let text = |f: &Findings| decide(f).expect_err("refused").0;
        let t = text(&found(Some(2), Some(libc::EPERM)));
        assert!(t.starts_with("io_uring is disabled on this machine (kernel.io_uring_disabled = 2); check with `sysctl kernel.io_uring_disabled`"), "{t}");
        let t = text(&found(Some(1), Some(libc::EPERM)));
        assert!(t.contains("disabled for this user"), "{t}");
        let t = text(&found(Some(0), Some(libc::ENOSYS)));
        assert!(
            t.contains("seccomp filter blocks io_uring_setup (ENOSYS)"),
            "{t}"
        );
        let t = text(&found(None, Some(libc::EPERM)));
        assert!(t.contains("not permitted (EPERM"), "{t}");
        assert!(t.ends_with("or use --io epoll (or --io auto)"), "{t}");
        let t = text(&found(Some(0), Some(libc::ENOMEM)));
        assert!(t.starts_with("cannot create an io_uring: "), "{t}");
        let mut f = found(Some(0), None);
        f.missing = vec!["recv (Linux 5.6; multishot 6.0)"];
        assert_eq!(
            text(&f),
            "the kernel lacks io_uring operations rshperf needs: recv (Linux 5.6; multishot \
             6.0) (Linux 6.0 or later has them all); or use --io epoll"
        );
        let mut f = found(Some(0), None);
        f.buf_ring_errno = Some(libc::EINVAL);
        assert!(text(&f).contains("no provided-buffer rings"));
        assert_eq!(decide(&found(Some(0), None)), Ok(()));
        assert_eq!(decide(&found(None, None)), Ok(()));
    }

    #[test]
    fn this_machine_allows_io_uring() {
        // The project's machines run Linux 6.x with io_uring allowed; a machine that
        // does not fails here with the reason.
        let f = probe();
        assert_eq!(decide(&f), Ok(()), "{f:?}");
    }
}
