//! ab's per-request output while the run goes on: the `-g` gnuplot file (a row per
//! request, streamed, never held in memory) and `-v` lines about replies; plus the
//! clock texts ab and lb print (`apr_ctime` and C's `ctime`).
//!
//! Owns `Gnuplot` (the file: header at creation, then buffered rows) and `Watcher`, the
//! engine's per-call observer that feeds it. Rows come in completion order (ab sorts
//! them by total time before writing). Write errors are kept for the front end, which
//! reports the first after the run. Called by `ab::run`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::wall_secs;
use crate::engine::event_loop::CallObserver;
use crate::model::stats::ab::{round_ms, CallTimes};
use crate::wire::net::{local_time, LocalTime};

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Writes a local time as `Tue Dec 01 04:24:43 2026` (`apr_ctime`, day zero-padded) or,
/// with `space_padded`, `Tue Dec  1 04:24:43 2026` (C's `ctime`).
fn write_time<W: Write>(out: &mut W, t: &LocalTime, space_padded: bool) -> io::Result<()> {
    let (h, m, s) = t.hms;
    let day = DAYS.get(t.wday).copied().unwrap_or("???");
    let month = MONTHS.get(t.month).copied().unwrap_or("???");
    if space_padded {
        write!(
            out,
            "{day} {month} {:2} {h:02}:{m:02}:{s:02} {}",
            t.mday, t.year
        )
    } else {
        write!(
            out,
            "{day} {month} {:02} {h:02}:{m:02}:{s:02} {}",
            t.mday, t.year
        )
    }
}

/// C's `ctime` of `at` without the newline (lb's started/stopped lines).
pub(crate) fn ctime(at: SystemTime) -> String {
    let secs = at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut out = Vec::new();
    if let Some(t) = local_time(secs) {
        let _ = write_time(&mut out, &t, true);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `-g` file.
pub(crate) struct Gnuplot {
    out: BufWriter<File>,
    /// The last second formatted, and its text (rows of one second share it).
    last: Option<(i64, Vec<u8>)>,
    /// One moment in both clocks, to turn instants into wall-clock seconds.
    base: (Instant, SystemTime),
}

impl Gnuplot {
    /// Creates (truncates) `path` and writes ab's header row.
    pub(crate) fn create(path: &str) -> io::Result<Gnuplot> {
        let mut out = BufWriter::with_capacity(64 * 1024, File::create(path)?);
        out.write_all(b"starttime\tseconds\tctime\tdtime\tttime\twait\n")?;
        Ok(Gnuplot {
            out,
            last: None,
            base: (Instant::now(), SystemTime::now()),
        })
    }

    /// One row: start (local time and epoch seconds), then connect, processing, total
    /// and waiting time in rounded ms.
    fn row(&mut self, start: Instant, t: &CallTimes) -> io::Result<()> {
        let secs = wall_secs(start, self.base);
        if !matches!(&self.last, Some((s, _)) if *s == secs) {
            let mut text = Vec::with_capacity(24);
            if let Some(lt) = local_time(secs) {
                write_time(&mut text, &lt, false)?;
            }
            self.last = Some((secs, text));
        }
        if let Some((_, text)) = &self.last {
            self.out.write_all(text)?;
        }
        writeln!(
            self.out,
            "\t{secs}\t{}\t{}\t{}\t{}",
            round_ms(t.connect_us),
            round_ms(t.total_us.saturating_sub(t.connect_us)),
            round_ms(t.total_us),
            round_ms(t.wait_us)
        )
    }
}

/// The engine's observer of an ab run: `-g` rows and `-v` reply lines.
pub(crate) struct Watcher {
    gnuplot: Option<Gnuplot>,
    verbosity: u32,
    /// The first write error, for the front end.
    error: Arc<Mutex<Option<io::Error>>>,
}

impl Watcher {
    /// An observer writing to `gnuplot` (if any), printing `-v` lines at `verbosity`,
    /// and keeping its first write error in `error`.
    pub(crate) fn new(
        gnuplot: Option<Gnuplot>,
        verbosity: u32,
        error: Arc<Mutex<Option<io::Error>>>,
    ) -> Watcher {
        Watcher {
            gnuplot,
            verbosity,
            error,
        }
    }

    fn keep(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            // One error is enough: stop writing the file.
            self.gnuplot = None;
            if let Ok(mut slot) = self.error.lock() {
                slot.get_or_insert(e);
            }
        }
    }
}

impl CallObserver for Watcher {
    fn completed(&mut self, _target: usize, start: Instant, times: &CallTimes, status: u16) {
        if self.verbosity >= 2 && status / 100 != 2 {
            crate::wire::note::say!("WARNING: Response code not 2xx ({status})");
        } else if self.verbosity >= 3 {
            crate::wire::note::say!("LOG: Response code = {status}");
        }
        if let Some(g) = self.gnuplot.as_mut() {
            let r = g.row(start, times);
            self.keep(r);
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(mut g) = self.gnuplot.take() {
            let r = g.out.flush();
            self.keep(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_clock_spellings() {
        let t = LocalTime {
            year: 2026,
            month: 11,
            mday: 1,
            wday: 2,
            hms: (4, 24, 43),
        };
        let mut a = Vec::new();
        write_time(&mut a, &t, false).expect("write");
        assert_eq!(a, b"Tue Dec 01 04:24:43 2026");
        let mut c = Vec::new();
        write_time(&mut c, &t, true).expect("write");
        assert_eq!(c, b"Tue Dec  1 04:24:43 2026");
    }

    #[test]
    fn gnuplot_rows_are_streamed_with_abs_columns() {
        let path = std::env::temp_dir().join(format!("rshperf-gnuplot-{}", std::process::id()));
        let name = path.to_string_lossy().into_owned();
        let error = Arc::new(Mutex::new(None));
        let mut w = Watcher::new(
            Some(Gnuplot::create(&name).expect("create")),
            0,
            error.clone(),
        );
        let now = Instant::now();
        for (c, t, wait) in [(400, 2_600, 1_499), (0, 500, 300)] {
            w.completed(
                0,
                now,
                &CallTimes {
                    connect_us: c,
                    total_us: t,
                    wait_us: wait,
                },
                200,
            );
        }
        drop(w);
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::remove_file(&path).expect("cleanup");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "starttime\tseconds\tctime\tdtime\tttime\twait");
        let cols: Vec<&str> = lines[1].split('\t').collect();
        assert_eq!(cols.len(), 6);
        assert_eq!(cols[0].len(), "Tue Dec 01 04:24:43 2026".len());
        let secs: i64 = cols[1].parse().expect("seconds");
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64;
        assert!((wall - secs).abs() <= 2, "{secs} vs {wall}");
        assert_eq!(&cols[2..], ["0", "2", "3", "1"]);
        assert!(lines[2].ends_with("\t0\t1\t1\t0"), "{}", lines[2]);
        assert!(error.lock().expect("lock").is_none());
    }
}
