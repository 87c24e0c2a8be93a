//! `--io epoll|uring|auto`: both backends count the same against a test server, and
//! where io_uring is not allowed (a seccomp filter in the child makes
//! io_uring_setup fail with EPERM, as a container's default profile does) `--io
//! uring` exits 1 saying why and how to check, while `--io auto` runs on epoll and
//! says so with `-v`. The whole suite runs on io_uring too with `RSHPERF_IO=uring`
//! (`.ci/run`'s second pass).

use std::process::{Command, Output};

use crate::support::server::{Behavior, Server};
use crate::support::{bin, run, run_ok};

#[test]
fn both_backends_count_every_connection_and_call() {
    let srv = Server::start(Behavior::Fixed(1024));
    for io in ["epoll", "uring"] {
        let before = (srv.connections(), srv.requests());
        let r = run_ok(
            srv.port(),
            &[
                "--io",
                io,
                "--rate",
                "400",
                "--num-conns",
                "60",
                "--num-calls",
                "3",
                "--timeout",
                "5",
            ],
        );
        assert_eq!(r.totals(), (60, 180, 180), "--io {io}\n{}", r.text);
        assert_eq!(r.status(), [0, 180, 0, 0, 0], "--io {io}");
        assert_eq!(r.error("total"), 0, "--io {io}");
        assert_eq!(
            (srv.connections() - before.0, srv.requests() - before.1),
            (60, 180),
            "--io {io}: what the server saw"
        );
        assert!(r.text.contains(&format!(" --io={io}")), "echo: {}", r.text);
    }
}

#[test]
fn a_bad_backend_name_is_refused_with_the_names_that_exist() {
    let out = run(&["--server", "127.0.0.1", "--io", "kqueue"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rshperf: --io: `kqueue' is not a backend (expected epoll, uring or auto)"),
        "{err}"
    );
    let out = bin()
        .env("RSHPERF_IO", "kqueue")
        .args(["--server", "127.0.0.1", "--num-conns", "1"])
        .output()
        .expect("run rshperf");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rshperf: RSHPERF_IO: `kqueue' is not a backend"),
        "{err}"
    );
}

/// Runs rshperf with `args` in a child whose seccomp filter makes io_uring_setup
/// fail with EPERM.
#[cfg(target_arch = "x86_64")]
fn run_without_io_uring(args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd: Command = bin();
    cmd.env_remove("RSHPERF_IO").args(args);
    // SAFETY: the closure runs in the forked child before exec and only makes two
    // prctl calls on memory it owns (no allocation, no locks).
    unsafe {
        cmd.pre_exec(seccomp::deny_io_uring_setup);
    }
    cmd.output().expect("run rshperf")
}

#[cfg(target_arch = "x86_64")]
mod seccomp {
    /// AUDIT_ARCH_X86_64.
    const ARCH: u32 = 0xc000_003e;
    /// io_uring_setup on x86_64.
    const NR_IO_URING_SETUP: u32 = 425;
    const RET_ALLOW: u32 = 0x7fff_0000;
    const RET_ERRNO: u32 = 0x0005_0000;

    fn stmt(code: u16, k: u32) -> libc::sock_filter {
        libc::sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        }
    }

    fn jump(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt,
            jf,
            k,
        }
    }

    /// Installs a filter on the calling process: io_uring_setup fails with EPERM,
    /// every other system call is allowed.
    pub fn deny_io_uring_setup() -> std::io::Result<()> {
        let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
        let ret = (libc::BPF_RET | libc::BPF_K) as u16;
        let mut prog = [
            // seccomp_data: nr at offset 0, arch at offset 4.
            stmt(ld, 4),
            jump(ARCH, 0, 3),
            stmt(ld, 0),
            jump(NR_IO_URING_SETUP, 0, 1),
            stmt(ret, RET_ERRNO | libc::EPERM as u32),
            stmt(ret, RET_ALLOW),
        ];
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_mut_ptr(),
        };
        // SAFETY: plain prctl calls; `fprog` points at `prog`, alive for the call.
        let rc = unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                -1
            } else {
                libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER,
                    &fprog as *const libc::sock_fprog,
                )
            }
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn where_io_uring_is_not_allowed_uring_is_refused_and_auto_falls_back() {
    let srv = Server::start(Behavior::Fixed(64));
    let port = srv.port().to_string();
    let base = ["--server", "127.0.0.1", "--port", &port, "--num-conns", "5"];
    let mut args = base.to_vec();
    args.extend(["--io", "uring"]);
    let out = run_without_io_uring(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "rshperf: --io uring: io_uring_setup is not permitted (EPERM: a seccomp filter"
        ),
        "{err}"
    );
    assert!(err.contains("sysctl kernel.io_uring_disabled"), "{err}");
    assert!(err.contains("--io epoll"), "{err}");
    assert_eq!(srv.connections(), 0, "nothing is sent when refused");
    // auto: epoll, said once with -v; the run is complete.
    let mut args = base.to_vec();
    args.extend(["--io", "auto", "-v"]);
    let out = run_without_io_uring(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err.matches("rshperf: --io auto: using epoll: io_uring_setup is not permitted")
            .count(),
        1,
        "{err}"
    );
    assert!(
        text.contains("Total: connections 5 requests 5 replies 5"),
        "{text}"
    );
    assert_eq!(srv.connections(), 5);
    // Without -v nothing is said.
    let mut args = base.to_vec();
    args.extend(["--io", "auto"]);
    let out = run_without_io_uring(&args);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--io auto"));
    assert_eq!(srv.connections(), 10);
}
