//! What a command's help shows, decided from clap's definition of it as clap builds it
//! ([`shaped`], which clap runs once the global options are in the command), so that clap itself
//! prints every help (`-h`, `--help`, `help COMMAND`) and the CLI reference is the same text:
//! - only the global options about what the command does. Every command takes all of them,
//!   before or after its name (MARA's flags go before the command: `runner -b boring status`
//!   parses, and does nothing); what each command does is said once, in [`COMMANDS`], and a
//!   command missing there fails this module's test;
//! - `--help` in the long form (each option's help below it) even where the command has no longer
//!   text than `-h` shows, which clap otherwise prints as `-h` does.

use clap::{Arg, ArgAction, Command};

/// What a command does, as far as the global options care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Does {
    /// Reads the workspace: `--workspace`, `--provider`, `--debug`, `--color` (every global option
    /// not about one of the others).
    Workspace,
    /// Works on one stack: `--stack`.
    Stack,
    /// Runs projects, announcing each: `--banner-type`.
    Run,
    /// May ask a person (the configuration, the passphrase): `--non-interactive`.
    Ask,
    /// Takes `-s` over the environment file's `PULUMI_STACK`: `--switch-stack`.
    RecordStack,
}

use Does::{Ask, RecordStack, Run, Stack, Workspace};

/// The global options about something besides the workspace, by their ids in `GlobalArgs`.
const ABOUT: [(&str, Does); 4] = [
    ("stack", Stack),
    ("banner_type", Run),
    ("non_interactive", Ask),
    ("switch_stack", RecordStack),
];

/// What each command does, by its name (`export`'s formats do what `export` does).
const COMMANDS: [(&[&str], &[Does]); 8] = [
    (
        &["up", "destroy", "refresh", "preview", "drift"],
        &[Workspace, Stack, Run, Ask, RecordStack],
    ),
    (&["validate", "pulumi"], &[Workspace, Stack, Ask, RecordStack]),
    (&["export"], &[Workspace, Stack, RecordStack]),
    // The passphrase, when no file or variable gives it.
    (&["output"], &[Workspace, Stack, Ask]),
    (&["show-plan", "status", "logs", "report"], &[Workspace, Stack]),
    (&["list-providers"], &[Workspace]),
    // The stack file's chart versions and mirror, when there is one.
    (&["charts"], &[Workspace, Stack]),
    // Text the runner carries.
    (&["version", "completions", "man"], &[]),
];

fn about(arg: &Arg) -> Does {
    ABOUT
        .iter()
        .find(|(id, _)| arg.get_id() == *id)
        .map_or(Workspace, |(_, does)| *does)
}

/// A top-level command (or one of its subcommands: `export pko`) as its help shows it: the
/// global options about anything it does not do hidden, its own `-h, --help` in place of clap's.
pub(super) fn shaped(cmd: Command) -> Command {
    let does = COMMANDS
        .iter()
        .find(|(names, _)| names.contains(&cmd.get_name()))
        .map_or(&[][..], |(_, does)| *does);
    let cmd = cmd.mut_args(|a| {
        if a.is_global_set() && !does.contains(&about(&a)) {
            a.hide(true)
        } else {
            a
        }
    });
    // Its subcommands (`export pko`) take its global options as they are here, hidden or not.
    let cmd = cmd.mut_subcommands(|sub| sub.defer(long_help));
    long_help(cmd)
}

/// `cmd` with clap's `-h, --help` in place, worded as clap words it, but whose `--help` always
/// prints the long form: clap prints that only for a command with more to say than `-h` shows.
fn long_help(cmd: Command) -> Command {
    // Built apart, with clap's own flag (a parent's own, in its place, turned clap's off for its
    // subcommands too).
    let mut probe = cmd.clone().disable_help_flag(false);
    probe.build();
    let clap_s = probe
        .get_arguments()
        .find(|a| matches!(a.get_action(), ArgAction::Help));
    let short = clap_s.and_then(Arg::get_help).map(ToString::to_string);
    let long = clap_s
        .and_then(Arg::get_long_help)
        .or_else(|| clap_s.and_then(Arg::get_help))
        .map(ToString::to_string);
    let (Some(short), Some(long)) = (short, long) else {
        return cmd;
    };
    cmd.disable_help_flag(true).arg(
        Arg::new("help")
            .short('h')
            .long("help")
            .action(ArgAction::Help)
            .help(short)
            .long_help(long)
            .help_heading(None),
    )
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn every_command_says_what_it_does() {
        let mut cli = crate::cli::Cli::command();
        cli.build();
        // clap's own `help COMMAND` shows the command's help.
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
            assert!(
                super::COMMANDS.iter().any(|(names, _)| names.contains(&sub.get_name())),
                "cli::help::COMMANDS does not say what `{}` does",
                sub.get_name()
            );
        }
        for (id, _) in super::ABOUT {
            assert!(
                cli.get_arguments().any(|a| a.get_id() == id && a.is_global_set()),
                "{id} is no global option"
            );
        }
    }
}
