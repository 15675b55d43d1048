//! One module per command: each takes resolved [`crate::settings::Settings`] and plain options,
//! does its work through the layers below, and returns the exit code.

pub(crate) mod charts;
pub(crate) mod export;
pub(crate) mod last_run;
pub(crate) mod logs;
pub(crate) mod operation;
pub(crate) mod output;
pub(crate) mod passthrough;
pub(crate) mod providers;
pub(crate) mod show_plan;
pub(crate) mod status;
pub(crate) mod validate;

use crate::config::terminal::Terminal;
use crate::error::RunnerError;
use crate::plan::UnknownTarget;
use crate::provider::Project;
use crate::pulumi::Pulumi;
use crate::report;
use crate::settings::{Settings, StackContext};

/// Writes a command's result to standard output.
pub(crate) fn write_result(text: &str) -> Result<(), RunnerError> {
    report::result(text).map_err(|source| RunnerError::Io {
        context: "cannot write to standard output".into(),
        source,
    })
}

/// The project `name` of the target's provider, given to `command` (`` `runner logs` ``), or
/// a usage error with the closest name.
fn project_of<'t>(t: &'t StackContext, name: Option<&str>, command: &'static str) -> Result<&'t Project, RunnerError> {
    // Not given: which there are, and how one is named.
    let Some(name) = name else {
        let names: Vec<&str> = t.provider.projects.iter().map(|p| p.name.as_str()).collect();
        let example = format!(
            "{} {} -s {}",
            command.trim_end_matches('`'),
            names.last().copied().unwrap_or("PROJECT"),
            t.stack
        );
        return Err(RunnerError::usage(
            format!("{command} needs a project"),
            format!("name one of {}: {example}`", names.join(", ")),
        ));
    };
    let i = t
        .provider
        .graph
        .find(name)
        .ok_or_else(|| UnknownTarget::new(&t.provider, name, command))?;
    Ok(&t.provider.projects[i])
}

/// The `pulumi` engine of the target's stack for a command that hands one project's stack to
/// `pulumi` (`output`, `pulumi`): with the passphrase a file backend needs, from the
/// environment or asked once at a terminal ([`passphrase::with_passphrase`](crate::config::passphrase::with_passphrase)).
fn pulumi_with_passphrase(s: &Settings, t: &StackContext) -> Result<Pulumi, RunnerError> {
    let env = crate::config::passphrase::with_passphrase(
        &s.ws,
        &t.stack,
        t.env.clone(),
        s.interactive,
        &mut Terminal::new(s.console),
    )?;
    Ok(operation::pulumi_for(s, t, env))
}

/// A runtime for the async work of a command (children, signals, timers).
fn runtime(threads: Threads) -> Result<tokio::runtime::Runtime, RunnerError> {
    let mut builder = match threads {
        Threads::One => tokio::runtime::Builder::new_current_thread(),
        Threads::Many => tokio::runtime::Builder::new_multi_thread(),
    };
    builder.enable_all().build().map_err(|source| RunnerError::Io {
        context: "cannot start the async runtime".into(),
        source,
    })
}

/// How many threads a [`runtime`] gets.
#[derive(Debug, Clone, Copy)]
enum Threads {
    /// A few reads one after the other.
    One,
    /// A run: projects at once.
    Many,
}

/// The file `flag` names as an output ([`crate::fs::Output::named`]), refused with its fix (a
/// usage error, exit 2) before anything runs or is written.
pub(crate) fn named_output(flag: &str, path: &std::path::Path) -> Result<crate::fs::Output, RunnerError> {
    crate::fs::Output::named(path)
        .map_err(|e| RunnerError::usage(format!("{flag} {}: the path {e}", path.display()), e.fix()))
}
