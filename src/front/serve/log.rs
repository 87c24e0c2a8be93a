//! `rshperf serve --event-log FILE`: when the server wrote each item of each stream, by
//! its own clock, so a client's view of the same streams can be checked against it.
//!
//! Owns the log's format (CSV: `stream,event,us`, one line per item: the stream's
//! number, the event's index or `done` for the `[DONE]` sentinel, and the microseconds
//! from the request's arrival to the moment the item was handed to the connection) and
//! its buffering: each server thread collects lines and appends them to the shared
//! file when a stream ends, when the buffer is large and when the thread stops, so the
//! file is written in whole lines without a lock per event. Does not decide what is
//! written when (`stream.rs`). Made by `server::spawn`.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The first line of the log.
const HEADER: &[u8] = b"stream,event,us\n";
/// Bytes a thread collects before it appends them to the file.
const FLUSH_AT: usize = 64 * 1024;

/// One item of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    /// An event (after the sentinel too), by index.
    Event(u64),
    /// The `[DONE]` sentinel.
    Done,
}

/// Where a thread's lines go.
#[derive(Debug, Clone)]
enum Sink {
    File(Arc<Mutex<File>>),
    /// Tests: kept in the buffer.
    #[cfg(test)]
    Memory,
}

/// One server thread's handle on the log.
#[derive(Debug, Clone)]
pub(crate) struct EventLog {
    sink: Sink,
    buf: Vec<u8>,
    /// A write failed (said once).
    failed: bool,
}

impl EventLog {
    /// Creates (or truncates) the log at `path` and writes its header; the returned log
    /// is cloned for each thread.
    pub(crate) fn create(path: &Path) -> io::Result<EventLog> {
        let mut file = File::create(path)?;
        file.write_all(HEADER)?;
        Ok(EventLog {
            sink: Sink::File(Arc::new(Mutex::new(file))),
            buf: Vec::new(),
            failed: false,
        })
    }

    /// A log that keeps its lines (`memory` returns them).
    #[cfg(test)]
    pub(crate) fn in_memory() -> EventLog {
        EventLog {
            sink: Sink::Memory,
            buf: HEADER.to_vec(),
            failed: false,
        }
    }

    /// The lines of an in-memory log.
    #[cfg(test)]
    pub(crate) fn memory(mut self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned()
    }

    /// Item `item` of stream `stream` was written `after` the request arrived.
    pub(crate) fn record(&mut self, stream: u64, item: Item, after: Duration) {
        let us = after.as_micros();
        let _ = match item {
            Item::Event(i) => writeln!(self.buf, "{stream},{i},{us}"),
            Item::Done => writeln!(self.buf, "{stream},done,{us}"),
        };
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// Appends the collected lines to the file. The log is a diagnostic: a failed write
    /// does not stop the server; the thread says so on stderr, once.
    pub(crate) fn flush(&mut self) {
        match &self.sink {
            Sink::File(file) if !self.buf.is_empty() => {
                let written = match file.lock() {
                    Ok(mut f) => f.write_all(&self.buf),
                    Err(_) => Err(io::Error::other("another thread failed while writing")),
                };
                if let Err(e) = written {
                    if !self.failed {
                        crate::wire::note::note!("rshperf serve: --event-log: lines lost: {e}");
                    }
                    self.failed = true;
                }
                self.buf.clear();
            }
            _ => {}
        }
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.flush();
    }
}
