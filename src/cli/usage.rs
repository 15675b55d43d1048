//! What the command line says of itself beyond clap's own words: the CLI reference page, and
//! clap's errors made whole (the command's full usage, a flag given to the wrong command, a
//! `pulumi` argument without its `--`).

use super::{Cli, command};

/// The width the CLI reference is wrapped at: what `--help` prints without a terminal.
const REFERENCE_WIDTH: usize = 100;

const REFERENCE_HEAD: &str = "\
# CLI reference

Every command's `--help`, as the runner prints it without a terminal: generated from the commands'
definitions (`src/cli.rs`), so do not edit it; `RUNNER_WRITE_REFERENCE=1 cargo test --test cli
reference` writes it again. What each command does, with examples, is in [Commands](../commands.md).
";

/// The CLI reference (`docs/reference/cli.md`): the top-level help, then, one section each, every
/// command's long help as `runner COMMAND --help` prints it without a terminal — only the global
/// options that apply to it, plain text (no trailing blanks), wrapped at 100 columns.
pub(crate) fn reference() -> String {
    use std::fmt::Write as _;
    fn section(out: &mut String, path: &str, help: &clap::builder::StyledStr) {
        let help = help.to_string();
        let lines: Vec<&str> = help.trim_end().lines().map(str::trim_end).collect();
        let _ = write!(out, "\n## `{path}`\n\n```text\n{}\n```\n", lines.join("\n"));
    }
    fn commands(out: &mut String, parent: &str, cmd: &clap::Command) {
        for sub in cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            let path = format!("{parent} {}", sub.get_name());
            section(out, &path, &sub.clone().render_long_help());
            commands(out, &path, sub);
        }
    }
    let mut cmd = command().term_width(REFERENCE_WIDTH);
    cmd.build();
    let mut out = String::from(REFERENCE_HEAD);
    // The top-level help is clap's own, as `app` prints it.
    let top = cmd
        .clone()
        .try_get_matches_from(["runner", "--help"])
        .err()
        .map(|e| e.render());
    section(&mut out, "runner", &top.unwrap_or_default());
    commands(&mut out, "runner", &cmd);
    out
}

/// The commands under `cmd` (named from `path`) that take the long flag `long`.
fn takers(cmd: &clap::Command, path: &str, long: &str, out: &mut Vec<String>) {
    for sub in cmd.get_subcommands() {
        let here = format!("{path} {}", sub.get_name());
        if sub.get_arguments().any(|a| a.get_long() == Some(long)) {
            out.push(format!("`{here}`"));
        }
        takers(sub, &here, long, out);
    }
}

/// For `runner pulumi PROJECT stack history` (no `--`), which clap refuses at `stack`: where the
/// `--` goes, as the command line to type; `None` for any other error.
pub(crate) fn passthrough_without_dashes(args: &[std::ffi::OsString], e: &clap::Error) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::UnknownArgument || args.iter().any(|a| a == "--") {
        return None;
    }
    let words: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let at = words.iter().position(|w| w == "pulumi")?;
    // The runner's own flags stay before `--` (a value after those that take one); the project is
    // the first other word, and pulumi's arguments start at the next.
    let takes_value = |w: &str| {
        matches!(
            w,
            "-s" | "--stack" | "-p" | "--provider" | "--workspace" | "-b" | "--banner-type" | "--color"
        )
    };
    let mut runners = Vec::new();
    let mut project = None;
    let mut i = at + 1;
    while i < words.len() {
        let w = &words[i];
        if w.starts_with('-') {
            runners.push(w.clone());
            if takes_value(w) && i + 1 < words.len() {
                runners.push(words[i + 1].clone());
                i += 1;
            }
        } else if project.is_none() {
            project = Some(w.clone());
        } else {
            break;
        }
        i += 1;
    }
    let project = project?;
    let pulumis = words.get(i..).filter(|r| !r.is_empty())?.join(" ");
    let mut line = words[..=at].to_vec();
    line.push(project);
    line.extend(runners);
    Some(format!(
        "note: pulumi's own arguments go after `--`: `runner {} -- {pulumis}`",
        line.join(" ")
    ))
}

/// clap's usage line under an unknown argument names only what it matched (`Usage: runner up
/// --keep-going` for `--keepgoing`), which reads as the command's whole usage: the command's own
/// usage instead (`Usage: runner up [OPTIONS]`), the deepest command the line names.
pub(crate) fn with_whole_usage(args: &[std::ffi::OsString], mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let mut cmd = command();
    cmd.build();
    let mut here = &cmd;
    for word in args.iter().skip(1).map_while(|a| a.to_str()) {
        if word == "--" {
            break;
        }
        if let Some(sub) = here.find_subcommand(word) {
            here = sub;
        }
    }
    let usage = here.clone().render_usage();
    e.insert(ContextKind::Usage, ContextValue::StyledStr(usage));
    e
}

/// For a flag clap refused as unexpected (`runner export github --succeeded-within 1h`): the
/// commands that do take it, as a line to print after clap's error; `None` when none does.
pub(crate) fn flag_elsewhere(e: &clap::Error) -> Option<String> {
    use clap::CommandFactory as _;
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let long = given.strip_prefix("--")?.split('=').next()?;
    let mut out = Vec::new();
    takers(&Cli::command(), "runner", long, &mut out);
    if out.is_empty() {
        return None;
    }
    let final_one = out.pop()?;
    let named = if out.is_empty() {
        final_one
    } else {
        format!("{} and {final_one}", out.join(", "))
    };
    Some(format!("note: `--{long}` is a flag of {named}"))
}
