//! `docs/reference/cli.md` is the commands' help as it is now: made again in memory from the
//! command definitions and compared with the committed file, and each of its sections is what
//! `runner COMMAND --help` prints (only the global options that apply to the command; trailing
//! blanks left out).
//! `RUNNER_WRITE_REFERENCE=1 cargo test --test cli reference` writes the file.

use std::path::Path;

use crate::support::{REPO, runner};

const FILE: &str = "docs/reference/cli.md";
const WRITE: &str = "RUNNER_WRITE_REFERENCE=1 cargo test --test cli reference";

/// Each section of the reference: the command line it documents (`runner up`) and its help.
fn sections(reference: &str) -> Vec<(String, String)> {
    reference
        .split("\n## `")
        .skip(1)
        .map(|s| {
            let (command, rest) = s.split_once("`\n").expect("a section heading");
            let help = rest
                .split_once("```text\n")
                .and_then(|(_, h)| h.split_once("\n```\n"))
                .expect("a section's help in a text block")
                .0;
            (command.to_string(), help.to_string())
        })
        .collect()
}

#[test]
fn the_committed_cli_reference_is_the_commands_help() {
    let made = runner::cli_reference();
    let path = Path::new(REPO).join(FILE);
    if std::env::var_os("RUNNER_WRITE_REFERENCE").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &made).unwrap();
        eprintln!("wrote {FILE}");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != made {
        let line = committed
            .lines()
            .zip(made.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(made.lines().count()));
        panic!(
            "{FILE} is not the commands' help as it is now (first difference at line {}:\n  committed: {:?}\n  now:       {:?}).\nWrite it again with\n  {WRITE}\nand commit it.",
            line + 1,
            committed.lines().nth(line).unwrap_or("(end of file)"),
            made.lines().nth(line).unwrap_or("(end of file)"),
        );
    }
}

#[test]
fn each_section_of_the_reference_is_what_the_runner_prints() {
    let reference = runner::cli_reference();
    let sections = sections(&reference);
    let names: Vec<&str> = sections.iter().map(|(c, _)| c.as_str()).collect();
    for command in [
        "runner",
        "runner up",
        "runner destroy",
        "runner status",
        "runner export",
        "runner export pko",
        "runner report",
    ] {
        assert!(names.contains(&command), "{command} has no section: {names:?}");
    }
    let home = tempfile::tempdir().unwrap();
    for (command, help) in &sections {
        let mut args: Vec<&str> = command.split_whitespace().skip(1).collect();
        args.push("--help");
        // Without a terminal clap wraps at COLUMNS: the width the reference is made at.
        let out = runner(home.path(), &args)
            .current_dir(REPO)
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        assert!(out.status.success(), "{command} --help failed");
        let printed = String::from_utf8(out.stdout).unwrap();
        let printed: Vec<&str> = printed.trim_end().lines().map(str::trim_end).collect();
        assert_eq!(
            printed.join("\n"),
            *help,
            "{command} --help differs from its section of {FILE}"
        );
    }
}
