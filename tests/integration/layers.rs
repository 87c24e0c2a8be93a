//! The crate's layers, enforced: every `crate::` path in the non-test code of src/
//! points to the same layer or one below it (wire → model → engine → output → front),
//! the modules of src/ import each other without a cycle, and the built-in server
//! (`front::serve`'s event loop, request and reply files) uses the wire layer only.
//!
//! A module is a layer's direct child (`src/model/stats/…` is `model::stats`); an edge
//! is any `crate::LAYER::MODULE` path outside comments and `#[cfg(test)]` items.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers from the bottom up.
const LAYERS: [&str; 5] = ["wire", "model", "engine", "output", "front"];

/// Files of `front::serve` that make up the server itself (no run, no Config).
const SERVER_FILES: [&str; 3] = [
    "front/serve/server.rs",
    "front/serve/request.rs",
    "front/serve/reply.rs",
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src/") {
        let p = entry.expect("dir entry").path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `text` without comments, string literals' contents and `#[cfg(test)]` items.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            i = text[i..].find("*/").map_or(b.len(), |e| i + e + 2);
        } else if text[i..].starts_with("r#\"") {
            i = text[i + 3..].find("\"#").map_or(b.len(), |e| i + 3 + e + 2);
            out.push_str("\"\"");
        } else if b[i] == b'\'' && char_literal_len(&b[i..]).is_some() {
            i += char_literal_len(&b[i..]).expect("checked");
            out.push_str("' '");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if text[i..].starts_with("#[cfg(test)]") {
            // Skip the attribute and the item after it: to the end of its first
            // `{ … }` block, or to its `;`.
            i += "#[cfg(test)]".len();
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    b';' if depth == 0 => {
                        i += 1;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            let c = text[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of the char literal at the start of `b` (`'x'`, `'\\n'`, `'\\u{..}'`), or
/// None for a lifetime.
fn char_literal_len(b: &[u8]) -> Option<usize> {
    if b.len() >= 3 && b[1] != b'\\' && b[2] == b'\'' {
        return Some(3);
    }
    if b.len() >= 4 && b[1] == b'\\' {
        let end = b[2..].iter().take(10).position(|&c| c == b'\'')?;
        return Some(end + 3);
    }
    // A multi-byte char: up to four bytes, then the quote.
    let end = b[1..].iter().take(5).position(|&c| c == b'\'')?;
    (end > 1 && std::str::from_utf8(&b[1..1 + end]).is_ok_and(|s| s.chars().count() == 1))
        .then_some(end + 2)
}

/// The (layer, module) a file under src/ belongs to; None for lib.rs and main.rs.
fn node_of(rel: &str) -> Option<(String, String)> {
    let mut parts = rel.split('/');
    let layer = parts.next()?;
    let module = parts.next()?.trim_end_matches(".rs");
    if module == "mod" {
        return Some((layer.to_string(), String::new()));
    }
    Some((layer.to_string(), module.to_string()))
}

/// The identifier at the start of `s` and what follows it.
fn ident(s: &str) -> (String, &str) {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (s[..end].to_string(), &s[end..])
}

/// Every `crate::LAYER::MODULE` in `code`, as (layer, module).
fn references(code: &str) -> BTreeSet<(String, String)> {
    let mut refs = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let (layer, rest) = ident(&code[at + "crate::".len()..]);
        // `crate::name` alone is an item of lib.rs (a macro such as
        // `crate::merge_fields!`), in no layer.
        let Some(rest) = rest.strip_prefix("::") else {
            continue;
        };
        let (module, _) = ident(rest);
        refs.insert((layer, module));
    }
    refs
}

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

/// A module: (layer, module).
type Node = (String, String);

/// (file, its node, the nodes it references) for every non-test file of src/.
fn edges() -> Vec<(String, Node, BTreeSet<Node>)> {
    let root = src_dir();
    let mut files = Vec::new();
    rs_files(&root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for p in files {
        let rel = p
            .strip_prefix(&root)
            .expect("under src/")
            .to_string_lossy()
            .replace('\\', "/");
        let name = rel.rsplit('/').next().unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let Some(node) = node_of(&rel) else { continue };
        let text = fs::read_to_string(&p).expect("read source");
        out.push((rel, node, references(&code_only(&text))));
    }
    out
}

#[test]
fn every_file_is_in_a_layer() {
    for (rel, (layer, _), _) in edges() {
        assert!(
            rank(&layer).is_some(),
            "src/{rel} is outside the layers {LAYERS:?}"
        );
    }
}

#[test]
fn imports_only_point_down() {
    let mut upward = Vec::new();
    for (rel, (layer, _), refs) in edges() {
        let from = rank(&layer).expect("a layer");
        for (to_layer, to_module) in refs {
            match rank(&to_layer) {
                Some(to) if to > from => {
                    upward.push(format!("src/{rel}: crate::{to_layer}::{to_module}"))
                }
                Some(_) => {}
                None => upward.push(format!("src/{rel}: crate::{to_layer} is no layer")),
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that point up a layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_built_in_server_uses_the_wire_layer_only() {
    for (rel, _, refs) in edges() {
        if !SERVER_FILES.contains(&rel.as_str()) {
            continue;
        }
        for (layer, module) in refs {
            let same = layer == "front" && module == "serve";
            assert!(
                layer == "wire" || same,
                "src/{rel} imports crate::{layer}::{module}"
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

#[test]
fn modules_import_each_other_without_a_cycle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, (layer, module), refs) in edges() {
        let from = format!("{layer}::{module}");
        for (l, m) in refs {
            let to = format!("{l}::{m}");
            // A layer's mod.rs only declares its modules.
            if to != from && !module.is_empty() && !m.is_empty() {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("an import cycle: {}", cycle.join(" → "));
    }
}

#[test]
fn the_checker_sees_what_it_checks() {
    // The scanner must see code and skip comments, strings and test items, or the
    // tests above could pass by seeing nothing.
    let code = code_only(
        "use crate::model::stats::Stats; // crate::front::cli\n\
         let s = \"crate::front::ab\"; let q = b'\"'; let r = r#\"crate::front::x\"#;\n\
         #[cfg(test)]\nmod tests { use crate::front::sweep; }\n\
         fn f() { crate::wire::net::x(); }",
    );
    let refs = references(&code);
    let want: BTreeSet<(String, String)> = [("model", "stats"), ("wire", "net")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(refs, want);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    assert!(edges().len() > 100, "src/ has its files");
}
