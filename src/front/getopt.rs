//! The option scanner of rshperf's httperf command line (`front::cli`), `rshperf ab`
//! and `rshperf lb`: glibc's `getopt` rules, which APR's `apr_getopt` shares for
//! everything ab uses. Hand-written: each tool's diagnostics are byte-compatible with
//! the tool's own, which no crate's parser reproduces.
//!
//! Owns the rules: an option-letters table (`"n:c:k"`: a letter, `:` after a letter
//! that takes a value), clustered flags (`-kq`), a value attached (`-c10`, also after
//! flags: `-kc10`) or in the next word (`-c 10`, taken whatever it looks like), `--`
//! ending the options, a lone `-` being an operand, and where operands may stand:
//! before the options end (`Operands::EndOptions`, ab: the first operand ends them, as
//! APR's loop in ab) or anywhere (`Operands::Anywhere`, httperf and lb: glibc permutes
//! them). With `with_long`, a `--name[=value]` word is handed back whole (`Item::Long`)
//! and the caller, which owns the long-option table, takes a separate value with
//! `value`. It also owns the two styles of diagnostic for a bad letter or a missing
//! value (`apr_text` as ab prints them, `glibc_text` as httperf and lb print them). It
//! does not know what a letter means: `front::cli` (httperf), `ab::args` and `ab::lb`
//! map the `Item`s, in command-line order.

/// Where operands (words that are no option) may stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// The first operand ends the options: it and every word after it are operands
    /// (APR's `apr_getopt` loop, as ab uses it).
    EndOptions,
    /// Operands may stand between options; scanning goes on after them (glibc's
    /// `getopt`, which permutes, as lb uses it).
    Anywhere,
}

/// One thing the scanner found, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item<'a> {
    /// An option letter and, when the table says it takes one, its value.
    Opt(char, Option<&'a str>),
    /// A word that is no option (or any word after `--`, or after the first operand
    /// with `Operands::EndOptions`).
    Operand(&'a str),
    /// One of the whole words the caller asked to see (`with_words`, ab's `--help`),
    /// where an option could stand.
    Word(&'a str),
    /// With `with_long`: a long option where an option could stand, the text after its
    /// `--` (`name` or `name=value`).
    Long(&'a str),
}

/// Why scanning stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GetoptError {
    /// A letter the table does not have.
    Unknown(char),
    /// A letter that takes a value, at the end of the command line.
    NoValue(char),
}

impl GetoptError {
    /// The message as APR prints it (ab): `illegal option -- Q`,
    /// `option requires an argument -- n`.
    pub(crate) fn apr_text(self) -> String {
        match self {
            GetoptError::Unknown(c) => format!("illegal option -- {c}"),
            GetoptError::NoValue(c) => format!("option requires an argument -- {c}"),
        }
    }

    /// The message as glibc prints it (httperf, lb): `invalid option -- 'Z'`,
    /// `option requires an argument -- 'n'`.
    pub(crate) fn glibc_text(self) -> String {
        match self {
            GetoptError::Unknown(c) => format!("invalid option -- '{c}'"),
            GetoptError::NoValue(c) => format!("option requires an argument -- '{c}'"),
        }
    }
}

/// The scanner: an iterator of `Item`s over the words after the program name. It
/// stops after the first error.
#[derive(Debug, Clone)]
pub(crate) struct Getopt<'a> {
    /// The words (without the program name).
    words: &'a [String],
    /// The option-letters table.
    letters: &'static str,
    /// Where operands may stand.
    operands: Operands,
    /// Whole words returned as `Item::Word` where an option could stand.
    special: &'static [&'static str],
    /// Whether `--name` words are long options (`Item::Long`).
    long: bool,
    /// The index of the word the last item came from.
    current: usize,
    /// The next word to look at.
    next: usize,
    /// Inside a cluster: the word's index and the byte offset of its next letter.
    cluster: Option<(usize, usize)>,
    /// Whether every word from `next` on is an operand (after `--`, or after the first
    /// operand with `Operands::EndOptions`).
    only_operands: bool,
    /// Whether an error ended the scan.
    failed: bool,
}

impl<'a> Getopt<'a> {
    /// A scanner of `words` (the words after the program name) with the option-letters
    /// table `letters` (`"n:c:k"`).
    pub(crate) fn new(words: &'a [String], letters: &'static str, operands: Operands) -> Self {
        Getopt {
            words,
            letters,
            operands,
            special: &[],
            long: false,
            current: 0,
            next: 0,
            cluster: None,
            only_operands: false,
            failed: false,
        }
    }

    /// Also returns these whole words as `Item::Word` where an option could stand
    /// (ab's `--help`), instead of scanning them as letters.
    pub(crate) fn with_words(mut self, special: &'static [&'static str]) -> Self {
        self.special = special;
        self
    }

    /// Hands back `--name[=value]` words as `Item::Long` instead of scanning them as
    /// letters.
    pub(crate) fn with_long(mut self) -> Self {
        self.long = true;
        self
    }

    /// Takes the next word as the value of the long option just returned (`--name
    /// value`), whatever it looks like; None at the end of the command line.
    pub(crate) fn value(&mut self) -> Option<&'a str> {
        debug_assert!(self.cluster.is_none(), "a long option is no cluster");
        let word = self.words.get(self.next)?;
        self.next += 1;
        Some(word.as_str())
    }

    /// The whole word the last item (or error) came from: a cluster (`-kq`) for its
    /// letters.
    pub(crate) fn word(&self) -> &'a str {
        self.words.get(self.current).map_or("", String::as_str)
    }

    /// Whether the last letter returned ended its word (no letter of its cluster is
    /// left, and it took no value from the next word).
    pub(crate) fn ended_word(&self) -> bool {
        self.cluster.is_none() && self.next == self.current + 1
    }

    /// Whether every word from here on is an operand: `--` was seen (or, with
    /// `Operands::EndOptions`, an operand).
    pub(crate) fn options_ended(&self) -> bool {
        self.only_operands
    }

    /// Whether `c` is in the table, and whether it takes a value.
    fn lookup(&self, c: char) -> Option<bool> {
        if c == ':' {
            return None;
        }
        let at = self.letters.find(c)?;
        Some(self.letters[at + c.len_utf8()..].starts_with(':'))
    }

    /// The next letter of the cluster in word `w` at byte `at`.
    fn letter(&mut self, w: usize, at: usize) -> Result<Item<'a>, GetoptError> {
        let word = self.words[w].as_str();
        let c = word[at..]
            .chars()
            .next()
            .expect("a cluster has a letter left");
        let after = at + c.len_utf8();
        let takes_value = self.lookup(c).ok_or(GetoptError::Unknown(c))?;
        if !takes_value {
            self.cluster = (after < word.len()).then_some((w, after));
            return Ok(Item::Opt(c, None));
        }
        self.cluster = None;
        if after < word.len() {
            return Ok(Item::Opt(c, Some(&word[after..])));
        }
        match self.words.get(self.next) {
            Some(value) => {
                self.next += 1;
                Ok(Item::Opt(c, Some(value.as_str())))
            }
            None => Err(GetoptError::NoValue(c)),
        }
    }
}

impl<'a> Iterator for Getopt<'a> {
    type Item = Result<Item<'a>, GetoptError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let found = match self.cluster {
            Some((w, at)) => self.letter(w, at),
            None => {
                let word = self.words.get(self.next)?.as_str();
                let w = self.next;
                self.current = w;
                self.next += 1;
                if self.only_operands {
                    Ok(Item::Operand(word))
                } else if word == "--" {
                    self.only_operands = true;
                    return self.next();
                } else if self.special.contains(&word) {
                    Ok(Item::Word(word))
                } else if let Some(body) = word.strip_prefix("--").filter(|_| self.long) {
                    Ok(Item::Long(body))
                } else if word.len() > 1 && word.starts_with('-') {
                    self.letter(w, 1)
                } else {
                    self.only_operands = self.operands == Operands::EndOptions;
                    Ok(Item::Operand(word))
                }
            }
        };
        self.failed = found.is_err();
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LETTERS: &str = "n:c:kqV";

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Every item of scanning `list`, then the error if one stopped it.
    fn scan(list: &[&str], operands: Operands) -> (Vec<String>, Option<GetoptError>) {
        let w = words(list);
        let mut items = Vec::new();
        for item in Getopt::new(&w, LETTERS, operands).with_words(&["--help"]) {
            match item {
                Ok(Item::Opt(c, None)) => items.push(format!("-{c}")),
                Ok(Item::Opt(c, Some(v))) => items.push(format!("-{c}={v}")),
                Ok(Item::Operand(o)) => items.push(format!("op:{o}")),
                Ok(Item::Word(o)) => items.push(format!("word:{o}")),
                Ok(Item::Long(o)) => items.push(format!("long:{o}")),
                Err(e) => return (items, Some(e)),
            }
        }
        (items, None)
    }

    fn both(list: &[&str]) -> (Vec<String>, Option<GetoptError>) {
        let end = scan(list, Operands::EndOptions);
        assert_eq!(end, scan(list, Operands::Anywhere), "{list:?}");
        end
    }

    #[test]
    fn the_letters_table_says_which_letters_take_a_value() {
        assert_eq!(
            both(&["-k", "-n", "5", "-q"]),
            (words(&["-k", "-n=5", "-q"]), None)
        );
        assert_eq!(both(&["-x"]), (vec![], Some(GetoptError::Unknown('x'))));
        // `:` marks values; it is no letter itself.
        assert_eq!(both(&["-:"]), (vec![], Some(GetoptError::Unknown(':'))));
        assert_eq!(both(&["-é"]), (vec![], Some(GetoptError::Unknown('é'))));
    }

    #[test]
    fn flags_cluster_and_a_value_ends_the_cluster() {
        assert_eq!(both(&["-kqV"]), (words(&["-k", "-q", "-V"]), None));
        assert_eq!(both(&["-kc10"]), (words(&["-k", "-c=10"]), None));
        assert_eq!(both(&["-kc", "10"]), (words(&["-k", "-c=10"]), None));
        // Letters after a value's letter are its value.
        assert_eq!(both(&["-nkq"]), (words(&["-n=kq"]), None));
        // A bad letter inside a cluster stops there, after the good ones.
        assert_eq!(
            both(&["-kxq"]),
            (words(&["-k"]), Some(GetoptError::Unknown('x')))
        );
    }

    #[test]
    fn a_value_is_attached_or_the_next_word_whatever_it_looks_like() {
        assert_eq!(both(&["-c10"]), (words(&["-c=10"]), None));
        assert_eq!(both(&["-c", "10"]), (words(&["-c=10"]), None));
        assert_eq!(both(&["-c", "-k"]), (words(&["-c=-k"]), None));
        assert_eq!(both(&["-c", "--"]), (words(&["-c=--"]), None));
        assert_eq!(both(&["-c", ""]), (words(&["-c="]), None));
        assert_eq!(
            both(&["-k", "-c"]),
            (words(&["-k"]), Some(GetoptError::NoValue('c')))
        );
        assert_eq!(
            both(&["-kc"]),
            (words(&["-k"]), Some(GetoptError::NoValue('c')))
        );
    }

    #[test]
    fn double_dash_ends_the_options() {
        assert_eq!(
            both(&["-k", "--", "-q", "--", "u"]),
            (words(&["-k", "op:-q", "op:--", "op:u"]), None)
        );
        assert_eq!(both(&["--"]), (vec![], None));
    }

    #[test]
    fn operands_end_the_options_or_stand_anywhere() {
        let list = ["-k", "u1", "-q", "-", "--help"];
        assert_eq!(
            scan(&list, Operands::EndOptions),
            (words(&["-k", "op:u1", "op:-q", "op:-", "op:--help"]), None)
        );
        assert_eq!(
            scan(&list, Operands::Anywhere),
            (words(&["-k", "op:u1", "-q", "op:-", "word:--help"]), None)
        );
        // A lone `-` is an operand, and ends the options too.
        assert_eq!(
            scan(&["-", "-k"], Operands::EndOptions),
            (words(&["op:-", "op:-k"]), None)
        );
    }

    #[test]
    fn special_words_only_where_an_option_could_stand() {
        assert_eq!(
            both(&["-k", "--help", "-q"]),
            (words(&["-k", "word:--help", "-q"]), None)
        );
        // Without being asked for, `--help` is letters: `-` is no letter.
        let w = words(&["--help"]);
        let first = Getopt::new(&w, LETTERS, Operands::EndOptions).next();
        assert_eq!(first, Some(Err(GetoptError::Unknown('-'))));
        // A value is never a special word.
        assert_eq!(both(&["-c", "--help"]), (words(&["-c=--help"]), None));
    }

    #[test]
    fn long_options_come_whole_and_take_their_value_when_asked() {
        let w = words(&[
            "-k",
            "--num-conns",
            "5",
            "u",
            "--uri=/x",
            "-c",
            "1",
            "--",
            "--k",
        ]);
        let mut g = Getopt::new(&w, LETTERS, Operands::Anywhere).with_long();
        let mut items = Vec::new();
        while let Some(item) = g.next() {
            match item {
                Ok(Item::Long(name)) if !name.contains('=') => {
                    let v = g.value().expect("a value");
                    items.push(format!("long:{name}={v}"));
                }
                Ok(Item::Long(name)) => items.push(format!("long:{name}")),
                Ok(Item::Opt(c, v)) => items.push(format!("-{c}={}", v.unwrap_or(""))),
                Ok(Item::Operand(o)) => {
                    items.push(format!("op:{o}:{}", g.options_ended()));
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            items,
            [
                "-k=",
                "long:num-conns=5",
                "op:u:false",
                "long:uri=/x",
                "-c=1",
                "op:--k:true"
            ]
        );
        // At the end of the command line there is no value.
        let w = words(&["--rate"]);
        let mut g = Getopt::new(&w, LETTERS, Operands::Anywhere).with_long();
        assert_eq!(g.next(), Some(Ok(Item::Long("rate"))));
        assert_eq!(g.value(), None);
    }

    #[test]
    fn the_word_of_each_item_and_whether_a_letter_ended_it() {
        let w = words(&["-kq", "-c", "5", "-k"]);
        let mut g = Getopt::new(&w, LETTERS, Operands::Anywhere);
        let mut seen = Vec::new();
        while let Some(Ok(item)) = g.next() {
            seen.push(format!("{item:?} {} {}", g.word(), g.ended_word()));
        }
        assert_eq!(
            seen,
            [
                "Opt('k', None) -kq false",
                "Opt('q', None) -kq true",
                "Opt('c', Some(\"5\")) -c false",
                "Opt('k', None) -k true"
            ]
        );
        let w = words(&["-kx"]);
        let mut g = Getopt::new(&w, LETTERS, Operands::Anywhere);
        g.next();
        assert_eq!(g.next(), Some(Err(GetoptError::Unknown('x'))));
        assert_eq!(g.word(), "-kx");
    }

    #[test]
    fn scanning_stops_after_an_error() {
        let w = words(&["-x", "-k"]);
        let mut g = Getopt::new(&w, LETTERS, Operands::Anywhere);
        assert_eq!(g.next(), Some(Err(GetoptError::Unknown('x'))));
        assert_eq!(g.next(), None);
    }

    #[test]
    fn each_tool_words_the_errors_its_own_way() {
        let unknown = GetoptError::Unknown('Q');
        let missing = GetoptError::NoValue('n');
        assert_eq!(unknown.apr_text(), "illegal option -- Q");
        assert_eq!(missing.apr_text(), "option requires an argument -- n");
        assert_eq!(unknown.glibc_text(), "invalid option -- 'Q'");
        assert_eq!(missing.glibc_text(), "option requires an argument -- 'n'");
    }
}
