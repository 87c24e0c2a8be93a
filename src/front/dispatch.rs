//! The top of the front layer: which subcommands exist, the dispatch on the first
//! argument (a near miss of a command's name is refused with the name, not run as an
//! httperf line), `rshperf help [CMD]`, and the complete `-h`/`--help` text of an
//! httperf-style run.
//!
//! Every other front module sits below this one: the subcommands (`serve`, `demo`,
//! `merge`, `compare`, `sweep`, `ab`, `lb`, `replay`) share their clap conventions through `subcommand`,
//! `cli::parse` returns `Command::Help` without knowing the rest of the help, and
//! this module joins `cli`'s usage lines, `help`'s description and the command list,
//! so no front module imports one that imports it back. Called by `crate::run`.

use crate::front::subcommand::{self, Subcommand};
// One path per module, not `crate::front::{…}`: the layer test reads `crate::LAYER::MODULE`.
use crate::front::ab;
use crate::front::compare;
use crate::front::completions;
use crate::front::habits;
use crate::front::help;
use crate::front::log;
use crate::front::replay;
use crate::front::serve;
use crate::front::sweep;
use crate::front::sweep_merge;

/// Every subcommand, in the order `rshperf help` lists them.
pub const COMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "serve",
        about: "run the built-in HTTP/1.1 server",
        main: serve::serve_main,
        help: subcommand::help_text::<serve::ServeArgs>,
    },
    Subcommand {
        name: "demo",
        about: "run a workload (httperf options) against the built-in server",
        main: serve::demo_main,
        help: demo_help,
    },
    Subcommand {
        name: "merge",
        about: "merge the --json documents of the partitions of one workload",
        main: sweep_merge::merge_main,
        help: sweep_merge::help,
    },
    Subcommand {
        name: "compare",
        about: "compare --json runs against a baseline: faster, slower or no significant change",
        main: compare::compare_main,
        help: subcommand::help_text::<compare::CompareOptions>,
    },
    Subcommand {
        name: "sweep",
        about: "run rising rates against a server and find its knee (capacity)",
        main: sweep::sweep_main,
        help: sweep::args::help,
    },
    Subcommand {
        name: "ab",
        about: "ApacheBench's command line and report (closed loop, several URLs at once)",
        main: ab::ab_main,
        help: ab::args::usage,
    },
    Subcommand {
        name: "lb",
        about: "lb's command line: ab's report per server, every server at once",
        main: ab::lb_main,
        help: ab::lb::usage,
    },
    Subcommand {
        name: "replay",
        about: "replay the requests of an access log, request log or HAR at their timing",
        main: replay::replay_main,
        help: replay_help,
    },
    Subcommand {
        name: "log",
        about: "convert a --request-log file to JSON lines, CSV or binary",
        main: log::log_main,
        help: subcommand::help_text::<log::LogOptions>,
    },
    Subcommand {
        name: "completions",
        about: "print a shell completion script (bash, zsh, fish)",
        main: completions_main,
        help: subcommand::help_text::<completions::CompletionsOptions>,
    },
];

/// `rshperf completions SHELL`, for the commands of this list.
fn completions_main(args: &[String]) -> i32 {
    completions::completions_main(args, COMMANDS)
}

/// `replay`'s `--help` text.
fn replay_help() -> String {
    replay::USAGE.to_string()
}

/// `demo`'s `--help` text (httperf's options, so not clap's).
fn demo_help() -> String {
    serve::DEMO_USAGE.to_string()
}

/// Runs the subcommand `argv[1]` names, or `rshperf help [CMD]`; refuses a near miss
/// of a subcommand's name (exit 1); `None` when `argv[1]` is no subcommand (an httperf
/// command line).
pub(crate) fn dispatch(argv: &[String]) -> Option<i32> {
    let first = argv.get(1)?.as_str();
    if first == "help" {
        return Some(help_main(&argv[2..]));
    }
    let Some(cmd) = COMMANDS.iter().find(|c| c.name == first) else {
        // `rshperf swep …`: httperf would ignore the word and run a plain test.
        let mut known = names();
        known.push("help");
        let meant = habits::subcommand(first, &known)?;
        crate::wire::note::note!(
            "rshperf: no command '{first}': did you mean `rshperf {meant}`? (`rshperf help` \
             lists the commands)"
        );
        return Some(1);
    };
    Some((cmd.main)(&argv[1..]))
}

/// `rshperf help`: the subcommands; `rshperf help CMD`: CMD's help.
fn help_main(args: &[String]) -> i32 {
    match args {
        [] => {
            subcommand::print_stdout(&overview());
            0
        }
        [name] => match COMMANDS.iter().find(|c| c.name == name.as_str()) {
            Some(cmd) => {
                subcommand::print_stdout(&(cmd.help)());
                0
            }
            None => {
                let meant = habits::subcommand(name, &names())
                    .map(|m| format!("did you mean `rshperf help {m}`? "))
                    .unwrap_or_default();
                crate::wire::note::note!(
                    "rshperf: help: no command '{name}' ({meant}commands: {})",
                    names().join(", ")
                );
                1
            }
        },
        _ => {
            crate::wire::note::note!(
                "rshperf: help: one command at most (usage: rshperf help [COMMAND])"
            );
            1
        }
    }
}

/// The subcommands' names, in `COMMANDS`' order.
fn names() -> Vec<&'static str> {
    COMMANDS.iter().map(|c| c.name).collect()
}

/// The `rshperf help` text.
pub(crate) fn overview() -> String {
    let mut text = String::from(
        "Usage: rshperf [httperf options]       run a test (rshperf --help lists the options)\n\
         \x20      rshperf COMMAND [options]       run one of rshperf's commands\n\
         \x20      rshperf help COMMAND            a command's options\n\nCommands:\n",
    );
    for c in COMMANDS {
        text.push_str(&format!("  {:<8}{}\n", c.name, c.about));
    }
    text
}

/// The complete `-h`/`--help` text of an httperf-style run: `cli`'s usage lines, then
/// `help`'s description and one line per subcommand.
pub(crate) fn help_text() -> String {
    help::text(COMMANDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_command_and_dispatch_ignores_httperf_lines() {
        let text = overview();
        for c in COMMANDS {
            assert!(
                text.contains(&format!("\n  {:<8}{}\n", c.name, c.about)),
                "{text}"
            );
            assert!(!(c.help)().is_empty());
        }
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(dispatch(&argv(&["rshperf", "--server", "x"])), None);
        assert_eq!(dispatch(&argv(&["rshperf"])), None);
        assert_eq!(dispatch(&argv(&["rshperf", "help", "nosuch"])), Some(1));
        assert_eq!(dispatch(&argv(&["rshperf", "help", "a", "b"])), Some(1));
        // A near miss of a command is refused, not run as an httperf line.
        assert_eq!(
            dispatch(&argv(&["rshperf", "swep", "--rate", "1"])),
            Some(1)
        );
        assert_eq!(dispatch(&argv(&["rshperf", "comapre", "a.json"])), Some(1));
        assert_eq!(dispatch(&argv(&["rshperf", "localhost"])), None);
    }
}
