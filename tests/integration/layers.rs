//! The crate's layers, enforced on all of src/, test code included: every path that
//! leaves a module points to the same layer or one below it, the built-in server
//! (`front::serve`'s event loop, request and reply files) uses the wire layer only, and
//! the modules of src/ import each other without a cycle (outside test code: a test may
//! use its layer's other modules as any caller does, `stats`' tests read a report).
//!
//! The layers, bottom up: `wire`; `model`; `engine` and `output`, siblings that never
//! import each other; `front`, which may import all. `lib.rs` is the root and belongs to
//! none.
//!
//! The checker walks the module tree from `lib.rs` as rustc does (`mod x;`, `x/mod.rs`,
//! `#[path]`, inline `mod x { … }`), so every file has its real module path. It reads
//! each file as tokens (comments and literals cannot hide or fake a path) and resolves
//! every path that starts at `crate`, `super` or `self`, through use groups, globs and
//! `as`, to an absolute one. A path to the crate root itself or to an item of `lib.rs`
//! (`crate::x` where `x` is no layer) is refused wherever it stands, and so are the ways
//! around paths: `#[macro_export]`, `#[macro_use]`, `extern crate`, `include!`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

pub(crate) mod modules;

use modules::{walk, Tree};

/// The layers and their heights: a module may import its own layer and lower ones.
const LAYERS: [(&str, usize); 5] = [
    ("wire", 0),
    ("model", 1),
    ("engine", 2),
    ("output", 2),
    ("front", 3),
];

/// Files of `front::serve` that make up the server itself (no run, no Config).
const SERVER_FILES: [&str; 3] = [
    "front/serve/server.rs",
    "front/serve/request.rs",
    "front/serve/reply.rs",
];

fn height(layer: &str) -> Option<usize> {
    LAYERS.iter().find(|(l, _)| *l == layer).map(|(_, h)| *h)
}

/// Whether code of layer `from` may name layer `to`.
fn may_import(from: &str, to: &str) -> bool {
    from == to || matches!((height(from), height(to)), (Some(f), Some(t)) if t < f)
}

// ---------------------------------------------------------------- the crate's tree

/// src/ as the checker sees it, read from disk.
pub(crate) fn src_tree() -> Tree {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    walk(&|rel| fs::read_to_string(src.join(rel)).ok())
}

/// Every `.rs` file under src/, relative to it.
fn rs_files(dir: &Path, root: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).expect("read src/") {
        let p = entry.expect("dir entry").path();
        if p.is_dir() {
            rs_files(&p, root, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let rel = p.strip_prefix(root).expect("under src/");
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// A module: (layer, its child of the layer; "" for the layer's own mod.rs).
type Node = (String, String);

fn node(module: &[String]) -> Node {
    (
        module.first().cloned().unwrap_or_default(),
        module.get(1).cloned().unwrap_or_default(),
    )
}

/// The rule breaks in `tree`: paths from a layer up or sideways, paths to the crate
/// root or to no layer, and the refused constructs; as `src/FILE:LINE: what`.
fn violations(tree: &Tree) -> Vec<String> {
    let mut out = tree.refused.clone();
    for rel in &tree.missing {
        out.push(format!("src/{rel}: declared but not found"));
    }
    for (file, uses) in &tree.files {
        let Some(from) = file.module.first() else {
            continue; // lib.rs: the root, in no layer
        };
        for u in uses {
            let at = format!("src/{}:{}", file.rel, u.line);
            let test = if u.test { " (test code)" } else { "" };
            match &u.path {
                None => out.push(format!("{at}: a path above the crate root{test}")),
                Some(p) if p.is_empty() => {
                    let what = if u.glob {
                        "a glob of the crate root"
                    } else {
                        "the crate root"
                    };
                    out.push(format!("{at}: {what}{test}"));
                }
                Some(p) if height(&p[0]).is_none() => {
                    out.push(format!("{at}: crate::{} is in no layer{test}", p[0]));
                }
                Some(p) if !may_import(from, &p[0]) => {
                    out.push(format!(
                        "{at}: {from} imports crate::{}{test}",
                        p.join("::")
                    ));
                }
                Some(_) => {}
            }
        }
    }
    out
}

#[test]
fn every_file_is_in_a_layer_once() {
    let tree = src_tree();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut on_disk = Vec::new();
    rs_files(&root, &root, &mut on_disk);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (file, _) in &tree.files {
        *seen.entry(file.rel.as_str()).or_default() += 1;
        if file.rel == "lib.rs" {
            continue;
        }
        let dir_layer = file.rel.split('/').next().unwrap_or("");
        let layer = file.module.first().map_or("", String::as_str);
        assert!(
            height(layer).is_some(),
            "src/{} is outside the layers {LAYERS:?}",
            file.rel
        );
        assert_eq!(
            dir_layer, layer,
            "src/{} is a module of another layer",
            file.rel
        );
    }
    for rel in on_disk {
        if rel == "main.rs" {
            continue; // the binary's root, outside the library
        }
        assert_eq!(
            seen.get(rel.as_str()),
            Some(&1),
            "src/{rel}: not reached exactly once from lib.rs"
        );
    }
    assert!(tree.missing.is_empty(), "{:?}", tree.missing);
}

#[test]
fn imports_only_point_down() {
    let found = violations(&src_tree());
    assert!(
        found.is_empty(),
        "paths that leave their layer the wrong way ({} of them):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_built_in_server_uses_the_wire_layer_only() {
    for (file, uses) in &src_tree().files {
        if !SERVER_FILES.contains(&file.rel.as_str()) {
            continue;
        }
        for u in uses {
            let Some(p) = &u.path else { continue };
            let (layer, module) = node(p);
            let same = layer == "front" && module == "serve";
            assert!(
                layer == "wire" || same,
                "src/{}:{} uses crate::{}",
                file.rel,
                u.line,
                p.join("::")
            );
        }
    }
}

/// A cycle in `graph`, as the path of nodes that closes it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).expect("on the stack");
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, graph, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

/// The graph of a layer's direct children (`model::stats` → `model::report`), from the
/// paths of `tree`'s code; test code too when `with_tests`.
fn module_graph(tree: &Tree, with_tests: bool) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, uses) in &tree.files {
        let (layer, module) = node(&file.module);
        if module.is_empty() {
            continue; // lib.rs, a layer's mod.rs: they only declare modules
        }
        let from = format!("{layer}::{module}");
        for u in uses {
            let Some(p) = &u.path else { continue };
            let (l, m) = node(p);
            let to = format!("{l}::{m}");
            if (with_tests || !u.test) && to != from && !m.is_empty() {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

#[test]
fn modules_import_each_other_without_a_cycle() {
    if let Some(cycle) = find_cycle(&module_graph(&src_tree(), false)) {
        panic!("an import cycle: {}", cycle.join(" → "));
    }
}

// ---------------------------------------------------------------- the checker itself

/// A small crate in memory with one file per rule the checker must catch.
fn fake_crate(rel: &str) -> Option<String> {
    let text = match rel {
        "lib.rs" => "pub mod wire; pub mod model; pub mod engine; pub mod output; pub mod front;",
        "wire/mod.rs" => {
            "//! crate::front::cli in a comment is no path\n\
             pub(crate) mod net;\n\
             const S: &str = \"crate::front::cli\"; const R: &str = r#\"crate::front::x\"#;\n\
             const Q: u8 = b'\"'; fn f<'a>(x: &'a str) -> &'a str { x }\n\
             /* a /* nested */ crate::front::x */ const E: char = '\\''; const F: &str = \"\\\"crate::front::y\";\n\
             #[cfg(test)]\nmod tests { use crate::model::config::Config; }"
        }
        "wire/net.rs" => "pub(crate) fn up() { super::super::engine::x(); }",
        "model/mod.rs" => {
            "pub(crate) mod stats; pub(crate) mod config;\n\
             #[macro_export] macro_rules! m { () => {} }"
        }
        "model/stats/mod.rs" => {
            "use crate::wire::net; use super::config::Config;\n\
             pub(crate) fn f() { crate::merge_fields!(); }\n\
             #[cfg(test)]\n#[path = \"stats_tests.rs\"]\nmod tests;"
        }
        "model/stats/stats_tests.rs" => {
            "use super::super::super::*;\nuse super::super::super as root;"
        }
        "model/config.rs" => "pub(crate) fn g() { crate :: front :: cli :: parse(); }",
        "engine/mod.rs" => {
            "pub(crate) mod conn; use crate::{model::{stats, config::Config}, wire::net};"
        }
        "engine/conn.rs" => {
            "use crate::model::stats; #[cfg(test)] use crate::output::json;\n\
             mod inner { use super::super::super::output::csv; }"
        }
        "output/mod.rs" => "pub(crate) mod json; use crate::{engine::conn, model::stats};",
        "output/json.rs" => {
            "const A: [u8; 2] = [0; 2];\n\
             #[cfg(test)]\nmod tests {\n    use crate::front::*;\n    use crate as c;\n}\n\
             fn after_the_tests() { crate::model::stats::f(); }"
        }
        "front/mod.rs" => {
            "pub(crate) mod cli; use crate::{engine::conn, output::json, model::stats};\n\
             extern crate self as me;"
        }
        "front/cli.rs" => "pub(crate) fn parse() { include!(\"x.rs\"); super::super::run(); }",
        _ => return None,
    };
    Some(text.to_string())
}

#[test]
fn the_checker_sees_what_it_checks() {
    let tree = walk(&fake_crate);
    let modules: Vec<(String, String, bool)> = tree
        .files
        .iter()
        .map(|(f, _)| (f.rel.clone(), f.module.join("::"), f.test))
        .collect();
    assert!(
        modules.contains(&(
            "model/stats/stats_tests.rs".to_string(),
            "model::stats::tests".to_string(),
            true
        )),
        "{modules:?}"
    );
    assert_eq!(tree.files.len(), 13, "{modules:?}");
    let want = [
        "src/model/mod.rs:2: #[macro_export] (a crate-root item)",
        "src/front/mod.rs:2: extern crate",
        "src/front/cli.rs:1: include! (code outside the module tree)",
        "src/engine/conn.rs:1: engine imports crate::output::json (test code)",
        "src/engine/conn.rs:2: engine imports crate::output::csv",
        "src/front/cli.rs:1: crate::run is in no layer",
        "src/model/config.rs:1: model imports crate::front::cli::parse",
        "src/model/stats/mod.rs:2: crate::merge_fields is in no layer",
        "src/model/stats/stats_tests.rs:1: a glob of the crate root (test code)",
        "src/model/stats/stats_tests.rs:2: the crate root (test code)",
        "src/output/json.rs:4: output imports crate::front (test code)",
        "src/output/json.rs:5: the crate root (test code)",
        "src/output/mod.rs:1: output imports crate::engine::conn",
        "src/wire/mod.rs:7: wire imports crate::model::config::Config (test code)",
        "src/wire/net.rs:1: wire imports crate::engine::x",
    ];
    let mut got = violations(&tree);
    got.sort();
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want);
    // Test code is told apart from the code after it.
    let json = &tree
        .files
        .iter()
        .find(|(f, _)| f.rel == "output/json.rs")
        .expect("read")
        .1;
    let last = json.last().expect("paths");
    assert_eq!((last.line, last.test), (7, false));

    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    assert!(src_tree().files.len() > 100, "src/ has its files");
}
