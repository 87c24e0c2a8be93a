//! The reading of src/ that the layer and doc-path checks share: Rust source as
//! tokens, and the module tree walked from `lib.rs` as rustc walks it, each file with
//! the names it defines and every path in it that starts at `crate`, `super` or `self`
//! resolved to an absolute one. Knows no layer and no rule: those are `layers.rs`'s
//! and `doc_paths.rs`'s.

use std::collections::BTreeSet;

/// A token of Rust source: what path resolution needs, nothing more.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// A string literal's contents (for `#[path = "…"]`).
    Str(String),
    /// `::`
    Path,
    Punct(char),
}

/// `text` as tokens with their 1-based lines. Comments (nested block comments too),
/// char and number literals and lifetimes are dropped; strings keep their contents.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let start_line = line;
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some((len, body)) = raw_string(&c[i..]) {
            line += body.matches('\n').count();
            out.push((Tok::Str(body), start_line));
            i += len;
        } else if ch == '"' || ((ch == 'b' || ch == 'c') && at(i + 1) == '"') {
            i += if ch == '"' { 1 } else { 2 };
            let mut body = String::new();
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    body.push(c[i]);
                    i += 1;
                }
                line += usize::from(at(i) == '\n');
                body.push(at(i));
                i += 1;
            }
            i += 1;
            out.push((Tok::Str(body), start_line));
        } else if ch == '\'' || (ch == 'b' && at(i + 1) == '\'') {
            let q = if ch == 'b' { i + 1 } else { i };
            if at(q + 1) == '\\' {
                // An escaped char (`'\''`, `'\u{…}'`): to the closing quote.
                i = q + 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(q + 2) == '\'' {
                i = q + 3;
            } else {
                // A lifetime or label: the quote, then its name as an ident token
                // nobody looks at.
                i = q + 1;
            }
        } else if ch == 'r' && at(i + 1) == '#' && is_ident_start(at(i + 2)) {
            i += 2;
        } else if is_ident_start(ch) {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(c[s..i].iter().collect()), start_line));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            if at(i) == '.' && at(i + 1).is_ascii_digit() {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::Path, start_line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), start_line));
            i += 1;
        }
    }
    out
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

/// The length and contents of the raw string (`r"…"`, `r#"…"#`, `br##"…"##`, …) at the
/// start of `c`, if one starts there.
fn raw_string(c: &[char]) -> Option<(usize, String)> {
    let mut i = usize::from(matches!(c.first(), Some('b' | 'c')));
    if c.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
    i += hashes;
    if c.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    let body_start = i;
    while i < c.len() {
        if c[i] == '"'
            && c[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            let body = c[body_start..i].iter().collect();
            return Some((i + 1 + hashes, body));
        }
        i += 1;
    }
    Some((c.len(), c[body_start..].iter().collect()))
}

// ---------------------------------------------------------------- module tree

/// A file of src/ with its module path (`model/stats/ab_tests.rs` is
/// `model::stats::ab::tests`) and whether it is test code (declared under
/// `#[cfg(test)]`).
#[derive(Debug, Clone)]
pub(crate) struct File {
    pub(crate) rel: String,
    pub(crate) module: Vec<String>,
    pub(crate) test: bool,
    /// The names the file defines (items, inline modules, `macro_rules!`) or
    /// re-exports (`pub use`, `pub(crate) use`).
    pub(crate) names: BTreeSet<String>,
}

/// A path that leaves the module it stands in, resolved to an absolute one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Use {
    pub(crate) line: usize,
    /// The absolute path; `None` where `super` climbs above the crate root.
    pub(crate) path: Option<Vec<String>>,
    pub(crate) glob: bool,
    /// Inside `#[cfg(test)]` code (or a file declared under it).
    pub(crate) test: bool,
}

/// What the checker found: the files, each with the paths it uses, and the constructs
/// that are refused outright (with their file and line).
#[derive(Debug, Default)]
pub(crate) struct Tree {
    pub(crate) files: Vec<(File, Vec<Use>)>,
    pub(crate) refused: Vec<String>,
    /// Files a `mod` declaration names that cannot be read.
    pub(crate) missing: Vec<String>,
}

/// Walks the module tree from `lib.rs`; `read` gives a file's text by its path under
/// src/ (`None`: no such file).
pub(crate) fn walk(read: &dyn Fn(&str) -> Option<String>) -> Tree {
    let mut tree = Tree::default();
    let mut queue = vec![File {
        rel: "lib.rs".to_string(),
        module: Vec::new(),
        test: false,
        names: BTreeSet::new(),
    }];
    while let Some(mut file) = queue.pop() {
        // `mod x;` without `#[path]` is `x.rs` or else `x/mod.rs`.
        let text = read(&file.rel).or_else(|| {
            let dir = file.rel.strip_suffix(".rs")?.to_string();
            let text = read(&format!("{dir}/mod.rs"))?;
            file.rel = format!("{dir}/mod.rs");
            Some(text)
        });
        let Some(text) = text else {
            tree.missing.push(file.rel);
            continue;
        };
        let toks = tokens(&text);
        file.names = names(&toks);
        let uses = scan(&file, &toks, &mut queue, &mut tree.refused);
        tree.files.push((file, uses));
    }
    tree.files.sort_by(|a, b| a.0.rel.cmp(&b.0.rel));
    tree
}

/// The directory `mod x;` declarations in `file` look in (without inline modules):
/// `a/b/` for `a/b.rs`, `a/` for `a/mod.rs` and for the root.
fn child_dir(rel: &str) -> String {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let join = |d: &str, n: &str| {
        if d.is_empty() {
            n.to_string()
        } else {
            format!("{d}/{n}")
        }
    };
    if matches!(name, "mod.rs" | "lib.rs" | "main.rs") {
        dir.to_string()
    } else {
        join(dir, name.trim_end_matches(".rs"))
    }
}

/// One file's tokens: queues the files its `mod x;` declarations name, records the
/// refused constructs, and returns every path that starts at `crate`, `super` or
/// `self`, resolved.
fn scan(
    file: &File,
    toks: &[(Tok, usize)],
    queue: &mut Vec<File>,
    refused: &mut Vec<String>,
) -> Vec<Use> {
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let is = |i: usize, t: &Tok| toks.get(i).map(|(x, _)| x) == Some(t);
    let mut uses = Vec::new();
    // Braces open now; inline modules as (name, brace depth inside them).
    let mut depth = 0usize;
    let mut inline: Vec<(String, usize)> = Vec::new();
    // `#[cfg(test)]` items open, as the brace depth inside them; a pending attribute
    // covers the tokens up to its item's `;` or `{`.
    let mut test_blocks: Vec<usize> = Vec::new();
    let mut pending_test = false;
    let mut pending_path: Option<String> = None;
    let mut nest = 0usize; // ( and [ open, so `[u8; 4]` does not end an item
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = &toks[i];
        let test = file.test || pending_test || !test_blocks.is_empty();
        let here = || format!("src/{}:{line}", file.rel);
        match tok {
            Tok::Punct('#') if is(i + 1, &Tok::Punct('[')) || is(i + 1, &Tok::Punct('!')) => {
                let open = if is(i + 1, &Tok::Punct('!')) {
                    i + 2
                } else {
                    i + 1
                };
                let close = matching(toks, open);
                let body: Vec<&Tok> = toks[open + 1..close].iter().map(|(t, _)| t).collect();
                match body.as_slice() {
                    [Tok::Ident(c), Tok::Punct('('), Tok::Ident(t), Tok::Punct(')')]
                        if c == "cfg" && t == "test" =>
                    {
                        if open == i + 2 {
                            // `#![cfg(test)]`: the whole enclosing module.
                            test_blocks.push(depth);
                        } else {
                            pending_test = true;
                        }
                    }
                    [Tok::Ident(p), Tok::Punct('='), Tok::Str(s)] if p == "path" => {
                        pending_path = Some(s.clone());
                    }
                    [Tok::Ident(m), ..] if m == "macro_export" || m == "macro_use" => {
                        refused.push(format!("{}: #[{m}] (a crate-root item)", here()));
                    }
                    _ => {}
                }
                i = close + 1;
                continue;
            }
            Tok::Ident(k) if k == "extern" && ident(i + 1) == Some("crate") => {
                refused.push(format!("{}: extern crate", here()));
            }
            Tok::Ident(k) if k == "include" && is(i + 1, &Tok::Punct('!')) => {
                refused.push(format!(
                    "{}: include! (code outside the module tree)",
                    here()
                ));
            }
            Tok::Ident(k) if k == "mod" => {
                if let Some(name) = ident(i + 1) {
                    if is(i + 2, &Tok::Punct(';')) {
                        let mut dir = child_dir(&file.rel);
                        for (m, _) in &inline {
                            dir = format!("{dir}/{m}");
                        }
                        let dir = dir.trim_start_matches('/').to_string();
                        let rel = match pending_path.take() {
                            Some(p) if inline.is_empty() => {
                                let base = file.rel.rsplit_once('/').map_or("", |(d, _)| d);
                                if base.is_empty() {
                                    p
                                } else {
                                    format!("{base}/{p}")
                                }
                            }
                            Some(p) => format!("{dir}/{p}"),
                            None if dir.is_empty() => format!("{name}.rs"),
                            None => format!("{dir}/{name}.rs"),
                        };
                        let mut module = file.module.clone();
                        module.extend(inline.iter().map(|(m, _)| m.clone()));
                        module.push(name.to_string());
                        queue.push(File {
                            rel,
                            module,
                            test,
                            names: BTreeSet::new(),
                        });
                        pending_test = false;
                        i += 3;
                        continue;
                    }
                    if is(i + 2, &Tok::Punct('{')) {
                        depth += 1;
                        inline.push((name.to_string(), depth));
                        if pending_test {
                            test_blocks.push(depth - 1);
                            pending_test = false;
                        }
                        pending_path = None;
                        i += 3;
                        continue;
                    }
                }
            }
            Tok::Ident(k)
                if matches!(k.as_str(), "crate" | "super" | "self")
                    && (is(i + 1, &Tok::Path) || ident(i + 1) == Some("as"))
                    && !(i > 0 && is(i - 1, &Tok::Path))
                    && !(i > 1 && ident(i - 1) == Some("in") && is(i - 2, &Tok::Punct('('))) =>
            {
                let mut here_module = file.module.clone();
                here_module.extend(inline.iter().map(|(m, _)| m.clone()));
                let mut found = Vec::new();
                let end = use_tree(toks, i, Some(here_module), &mut found);
                for (path, glob) in found {
                    uses.push(Use {
                        line: *line,
                        path,
                        glob,
                        test,
                    });
                }
                i = end.max(i + 1);
                continue;
            }
            Tok::Punct('(' | '[') => nest += 1,
            Tok::Punct(')' | ']') => nest = nest.saturating_sub(1),
            Tok::Punct(';') if nest == 0 => {
                pending_test = false;
                pending_path = None;
            }
            Tok::Punct('{') => {
                if pending_test {
                    test_blocks.push(depth);
                    pending_test = false;
                }
                depth += 1;
                pending_path = None;
            }
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth + 1) {
                    inline.pop();
                }
                if test_blocks.last() == Some(&depth) {
                    test_blocks.pop();
                }
            }
            _ => {}
        }
        i += 1;
    }
    uses
}

/// The names `toks` define: the identifier after `fn`, `struct`, `enum`, `trait`,
/// `type`, `const`, `static`, `union`, `mod` and `macro_rules!`, and every name in a
/// `pub use` (of any visibility).
fn names(toks: &[(Tok, usize)]) -> BTreeSet<String> {
    const ITEMS: [&str; 9] = [
        "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
    ];
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let mut out = BTreeSet::new();
    for i in 0..toks.len() {
        match ident(i) {
            Some(k) if ITEMS.contains(&k) => out.extend(ident(i + 1).map(str::to_string)),
            Some("macro_rules") => out.extend(ident(i + 2).map(str::to_string)),
            Some("pub") => {
                let mut j = i + 1;
                if toks.get(j).map(|(t, _)| t) == Some(&Tok::Punct('(')) {
                    j = matching(toks, j) + 1;
                }
                if ident(j) == Some("use") {
                    while j < toks.len() && toks[j].0 != Tok::Punct(';') {
                        out.extend(ident(j).map(str::to_string));
                        j += 1;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The index of the bracket that closes the one at `open`.
fn matching(toks: &[(Tok, usize)], open: usize) -> usize {
    let mut depth = 0;
    for (j, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('[' | '(' | '{') => depth += 1,
            Tok::Punct(']' | ')' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len() - 1
}

/// Parses the use tree or path at `toks[i]` under `prefix` (`None`: above the crate
/// root), pushing each resolved path and whether it is a glob; returns the index after
/// it. `crate` restarts at the root, `super` climbs, `self` stays.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: Option<Vec<String>>,
    out: &mut Vec<(Option<Vec<String>>, bool)>,
) -> usize {
    match toks.get(i).map(|(t, _)| t) {
        Some(Tok::Punct('{')) => {
            i += 1;
            loop {
                if matches!(toks.get(i), Some((Tok::Punct('}'), _)) | None) {
                    return i + 1;
                }
                i = use_tree(toks, i, prefix.clone(), out);
                match toks.get(i).map(|(t, _)| t) {
                    Some(Tok::Punct(',')) => i += 1,
                    Some(Tok::Punct('}')) => return i + 1,
                    _ => return i,
                }
            }
        }
        Some(Tok::Punct('*')) => {
            out.push((prefix, true));
            i + 1
        }
        Some(Tok::Ident(name)) => {
            let next = match name.as_str() {
                "crate" => Some(Vec::new()),
                "super" => prefix.and_then(|mut p| p.pop().map(|_| p)),
                "self" => prefix,
                _ => prefix.map(|mut p| {
                    p.push(name.clone());
                    p
                }),
            };
            if matches!(toks.get(i + 1), Some((Tok::Path, _))) {
                return use_tree(toks, i + 2, next, out);
            }
            out.push((next, false));
            i += 1;
            if matches!(toks.get(i), Some((Tok::Ident(a), _)) if a == "as") {
                i += 2;
            }
            i
        }
        _ => {
            out.push((prefix, false));
            i
        }
    }
}
