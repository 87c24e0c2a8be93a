//! The conventions every clap-parsed subcommand of rshperf shares (`rshperf serve`,
//! `merge`, `sweep`), and the shape of a subcommand's entry (`Subcommand`).
//!
//! Which subcommands exist, the dispatch on the first argument and `rshperf help [CMD]`
//! are `dispatch`'s (the top of the front layer); this module imports nothing of the
//! front layer, so the subcommands can use it without a cycle.
//!
//! httperf's options stay on the getopt_long clone (`cli.rs`, byte-compatible
//! diagnostics); `demo` takes those options too. Subcommands that are rshperf's own use
//! `clap` derive through `run`/`parse` here, so they all behave alike:
//! * `rshperf CMD --help` (or `-h`, or `rshperf help CMD`) prints the help on stdout,
//!   exit status 0;
//! * a bad option or value prints `rshperf: CMD: ` and clap's message (what is wrong,
//!   the usage line, where to find help) on stderr, exit status 1 (`Error::Subcommand`);
//! * long options may be abbreviated to a unique prefix, as with getopt_long, and take
//!   their value as `--opt=V` or `--opt V`; output is plain (no colour), wrapped at
//!   100 columns at most.
//!
//! Adding a subcommand: a `#[derive(clap::Parser)]` struct with `#[command(about, …)]`,
//! a `fn NAME_main(args: &[String]) -> i32 { subcommand::run::<Opts>(args, body) }`,
//! and one entry in `dispatch::COMMANDS`. Called by the subcommands' `NAME_main`s.

use std::io::Write;

use clap::builder::Styles;
use clap::error::ErrorKind;
use clap::{ArgMatches, ColorChoice, CommandFactory, Parser};

use crate::front::error::Error;

/// One subcommand of rshperf.
pub struct Subcommand {
    /// The word after `rshperf` that selects it.
    pub name: &'static str,
    /// One line for `rshperf help`.
    pub about: &'static str,
    /// Runs it; `args[0]` is `name`. Returns the exit status.
    pub(crate) main: fn(&[String]) -> i32,
    /// Its `--help` text.
    pub(crate) help: fn() -> String,
}

/// The outcome of parsing a subcommand's arguments.
#[derive(Debug)]
pub(crate) enum Parsed<T> {
    /// Options to run with.
    Run(T),
    /// `--help`/`-h` was asked for: this text goes to stdout, exit status 0.
    Help(String),
}

/// The clap command of `T` with the shared conventions, named `rshperf NAME`.
pub(crate) fn command<T: CommandFactory>(name: &str) -> clap::Command {
    T::command()
        .bin_name(format!("rshperf {name}"))
        .infer_long_args(true)
        .disable_version_flag(true)
        .color(ColorChoice::Never)
        .styles(Styles::plain())
        .max_term_width(100)
}

/// The `--help` text of `T` (named by its `#[command(name = …)]`).
pub(crate) fn help_text<T: CommandFactory>() -> String {
    let name = T::command().get_name().to_string();
    command::<T>(&name).render_long_help().to_string()
}

/// Parses `args` (`args[0]` is the subcommand's name) into `T`. Errors are
/// `Error::Subcommand` (NAME and clap's message), shown as `rshperf: NAME: …`.
pub(crate) fn parse<T: Parser>(args: &[String]) -> Result<Parsed<T>, Error> {
    let name = args.first().map_or("?", String::as_str);
    match parse_with(command::<T>(name), args)? {
        Parsed::Run(m) => T::from_arg_matches(&m)
            .map(Parsed::Run)
            .map_err(|e| usage(name, e)),
        Parsed::Help(text) => Ok(Parsed::Help(text)),
    }
}

/// Parses `args` (`args[0]` is the subcommand's name) with `cmd`, a `command` that
/// the subcommand extended at run time (`sweep` adds httperf's options), and returns
/// clap's matches; help and errors as `parse`.
pub(crate) fn parse_with(cmd: clap::Command, args: &[String]) -> Result<Parsed<ArgMatches>, Error> {
    let name = args.first().map_or("?", String::as_str);
    match cmd.try_get_matches_from(args) {
        Ok(m) => Ok(Parsed::Run(m)),
        Err(e) if e.kind() == ErrorKind::DisplayHelp => Ok(Parsed::Help(e.render().to_string())),
        Err(e) => Err(usage(name, e)),
    }
}

/// clap's error as `Error::Subcommand` (NAME and its message, without clap's `error: `).
fn usage(name: &str, e: clap::Error) -> Error {
    let text = e.render().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text).trim_end();
    Error::Subcommand {
        name: name.to_string(),
        text: text.to_string(),
    }
}

/// Parses `args` into `T` and runs `body` with it: the whole `NAME_main` of a
/// subcommand. Help goes to stdout (status 0); an error from parsing or from `body` is
/// printed on stderr and gives its exit status (1).
pub(crate) fn run<T: Parser>(args: &[String], body: impl FnOnce(T) -> Result<i32, Error>) -> i32 {
    exit_status(parse::<T>(args).and_then(|parsed| match parsed {
        Parsed::Help(text) => {
            print_stdout(&text);
            Ok(0)
        }
        Parsed::Run(opts) => body(opts),
    }))
}

/// The exit status of a command's `result`: its own, or, for an error, the error's
/// after printing the error on stderr (`rshperf: …`). Every front end ends here.
pub(crate) fn exit_status(result: Result<i32, Error>) -> i32 {
    result.unwrap_or_else(|e| {
        crate::wire::note::note!("{e}");
        e.exit_code()
    })
}

/// Writes `text` to stdout, ignoring a closed stdout.
pub(crate) fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subcommand for the tests.
    #[derive(Parser, Debug, PartialEq)]
    #[command(name = "probe", about = "A probe.")]
    struct Probe {
        /// A number.
        #[arg(long, default_value_t = 3)]
        count: u32,
        /// A switch.
        #[arg(long)]
        loud: bool,
        /// Inputs.
        files: Vec<String>,
    }

    fn args(list: &[&str]) -> Vec<String> {
        std::iter::once("probe")
            .chain(list.iter().copied())
            .map(String::from)
            .collect()
    }

    fn run_probe(list: &[&str]) -> Probe {
        match parse::<Probe>(&args(list)) {
            Ok(Parsed::Run(p)) => p,
            other => panic!("{list:?}: {other:?}"),
        }
    }

    #[test]
    fn both_value_forms_and_unique_prefixes() {
        let want = Probe {
            count: 7,
            loud: true,
            files: vec!["a".into(), "-".into()],
        };
        assert_eq!(run_probe(&["--count=7", "--loud", "a", "-"]), want);
        assert_eq!(run_probe(&["--co", "7", "--l", "a", "-"]), want);
        assert_eq!(run_probe(&[]).count, 3);
    }

    #[test]
    fn errors_name_the_command_and_help_is_text() {
        let e = parse::<Probe>(&args(&["--count", "x"])).expect_err("bad value");
        let text = e.to_string();
        assert!(
            text.starts_with(
                "rshperf: probe: invalid value 'x' for '--count <COUNT>': invalid digit"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("\n\nFor more information, try '--help'."),
            "{text}"
        );
        assert_eq!(e.exit_code(), 1);
        let e = parse::<Probe>(&args(&["--bogus"]))
            .expect_err("unknown")
            .to_string();
        assert!(
            e.starts_with("rshperf: probe: unexpected argument '--bogus' found\n"),
            "{e}"
        );
        assert!(
            e.contains("\nUsage: rshperf probe [OPTIONS] [FILES]...\n"),
            "{e}"
        );
        for help in ["--help", "-h", "--he"] {
            match parse::<Probe>(&args(&[help])) {
                Ok(Parsed::Help(t)) => {
                    assert!(t.starts_with("A probe.\n\nUsage: rshperf probe "), "{t}");
                    assert!(t.contains("--count <COUNT>"), "{t}");
                    assert!(!t.contains('\x1b'), "plain text: {t:?}");
                }
                other => panic!("{help}: {other:?}"),
            }
        }
        assert!(matches!(
            parse::<Probe>(&args(&["--version"])),
            Err(Error::Subcommand { .. })
        ));
    }
}
