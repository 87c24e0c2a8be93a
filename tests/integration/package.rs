//! The Debian package (scripts/package-deb.sh, cargo-deb) unpacked into a scratch root
//! with dpkg: its `rshperf --version` (a stripped binary), its man page and its shell
//! completions, and its control fields (a maintainer with an address; `Depends` naming
//! libc6 unless the binary is static). `.ci/run` builds the package before the tests; elsewhere the test
//! skips when there is none (and fails under RSHPERF_CI=1).

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
        .args(["Package", "Version", "Maintainer", "Depends"])
        .output()
        .expect("run dpkg-deb");
    let fields = text(&info.stdout);
    assert!(fields.contains("Package: rshperf\n"), "{fields}");
    assert!(
        fields.contains(&format!("Version: {}", env!("CARGO_PKG_VERSION"))),
        "{fields}"
    );
    // Debian policy: `Name <address>`.
    let maintainer = field(&fields, "Maintainer").unwrap_or_default();
    assert!(
        maintainer.ends_with('>') && maintainer.contains(" <") && maintainer.contains('@'),
        "{fields}"
    );
    let depends = field(&fields, "Depends").unwrap_or_default();

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
    // Stripped of debug information (the build's own binary keeps it).
    if support::installed("file") {
        let out = Command::new("file")
            .arg("-L")
            .arg(&bin)
            .output()
            .expect("run file");
        let kind = text(&out.stdout);
        assert!(
            kind.trim_end().ends_with(", stripped") && !kind.contains("debug_info"),
            "the packaged binary is not stripped: {kind}"
        );
        // A dynamically linked binary needs the C library (dpkg-shlibdeps says which);
        // a static one needs nothing.
        if kind.contains("dynamically linked") {
            assert!(depends.contains("libc6"), "Depends: {depends:?} ({kind})");
        } else {
            assert!(kind.contains("static"), "{kind}");
        }
    } else {
        support::skip("file not installed (package file): stripping not checked");
    }

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

/// Runs scripts/build-static.sh with `args` and `env`.
fn build_static(args: &[&str], env: &[(&str, &Path)]) -> std::process::Output {
    let mut cmd = Command::new("bash");
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-static.sh"))
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run bash")
}

/// The static binary `.ci/run` builds (scripts/build-static.sh on the gnu target)
/// passes the script's checks: linked statically, `--version`, `localhost` resolved by
/// the server and the client, and resolved with an /etc/nsswitch.conf naming only a
/// service that does not exist.
#[test]
fn the_static_binary_passes_build_static_checks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/static");
    let bin = dir.join("x86_64-unknown-linux-gnu/release/rshperf");
    if !bin.exists() {
        return support::skip(
            "no target/static/x86_64-unknown-linux-gnu/release/rshperf: run \
             bash scripts/build-static.sh",
        );
    }
    let out = build_static(&["--no-build"], &[("STATIC_TARGET_DIR", &dir)]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout), format!("{}\n", bin.display()));
    assert!(stderr.contains("static-pie linked"), "{stderr}");
    assert!(stderr.contains("ldd: \tstatically linked\n"), "{stderr}");
    assert!(
        stderr.contains(&format!("rshperf-{} ", env!("CARGO_PKG_VERSION"))),
        "{stderr}"
    );
    assert!(stderr.contains(": 3 replies, 0 errors\n"), "{stderr}");
    if stderr.contains("lookups without NSS modules not checked") {
        support::skip("not root or no unshare: lookups without NSS modules not checked");
    } else {
        assert!(
            stderr.contains("localhost resolved without NSS modules"),
            "{stderr}"
        );
    }
}

/// The script refuses a dynamically linked binary (the one under test), and an
/// unknown argument.
#[test]
fn build_static_refuses_a_dynamic_binary() {
    if !support::installed("file") {
        return support::skip("file not installed (package file): linkage not checked");
    }
    let scratch = std::env::temp_dir().join(format!("rshperf-static-{}", std::process::id()));
    let release = scratch.join("x86_64-unknown-linux-gnu/release");
    fs::create_dir_all(&release).expect("scratch dir");
    let link = release.join("rshperf");
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rshperf"), &link).expect("symlink");
    let out = build_static(&["--no-build"], &[("STATIC_TARGET_DIR", &scratch)]);
    let _ = fs::remove_dir_all(&scratch);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let last = text(&out.stderr).lines().last().unwrap_or("").to_string();
    assert_eq!(
        last,
        format!("build-static: {}: not statically linked", link.display())
    );

    let out = build_static(&["--fast"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "build-static: unknown argument '--fast' (only --no-build)\n"
    );
}

/// The release workflow parses as YAML, adds the musl target with rustup, builds and
/// checks the static binary with scripts/build-static.sh (again as root, where the
/// lookup check runs and may not be skipped) and packages that binary; its shell
/// steps are valid bash.
#[test]
fn release_workflow_builds_musl_through_build_static() {
    let script = r#"
import json, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
on = wf.get("on", wf.get(True))
assert on == {"push": {"tags": ["v*"]}}, on
job = wf["jobs"]["release"]
print(json.dumps({"env": job["env"], "runs": [s["run"] for s in job["steps"] if "run" in s]}))
"#;
    let wf = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/release.yml");
    let out = match Command::new("python3")
        .args(["-c", script])
        .arg(&wf)
        .output()
    {
        Ok(o) if text(&o.stderr).contains("No module named 'yaml'") => {
            return support::skip("PyYAML not installed (package python3-yaml)")
        }
        Ok(o) => o,
        Err(e) => return support::skip(&format!("python3 not available ({e})")),
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(parsed["env"]["TARGET"], "x86_64-unknown-linux-musl");
    assert_eq!(parsed["env"]["STATIC_TARGET_DIR"], "target");
    let runs: Vec<&str> = parsed["runs"]
        .as_array()
        .expect("run steps")
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    let lines: Vec<&str> = runs.iter().flat_map(|r| r.lines()).map(str::trim).collect();
    for line in [
        "rustup target add \"$TARGET\"",
        "bash scripts/build-static.sh",
        "sudo env TARGET=\"$TARGET\" STATIC_TARGET_DIR=\"$STATIC_TARGET_DIR\" RSHPERF_CI=1 \\",
        "bash scripts/build-static.sh --no-build",
        "deb=$(bash scripts/package-deb.sh --no-build | tail -n 1)",
        "cp \"target/$TARGET/release/rshperf\" rshperf-x86_64-linux-musl",
    ] {
        assert!(lines.contains(&line), "no {line:?} in {lines:#?}");
    }
    for run in runs {
        let out = Command::new("bash")
            .args(["-n", "-c", run])
            .output()
            .expect("bash -n");
        assert!(out.status.success(), "{run}\n{}", text(&out.stderr));
    }
}

/// The value of `name` in `dpkg-deb --field` output (`Name: value` lines).
fn field<'a>(fields: &'a str, name: &str) -> Option<&'a str> {
    fields
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
}
