//! Answers to the command lines of other load generators typed at rshperf by habit:
//! ab's, wrk's, oha's and hey's short options (`-c 10`, `-t 4`, `-z 10s`, `-n 100`)
//! and misspelt subcommands (`rshperf swep …`).
//!
//! httperf defines few short options (`-h -d -v -V -n`); every other letter is a
//! getopt error, to which `cli` appends the line `short_option` gives: the rshperf
//! option for that letter, and `rshperf ab …` with the user's own arguments when the
//! whole line is an ab command line. `-n` keeps httperf master's meaning
//! (`--periodic-stats`, a flag); `operand` words the warning about the number after
//! it with `periodic_stats_value`. `subcommand` is what `dispatch` says when the first
//! argument is a near miss of a subcommand's name. Owns these texts; the edit distance
//! is `strsim`'s (Damerau–Levenshtein), as for misspelt options (`cli::suggest`).

/// ab's short options that mean the same in rshperf's `ab`: a line made of these and
/// a URL runs as `rshperf ab …` unchanged.
const AB_LETTERS: &str = "nckHpTm";

/// The line after glibc's `invalid option -- 'C'` for a letter other tools define
/// (without the `rshperf: ` prefix), or None for a letter no common tool uses.
/// `argv` is the whole command line (program name first).
pub(crate) fn short_option(letter: char, argv: &[String]) -> Option<String> {
    let what = match letter {
        'c' => {
            "-c (connections: ab, wrk, oha, hey) is --concurrency N here (N requests in \
                flight, a closed loop), or --rate R for httperf's open loop"
        }
        't' => "-t is wrk's threads (--threads N here) or ab's time limit (--runtime S here)",
        'z' => "-z (oha's and hey's duration) is --runtime S here (seconds)",
        'k' => "-k (ab's keep-alive) is --num-calls N here (N requests per connection)",
        'H' => "-H (a header: ab, wrk, oha, hey) is --add-header 'Name: value\\n' here",
        'm' => "-m (oha's and hey's method) is --method M here",
        'q' => "-q (oha's and hey's request rate) is --rate R here",
        'p' => "-p (ab's body file) is --body-file F here (with --method POST)",
        'T' => "-T (ab's content type) is --content-type T here",
        _ => return None,
    };
    // Only ab's letters (and -t, ab's time limit) point to `rshperf ab`.
    if !AB_LETTERS.contains(letter) && letter != 't' {
        return Some(what.to_string());
    }
    Some(match ab_line(argv) {
        Some(line) => format!("{what}; ab's whole command line runs as `{line}`"),
        None => format!("{what}; `rshperf ab` takes ab's command line"),
    })
}

/// `rshperf ab ARGS` when `argv` is an ab command line: options of `AB_LETTERS` only
/// (with their values) and an `http://` or `https://` URL.
fn ab_line(argv: &[String]) -> Option<String> {
    let args = argv.get(1..)?;
    let mut url = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if let Some(letters) = a.strip_prefix('-').filter(|l| !l.is_empty()) {
            let letter = letters.chars().next()?;
            if !AB_LETTERS.contains(letter) {
                return None;
            }
            // Every ab letter here but -k takes a value, attached or next.
            if letter != 'k' && letters.len() == 1 {
                i += 1;
            }
        } else if a.starts_with("http://") || a.starts_with("https://") {
            url = true;
        } else {
            return None;
        }
        i += 1;
    }
    url.then(|| {
        let quoted: Vec<String> = args.iter().map(|a| shell_word(a)).collect();
        format!("rshperf ab {}", quoted.join(" "))
    })
}

/// `s` as one shell word: as is when it needs no quoting, else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@%+[]".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The hint for a number after `-n` (httperf master's `--periodic-stats`, a flag),
/// as ab's `-n N` means it: None when `text` is no count.
pub(crate) fn periodic_stats_value(text: &str) -> Option<String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(format!(
        "-n is httperf's --periodic-stats (it takes no value); ab's -n {text} (requests) is \
         --num-conns {text} here, or run ab's command line as `rshperf ab -n {text} …`"
    ))
}

/// The hint for a `-d` value that is no debug level but wrk's duration (`30s`, `2m`,
/// `1h`): the `--runtime` it stands for. None for anything else.
pub(crate) fn debug_value(value: &str) -> Option<String> {
    let unit = value.chars().last()?;
    let scale = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        _ => return None,
    };
    let number = &value[..value.len() - 1];
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds = number.parse::<u64>().ok()?.checked_mul(scale)?;
    Some(format!(
        "-d is httperf's --debug (a level); wrk's -d {value} (duration) is --runtime \
         {seconds} here"
    ))
}

/// The subcommand `word` (the first argument) probably misspells, among `names`: the
/// one at the smallest edit distance when it is small for the word's length (one edit
/// up to 4 characters, two from 5) and no other is as close. Never for a word that
/// could be a host, a URL or a file (`.`, `:`, `/`), nor for an option.
pub(crate) fn subcommand<'n>(word: &str, names: &[&'n str]) -> Option<&'n str> {
    if word.is_empty() || word.starts_with('-') || word.contains(['.', ':', '/']) {
        return None;
    }
    let limit = if word.chars().count() <= 4 { 1 } else { 2 };
    closest(word, names.iter().copied(), limit)
}

/// The name of `names` at the smallest edit distance from `word` (Damerau–Levenshtein),
/// when that distance is at most `limit` and no other name is as close. Shared with
/// `cli::suggest` (misspelt options).
pub(crate) fn closest<'n>(
    word: &str,
    names: impl IntoIterator<Item = &'n str>,
    limit: usize,
) -> Option<&'n str> {
    let mut best: Option<(usize, &'n str)> = None;
    let mut tie = false;
    for name in names {
        let d = strsim::damerau_levenshtein(word, name);
        match best {
            Some((b, _)) if d > b => {}
            Some((b, _)) if d == b => tie = true,
            _ => {
                best = Some((d, name));
                tie = false;
            }
        }
    }
    match best {
        Some((d, name)) if d <= limit && !tie => Some(name),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn ab_lines_are_given_back_as_rshperf_ab() {
        let cases = [
            (
                "rshperf -n 100 -c 10 http://127.0.0.1:8080/",
                Some("rshperf ab -n 100 -c 10 http://127.0.0.1:8080/"),
            ),
            (
                "rshperf -k -n100 -c 10 -H X-A:b https://h/x?y=1&z",
                Some("rshperf ab -k -n100 -c 10 -H X-A:b 'https://h/x?y=1&z'"),
            ),
            // wrk's -t and -d mean something else to ab.
            ("rshperf -t 4 -c 100 -d 30s http://h/", None),
            // No URL: nothing to run.
            ("rshperf -n 100 -c 10", None),
            ("rshperf -c 10 --rate 5 http://h/", None),
        ];
        for (line, want) in cases {
            assert_eq!(ab_line(&argv(line)).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn other_tools_letters_name_the_rshperf_option() {
        let line = argv("rshperf -n 100 -c 10 http://127.0.0.1:8080/");
        assert_eq!(
            short_option('c', &line).as_deref(),
            Some(
                "-c (connections: ab, wrk, oha, hey) is --concurrency N here (N requests in \
                 flight, a closed loop), or --rate R for httperf's open loop; ab's whole \
                 command line runs as `rshperf ab -n 100 -c 10 http://127.0.0.1:8080/`"
            )
        );
        let wrk = argv("rshperf -t4 -c100 -d30s http://h/");
        assert_eq!(
            short_option('t', &wrk).as_deref(),
            Some(
                "-t is wrk's threads (--threads N here) or ab's time limit (--runtime S \
                 here); `rshperf ab` takes ab's command line"
            )
        );
        // oha's letters do not point to `rshperf ab`.
        assert_eq!(
            short_option('z', &wrk).as_deref(),
            Some("-z (oha's and hey's duration) is --runtime S here (seconds)")
        );
        for letter in ['z', 'k', 'H', 'm', 'q', 'p', 'T'] {
            let hint = short_option(letter, &wrk).expect("a hint");
            assert!(hint.starts_with(&format!("-{letter} (")), "{hint}");
            assert!(hint.contains(" here"), "{hint}");
        }
        assert_eq!(short_option('x', &wrk), None);
    }

    #[test]
    fn a_count_after_n_is_answered_as_abs_requests() {
        assert_eq!(
            periodic_stats_value("100").as_deref(),
            Some(
                "-n is httperf's --periodic-stats (it takes no value); ab's -n 100 \
                 (requests) is --num-conns 100 here, or run ab's command line as \
                 `rshperf ab -n 100 …`"
            )
        );
        assert_eq!(periodic_stats_value("x"), None);
        assert_eq!(periodic_stats_value(""), None);
    }

    #[test]
    fn a_wrk_duration_after_d_is_answered_with_runtime() {
        assert_eq!(
            debug_value("30s").as_deref(),
            Some("-d is httperf's --debug (a level); wrk's -d 30s (duration) is --runtime 30 here")
        );
        assert!(debug_value("2m").is_some_and(|h| h.ends_with("--runtime 120 here")));
        assert!(debug_value("1h").is_some_and(|h| h.ends_with("--runtime 3600 here")));
        for not in ["3", "s", "1.5s", "x5s", "", "99999999999999999999h"] {
            assert_eq!(debug_value(not), None, "{not}");
        }
    }

    #[test]
    fn near_misses_of_subcommands_are_named() {
        let names = [
            "serve",
            "demo",
            "merge",
            "compare",
            "sweep",
            "ab",
            "lb",
            "completions",
            "help",
        ];
        let cases = [
            ("swep", Some("sweep")),
            ("comapre", Some("compare")),
            ("sweeep", Some("sweep")),
            ("serv", Some("serve")),
            ("dmeo", Some("demo")),
            ("completion", Some("completions")),
            ("hlep", Some("help")),
            ("ba", Some("ab")),
            // Equally close to ab and lb.
            ("xb", None),
            ("localhost", None),
            ("swep.example.com", None),
            ("swep:8080", None),
            ("-swep", None),
            ("anything", None),
            ("", None),
        ];
        for (word, want) in cases {
            assert_eq!(subcommand(word, &names), want, "{word}");
        }
    }
}
