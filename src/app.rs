//! The commands: resolve the command line into settings, then run the one asked for.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::Path;

use clap::{CommandFactory as _, Parser as _};

use crate::cli::{Cli, Command, PlanFormat, PlanOperation, ShowPlanArgs};
use crate::error::{RunnerError, exit};
use crate::plan::{Operation, Plan};
use crate::provider::{self, FileKind, LoadError, Provider};
use crate::report::{self, Style};
use crate::workspace::Workspace;
use crate::{graph, render};

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
    match &cli.command {
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(
                clap_complete::Shell::from(*shell),
                &mut Cli::command(),
                "runner",
                &mut buf,
            );
            write_result(&String::from_utf8_lossy(&buf))?;
            Ok(exit::SUCCESS)
        }
        Command::ListProviders => {
            let ws = Workspace::locate(cli.global.workspace.as_deref(), cwd)?;
            report::debug(style, &format!("workspace: {}", ws.root.display()));
            list_providers(&ws)
        }
        Command::Up(args) | Command::Destroy(args) | Command::Refresh(args) | Command::Preview(args) => {
            let (operation, name) = match &cli.command {
                Command::Up(_) => (Operation::Up, "up"),
                Command::Destroy(_) => (Operation::Destroy, "destroy"),
                Command::Refresh(_) => (Operation::Refresh, "refresh"),
                _ => (Operation::Preview, "preview"),
            };
            // MARA's order of checks: the operation (parsed), the provider, then the stack.
            let ws = Workspace::locate(cli.global.workspace.as_deref(), cwd)?;
            let provider = load_provider(&ws, cli.global.provider.as_deref(), name)?;
            let stack = crate::run::stack(&ws, cli.global.stack.as_deref(), name)?;
            crate::run::run(&crate::run::Settings {
                ws: &ws,
                provider: &provider,
                stack,
                operation,
                args,
                banner: cli.global.banner_type,
                style,
                non_interactive: cli.global.non_interactive,
            })
        }
        Command::Validate => {
            let ws = Workspace::locate(cli.global.workspace.as_deref(), cwd)?;
            let provider = load_provider(&ws, cli.global.provider.as_deref(), "validate")?;
            let stack = crate::run::stack(&ws, cli.global.stack.as_deref(), "validate")?;
            crate::setup::prepare(
                &crate::setup::Request {
                    ws: &ws,
                    provider: &provider,
                    stack: &stack,
                    secrets_for: provider.projects.iter().collect(),
                    interactive: crate::run::interactive(cli.global.non_interactive),
                },
                &mut crate::config::terminal::Terminal::new(),
            )?;
            report::info(&format!(
                "All configuration is OK: provider {}, stack {stack}, {} projects",
                provider.name,
                provider.projects.len()
            ));
            Ok(exit::SUCCESS)
        }
        Command::ShowPlan(args) => {
            let ws = Workspace::locate(cli.global.workspace.as_deref(), cwd)?;
            report::debug(style, &format!("workspace: {}", ws.root.display()));
            let provider = load_provider(&ws, cli.global.provider.as_deref(), "show-plan")?;
            report::debug(style, &format!("provider file: {}", provider.file));
            show_plan(&ws, &provider, args)
        }
    }
}

fn write_result(text: &str) -> Result<(), RunnerError> {
    report::result(text).map_err(|source| RunnerError::Io {
        context: "cannot write to standard output".into(),
        source,
    })
}

fn list_providers(ws: &Workspace) -> Result<i32, RunnerError> {
    let (entries, problems) = provider::entries(&ws.root, &|p| ws.show(p)).map_err(|source| RunnerError::Io {
        context: format!("cannot read {}", ws.show(&ws.root.join(provider::PROVIDERS_DIR))),
        source,
    })?;
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for e in entries.iter().filter(|e| e.kind == FileKind::Provider) {
        let _ = writeln!(out, "{:<width$}  {}", e.name, e.description);
    }
    let layers: Vec<&provider::Entry> = entries.iter().filter(|e| e.kind == FileKind::Layer).collect();
    if !layers.is_empty() {
        out.push_str("\nShared layers (included by providers, not run on their own):\n");
        for e in layers {
            let _ = writeln!(out, "{:<width$}  {}", e.name, e.description);
        }
    }
    write_result(&out)?;
    if problems.is_empty() {
        Ok(exit::SUCCESS)
    } else {
        Err(RunnerError::Files(problems))
    }
}

/// The provider named by `-p`, loaded and checked. Missing or unknown is a usage error that
/// lists the providers there are.
fn load_provider(ws: &Workspace, name: Option<&str>, command: &str) -> Result<Provider, RunnerError> {
    // The list of providers is only for error messages: read it only when one is needed.
    let available = || -> Vec<String> {
        provider::entries(&ws.root, &|p| ws.show(p))
            .map(|(entries, _)| {
                entries
                    .into_iter()
                    .filter(|e| e.kind == FileKind::Provider)
                    .map(|e| e.name)
                    .collect()
            })
            .unwrap_or_default()
    };
    let choices = |available: &[String]| {
        if available.is_empty() {
            format!(
                "add a provider file to {}",
                ws.show(&ws.root.join(provider::PROVIDERS_DIR))
            )
        } else {
            format!("providers here: {}", available.join(", "))
        }
    };
    let Some(name) = name else {
        return Err(RunnerError::usage(
            format!("`{command}` needs a provider: pass -p/--provider NAME"),
            choices(&available()),
        ));
    };
    match provider::load(&ws.root, name, &|p| ws.show(p)) {
        Ok(p) => Ok(p),
        Err(LoadError::NotAProvider { name, is_layer }) => {
            let available = available();
            let message = if is_layer {
                format!("`{name}` is a shared layer, not a provider: providers include it")
            } else {
                format!("unknown provider `{name}`")
            };
            let help = match graph::closest(&name, available.iter().map(String::as_str)) {
                Some(c) if !is_layer => format!("did you mean `{c}`? {}", choices(&available)),
                _ => choices(&available),
            };
            Err(RunnerError::usage(message, help))
        }
        Err(LoadError::Invalid(problems)) => Err(RunnerError::Files(problems)),
    }
}

fn show_plan(ws: &Workspace, provider: &Provider, args: &ShowPlanArgs) -> Result<i32, RunnerError> {
    let operation = match args.operation {
        PlanOperation::Up => Operation::Up,
        PlanOperation::Destroy => Operation::Destroy,
        PlanOperation::Refresh => Operation::Refresh,
        PlanOperation::Preview => Operation::Preview,
    };
    let plan = Plan::new(provider, operation, &args.targets).map_err(|e| {
        let help = match &e.suggestion {
            Some(s) => format!(
                "did you mean `{s}`? See the projects with `runner show-plan -p {}`",
                e.provider
            ),
            None => format!("see the projects with `runner show-plan -p {}`", e.provider),
        };
        RunnerError::usage(e.to_string(), help)
    })?;
    let programs = crate::crosscheck::programs(ws, provider);
    let text = match args.format {
        PlanFormat::Tree => render::tree(&plan),
        PlanFormat::Dot => render::dot(&plan, &edge_labels(&plan, &programs)),
        PlanFormat::Mermaid => render::mermaid(&plan, &edge_labels(&plan, &programs)),
        PlanFormat::Json => render::json(&plan, &edge_labels(&plan, &programs)),
    };
    write_result(&text)?;
    // The plan is only as right as the needs: say where they and the programs disagree.
    for p in crate::crosscheck::check(provider, &programs) {
        report::warning(&format!("{}\n  fix: {}", p.what, p.fix));
    }
    Ok(exit::SUCCESS)
}

/// The outputs each project of the plan reads from the others, from its program's
/// `StackReference`s.
fn edge_labels(plan: &Plan<'_>, programs: &crate::crosscheck::Programs) -> render::EdgeLabels {
    let mut labels = render::EdgeLabels::new();
    for &i in &plan.order {
        let p = plan.project(i);
        let Some((_, program)) = programs.get(&p.name) else {
            continue;
        };
        for (upstream, outputs) in &program.reads {
            if !outputs.is_empty() {
                labels.insert((upstream.clone(), p.name.clone()), outputs.iter().cloned().collect());
            }
        }
    }
    labels
}
