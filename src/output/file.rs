//! Report files that survive: `probe` checks before a run that a path can be written,
//! `write_atomic` replaces a file only once its new content is complete on disk.
//!
//! A file is written under a temporary name beside the target (created with
//! `O_EXCL`), synced and renamed over the target, so a failure (a full disk, a
//! vanished directory) leaves the previous file as it was and no partial one. A target
//! that exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is
//! written in place: it cannot be replaced. Symbolic links are followed, so the link
//! stays and the file it names is replaced. Hand-written on `std` (the `tempfile`
//! crate would add a dependency for two calls). Used by every front end that writes a
//! file (`runner`, `merge`, `sweep`) and by the writers in this layer.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::OutputError;

/// Makes temporary names unique within the process.
static NEXT: AtomicU64 = AtomicU64::new(0);

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
    let (tmp, file) = create_beside(&target)?;
    drop(file);
    fs::remove_file(&tmp)
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
    let (target, special) = resolve(path);
    if special {
        let mut out = BufWriter::new(OpenOptions::new().write(true).open(&target)?);
        fill(&mut out)?;
        return out.flush();
    }
    let (tmp, file) = create_beside(&target)?;
    let done = (|| {
        let mut out = BufWriter::new(file);
        fill(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        fs::rename(&tmp, &target)
    })();
    if done.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    done
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
    fn special_files_are_written_in_place() {
        write_bytes(Path::new("/dev/null"), b"x").expect("/dev/null");
        let e = write_bytes(Path::new("/dev/full"), b"x").expect_err("/dev/full");
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        assert!(is_closed_pipe(&io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(!is_closed_pipe(&io::Error::from_raw_os_error(libc::ENOSPC)));
    }
}
