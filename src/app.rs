//! The edge of the program: parse the command line, resolve it into [`Settings`], run the
//! command asked for, print an error if there is one, and return the exit code. The only module
//! besides `cli` that sees clap's types.

use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::path::Path;

use clap::{CommandFactory as _, Parser as _};

use crate::cli::{Cli, Command, ExportArgs, GlobalArgs, RunArgs};
use crate::commands;
use crate::commands::export::{ExportOptions, Output};
use crate::commands::plan::PlanOptions;
use crate::commands::run::{DEFAULT_PARALLEL, RunOptions};
use crate::error::{RunnerError, exit};
use crate::plan::Operation;
use crate::report::{self, Style};
use crate::settings::{Flags, Settings};

/// Runs the runner with these arguments (the first is the program name) and returns the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>, cwd: &Path) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version on stdout with code 0, usage errors on stderr with 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let style = Style::resolve(
        cli.global.color,
        no_color,
        (std::io::stdout().is_terminal(), std::io::stderr().is_terminal()),
        cli.global.debug,
    );
    match dispatch(&cli, style, cwd) {
        Ok(code) => code,
        Err(e) => {
            report::error(style, &e);
            e.exit_code()
        }
    }
}

fn dispatch(cli: &Cli, style: Style, cwd: &Path) -> Result<i32, RunnerError> {
    let settings = || Settings::resolve(flags(&cli.global), style, cwd);
    match &cli.command {
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(
                clap_complete::Shell::from(*shell),
                &mut Cli::command(),
                "runner",
                &mut buf,
            );
            report::result(&String::from_utf8_lossy(&buf)).map_err(|source| RunnerError::Io {
                context: "cannot write to standard output".into(),
                source,
            })?;
            Ok(exit::SUCCESS)
        }
        Command::ListProviders => commands::providers::list(&settings()?),
        Command::ShowPlan(args) => {
            let s = settings()?;
            let provider = s.provider("show-plan")?;
            let options = PlanOptions {
                operation: args.operation,
                targets: args.targets.clone(),
                format: args.format,
            };
            commands::plan::show(&s, &provider, &options)
        }
        Command::Validate => {
            let s = settings()?;
            let target = s.target("validate")?;
            commands::validate::run(&s, &target)
        }
        Command::Export(args) => {
            let s = settings()?;
            let target = s.target("export")?;
            commands::export::run(&s, &target, &export_options(args, cwd))
        }
        Command::Up(args) => run_plan(&settings()?, Operation::Up, args),
        Command::Destroy(args) => run_plan(&settings()?, Operation::Destroy, args),
        Command::Refresh(args) => run_plan(&settings()?, Operation::Refresh, args),
        Command::Preview(args) => run_plan(&settings()?, Operation::Preview, args),
    }
}

fn run_plan(s: &Settings, operation: Operation, args: &RunArgs) -> Result<i32, RunnerError> {
    let target = s.target(operation.as_str())?;
    let options = RunOptions {
        operation,
        targets: args.targets.clone(),
        only: args.only.clone(),
        parallel: args.parallel.map_or(DEFAULT_PARALLEL, usize::from),
        keep_going: args.keep_going,
        fresh: args.fresh,
        summary: args.summary.clone(),
        prune_kubeconfig: args.prune_kubeconfig,
        output: args.output,
    };
    commands::run::run(s, &target, &options)
}

fn export_options(a: &ExportArgs, cwd: &Path) -> ExportOptions {
    ExportOptions {
        format: a.format,
        output: a.output.as_ref().map(|o| {
            if o.as_os_str() == "-" {
                Output::Stdout
            } else {
                Output::Dir(cwd.join(o))
            }
        }),
        namespace: a.namespace.clone(),
        source: a.source,
        repo: a.repo.clone(),
        branch: a.branch.clone(),
        commit: a.commit.clone(),
        succeeded_within: a.succeeded_within.clone(),
        destroy_on_finalize: a.destroy_on_finalize,
        parallel: a.parallel.map_or(DEFAULT_PARALLEL, usize::from),
        image: a.image.clone(),
        pulumi_version: a.pulumi_version.clone(),
        bundle_path: a.bundle_path.clone(),
        esc_organization: a.esc_organization.clone(),
        esc_project: a.esc_project.clone(),
        esc_environment: a.esc_environment.clone(),
        owner: a.owner.clone(),
    }
}

fn flags(g: &GlobalArgs) -> Flags {
    Flags {
        workspace: g.workspace.clone(),
        provider: g.provider.clone(),
        stack: g.stack.clone(),
        banner: g.banner_type,
        non_interactive: g.non_interactive,
    }
}
