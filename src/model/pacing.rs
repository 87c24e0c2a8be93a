//! The pacing options: what the engine does when it falls behind its schedule
//! (`--overload=degrade|queue`) and how precisely it keeps it when it does not
//! (`--spin=auto|off|USEC`, `--pin`, `--realtime`), and which I/O backend its
//! engines use (`--io=epoll|uring|auto`).
//!
//! Owns the option values, their parsing and messages, their echo, and which
//! scheduler slice an engine thread asks for (`engine_slice`). Does not pace
//! anything: the engine applies them (`engine::event_loop::catchup`, `engine::event_loop::spread`,
//! `engine::event_loop::spin`, `engine::event_loop::spare`), the runner applies `--pin`, `--realtime` and
//! the slice to the engine threads through `net`'s syscall wrappers. Called by
//! `config` and the runner.

use std::time::Duration;

use crate::wire::frozen::frozen;

/// `--overload`: what an open-loop engine does when it cannot keep its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Overload {
    /// rshperf's default: catch-up is spread over loop turns, connections in flight
    /// are capped while the engine is behind, and connections to a loopback target
    /// come from several loopback source addresses (`engine::catchup`,
    /// `engine::spread`). Every arrival is still started, late, and its lateness is
    /// measured from its scheduled time.
    #[default]
    Degrade,
    /// httperf's behaviour: every overdue arrival is started at once, up to the
    /// connection table, from the one source address the kernel picks.
    Queue,
}

impl Overload {
    /// The option value (`degrade`, `queue`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Overload::Degrade => "degrade",
            Overload::Queue => "queue",
        }
    }
}

/// `--spin`: how the engine waits for the next arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Spin {
    /// Wake early by as much as this machine's recent timer wake-ups were late (their
    /// 99th percentile, or the 95th or 90th when it exceeds the bound: at most
    /// `SPIN_AUTO_MAX`, and at most a quarter of the mean inter-arrival time), then
    /// spin to the arrival.
    #[default]
    Auto,
    /// Sleep until the arrival is due (wake-up delays become lateness).
    Off,
    /// Wake this long before each arrival and spin the rest.
    Fixed(Duration),
}

/// Longest spin `--spin=auto` chooses.
pub(crate) const SPIN_AUTO_MAX: Duration = Duration::from_micros(300);
/// The scheduler slice of an engine thread that keeps a slow schedule
/// (`engine_slice`): shorter than the default slice (0.7–3 ms), so its wake-up
/// preempts a task running on its core, and longer than the longest automatic
/// spin plus a connect, so a spin is not cut short by a task that then runs its
/// whole slice.
pub(crate) const ENGINE_SLICE: Duration = Duration::from_micros(500);
/// The shortest mean time between one engine's arrivals for which it asks for
/// `ENGINE_SLICE` (up to 1,000 arrivals a second per engine thread).
pub(crate) const SLICE_MIN_PERIOD: f64 = 0.001;

/// The scheduler slice an engine thread asks for (`net::set_thread_slice`), given
/// the mean time between its arrivals (`period`, seconds; 0: no schedule):
/// `ENGINE_SLICE` when it keeps a schedule of at most 1,000 arrivals a
/// second with precise pacing on, so that its timer wake-up preempts a task running
/// on its core instead of waiting up to that task's whole slice (milliseconds).
/// None (the kernel's default) with `--spin=off`, under `--realtime` (SCHED_FIFO
/// preempts anyway), in a closed loop, and for a faster schedule: an engine busy
/// most of the time is preempted when its slice ends and then waits for the other
/// task's whole slice, so a short slice would make it later more often (measured
/// at 5,000/s on two busy cores).
pub(crate) fn engine_slice(pacing: &Pacing, period: f64) -> Option<Duration> {
    (period >= SLICE_MIN_PERIOD && pacing.spin != Spin::Off && !pacing.realtime)
        .then_some(ENGINE_SLICE)
}

/// Longest spin `--spin=USEC` accepts (10 ms: beyond that, spinning is busy polling).
pub(crate) const SPIN_MAX: Duration = Duration::from_millis(10);

impl Spin {
    /// The option value as echoed (`auto`, `off`, or microseconds).
    pub(crate) fn name(self) -> String {
        match self {
            Spin::Auto => "auto".into(),
            Spin::Off => "off".into(),
            Spin::Fixed(d) => d.as_micros().to_string(),
        }
    }
}

/// `--io`: the engines' I/O backend (docs/internals.md, "Two backends").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Io {
    /// Readiness: non-blocking sockets in an edge-triggered epoll set (mio).
    #[default]
    Epoll,
    /// Completions: io_uring (connect, send and multishot receive submitted in
    /// batches); refused with a message where the kernel does not allow it.
    Uring,
    /// io_uring where the kernel allows it, else epoll (said once with `-v`).
    Auto,
}

impl Io {
    /// The option value (`epoll`, `uring`, `auto`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Io::Epoll => "epoll",
            Io::Uring => "uring",
            Io::Auto => "auto",
        }
    }
}

/// The environment variable that stands for `--io` when the option is not given
/// (a switch for running a test suite on either backend).
pub(crate) const IO_ENV: &str = "RSHPERF_IO";

/// Parses `--io=epoll|uring|auto`.
pub(crate) fn parse_io(v: &str) -> Result<Io, PacingError> {
    match v {
        "epoll" => Ok(Io::Epoll),
        "uring" | "io_uring" | "io-uring" => Ok(Io::Uring),
        "auto" => Ok(Io::Auto),
        _ => Err(PacingError::Io {
            value: v.to_string(),
        }),
    }
}

/// A pacing option's value that is not one; the text is printed after `rshperf: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PacingError {
    /// `--overload` given something other than a policy.
    #[error("--overload: `{value}' is not a policy (expected degrade or queue)")]
    Overload {
        /// The value as typed.
        value: String,
    },
    /// `--spin` given something other than `auto`, `off` or microseconds in range.
    #[error("--spin: `{value}' is not auto, off or a number of microseconds from 0 to {}", SPIN_MAX.as_micros())]
    Spin {
        /// The value as typed.
        value: String,
    },
    /// `--io` given something other than a backend.
    #[error("--io: `{value}' is not a backend (expected epoll, uring or auto)")]
    Io {
        /// The value as typed.
        value: String,
    },
}

/// Parses `--overload=degrade|queue`.
pub(crate) fn parse_overload(v: &str) -> Result<Overload, PacingError> {
    match v {
        "degrade" => Ok(Overload::Degrade),
        "queue" => Ok(Overload::Queue),
        _ => Err(PacingError::Overload {
            value: v.to_string(),
        }),
    }
}

/// Parses `--spin=auto|off|USEC` (USEC: whole microseconds, 0 = off, at most 10000).
pub(crate) fn parse_spin(v: &str) -> Result<Spin, PacingError> {
    match v {
        "auto" => return Ok(Spin::Auto),
        "off" => return Ok(Spin::Off),
        _ => {}
    }
    let bad = || PacingError::Spin {
        value: v.to_string(),
    };
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let us: u64 = v.parse().map_err(|_| bad())?;
    let d = Duration::from_micros(us);
    if d > SPIN_MAX {
        return Err(bad());
    }
    Ok(if us == 0 { Spin::Off } else { Spin::Fixed(d) })
}

frozen! {
    /// The pacing options of a run.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub(crate) struct Pacing [] {
        /// `--overload`.
        overload: Overload => Overload as copy, set_overload;
        /// `--spin`.
        spin: Spin => Spin as copy, set_spin;
        /// `--pin`: engine thread j runs on one core of its own.
        pin: bool => bool as copy, set_pin;
        /// `--realtime`: engine threads run SCHED_FIFO.
        realtime: bool => bool as copy, set_realtime;
        /// `--io`, else `RSHPERF_IO` (a switch for testing), else epoll: the
        /// engines' I/O backend asked for (`build` resolves it).
        io: Io => Io as copy, set_io;
        /// Whether `--io` was given (the echo line names only what was typed).
        io_given: bool => bool as copy, set_io_given;
    }
}

impl Pacing {
    /// Echo-line items for the options that differ from their defaults, in the
    /// order `--overload`, `--spin`, `--pin`, `--realtime`, `--io`.
    pub(crate) fn echo_items(&self) -> Vec<String> {
        let mut items = Vec::new();
        if self.overload != Overload::default() {
            items.push(format!("--overload={}", self.overload.name()));
        }
        if self.spin != Spin::default() {
            items.push(format!("--spin={}", self.spin.name()));
        }
        if self.pin {
            items.push("--pin".into());
        }
        if self.realtime {
            items.push("--realtime".into());
        }
        if self.io_given {
            items.push(format!("--io={}", self.io.name()));
        }
        items
    }
}

/// The core engine thread `j` of `threads` is pinned to: counted from the last of
/// the `allowed` cores (core 0 usually takes most interrupts), or None when there
/// are more engine threads than allowed cores (pinning would stack them).
pub(crate) fn pin_core(allowed: &[usize], j: u32, threads: u32) -> Option<usize> {
    let (j, threads) = (j as usize, threads.max(1) as usize);
    if threads > allowed.len() || j >= threads {
        return None;
    }
    allowed.get(allowed.len() - 1 - j).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overload_values_and_errors() {
        assert_eq!(parse_overload("degrade"), Ok(Overload::Degrade));
        assert_eq!(parse_overload("queue"), Ok(Overload::Queue));
        assert_eq!(
            parse_overload("drop"),
            Err(PacingError::Overload {
                value: "drop".into()
            })
        );
        assert_eq!(
            parse_overload("drop").map_err(|e| e.to_string()),
            Err("--overload: `drop' is not a policy (expected degrade or queue)".into())
        );
    }

    #[test]
    fn spin_values_and_errors() {
        assert_eq!(parse_spin("auto"), Ok(Spin::Auto));
        assert_eq!(parse_spin("off"), Ok(Spin::Off));
        assert_eq!(parse_spin("0"), Ok(Spin::Off));
        assert_eq!(parse_spin("80"), Ok(Spin::Fixed(Duration::from_micros(80))));
        assert_eq!(
            parse_spin("10000"),
            Ok(Spin::Fixed(Duration::from_millis(10)))
        );
        for bad in ["", "-5", "1.5", "10001", "99999999999999999999999", "fast"] {
            assert_eq!(
                parse_spin(bad).map_err(|e| e.to_string()),
                Err(format!(
                    "--spin: `{bad}' is not auto, off or a number of microseconds from 0 to 10000"
                )),
                "{bad}"
            );
        }
    }

    #[test]
    fn echo_lists_only_what_differs_from_the_defaults() {
        assert!(Pacing::default().echo_items().is_empty());
        // A backend from RSHPERF_IO is not an option typed.
        let from_env = Pacing {
            io: Io::Uring,
            ..Pacing::default()
        };
        assert!(from_env.echo_items().is_empty());
        let p = Pacing {
            overload: Overload::Queue,
            spin: Spin::Fixed(Duration::from_micros(50)),
            pin: true,
            realtime: true,
            io: Io::Uring,
            io_given: true,
        };
        assert_eq!(
            p.echo_items(),
            [
                "--overload=queue",
                "--spin=50",
                "--pin",
                "--realtime",
                "--io=uring"
            ]
        );
        let off = Pacing {
            spin: Spin::Off,
            ..Pacing::default()
        };
        assert_eq!(off.echo_items(), ["--spin=off"]);
    }

    #[test]
    fn a_short_slice_only_for_a_slow_precisely_paced_schedule() {
        let p = Pacing::default();
        assert_eq!(engine_slice(&p, 1.0 / 600.0), Some(ENGINE_SLICE));
        assert_eq!(engine_slice(&p, 0.001), Some(ENGINE_SLICE));
        assert_eq!(engine_slice(&p, 1.0 / 5000.0), None);
        assert_eq!(engine_slice(&p, 0.0), None);
        let off = Pacing {
            spin: Spin::Off,
            ..p
        };
        assert_eq!(engine_slice(&off, 0.01), None);
        let fixed = Pacing {
            spin: Spin::Fixed(Duration::from_micros(50)),
            ..p
        };
        assert_eq!(engine_slice(&fixed, 0.01), Some(ENGINE_SLICE));
        let rt = Pacing {
            realtime: true,
            ..p
        };
        assert_eq!(engine_slice(&rt, 0.01), None);
    }

    #[test]
    fn io_values_and_errors() {
        assert_eq!(parse_io("epoll"), Ok(Io::Epoll));
        assert_eq!(parse_io("uring"), Ok(Io::Uring));
        assert_eq!(parse_io("io_uring"), Ok(Io::Uring));
        assert_eq!(parse_io("auto"), Ok(Io::Auto));
        let e = parse_io("kqueue").expect_err("not a backend");
        assert_eq!(
            e.to_string(),
            "--io: `kqueue' is not a backend (expected epoll, uring or auto)"
        );
        for io in [Io::Epoll, Io::Uring, Io::Auto] {
            assert_eq!(parse_io(io.name()), Ok(io));
        }
    }

    #[test]
    fn pinning_counts_from_the_last_core_and_never_stacks_threads() {
        assert_eq!(pin_core(&[0, 1], 0, 1), Some(1));
        assert_eq!(pin_core(&[0, 1], 0, 2), Some(1));
        assert_eq!(pin_core(&[0, 1], 1, 2), Some(0));
        assert_eq!(pin_core(&[0, 1], 0, 3), None);
        assert_eq!(pin_core(&[2, 5, 7], 1, 2), Some(5));
        assert_eq!(pin_core(&[], 0, 1), None);
    }
}
