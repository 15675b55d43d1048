//! The edge of the program: parse the command line, resolve it into [`Settings`], run the
//! command asked for, print an error if there is one, and return the exit code. The only module
//! besides `cli` that sees clap's types.

use std::ffi::OsString;
use std::path::Path;

use crate::cli::{Cli, Command, DayTwo, GlobalArgs};
use crate::commands;
use crate::commands::operation::RunOptions;
use crate::config::terminal::Console;
use crate::error::{RunnerError, exit};
use crate::report::{self, Style};
use crate::settings::{Flags, Settings};
use clap::CommandFactory as _;

/// Runs the runner with these arguments (the first is the program name) and returns the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>, cwd: &Path) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version on stdout with code 0, usage errors on stderr with 2; a
            // command's help shows only the global options about what it does (`cli::help`).
            let e = crate::cli::with_whole_usage(&args, e);
            let _ = e.print();
            if let Some(note) =
                crate::cli::flag_elsewhere(&e).or_else(|| crate::cli::passthrough_without_dashes(&args, &e))
            {
                report::info(&note);
            }
            return e.exit_code();
        }
    };
    // The terminal and the colours, resolved once (clap's own help and errors above follow the
    // same `NO_COLOR` and `TERM=dumb`).
    let console = Console::detect();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let style = Style::resolve(cli.global.color, no_color, console.colour(), cli.global.debug);
    match dispatch(&cli, style, console, cwd) {
        Ok(code) => code,
        Err(e) => {
            report::error(style, &e);
            e.exit_code()
        }
    }
}

fn dispatch(cli: &Cli, style: Style, console: Console, cwd: &Path) -> Result<i32, RunnerError> {
    crate::report::workspace_typed(cli.global.workspace.as_deref());
    let settings = || Settings::resolve(flags(&cli.global), style, console, cwd);
    match &cli.command {
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(
                clap_complete::Shell::from(*shell),
                &mut Cli::command(),
                "runner",
                &mut buf,
            );
            commands::write_result(&String::from_utf8_lossy(&buf))?;
            Ok(exit::SUCCESS)
        }
        Command::Man { command, dir } => man(command, dir.as_deref()),
        Command::ListProviders => commands::providers::list(&settings()?),
        Command::ShowPlan(args) => {
            let options = args.resolve()?;
            let s = settings()?;
            let cache = crate::programs::CacheRead::start(&s.ws);
            let provider = s.provider_seeing("show-plan", &cache)?;
            let code = commands::show_plan::show(&s, &provider, &options, cache);
            std::mem::forget(provider); // see `plan::show`: left to the exit
            code
        }
        Command::Validate { check } => {
            let s = settings()?;
            let target = if *check {
                s.stack_context_unchanged("validate")?
            } else {
                s.stack_context("validate")?
            };
            let outcome = commands::validate::run(&s, &target, *check);
            target.settle_switch(&s.ws, &outcome);
            outcome
        }
        Command::Export(args) => {
            let s = settings()?;
            let target = s.stack_context_unchanged("export")?;
            let (out, request) = args.format.request();
            commands::export::run(&s, &target, request, &out.destination(cwd))
        }
        Command::DayTwo(c) => day_two(c, &settings()?),
        Command::Charts(args) => match &args.action {
            None => commands::charts::list(&settings()?, args.format),
            Some(crate::cli::ChartsAction::Mirror(m)) => commands::charts::mirror(&settings()?, &m.resolve(cwd)),
        },
        Command::Version => {
            commands::write_result(&format!("runner {}\n", env!("CARGO_PKG_VERSION")))?;
            Ok(exit::SUCCESS)
        }
        // A run's options first: a file it is to write is refused before the workspace is read.
        Command::Up(a) => run_plan(&a.resolve()?, &settings()?),
        Command::Destroy(a) => run_plan(&a.resolve()?, &settings()?),
        Command::Refresh(a) => run_plan(&a.resolve()?, &settings()?),
        Command::Preview(a) => run_plan(&a.resolve()?, &settings()?),
        Command::Drift(a) => run_plan(&a.resolve()?, &settings()?),
    }
}

/// The commands that look at a stack without running the graph: `status`, `output`, `logs`
/// (which only read), `pulumi`.
fn day_two(command: &DayTwo, s: &Settings) -> Result<i32, RunnerError> {
    match command {
        DayTwo::Status { format } => commands::status::run(s, &s.stack_context_unchanged("status")?, *format),
        DayTwo::Output(a) => commands::output::run(s, &s.stack_context_unchanged("output")?, &a.resolve()),
        DayTwo::Pulumi(a) => commands::passthrough::run(s, &s.stack_context("pulumi")?, &a.project, &a.args),
        DayTwo::Logs(a) => commands::logs::run(s, &s.stack_context_unchanged("logs")?, &a.resolve()),
        DayTwo::Report { output } => {
            commands::last_run::run(s, &s.stack_context_unchanged("report")?, output.as_deref())
        }
    }
}

fn run_plan(options: &RunOptions, s: &Settings) -> Result<i32, RunnerError> {
    let target = s.stack_context(options.operation.as_str())?;
    let outcome = commands::operation::run(s, &target, options);
    target.settle_switch(&s.ws, &outcome);
    outcome
}

fn flags(g: &GlobalArgs) -> Flags {
    Flags {
        workspace: g.workspace.clone(),
        provider: g.provider.clone(),
        stack: g.stack.clone(),
        banner: g.banner_type,
        non_interactive: g.non_interactive,
        switch_stack: g.switch_stack,
    }
}

/// `runner man`: the main page on standard output, or with `--dir` a page per command.
fn man(command: &[String], dir: Option<&Path>) -> Result<i32, RunnerError> {
    if let Some(dir) = dir {
        let written = man_pages(dir)?;
        crate::report::info(&format!(
            "wrote {written} man pages to {} (`man runner-up` once the directory is on MANPATH)",
            dir.display()
        ));
        return Ok(exit::SUCCESS);
    }
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut page = cmd;
    let mut path = vec!["runner".to_string()];
    for word in command {
        let Some(sub) = page.find_subcommand(word).filter(|s| !s.is_hide_set()).cloned() else {
            let names: Vec<String> = page
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(|s| s.get_name().to_string())
                .collect();
            return Err(RunnerError::usage(
                format!("`{} {word}` is no command: no man page", path.join(" ")),
                format!("pages: {}", names.join(", ")),
            ));
        };
        path.push(word.clone());
        page = sub;
    }
    let mut buf = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut buf)
        .map_err(|source| RunnerError::Io {
            context: "the man page".into(),
            source,
        })?;
    commands::write_result(&String::from_utf8_lossy(&buf))?;
    Ok(exit::SUCCESS)
}

/// One man page per command (hidden ones left out) into `dir`, named as `man` finds them
/// (`runner-export-pko.1`): how many. Every page is made first; a page's name that is a
/// symbolic link (or anything but a regular file) refuses them all, before any is written; each
/// is written beside and renamed over its name, never through a link.
fn man_pages(dir: &std::path::Path) -> Result<usize, RunnerError> {
    fn each(cmd: &clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            each(sub, pages)?;
        }
        let man = clap_mangen::Man::new(cmd.clone());
        let mut page = Vec::new();
        man.render(&mut page)?;
        pages.push((man.get_filename(), page));
        Ok(())
    }
    let io = |source| RunnerError::Io {
        context: format!("cannot write the man pages to {}", dir.display()),
        source,
    };
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    each(&cmd, &mut pages).map_err(io)?;
    for (name, _) in &pages {
        match std::fs::symlink_metadata(dir.join(name)) {
            Ok(m) if !m.file_type().is_file() => {
                let what = if m.file_type().is_symlink() {
                    "a symbolic link"
                } else {
                    "not a regular file"
                };
                // Refused as an output path is (exit 2): nothing was written.
                return Err(RunnerError::usage(
                    format!(
                        "{} is {what}: the man pages are never written through one",
                        crate::report::text::visible(&dir.join(name).display().to_string())
                    ),
                    "remove it, or give another --dir",
                ));
            }
            _ => {}
        }
    }
    std::fs::create_dir_all(dir).map_err(io)?;
    for (name, page) in &pages {
        crate::fs::replace_file(&dir.join(name), page, false).map_err(io)?;
    }
    Ok(pages.len())
}
