//! Live Prometheus metrics (`--metrics-listen ADDR:PORT`, `--metrics-linger S`).
//!
//! Owns the per-engine snapshot slots and the tiny HTTP/1.1 responder that serves
//! `GET /metrics` in the Prometheus text exposition format (rendered by
//! `metrics::text`). Engines publish a `Snapshot` of their `Stats` once a second
//! (with the progress tick) and once more when they stop: copying a few counters and
//! the cumulative bucket counts of three histograms (five with `--stream`: its
//! counters and first-event and gap histograms too) into their own slot with
//! `try_lock`, so an engine never waits (a scrape that holds the slot makes it skip
//! one publication) and nothing on the per-event path locks or allocates. The
//! responder runs on a thread of its own, one connection at a time, and adds the
//! engines' snapshots at each scrape. A sweep labels each step (`step="N"`) and keeps
//! serving the final figures of finished steps. Created by the front end (`runner::run`,
//! `sweep`), which keeps it serving for `--metrics-linger` after the run.

pub(crate) mod text;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::engine::error::StartupError;
use crate::model::stats::stream::StreamStats;
use crate::model::stats::{Stats, ERROR_KINDS};

/// Upper bounds of the latency histogram buckets, seconds (then `+Inf`).
pub(crate) const BUCKETS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// One latency histogram as Prometheus wants it: cumulative counts per bucket, the
/// count and the sum (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct HistSnap {
    /// Observations ≤ `BUCKETS[i]`.
    pub(crate) le: [u64; BUCKETS.len()],
    /// All observations (the `+Inf` bucket).
    pub(crate) count: u64,
    /// Sum of the observations, seconds.
    pub(crate) sum: f64,
}

impl HistSnap {
    /// From an HdrHistogram in µs and the exact sum in µs. A bucket counts the values
    /// whose histogram slot is at or below its bound's slot (`count_between(0, bound)`);
    /// each bucket adds the slots above the previous bound, so the counts are scanned
    /// once, not once per bucket (this runs on the engine thread).
    fn from_hist(h: &Histogram<u64>, sum_us: u64) -> HistSnap {
        let mut le = [0; BUCKETS.len()];
        let mut below = 0;
        let mut from = 0;
        for (slot, bound) in le.iter_mut().zip(BUCKETS) {
            let top = (bound * 1e6) as u64;
            below += h.count_between(from, top);
            *slot = below;
            from = h.highest_equivalent(top) + 1;
        }
        HistSnap {
            le,
            count: h.len(),
            sum: sum_us as f64 / 1e6,
        }
    }

    /// From an HdrHistogram in µs with no exact sum kept: the sum is the histogram's
    /// mean × count, rounded to whole µs (3 significant digits; a sum of whole µs,
    /// which truncating 772.9999… would make 1 µs short).
    fn from_mean(h: &Histogram<u64>) -> HistSnap {
        HistSnap::from_hist(h, (h.mean() * h.len() as f64).round() as u64)
    }

    fn add(&mut self, o: &HistSnap) {
        for (a, b) in self.le.iter_mut().zip(o.le) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
    }
}

/// One server's counters (`--servers`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ServerSnap {
    /// Connections that reached the connecting stage.
    pub(crate) connections: u64,
    /// Requests completely written.
    pub(crate) requests: u64,
    /// Replies by status class (index = status / 100).
    pub(crate) replies_by_class: [u64; 10],
    /// Errors by kind.
    pub(crate) errors: [u64; ERROR_KINDS],
}

/// The `--stream` figures (`Stats::stream`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct StreamSnap {
    /// Streams ended (at the run's end, those still open too).
    pub(crate) streams: u64,
    /// Events before any `[DONE]`.
    pub(crate) events: u64,
    /// Streams ended with `[DONE]`.
    pub(crate) done: u64,
    /// Streams cut short.
    pub(crate) cut: u64,
    /// Streams with a gap longer than `--stream-gap-timeout`.
    pub(crate) stalled: u64,
    /// Time to first event.
    pub(crate) first_event: HistSnap,
    /// Gaps between consecutive events.
    pub(crate) gap: HistSnap,
}

impl StreamSnap {
    /// Copies the figures of `s`.
    fn of(s: &StreamStats) -> StreamSnap {
        StreamSnap {
            streams: s.streams,
            events: s.events,
            done: s.done,
            cut: s.cut,
            stalled: s.stalled,
            first_event: HistSnap::from_mean(&s.first_event),
            gap: HistSnap::from_mean(&s.gap),
        }
    }

    fn add(&mut self, o: &StreamSnap) {
        self.streams += o.streams;
        self.events += o.events;
        self.done += o.done;
        self.cut += o.cut;
        self.stalled += o.stalled;
        self.first_event.add(&o.first_event);
        self.gap.add(&o.gap);
    }
}

/// An engine's figures at one moment (or the sum over engines).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    /// Connections that reached the connecting stage.
    pub(crate) connections: u64,
    /// Connections established.
    pub(crate) connects: u64,
    /// Requests completely written, and their bytes.
    pub(crate) requests: u64,
    /// Request bytes written.
    pub(crate) request_bytes: u64,
    /// Replies by status class.
    pub(crate) replies_by_class: [u64; 10],
    /// Reply bytes (header, content, footer).
    pub(crate) reply_bytes: u64,
    /// Errors by kind.
    pub(crate) errors: [u64; ERROR_KINDS],
    /// Sessions completed and failed.
    pub(crate) sessions: [u64; 2],
    /// `--call-rate` calls completed, lost, unsent and abandoned.
    pub(crate) calls: [u64; 4],
    /// Connections open now.
    pub(crate) open: u64,
    /// Replies per second over the last publication interval.
    pub(crate) reply_rate: f64,
    /// Connections per second over the last publication interval.
    pub(crate) conn_rate: f64,
    /// Response time (send start → status line).
    pub(crate) response: HistSnap,
    /// Connect time.
    pub(crate) connect: HistSnap,
    /// Arrival lateness.
    pub(crate) lateness: HistSnap,
    /// Per server (`--servers`), in target order.
    pub(crate) servers: Vec<ServerSnap>,
    /// The stream figures (None: the run has no `--stream`).
    pub(crate) stream: Option<StreamSnap>,
}

impl Snapshot {
    /// Copies the figures of `stats`; `open` connections now.
    fn take(&mut self, stats: &Stats, open: u64) {
        self.connections = stats.connections;
        self.connects = stats.connects;
        self.requests = stats.requests;
        self.request_bytes = stats.request_bytes;
        self.replies_by_class = stats.replies_by_class;
        self.reply_bytes =
            stats.reply_header_bytes + stats.reply_content_bytes + stats.reply_footer_bytes;
        self.errors = stats.errors;
        self.sessions = [stats.sessions_ok, stats.sessions_failed];
        let p = &stats.pool;
        self.calls = [p.completed, p.lost, p.unsent, p.abandoned];
        self.open = open;
        self.response = HistSnap::from_hist(&stats.hist.response, stats.response_sum_us);
        self.connect = HistSnap::from_hist(&stats.hist.connect, stats.connect_sum_us);
        // No exact sum is kept for lateness: the histogram's.
        self.lateness = HistSnap::from_mean(&stats.hist.lateness);
        self.servers
            .resize_with(stats.servers.len(), ServerSnap::default);
        for (s, from) in self.servers.iter_mut().zip(&stats.servers) {
            s.connections = from.connections;
            s.requests = from.requests;
            s.replies_by_class = from.replies_by_class;
            s.errors = from.errors;
        }
        self.stream = stats
            .stream
            .is_used()
            .then(|| StreamSnap::of(&stats.stream));
    }

    /// Adds another engine's snapshot.
    pub(crate) fn add(&mut self, o: &Snapshot) {
        self.connections += o.connections;
        self.connects += o.connects;
        self.requests += o.requests;
        self.request_bytes += o.request_bytes;
        for (a, b) in self.replies_by_class.iter_mut().zip(o.replies_by_class) {
            *a += b;
        }
        self.reply_bytes += o.reply_bytes;
        for (a, b) in self.errors.iter_mut().zip(o.errors) {
            *a += b;
        }
        self.sessions[0] += o.sessions[0];
        self.sessions[1] += o.sessions[1];
        for (a, b) in self.calls.iter_mut().zip(o.calls) {
            *a += b;
        }
        self.open += o.open;
        self.reply_rate += o.reply_rate;
        self.conn_rate += o.conn_rate;
        self.response.add(&o.response);
        self.connect.add(&o.connect);
        self.lateness.add(&o.lateness);
        if self.servers.len() < o.servers.len() {
            self.servers
                .resize_with(o.servers.len(), ServerSnap::default);
        }
        for (a, b) in self.servers.iter_mut().zip(&o.servers) {
            a.connections += b.connections;
            a.requests += b.requests;
            for (x, y) in a.replies_by_class.iter_mut().zip(b.replies_by_class) {
                *x += y;
            }
            for (x, y) in a.errors.iter_mut().zip(b.errors) {
                *x += y;
            }
        }
        if let Some(b) = &o.stream {
            self.stream.get_or_insert_with(StreamSnap::default).add(b);
        }
    }
}

/// One engine's published snapshot.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    snap: Mutex<Snapshot>,
}

/// The engine's side of its slot: what it published last, for the rates.
#[derive(Debug)]
pub(crate) struct Publisher<'s> {
    slot: &'s Slot,
    last: Option<(Instant, u64, u64)>,
    scratch: Snapshot,
}

impl<'s> Publisher<'s> {
    /// A publisher into `slot`.
    pub(crate) fn new(slot: &'s Slot) -> Publisher<'s> {
        Publisher {
            slot,
            last: None,
            scratch: Snapshot::default(),
        }
    }

    /// Publishes `stats` (once a second; `last`: the engine has stopped, so the
    /// publication must not be skipped).
    pub(crate) fn publish(&mut self, stats: &Stats, open: u64, now: Instant, last: bool) {
        let replies = stats.all_replies();
        self.scratch.take(stats, open);
        if let Some((t, r, c)) = self.last {
            let secs = now.saturating_duration_since(t).as_secs_f64();
            if secs > 0.0 {
                self.scratch.reply_rate = replies.saturating_sub(r) as f64 / secs;
                self.scratch.conn_rate = stats.connections.saturating_sub(c) as f64 / secs;
            }
        }
        if last {
            self.scratch.reply_rate = 0.0;
            self.scratch.conn_rate = 0.0;
        }
        self.last = Some((now, replies, stats.connections));
        let guard = if last {
            Some(self.slot.snap.lock().unwrap_or_else(|p| p.into_inner()))
        } else {
            // A scrape is reading the slot: skip this second rather than wait.
            self.slot.snap.try_lock().ok()
        };
        if let Some(mut g) = guard {
            // Swap, not clone: the vectors' capacity is reused next time.
            std::mem::swap(&mut *g, &mut self.scratch);
        }
    }
}

/// What the current run (or sweep step) is, for the labels and gauges.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunLabels {
    /// The sweep step, from 1 (None: not a sweep).
    pub(crate) step: Option<u32>,
    /// The offered arrival rate, per second (None: sequential or closed loop).
    pub(crate) offered_rate: Option<f64>,
    /// Server labels (`--servers`: one per target; empty otherwise).
    pub(crate) servers: Vec<String>,
}

/// What the responder reads.
#[derive(Debug, Default)]
struct State {
    /// The engines of the current run, and its labels.
    run: Mutex<(Vec<Arc<Slot>>, RunLabels)>,
    /// The final sample lines of finished sweep steps.
    finished: Mutex<Vec<text::Sample>>,
    stop: AtomicBool,
}

/// The metrics endpoint of a run or sweep.
#[derive(Debug)]
pub(crate) struct Exporter {
    addr: SocketAddr,
    state: Arc<State>,
    thread: Option<JoinHandle<()>>,
}

/// Longest time the responder waits for a scraper's request.
const READ_TIMEOUT: Duration = Duration::from_secs(2);

impl Exporter {
    /// Binds `addr` and starts the responder thread.
    pub(crate) fn start(addr: SocketAddr) -> Result<Exporter, StartupError> {
        let listener =
            TcpListener::bind(addr).map_err(|source| StartupError::MetricsBind { addr, source })?;
        let addr = listener.local_addr().map_err(StartupError::MetricsAddr)?;
        crate::wire::note::note!("rshperf: serving metrics on http://{addr}/metrics");
        let state = Arc::new(State::default());
        let st = state.clone();
        let thread = std::thread::Builder::new()
            .name("rshperf-metrics".into())
            .spawn(move || serve(&listener, &st))
            .map_err(StartupError::MetricsThread)?;
        Ok(Exporter {
            addr,
            state,
            thread: Some(thread),
        })
    }

    /// A run of `engines` engines starts: returns their slots.
    pub(crate) fn begin_run(&self, engines: usize, labels: RunLabels) -> Vec<Arc<Slot>> {
        let slots: Vec<Arc<Slot>> = (0..engines).map(|_| Arc::default()).collect();
        *lock(&self.state.run) = (slots.clone(), labels);
        slots
    }

    /// The run ended (its engines published their final figures). A sweep step's
    /// figures stay served under their `step` label.
    pub(crate) fn end_run(&self) {
        let run = lock(&self.state.run);
        if run.1.step.is_some() {
            let lines = text::series(&sum(&run.0), &run.1);
            drop(run);
            lock(&self.state.finished).extend(lines);
            *lock(&self.state.run) = (Vec::new(), RunLabels::default());
        }
    }

    /// Keeps serving for `secs` seconds (`--metrics-linger`), or until SIGINT or
    /// SIGTERM, then stops.
    pub(crate) fn linger(self, secs: f64) {
        if let Ok(d) = Duration::try_from_secs_f64(secs) {
            crate::engine::interrupt::sleep(d);
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Release);
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn sum(slots: &[Arc<Slot>]) -> Snapshot {
    let mut total = Snapshot::default();
    for s in slots {
        total.add(&lock(&s.snap));
    }
    total
}

fn render(state: &State) -> String {
    let (slots, labels) = {
        let run = lock(&state.run);
        (run.0.clone(), run.1.clone())
    };
    let mut series = lock(&state.finished).clone();
    if !slots.is_empty() {
        series.extend(text::series(&sum(&slots), &labels));
    }
    text::document(&series)
}

/// The responder loop: one connection at a time, until the exporter is dropped.
fn serve(listener: &TcpListener, state: &State) {
    for conn in listener.incoming() {
        if state.stop.load(Ordering::Acquire) {
            break;
        }
        if let Ok(stream) = conn {
            let _ = answer(stream, state);
        }
    }
}

/// Reads one request head and answers it: `GET /metrics` (or `HEAD`) → the metrics,
/// anything else → 404 or 405. Always closes.
fn answer(mut stream: TcpStream, state: &State) -> io::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    stream.set_write_timeout(Some(READ_TIMEOUT))?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 || head.len() > 16 * 1024 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let mut parts = line.split(|&b| b == b' ');
    let method = parts.next().unwrap_or(&[]);
    let target = parts.next().unwrap_or(&[]);
    let path = target.split(|&b| b == b'?').next().unwrap_or(&[]);
    let (status, body) = match (method, path) {
        (b"GET" | b"HEAD", b"/metrics") => ("200 OK", render(state)),
        (b"GET" | b"HEAD", _) => ("404 Not Found", "not found: try /metrics\n".to_string()),
        _ => ("405 Method Not Allowed", "GET /metrics\n".to_string()),
    };
    let ctype = if status.starts_with("200") {
        text::CONTENT_TYPE
    } else {
        "text/plain; charset=utf-8"
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != b"HEAD" {
        out.extend_from_slice(body.as_bytes());
    }
    stream.write_all(&out)?;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The buckets as `count_between` defines them (sixteen scans).
    fn by_scans(h: &Histogram<u64>) -> [u64; BUCKETS.len()] {
        BUCKETS.map(|bound| h.count_between(0, (bound * 1e6) as u64))
    }

    #[test]
    fn buckets_in_one_pass_equal_the_per_bucket_counts() {
        let mut st = Stats::new();
        // Values at, just under and just over every bound, and beyond the last.
        for bound in BUCKETS {
            let us = (bound * 1e6) as u64;
            for v in [us - 1, us, us + 1, us + us / 100] {
                st.on_response(Duration::from_micros(v));
            }
        }
        st.on_response(Duration::from_secs(30));
        let snap = HistSnap::from_hist(&st.hist.response, 7);
        assert_eq!(snap.le, by_scans(&st.hist.response));
        assert_eq!(snap.le[0], 2);
        assert_eq!(snap.count, 4 * BUCKETS.len() as u64 + 1);
        assert_eq!(
            HistSnap::from_hist(&st.hist.connect, 0),
            HistSnap::default()
        );
    }

    #[test]
    fn a_publication_copies_the_figures_and_its_cost_is_measured() {
        let mut st = Stats::new();
        for i in 0..100_000u64 {
            st.on_connected(Duration::from_micros(100 + i % 5_000));
            st.on_response(Duration::from_micros(200 + i * 37 % 9_000_000));
            st.on_lateness(Duration::from_micros(i % 3_000));
        }
        let slot = Slot::default();
        let mut p = Publisher::new(&slot);
        let t = Instant::now();
        for _ in 0..100 {
            p.publish(&st, 3, Instant::now(), false);
        }
        // (Printed with --nocapture: the cost of one publication on this machine.)
        eprintln!("one metrics publication: {:?}", t.elapsed() / 100);
        p.publish(&st, 3, Instant::now(), true);
        let snap = lock(&slot.snap);
        assert_eq!(snap.open, 3);
        assert_eq!(snap.response.le, by_scans(&st.hist.response));
        assert_eq!(snap.response.count, 100_000);
        assert_eq!(snap.lateness.le, by_scans(&st.hist.lateness));
    }
}
