//! Report files that survive: `probe` checks before a run that a path can be written,
//! `write_atomic` replaces a file only once its new content is complete on disk, and
//! `abandon` stops the files being written when a second signal forces the process
//! out (`engine::interrupt`).
//!
//! A file is written under a temporary name beside the target (created with
//! `O_EXCL`), synced and renamed over the target, so a failure (a full disk, a
//! vanished directory) leaves the previous file as it was and no partial one. A target
//! that exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is
//! written in place: it cannot be replaced. Symbolic links are followed, so the link
//! stays and the file it names is replaced. Every write in progress is listed
//! (`Writing`): `abandon` removes the temporary files, refuses new ones and returns
//! what it stopped, so a forced exit leaves complete files only. Hand-written on `std`
//! (the `tempfile` crate would add a dependency for two calls and keeps no such list).
//! Used by every front end that writes a file (`runner`, `merge`, `sweep`) and by the
//! writers in this layer.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::error::OutputError;

/// Makes temporary names unique within the process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The writes in progress, for `abandon`.
struct Writing(Mutex<Writes>);

/// What `Writing` guards.
struct Writes {
    /// `abandon` ran: no new write starts.
    closed: bool,
    /// Each write in progress: its number, the file it writes and its temporary file
    /// (None: written in place).
    files: Vec<(u64, PathBuf, Option<PathBuf>)>,
}

/// The process's writes.
static WRITING: Writing = Writing::new();

impl Writing {
    /// No write in progress.
    const fn new() -> Writing {
        Writing(Mutex::new(Writes {
            closed: false,
            files: Vec::new(),
        }))
    }

    fn lock(&self) -> MutexGuard<'_, Writes> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lists a write of `target`; fails once abandoned. `open` makes its temporary file
    /// (None: written in place) under the lock, so none exists unlisted.
    fn begin<T>(
        &self,
        target: &Path,
        open: impl FnOnce() -> io::Result<(Option<PathBuf>, T)>,
    ) -> io::Result<(u64, T)> {
        let mut w = self.lock();
        if w.closed {
            return Err(io::Error::other("the process is exiting"));
        }
        let (tmp, made) = open()?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        w.files.push((id, target.to_path_buf(), tmp));
        Ok((id, made))
    }

    /// Ends write `id`: runs `last` (the rename) under the lock unless `abandon` stopped
    /// it first, then unlists it.
    fn end(&self, id: u64, last: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let mut w = self.lock();
        let Some(i) = w.files.iter().position(|f| f.0 == id) else {
            return Err(io::Error::other("abandoned: the process is exiting"));
        };
        w.files.swap_remove(i);
        last()
    }

    /// `write_atomic`, listed here while it lasts.
    fn write_atomic(
        &self,
        path: &Path,
        fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let (target, special) = resolve(path);
        if special {
            // Listed before the open, which waits for a FIFO's reader.
            let (id, ()) = self.begin(&target, || Ok((None, ())))?;
            let done = (|| {
                let mut out = BufWriter::new(OpenOptions::new().write(true).open(&target)?);
                fill(&mut out)?;
                out.flush()
            })();
            return self.end(id, || done);
        }
        let (id, (tmp, file)) = self.begin(&target, || {
            create_beside(&target).map(|(tmp, file)| (Some(tmp.clone()), (tmp, file)))
        })?;
        let done = (|| {
            let mut out = BufWriter::new(file);
            fill(&mut out)?;
            let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
            file.sync_all()?;
            self.end(id, || fs::rename(&tmp, &target))
        })();
        if done.is_err() {
            let _ = self.end(id, || Ok(()));
            let _ = fs::remove_file(&tmp);
        }
        done
    }

    /// Stops every write in progress: removes their temporary files and refuses new
    /// writes; returns each file stopped, with whether it was written in place (and so
    /// is incomplete) rather than left as it was.
    fn abandon(&self) -> Vec<(PathBuf, bool)> {
        let mut w = self.lock();
        w.closed = true;
        let mut stopped: Vec<(PathBuf, bool)> = Vec::new();
        for (_, target, tmp) in w.files.drain(..) {
            if let Some(tmp) = &tmp {
                let _ = fs::remove_file(tmp);
            }
            stopped.push((target, tmp.is_none()));
        }
        stopped
    }
}

/// A forced exit's clean-up (`engine::interrupt`): stops the process's writes in
/// progress (`Writing::abandon`).
pub(crate) fn abandon() -> Vec<(PathBuf, bool)> {
    WRITING.abandon()
}

/// Where to write for `path`: the file a link names when `path` is a link (so the
/// link is kept), else `path`; and whether it is an existing non-regular file.
fn resolve(path: &Path) -> (PathBuf, bool) {
    match fs::metadata(path) {
        Ok(m) if !m.is_file() => (path.to_path_buf(), true),
        Ok(_) => (
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            false,
        ),
        // A dangling link: write the file it names.
        Err(_) => match fs::read_link(path) {
            Ok(to) => (path.parent().unwrap_or(Path::new("")).join(to), false),
            Err(_) => (path.to_path_buf(), false),
        },
    }
}

/// A fresh file beside `target`, created exclusively.
fn create_beside(target: &Path) -> io::Result<(PathBuf, File)> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?
        .to_string_lossy();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Checks that `path` can be written: creates a file beside it and removes it (or,
/// for an existing non-regular file, opens it for writing without blocking).
pub(crate) fn probe(path: &Path) -> io::Result<()> {
    let (target, special) = resolve(path);
    if special {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: a FIFO without a reader must not hang the check.
        return match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&target)
        {
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(()),
            r => r.map(drop),
        };
    }
    if fs::metadata(&target).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let (id, tmp) = WRITING.begin(&target, || {
        create_beside(&target).map(|(tmp, _)| (Some(tmp.clone()), tmp))
    })?;
    WRITING.end(id, || fs::remove_file(&tmp))
}

/// Probes every `(option, path)` whose path is set and not `-` (stdout), in order;
/// the first that cannot be written is the error.
pub(crate) fn probe_all(outputs: &[(&'static str, Option<&str>)]) -> Result<(), OutputError> {
    for &(option, path) in outputs {
        if let Some(p) = path.filter(|p| *p != "-") {
            probe(Path::new(p)).map_err(|source| OutputError::File {
                option,
                path: p.to_string(),
                source,
            })?;
        }
    }
    Ok(())
}

/// Writes `path` with what `fill` writes: to a temporary file beside it, synced, then
/// renamed over it. On failure the temporary file is removed and `path` is untouched.
pub(crate) fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    WRITING.write_atomic(path, fill)
}

/// A file written as a run goes (`--request-log`) and replaced atomically at the end:
/// the bytes go to a temporary file beside the target (listed, like every write in
/// progress, for `abandon`), and `commit` syncs it and renames it over the target.
/// Dropped without `commit`, the temporary file is removed and the target is as it
/// was. A special target (`/dev/stdout`, a FIFO) is written in place.
pub(crate) struct Streaming {
    id: u64,
    tmp: Option<PathBuf>,
    target: PathBuf,
    out: Option<BufWriter<File>>,
}

impl Streaming {
    /// Starts writing `path`.
    pub(crate) fn create(path: &Path) -> io::Result<Streaming> {
        let (target, special) = resolve(path);
        let (id, (tmp, file)) = if special {
            // Listed before the open, which waits for a FIFO's reader.
            let (id, ()) = WRITING.begin(&target, || Ok((None, ())))?;
            match OpenOptions::new().write(true).open(&target) {
                Ok(f) => (id, (None, f)),
                Err(e) => {
                    let _ = WRITING.end(id, || Ok(()));
                    return Err(e);
                }
            }
        } else {
            WRITING.begin(&target, || {
                create_beside(&target).map(|(tmp, f)| (Some(tmp.clone()), (Some(tmp), f)))
            })?
        };
        Ok(Streaming {
            id,
            tmp,
            target,
            out: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    /// Flushes, syncs and renames the file over its target.
    pub(crate) fn commit(mut self) -> io::Result<()> {
        let out = self
            .out
            .take()
            .ok_or_else(|| io::Error::other("committed"))?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        let tmp = self.tmp.take();
        if let Some(tmp) = &tmp {
            file.sync_all()?;
            let target = self.target.clone();
            let tmp2 = tmp.clone();
            let done = WRITING.end(self.id, || fs::rename(&tmp2, &target));
            if done.is_err() {
                let _ = fs::remove_file(tmp);
            }
            return done;
        }
        WRITING.end(self.id, || Ok(()))
    }
}

impl Write for Streaming {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.out.as_mut() {
            Some(out) => out.write(buf),
            None => Err(io::Error::other("committed")),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self.out.as_mut() {
            Some(out) => out.write_all(buf),
            None => Err(io::Error::other("committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = WRITING.end(self.id, || Ok(()));
            if let Some(tmp) = self.tmp.take() {
                let _ = fs::remove_file(tmp);
            }
        }
    }
}

/// Writes `bytes` to `path` atomically (`write_atomic`).
pub(crate) fn write_bytes(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic(path, |out| out.write_all(bytes))
}

/// Appends `bytes` to `path` atomically: the old content and the new bytes go to a
/// temporary file that replaces `path`, so a failure leaves `path` as it was. `head`
/// is written first when `path` is missing or empty.
pub(crate) fn append_atomic(path: &Path, head: &[u8], bytes: &[u8]) -> io::Result<()> {
    let old = match fs::read(resolve(path).0) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    write_atomic(path, |out| {
        if old.is_empty() {
            out.write_all(head)?;
        }
        out.write_all(&old)?;
        out.write_all(bytes)
    })
}

/// Whether a failed write to stdout is a closed pipe (`| head`), which ends the output
/// quietly; any other error (a full disk, EIO) is reported.
pub(crate) fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rshperf-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn probe_accepts_writable_paths_and_leaves_nothing() {
        let d = dir("probe");
        probe(&d.join("new.json")).expect("new file");
        fs::write(d.join("old.json"), "old").expect("old");
        probe(&d.join("old.json")).expect("existing file");
        assert_eq!(entries(&d), ["old.json"]);
        assert_eq!(fs::read_to_string(d.join("old.json")).expect("read"), "old");
        probe(Path::new("/dev/null")).expect("/dev/null");
        fs::remove_dir_all(&d).expect("clean");
    }

    #[test]
    fn probe_refuses_what_cannot_be_written() {
        let d = dir("refuse");
        for bad in [
            d.join("missing/x.json"),
            PathBuf::from("/proc/x.json"),
            d.clone(),
        ] {
            assert!(probe(&bad).is_err(), "{bad:?}");
        }
        let e = probe_all(&[("--csv", Some("-")), ("--json", Some("/proc/x.json"))])
            .expect_err("refused");
        assert!(
            e.to_string()
                .starts_with("cannot write --json file /proc/x.json: "),
            "{e}"
        );
        probe_all(&[("--json", None), ("--json", Some("-"))]).expect("nothing to probe");
        fs::remove_dir_all(&d).expect("clean");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let d = dir("atomic");
        let p = d.join("r.json");
        write_bytes(&p, b"good\n").expect("first");
        let e = write_atomic(&p, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .expect_err("fails");
        assert_eq!(e.to_string(), "disk full");
        assert_eq!(fs::read_to_string(&p).expect("read"), "good\n");
        assert_eq!(entries(&d), ["r.json"]);
        write_bytes(&p, b"new\n").expect("second");
        assert_eq!(fs::read_to_string(&p).expect("read"), "new\n");
        fs::remove_dir_all(&d).expect("clean");
    }

    #[test]
    fn links_are_kept_and_appends_add_the_header_once() {
        let d = dir("append");
        let real = d.join("real.csv");
        let link = d.join("link.csv");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        append_atomic(&link, b"h\n", b"1\n").expect("first");
        append_atomic(&link, b"h\n", b"2\n").expect("second");
        assert!(fs::symlink_metadata(&link).expect("link").is_symlink());
        assert_eq!(fs::read_to_string(&real).expect("read"), "h\n1\n2\n");
        assert_eq!(entries(&d), ["link.csv", "real.csv"]);
        fs::remove_dir_all(&d).expect("clean");
    }

    #[test]
    fn an_abandoned_write_leaves_the_old_file_and_no_temporary() {
        use std::sync::mpsc;
        let d = dir("abandon");
        let (p, done) = (d.join("r.html"), d.join("done.json"));
        fs::write(&p, "old\n").expect("old");
        // (Its own list: abandoning the process's would stop the other tests' writes.)
        let writing = Writing::new();
        write_bytes(&done, b"complete\n").expect("before");
        let (started, wait_started) = mpsc::channel();
        let (release, wait_release) = mpsc::channel::<()>();
        std::thread::scope(|s| {
            let (writing, p) = (&writing, &p);
            let writer = s.spawn(move || {
                writing.write_atomic(p, |out| {
                    out.write_all(b"half")?;
                    out.flush()?;
                    started.send(()).expect("test alive");
                    let _ = wait_release.recv();
                    out.write_all(b" and the rest\n")
                })
            });
            wait_started.recv().expect("the write began");
            assert_eq!(
                entries(&d).len(),
                3,
                "the temporary file: {:?}",
                entries(&d)
            );
            let canonical = fs::canonicalize(p).expect("canonical");
            assert_eq!(writing.abandon(), [(canonical, false)]);
            assert_eq!(entries(&d), ["done.json", "r.html"]);
            release.send(()).expect("writer alive");
            let e = writer.join().expect("no panic").expect_err("abandoned");
            assert_eq!(e.to_string(), "abandoned: the process is exiting");
        });
        assert_eq!(fs::read_to_string(&p).expect("read"), "old\n");
        assert_eq!(fs::read_to_string(&done).expect("read"), "complete\n");
        // No write starts any more, in place or not; nothing is created.
        let e = writing
            .write_atomic(&d.join("late.json"), |out| out.write_all(b"x"))
            .expect_err("refused");
        assert_eq!(e.to_string(), "the process is exiting");
        assert!(writing
            .write_atomic(Path::new("/dev/null"), |out| out.write_all(b"x"))
            .is_err());
        assert_eq!(entries(&d), ["done.json", "r.html"]);
        assert_eq!(writing.abandon(), []);
        fs::remove_dir_all(&d).expect("clean");
    }

    #[test]
    fn a_write_in_place_is_named_incomplete_when_abandoned() {
        let writing = Writing::new();
        let (id, ()) = writing
            .begin(Path::new("/tmp/fifo"), || Ok((None, ())))
            .expect("listed");
        assert_eq!(writing.abandon(), [(PathBuf::from("/tmp/fifo"), true)]);
        assert!(writing.end(id, || Ok(())).is_err());
    }

    #[test]
    fn a_streamed_file_appears_only_when_committed() {
        let d = dir("stream");
        let p = d.join("log.jsonl");
        fs::write(&p, "old\n").expect("old");
        let mut s = Streaming::create(&p).expect("create");
        s.write_all(b"one\n").expect("write");
        s.flush().expect("flush");
        assert_eq!(entries(&d).len(), 2, "a temporary file beside it");
        assert_eq!(fs::read_to_string(&p).expect("read"), "old\n");
        s.commit().expect("commit");
        assert_eq!(fs::read_to_string(&p).expect("read"), "one\n");
        assert_eq!(entries(&d), ["log.jsonl"]);
        // Dropped without a commit (the writer failed): the old file stays.
        let mut s = Streaming::create(&p).expect("create");
        s.write_all(b"two\n").expect("write");
        drop(s);
        assert_eq!(fs::read_to_string(&p).expect("read"), "one\n");
        assert_eq!(entries(&d), ["log.jsonl"]);
        fs::remove_dir_all(&d).expect("clean");
    }

    #[test]
    fn special_files_are_written_in_place() {
        write_bytes(Path::new("/dev/null"), b"x").expect("/dev/null");
        let e = write_bytes(Path::new("/dev/full"), b"x").expect_err("/dev/full");
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        assert!(is_closed_pipe(&io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(!is_closed_pipe(&io::Error::from_raw_os_error(libc::ENOSPC)));
    }
}
