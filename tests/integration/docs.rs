//! What the texts say matches the program: every option README.md, docs/ and the man
//! page name is one a parser of rshperf accepts (or another tool's, listed here with
//! the tool); every option rshperf's own messages recommend is one the parser of that
//! front end accepts; the column names the docs quote are in the headers the program
//! writes (the `--csv` file, the `--timeline` file, the sweep's table), and a count of
//! columns, where one is stated, is the header's; and no example aims at a fixed port
//! of the loopback nginx (they name `$HTTP_PORT` and the others, so one variable moves
//! them: scripts/ports.sh, tested here too).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{self, run};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and docs/*.md, with their paths relative to the repository.
fn markdown() -> Vec<(String, String)> {
    let mut files = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| format!("docs/{}", p.file_name().expect("a name").to_string_lossy()))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|f| {
            let text = read(&repo().join(&f));
            (f, text)
        })
        .collect()
}

/// The man page as plain text (roff's `\-` and font escapes removed).
fn man_page() -> String {
    read(&repo().join("man/rshperf.1"))
        .replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
        .replace("\\fP", "")
}

/// Every `--long-option` token of `text` (not inside a word: `a--b` is none).
fn long_options(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = text[i..].find("--") {
        let start = i + at;
        let before = start.checked_sub(1).map(|j| bytes[j]);
        let mut end = start + 2;
        while end < bytes.len()
            && (bytes[end].is_ascii_lowercase()
                || bytes[end].is_ascii_digit()
                || bytes[end] == b'-'
                || bytes[end] == b'_')
        {
            end += 1;
        }
        let word_before = before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-');
        let first = bytes.get(start + 2).copied();
        if !word_before && first.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
            found.push(text[start..end].trim_end_matches('-').to_string());
        }
        i = end.max(start + 2);
    }
    found
}

#[test]
fn long_options_are_found_as_words() {
    assert_eq!(
        long_options("a `--rate 5` or --num-conns=3, not a--b nor ---x; --ssl- --low_rate"),
        ["--rate", "--num-conns", "--ssl", "--low_rate"]
    );
}

/// How a parser took a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// An option (or a unique abbreviation, or an alias).
    Option,
    /// A prefix of several options (`--ser`): glibc's "ambiguous".
    Ambiguous,
    /// Not an option.
    Unknown,
}

/// How the httperf-style parser (`rshperf [options]`) takes `token`.
fn httperf_takes(token: &str) -> Taken {
    let argv = ["rshperf".to_string(), token.to_string()];
    match rshperf::front::cli::parse(&argv) {
        Ok(_) => Taken::Option,
        Err(e) => {
            let text = e.to_string();
            if text.contains("is ambiguous") {
                Taken::Ambiguous
            } else if text.contains("unrecognized option") {
                Taken::Unknown
            } else {
                // "requires an argument", "doesn't allow an argument": an option.
                Taken::Option
            }
        }
    }
}

/// The subcommands whose options clap parses.
const CLAP_COMMANDS: [&str; 6] = ["sweep", "merge", "compare", "serve", "completions", "log"];

/// Whether `rshperf COMMAND token` gets past clap's "unexpected argument" (an option,
/// an alias or a unique abbreviation of the command's).
fn clap_takes(command: &str, token: &str) -> bool {
    let out = run(&[command, token, "--help"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    !stderr.contains("unexpected argument") && !stderr.contains("unrecognized")
}

/// `rshperf replay`'s own options (not clap's: its other options are httperf's); the
/// replay tests run each.
const REPLAY_OPTIONS: &[&str] = &["--speed", "--replay-connections"];

/// Options of other programs that the docs name, with the program.
const OTHER_TOOLS: &[(&str, &str)] = &[
    ("--locked", "cargo"),
    ("--release", "cargo"),
    ("--path", "cargo install"),
    ("--git", "cargo install"),
    ("--target", "cargo build"),
    ("--check", "cargo fmt"),
    ("--lib", "cargo test"),
    ("--test", "cargo test"),
    ("--ignored", "the test binary of cargo test"),
    ("--nocapture", "the test binary of cargo test"),
    ("--no-build", "cargo deb"),
    ("--strip", "cargo deb"),
    ("--basefile", "GNU parallel"),
    ("--cleanup", "GNU parallel"),
    ("--halt", "GNU parallel"),
    ("--return", "GNU parallel"),
    ("--tag", "GNU parallel"),
    ("--termseq", "GNU parallel"),
    ("--will-cite", "GNU parallel"),
    ("--ntasks-per-node", "srun"),
    ("--preserve-status", "timeout"),
];

/// Tokens the docs show as what is not an option: the misspellings and placeholders
/// of the error examples, and httperf's own message text.
const NOT_OPTIONS: &[(&str, &str)] = &[
    ("--bogus", "the unrecognized-option example"),
    ("--numconns", "the did-you-mean example"),
    ("--opt", "getopt's `--opt=value` placeholder"),
    (
        "--max-conns",
        "httperf's session_init message, quoted byte for byte",
    ),
    (
        "--server_name",
        "httperf's echo line spelling of --server-name",
    ),
];

/// Texts of rshperf that name an option as httperf prints it, byte for byte, rather
/// than recommending one: the file and the token.
const HTTPERF_TEXTS: &[(&str, &str)] = &[("src/model/config/echo.rs", "--server_name")];

/// The options bench/run.sh's header lists (`bash bench/run.sh --ab12`).
fn bench_options() -> BTreeSet<String> {
    let text = read(&repo().join("bench/run.sh"));
    let header: String = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    long_options(&header).into_iter().collect()
}

#[test]
fn every_option_the_docs_name_is_one_rshperf_or_the_named_tool_takes() {
    let bench = bench_options();
    let mut texts = markdown();
    texts.push(("man/rshperf.1".into(), man_page()));
    let mut unknown: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut checked = BTreeMap::new();
    for (file, text) in &texts {
        for token in long_options(text) {
            let known = *checked.entry(token.clone()).or_insert_with(|| {
                httperf_takes(&token) != Taken::Unknown
                    || OTHER_TOOLS.iter().any(|(t, _)| *t == token)
                    || NOT_OPTIONS.iter().any(|(t, _)| *t == token)
                    || bench.contains(&token)
                    || REPLAY_OPTIONS.contains(&token.as_str())
                    || CLAP_COMMANDS.iter().any(|c| clap_takes(c, &token))
            });
            if !known {
                unknown.entry(token).or_default().insert(file.clone());
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "options named in the docs that no parser takes: {unknown:#?}"
    );
    // The lists name nothing rshperf itself takes (a tool's option that rshperf
    // takes too needs no entry) and nothing the texts no longer name.
    let all: BTreeSet<String> = texts.iter().flat_map(|(_, t)| long_options(t)).collect();
    for (token, why) in OTHER_TOOLS.iter().chain(NOT_OPTIONS) {
        assert!(all.contains(*token), "{token} ({why}) is named nowhere");
        assert_eq!(httperf_takes(token), Taken::Unknown, "{token} ({why})");
    }
}

/// The front ends whose parser a message in `path` (under src/) names options of,
/// besides httperf's: the subcommand's own.
fn fronts_of(path: &str) -> Vec<&'static str> {
    // A front end's error type lives in src/front/error/, named like the front end.
    let path = path.replace("src/front/error/", "src/front/");
    let front = |name: &str| path.starts_with(&format!("src/front/{name}"));
    if front("sweep") {
        vec!["sweep", "merge"]
    } else if front("merge") {
        vec!["merge"]
    } else if front("compare") || path == "src/output/compare.rs" {
        vec!["compare"]
    } else if front("serve") {
        vec!["serve"]
    } else if front("log") {
        vec!["log"]
    } else if front("dispatch") || path == "src/front/mod.rs" {
        CLAP_COMMANDS.to_vec()
    } else {
        Vec::new()
    }
}

/// The Rust files under `dir`, recursively, relative to the repository.
fn rust_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|x| x == "rs") {
            let rel = path.strip_prefix(repo()).expect("under the repository");
            files.push(rel.to_string_lossy().into_owned());
        }
    }
    files.sort();
    files
}

/// The code of a source file that is not a test and not a comment.
fn message_code(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_option_a_message_recommends_is_one_its_parser_takes() {
    let mut wrong = Vec::new();
    let mut tokens = 0;
    for file in rust_files(&repo().join("src")) {
        let name = Path::new(&file)
            .file_name()
            .expect("a name")
            .to_string_lossy();
        let stem = name.trim_end_matches(".rs");
        if stem == "tests" || stem.ends_with("_tests") || stem.starts_with("tests_") {
            continue;
        }
        let code = message_code(&read(&repo().join(&file)));
        for token in long_options(&code).into_iter().collect::<BTreeSet<_>>() {
            tokens += 1;
            // Messages name whole options: an abbreviation is accepted by the parser
            // but is httperf's own text only where compatibility demands it.
            let ok = httperf_takes(&token) == Taken::Option
                || HTTPERF_TEXTS.contains(&(file.as_str(), token.as_str()))
                || (file == "src/front/replay.rs" && REPLAY_OPTIONS.contains(&token.as_str()))
                || fronts_of(&file).iter().any(|c| clap_takes(c, &token));
            if !ok {
                wrong.push(format!("{file}: {token}"));
            }
        }
    }
    assert!(
        tokens > 300,
        "{tokens} tokens: is the scan reading the sources?"
    );
    assert!(
        wrong.is_empty(),
        "options named in messages that their parser refuses: {wrong:#?}"
    );
    // The scan sees what it must: httperf's parser refuses a made-up option and the
    // sweep's takes its own.
    assert_eq!(httperf_takes("--partitions"), Taken::Unknown);
    assert!(clap_takes("sweep", "--partitions"));
    assert_eq!(httperf_takes("--ser"), Taken::Ambiguous);
}

/// The first line of a CSV file.
fn header(path: &Path) -> Vec<String> {
    read(path)
        .lines()
        .next()
        .unwrap_or_default()
        .split([',', '\t'])
        .map(str::to_string)
        .collect()
}

/// The headers the program writes: `--csv` (a run of `demo`), `--timeline`, and the
/// sweep's table (a one-step sweep at a port nobody listens on, HOST for the host).
fn program_headers() -> (Vec<String>, BTreeSet<String>) {
    let dir = std::env::temp_dir().join(format!("rshperf-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let (csv, timeline) = (dir.join("run.csv"), dir.join("timeline.csv"));
    let out = run(&[
        "demo",
        "--rate",
        "100",
        "--num-conns",
        "5",
        &format!("--csv={}", csv.display()),
        &format!("--timeline={}", timeline.display()),
    ]);
    assert!(out.status.success(), "{out:?}");
    let run_csv = header(&csv);
    let port = support::server::closed_port().to_string();
    let out = run(&[
        "sweep",
        "--server",
        "127.0.0.1",
        "--port",
        &port,
        "--low-rate",
        "5",
        "--high-rate",
        "5",
        "--rate-step",
        "1",
        "--const-test-time",
        "1",
    ]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut all: BTreeSet<String> = run_csv.iter().cloned().collect();
    all.extend(header(&timeline));
    all.extend(
        table
            .lines()
            .next()
            .unwrap_or_default()
            .split('\t')
            .map(|c| c.replace("127.0.0.1", "HOST")),
    );
    let _ = std::fs::remove_dir_all(&dir);
    (run_csv, all)
}

/// The backticked spans of `text` the docs present as column names: the first cell
/// of a `| column | meaning |` table's rows, a span right before the word "column",
/// and the words of a span right after "columns" or "the header".
fn quoted_columns(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("| column |") {
            in_table = true;
            continue;
        }
        if in_table && line.starts_with('|') {
            let cell = line.split('|').nth(1).unwrap_or_default();
            names.extend(spans(cell).into_iter().flat_map(words));
            continue;
        }
        in_table = false;
    }
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut rest = flat.as_str();
    while let Some(i) = rest.find('`') {
        let after = &rest[i + 1..];
        let Some(j) = after.find('`') else { break };
        let span = &after[..j];
        let before = rest[..i].trim_end();
        let next = after[j + 1..].trim_start();
        let names_a_column = ["column ", "column,", "column)"]
            .iter()
            .any(|c| next.starts_with(c));
        if names_a_column || before.ends_with("columns") || before.ends_with("the header") {
            names.extend(words(span));
        }
        rest = &after[j + 1..];
    }
    names
}

/// The backticked spans of `s`.
fn spans(s: &str) -> Vec<&str> {
    s.split('`').skip(1).step_by(2).collect()
}

/// The column names of a span: its words that look like one (`p50_ms`, `verdict`).
fn words(span: &str) -> Vec<String> {
    span.split_whitespace()
        .filter(|w| {
            w.bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b.is_ascii_uppercase()
            }) && !w.is_empty()
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn quoted_columns_are_found() {
    let md = "| column | meaning |\n|---|---|\n| `a_b`, `c` | x |\n\nthe `d` column and \
              rshperf's own columns `e f_g`; the header `H_HOST i`.";
    assert_eq!(
        quoted_columns(md),
        ["a_b", "c", "d", "e", "f_g", "H_HOST", "i"]
    );
}

#[test]
fn every_column_the_docs_quote_is_in_a_header_the_program_writes() {
    let (run_csv, all) = program_headers();
    assert!(run_csv.len() > 50, "{run_csv:?}");
    let mut wrong = Vec::new();
    let mut quoted = 0;
    for (file, text) in markdown() {
        for name in quoted_columns(&text) {
            quoted += 1;
            if !all.contains(&name) {
                wrong.push(format!("{file}: `{name}`"));
            }
        }
        // A count of columns, where the docs give one, is the `--csv` file's.
        let flat = text.split_whitespace().collect::<Vec<_>>();
        for pair in flat.windows(2) {
            let n: Option<usize> = pair[0].trim_start_matches(['(', ':']).parse().ok();
            if let (Some(n), true) = (n, pair[1].starts_with("columns")) {
                if n > 20 {
                    assert_eq!(n, run_csv.len(), "{file}: {} {}", pair[0], pair[1]);
                }
            }
        }
    }
    assert!(quoted > 40, "only {quoted} column names found in the docs");
    assert!(
        wrong.is_empty(),
        "columns the program does not write: {wrong:#?}"
    );
}

/// The command lines of the code blocks of `md`: every line of a `sh` or `bash`
/// block, and the `$ ` lines (with their continuations) of other blocks.
fn command_lines(md: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut lines = md.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let script = matches!(lang.trim(), "sh" | "bash");
        let mut continued = false;
        for body in lines.by_ref() {
            if body.trim_start().starts_with("```") {
                break;
            }
            let command = script || body.starts_with("$ ") || continued;
            if command {
                found.push(body.to_string());
            }
            continued = command && !script && body.trim_end().ends_with('\\');
        }
    }
    found
}

/// The loopback nginx's default ports, with the variables the examples name them by.
const NGINX_PORTS: [(&str, &str); 4] = [
    ("8080", "HTTP_PORT"),
    ("8443", "TLS_PORT"),
    ("8082", "H2C_PORT"),
    ("8444", "H2_PORT"),
];

#[test]
fn examples_name_the_nginx_ports_by_variable() {
    let md = "```sh\nrshperf --port 8080\n```\n```\n$ rshperf x \\\n  http://h:8443/\n\
              out --port=8080\n```\n";
    assert_eq!(
        command_lines(md),
        ["rshperf --port 8080", "$ rshperf x \\", "  http://h:8443/"]
    );
    let mut fixed = Vec::new();
    for (file, text) in markdown() {
        for line in command_lines(&text) {
            for (port, var) in NGINX_PORTS {
                for form in [
                    format!(":{port}"),
                    format!("--port {port}"),
                    format!("--port={port}"),
                ] {
                    let hit = line.match_indices(&form).any(|(i, _)| {
                        !line[i + form.len()..].starts_with(|c: char| c.is_ascii_digit())
                    });
                    if hit {
                        fixed.push(format!("{file}: {line}  (use ${var})"));
                    }
                }
            }
        }
    }
    assert!(
        fixed.is_empty(),
        "examples with a fixed nginx port: {fixed:#?}"
    );
}

/// `. scripts/ports.sh` in bash with `env`, then the variables it exports.
fn ports_after(env: &[(&str, &str)], then: &str) -> String {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -u; . scripts/ports.sh; {then}; echo $HTTP_PORT $TLS_PORT $H2C_PORT $H2_PORT"
        ))
        .current_dir(repo())
        .env_remove("HTTP_PORT")
        .env_remove("TLS_PORT")
        .env_remove("H2C_PORT")
        .env_remove("H2_PORT")
        .env_remove("RSHPERF_PORTS_FROM")
        .envs(env.iter().copied())
        .output()
        .expect("bash");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn one_variable_moves_every_nginx_port() {
    assert_eq!(ports_after(&[], "true"), "8080 8443 8082 8444");
    assert_eq!(
        ports_after(&[("HTTP_PORT", "18080")], "true"),
        "18080 18443 18082 18444"
    );
    // A port set by hand keeps its value.
    assert_eq!(
        ports_after(&[("HTTP_PORT", "18080"), ("TLS_PORT", "9443")], "true"),
        "18080 9443 18082 18444"
    );
    // Sourced again after HTTP_PORT moved: the derived ports follow it.
    assert_eq!(
        ports_after(&[], "export HTTP_PORT=28080; . scripts/ports.sh"),
        "28080 28443 28082 28444"
    );
}
