//! How the CI examples (examples/ci/) install rshperf: the GitHub workflow's install
//! step and the GitLab job's `before_script`, run with bash against stub `curl`,
//! `cargo`, `dpkg` and `sudo` that record their command lines. Both take the `.deb` of
//! the latest release of the repository named by `RSHPERF_REPO`, build that
//! repository's source when it has none, and name no other URL.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support;

/// The repository the stubs see (`RSHPERF_REPO`).
const REPO: &str = "acme/rshperf-fork";

/// A scratch directory with `bin/` of stubs, removed on drop.
struct Stubs(PathBuf);

impl Stubs {
    /// Stubs that append `NAME ARGS…` to `calls.log`; `curl` succeeds (writing the
    /// file it is given after `-o`) unless `curl_fails`.
    fn new(name: &str, curl_fails: bool) -> Stubs {
        let dir =
            std::env::temp_dir().join(format!("rshperf-ci-install-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("bin")).expect("scratch dir");
        let log = dir.join("calls.log");
        let record = format!("echo \"$(basename \"$0\") $*\" >> '{}'\n", log.display());
        let curl = if curl_fails {
            "echo 'curl: (22) The requested URL returned error: 404' >&2\nexit 22\n"
        } else {
            "printf 'a .deb' > \"$2\"\n"
        };
        for (tool, body) in [("curl", curl), ("cargo", ""), ("dpkg", ""), ("sudo", "")] {
            let path = dir.join("bin").join(tool);
            fs::write(&path, format!("#!/bin/sh\n{record}{body}")).expect("write stub");
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        Stubs(dir)
    }

    /// Runs `script` with bash as both CI systems do (`-eo pipefail`) in the scratch
    /// directory, the stubs first on the PATH, `env` added.
    fn run(&self, script: &str, env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:{}",
            self.0.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(&self.0)
            .env("PATH", path)
            .env("HOME", &self.0)
            .env_remove("RSHPERF_REPO");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run bash")
    }

    /// The stubs' command lines, in order.
    fn calls(&self) -> Vec<String> {
        fs::read_to_string(self.0.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Stubs {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The install scripts and the GitHub workflow's `RSHPERF_REPO`, read by PyYAML;
/// None (after a skip) without python3 or PyYAML.
fn install_scripts() -> Option<Value> {
    let script = r#"
import json, sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
steps = gh["jobs"]["perf"]["steps"]
install = [s["run"] for s in steps if s.get("id") == "install"]
cache = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
assert len(install) == 1 and len(cache) == 1, steps
gl = yaml.safe_load(open(sys.argv[2]))["perf"]
print(json.dumps({"gh_repo": gh["env"]["RSHPERF_REPO"], "gh": install[0],
                  "gh_cache": cache[0]["with"]["path"],
                  "gl": "\n".join(gl["before_script"]),
                  "gl_root": gl["variables"]["CARGO_INSTALL_ROOT"],
                  "gl_caches": [c["paths"] for c in gl["cache"]]}))
"#;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci");
    let out = match Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("github-actions.yml"))
        .arg(dir.join("gitlab-ci.yml"))
        .output()
    {
        Ok(o) if text(&o.stderr).contains("No module named 'yaml'") => {
            support::skip("PyYAML not installed (package python3-yaml): CI installs not run");
            return None;
        }
        Ok(o) => o,
        Err(e) => {
            support::skip(&format!("python3 not available ({e}): CI installs not run"));
            return None;
        }
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("JSON from python"))
}

/// The URL both examples download the `.deb` from.
fn deb_url() -> String {
    format!("https://github.com/{REPO}/releases/latest/download/rshperf_amd64.deb")
}

#[test]
fn ci_examples_name_no_fixed_download_url() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci");
    for file in ["github-actions.yml", "gitlab-ci.yml"] {
        let body = fs::read_to_string(dir.join(file)).expect("example");
        for (i, line) in body.lines().enumerate() {
            if let Some(at) = line.find("https://") {
                assert!(
                    line[at..].starts_with("https://github.com/$RSHPERF_REPO"),
                    "{file}:{}: a URL not derived from RSHPERF_REPO: {line}",
                    i + 1
                );
            }
        }
    }
}

#[test]
fn github_workflow_installs_the_release_deb_of_the_named_repository() {
    let Some(s) = install_scripts() else { return };
    assert_eq!(
        s["gh_repo"],
        "${{ vars.RSHPERF_REPO || github.repository }}"
    );
    assert_eq!(s["gh_cache"], "~/.rshperf");
    let script = s["gh"].as_str().expect("install step");

    // The install step with stubs named `name` (`no_release`: the .deb is missing).
    let install = |name: &str, no_release: bool| {
        let stubs = Stubs::new(name, no_release);
        let github_path = stubs.0.join("github_path");
        let gp = github_path.to_string_lossy().into_owned();
        let out = stubs.run(script, &[("RSHPERF_REPO", REPO), ("GITHUB_PATH", &gp)]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        (stubs, github_path, out)
    };
    let (stubs, github_path, _) = install("gh-deb", false);
    assert_eq!(
        stubs.calls(),
        [
            format!("curl -fsSLo rshperf.deb {}", deb_url()),
            "sudo dpkg -i rshperf.deb".to_string()
        ]
    );
    assert!(!github_path.exists(), "the .deb puts rshperf on the PATH");

    // No release: the source of the same repository, into the cached root.
    let (stubs, github_path, out) = install("gh-source", true);
    let home = stubs.0.display().to_string();
    assert_eq!(
        stubs.calls(),
        [
            format!("curl -fsSLo rshperf.deb {}", deb_url()),
            format!(
                "cargo install --locked --root {home}/.rshperf --git https://github.com/{REPO} rshperf"
            ),
        ]
    );
    assert_eq!(
        text(&out.stdout),
        format!(
            "::notice::no release .deb at {}; building https://github.com/{REPO}\n",
            deb_url()
        )
    );
    assert_eq!(
        fs::read_to_string(&github_path).expect("GITHUB_PATH"),
        format!("{home}/.rshperf/bin\n")
    );
}

#[test]
fn gitlab_job_installs_the_release_deb_of_the_named_repository() {
    let Some(s) = install_scripts() else { return };
    assert_eq!(s["gl_root"], "$CI_PROJECT_DIR/.rshperf");
    assert_eq!(
        s["gl_caches"],
        serde_json::json!([["perf/baseline/"], [".rshperf/"]])
    );
    // The script ends by printing the PATH the job's `script` inherits.
    let script = format!("{}\necho \"PATH=$PATH\"", s["gl"].as_str().expect("script"));

    // The job's script with stubs named `name` (`no_release`: the .deb is missing).
    let install = |name: &str, no_release: bool| {
        let stubs = Stubs::new(name, no_release);
        let root = format!("{}/.rshperf", stubs.0.display());
        let env = [
            ("RSHPERF_REPO", REPO),
            ("CARGO_INSTALL_ROOT", root.as_str()),
        ];
        let out = stubs.run(&script, &env);
        assert!(out.status.success(), "{}", text(&out.stderr));
        (stubs, root, out)
    };
    let (stubs, _, out) = install("gl-deb", false);
    assert_eq!(
        stubs.calls(),
        [
            format!("curl -fsSLo rshperf.deb {}", deb_url()),
            "dpkg -i rshperf.deb".to_string()
        ]
    );
    assert!(!text(&out.stdout).contains(".rshperf/bin"));

    let (stubs, root, out) = install("gl-source", true);
    assert_eq!(
        stubs.calls(),
        [
            format!("curl -fsSLo rshperf.deb {}", deb_url()),
            format!("cargo install --locked --git https://github.com/{REPO} rshperf"),
        ]
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("\nPATH={root}/bin:")),
        "the built binary is not first on the PATH: {stdout}"
    );

    // Without RSHPERF_REPO the job stops at once, saying what to set.
    let stubs = Stubs::new("gl-unset", false);
    let out = stubs.run(&script, &[]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(
            "RSHPERF_REPO: set the CI/CD variable RSHPERF_REPO to the GitHub repository \
             of rshperf (owner/name)"
        ),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(stubs.calls(), Vec::<String>::new());
}
