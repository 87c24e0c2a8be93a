//! The `//!` headers of src/ name only modules, items and files that exist: a header
//! that still says `report::classic` after the module moved to `output::classic`, or
//! `engine/closed.rs` after it moved under `engine/event_loop/`, fails here. So does a
//! guide (docs/, README.md, bench/README.md) that names a file of `src/` or `tests/`
//! that is gone.
//!
//! A path in a header (`model::stats::Stats`, `crate::run`, `stats::Stats`) is read as
//! the longest prefix that ends a module's path (a layer-first path must start at its
//! layer), then an item that module defines or re-exports; a path that starts with a
//! type (`Stats::merge`) needs only the type. Paths of other crates (`std::io`,
//! `serde_json::Value`, `String::new`) are not checked. A file (`engine/event_loop/closed.rs`) is
//! relative to src/, to the header's directory or to the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::layers::src_tree;

const LAYERS: [&str; 5] = ["wire", "model", "engine", "output", "front"];

/// Module path (`model::stats`) → the names it defines or re-exports.
type Modules = BTreeMap<String, BTreeSet<String>>;

fn modules() -> Modules {
    let mut out = Modules::new();
    for (file, _) in src_tree().files {
        let entry = out.entry(file.module.join("::")).or_default();
        entry.extend(file.names);
        // A module's children are names of its parent.
        if let Some((last, parent)) = file.module.split_last() {
            out.entry(parent.join("::"))
                .or_default()
                .insert(last.clone());
        }
    }
    out
}

/// The crates src/ depends on (Cargo.toml's `[dependencies]`), with `-` as `_`, the
/// standard library's, and the prelude's types and the primitives (`String::new`,
/// `u64::MAX`).
fn extern_crates() -> BTreeSet<String> {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .expect("read Cargo.toml");
    let deps = manifest
        .split("\n[dependencies]\n")
        .nth(1)
        .expect("a [dependencies] table");
    let deps = deps.split("\n[").next().unwrap_or(deps);
    let mut out: BTreeSet<String> = [
        "std", "core", "alloc", "String", "Vec", "Option", "Result", "Box", "str", "u8", "u16",
        "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64",
        "bool", "char",
    ]
    .map(String::from)
    .into();
    for line in deps.lines() {
        if let Some((name, _)) = line.split_once('=') {
            out.insert(name.trim().replace('-', "_"));
        }
    }
    out
}

/// What is wrong with `path` (`a::b::c`, `crate::` already gone), if anything.
fn check_path(path: &[&str], modules: &Modules, externs: &BTreeSet<String>) -> Option<String> {
    let first = *path.first()?;
    if externs.contains(first) || matches!(first, "Self" | "self" | "super") {
        return None;
    }
    for k in (1..=path.len()).rev() {
        let prefix = path[..k].join("::");
        let found: Vec<&BTreeSet<String>> = modules
            .iter()
            .filter(|(m, _)| {
                if LAYERS.contains(&first) {
                    **m == prefix
                } else {
                    **m == prefix || m.ends_with(&format!("::{prefix}"))
                }
            })
            .map(|(_, names)| names)
            .collect();
        if found.is_empty() {
            continue;
        }
        return match path.get(k) {
            Some(item) if !found.iter().any(|names| names.contains(*item)) => {
                Some(format!("no `{item}` in module `{prefix}`"))
            }
            _ => None,
        };
    }
    if first.starts_with(|c: char| c.is_ascii_uppercase())
        && modules.values().any(|names| names.contains(first))
    {
        return None; // a type's associated item
    }
    Some(format!("no module `{first}`"))
}

/// What is wrong with the file `name` mentioned in `src/{rel}`, if anything.
fn check_file(name: &str, rel: &str) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let here = src.join(rel);
    let dir = here.parent().expect("a directory");
    let name = name.strip_prefix("src/").unwrap_or(name);
    let found = if name.contains('/') {
        [src.join(name), dir.join(name), root.join(name)]
            .iter()
            .any(|p| p.exists())
    } else {
        let mut all = Vec::new();
        files_named(&src, name, &mut all);
        !all.is_empty()
    };
    (!found).then(|| format!("no file `{name}`"))
}

fn files_named(dir: &Path, name: &str, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/").flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_named(&p, name, out);
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
}

/// The `a::b` paths and `x/y.rs` files in one line of text.
fn mentions(line: &str) -> (Vec<Vec<&str>>, Vec<&str>) {
    let (mut paths, mut files) = (Vec::new(), Vec::new());
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == ':' || c == '/' || c == '.';
    for w in line.split(|c: char| !word(c)) {
        let w = w.trim_matches(|c: char| c == '.' || c == ':' || c == '/');
        if w.ends_with(".rs") {
            files.push(w);
        } else if w.contains("::") && !w.contains('/') && !w.contains(".") {
            let segs: Vec<&str> = w.split("::").collect();
            let segs = if segs.first() == Some(&"crate") {
                segs[1..].to_vec()
            } else {
                segs
            };
            if !segs.is_empty() && segs.iter().all(|s| !s.is_empty()) {
                paths.push(segs);
            }
        }
    }
    (paths, files)
}

/// Every stale mention in the `//!` headers of src/, as `src/FILE:LINE: what`.
fn stale(modules: &Modules) -> Vec<String> {
    let externs = extern_crates();
    let mut out = Vec::new();
    for (file, _) in src_tree().files {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("src")
                .join(&file.rel),
        )
        .expect("read source");
        for (n, line) in text.lines().enumerate() {
            let Some(doc) = line.trim_start().strip_prefix("//!") else {
                continue;
            };
            let (paths, files) = mentions(doc);
            for p in paths {
                if let Some(why) = check_path(&p, modules, &externs) {
                    out.push(format!(
                        "src/{}:{}: `{}`: {why}",
                        file.rel,
                        n + 1,
                        p.join("::")
                    ));
                }
            }
            for f in files {
                if let Some(why) = check_file(f, &file.rel) {
                    out.push(format!("src/{}:{}: {why}", file.rel, n + 1));
                }
            }
        }
    }
    out
}

#[test]
fn headers_name_what_exists() {
    let found = stale(&modules());
    assert!(
        found.is_empty(),
        "stale names in //! headers:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_header_check_tells_stale_from_current() {
    let modules = modules();
    let externs = extern_crates();
    let line = "`lib::run`, `report::classic`, `model::stats::Nothing`, `engine::page` and \
                `engine/closed.rs`; `crate::run`, `model::stats::Stats`, `stats::Stats`, \
                `engine::event_loop::page`, `Stats::merge`, `std::io::Write`, \
                `serde_json::Value`, `engine/event_loop/closed.rs`, `mod.rs`.";
    let (paths, files) = mentions(line);
    let bad: Vec<String> = paths
        .iter()
        .filter(|p| check_path(p, &modules, &externs).is_some())
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        bad,
        [
            "lib::run",
            "report::classic",
            "model::stats::Nothing",
            "engine::page"
        ]
    );
    let bad: Vec<&str> = files
        .into_iter()
        .filter(|f| check_file(f, "model/stats/ab.rs").is_some())
        .collect();
    assert_eq!(bad, ["engine/closed.rs"]);
}

/// The guides a maintainer reads: docs/*.md, README.md and bench/README.md (not
/// CHANGELOG.md, which keeps the paths of its day).
fn guides() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("read docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| format!("docs/{}", p.file_name().expect("a name").to_string_lossy()))
        .collect();
    names.sort();
    names.extend(["README.md".to_string(), "bench/README.md".to_string()]);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).expect("read a guide");
            (n, text)
        })
        .collect()
}

/// The `src/…` and `tests/…` paths in `line` (not inside another path or a URL; a
/// link's `../` is dropped); a `*` stands for any rest of a file name
/// (`src/front/httperf/tests*.rs`).
fn repo_paths(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in line
        .match_indices("src/")
        .chain(line.match_indices("tests/"))
    {
        let before = line[..at].trim_end_matches("../");
        let relative = before.len() < at; // `../src/…`, a link from docs/
        let inside = before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
        if inside && !relative {
            continue;
        }
        let rest = &line[at..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '*')))
            .unwrap_or(rest.len());
        out.push(rest[..end].trim_end_matches(['.', '-']));
    }
    out
}

/// Whether `path` (relative to the repository, maybe with one `*`) names a file or
/// directory.
fn exists(path: &str) -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some((head, tail)) = path.split_once('*') else {
        return root.join(path).exists();
    };
    let (dir, prefix) = head.rsplit_once('/').unwrap_or(("", head));
    std::fs::read_dir(root.join(dir)).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(prefix) && name.ends_with(tail)
        })
    })
}

#[test]
fn guides_name_files_that_exist() {
    let mut stale = Vec::new();
    for (name, text) in guides() {
        for (n, line) in text.lines().enumerate() {
            for p in repo_paths(line) {
                if !exists(p) {
                    stale.push(format!("{name}:{}: no `{p}`", n + 1));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale paths in the guides:\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_guide_check_tells_stale_from_current() {
    let line = "Code: `src/report/classic.rs`, `src/output/classic.rs` and \
                [tests](../tests/integration/layers.rs), `src/front/httperf/tests*.rs`, \
                `src/model/stats/`; https://example.com/src/x.rs, foo/src/y.rs, \
                `tests/integration/gone.rs`.";
    let found = repo_paths(line);
    assert_eq!(
        found,
        [
            "src/report/classic.rs",
            "src/output/classic.rs",
            "src/front/httperf/tests*.rs",
            "src/model/stats/",
            "tests/integration/layers.rs",
            "tests/integration/gone.rs",
        ]
    );
    let missing: Vec<&str> = found.into_iter().filter(|p| !exists(p)).collect();
    assert_eq!(
        missing,
        ["src/report/classic.rs", "tests/integration/gone.rs"]
    );
}
