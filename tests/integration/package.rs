//! The Debian package (scripts/package-deb.sh, cargo-deb) unpacked into a scratch root
//! with dpkg: its `rshperf --version`, its man page and its shell completions. `.ci/run`
//! builds the package before the tests; elsewhere the test skips when there is none
//! (and fails under RSHPERF_CI=1).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;

/// The newest `target/debian/rshperf_*.deb`, if any.
fn package() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/debian");
    let mut debs: Vec<(std::time::SystemTime, PathBuf)> = fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rshperf_") && n.ends_with(".deb"))
        })
        .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    debs.sort();
    debs.pop().map(|(_, p)| p)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_deb_installs_the_binary_the_man_page_and_completions() {
    if !support::installed("dpkg-deb") {
        return support::skip("dpkg-deb not installed (package dpkg): .deb not checked");
    }
    let Some(deb) = package() else {
        return support::skip(
            "no target/debian/rshperf_*.deb: run bash scripts/package-deb.sh \
             (cargo install cargo-deb --locked)",
        );
    };
    let root = std::env::temp_dir().join(format!("rshperf-deb-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let out = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&root)
        .output()
        .expect("run dpkg-deb");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let info = Command::new("dpkg-deb")
        .args(["--field"])
        .arg(&deb)
        .args(["Package", "Version"])
        .output()
        .expect("run dpkg-deb");
    let fields = text(&info.stdout);
    assert!(fields.contains("Package: rshperf\n"), "{fields}");
    assert!(
        fields.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{fields}"
    );

    // The binary runs from the scratch root.
    let bin = root.join("usr/bin/rshperf");
    let out = Command::new(&bin)
        .arg("--version")
        .output()
        .expect("run rshperf");
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains(&format!("rshperf-{} ", env!("CARGO_PKG_VERSION"))),
        "{}",
        text(&out.stdout)
    );

    // The man page renders.
    let man = root.join("usr/share/man/man1/rshperf.1");
    let man = if man.exists() {
        man
    } else {
        root.join("usr/share/man/man1/rshperf.1.gz")
    };
    assert!(man.exists(), "no man page in the package");
    if support::installed("man") {
        let out = Command::new("man")
            .arg("-l")
            .arg(&man)
            .env("MANWIDTH", "80")
            .env_remove("MAN_KEEP_FORMATTING")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("run man");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let page = text(&out.stdout);
        assert!(page.contains("rshperf compare"), "the page lacks compare");
    } else {
        support::skip("man not installed (package man-db): man page not rendered");
    }

    // The completions: bash loads its script; zsh and fish scripts name the commands.
    let share = root.join("usr/share");
    let bash = share.join("bash-completion/completions/rshperf");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p rshperf",
            bash.display()
        ))
        .output()
        .expect("run bash");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(" rshperf"),
        "{}",
        text(&out.stdout)
    );
    let zsh = fs::read_to_string(share.join("zsh/vendor-completions/_rshperf")).expect("zsh");
    assert!(
        zsh.starts_with("#compdef rshperf"),
        "{}",
        &zsh[..40.min(zsh.len())]
    );
    let fish =
        fs::read_to_string(share.join("fish/vendor_completions.d/rshperf.fish")).expect("fish");
    for script in [&zsh, &fish] {
        for needle in ["compare", "fail-on-regression", "num-conns", "junit"] {
            assert!(script.contains(needle), "{needle}");
        }
    }
    let _ = fs::remove_dir_all(&root);
}
