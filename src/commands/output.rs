//! `output PROJECT [NAME]`: a project's stack outputs, read from the backend (not from what
//! runs recorded), through the same `pulumi`, backend and passphrase as a run. Secrets read
//! `[secret]` unless `--show-secrets`; with NAME the value alone, raw (`runner output eks
//! kubeconfig --show-secrets > kc.yaml`). Takes no lock.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::write_result;
use crate::config::backend::Backend;
use crate::error::{RunnerError, exit};
use crate::exec::Outputs;
use crate::exec::outputs::REDACTED;
use crate::pulumi::Deployed;
use crate::report;
use crate::settings::{Settings, StackContext};

#[derive(Debug, Clone)]
pub(crate) struct OutputOptions {
    pub(crate) project: Option<String>,
    /// One output, printed raw.
    pub(crate) name: Option<String>,
    pub(crate) show_secrets: bool,
    pub(crate) json: bool,
}

pub(crate) fn run(s: &Settings, t: &StackContext, o: &OutputOptions) -> Result<i32, RunnerError> {
    let project = super::project_of(t, o.project.as_deref(), "`runner output`")?.clone();
    // A secret asked for without --show-secrets is refused before the passphrase is: the
    // last up recorded which outputs are secret (their values never).
    if let Some(name) = o.name.as_deref().filter(|_| !o.show_secrets)
        && recorded_secret(s, t, &project.name, name)
    {
        return Err(secret_refused(&project.name, name));
    }
    let engine = super::pulumi_with_passphrase(s, t)?;
    let backend = Backend::of(&engine.env);
    let runtime = super::runtime(super::Threads::One)?;
    let deploy = format!(
        "deploy it first: `runner up -p {} -s {} --target {}`",
        t.provider.name, t.stack, project.name
    );
    // A file backend never used holds no stack (and `pulumi` refuses a missing directory).
    let unused = backend.dir().is_some_and(|dir| !dir.exists());
    let read = if unused {
        Ok(Deployed::NoStack)
    } else {
        runtime.block_on(engine.deployed(&project))
    };
    let outputs = match read {
        Ok(Deployed::Outputs(outputs)) => outputs,
        Ok(Deployed::NoStack) => {
            return Err(RunnerError::failed(
                format!(
                    "{} has no stack `{}` in the backend {backend}: it was never deployed",
                    project.name, t.stack
                ),
                deploy,
            ));
        }
        Err(e) => {
            return Err(RunnerError::failed(
                format!(
                    "cannot read the outputs of {} from the backend {backend}: {}",
                    project.name,
                    crate::report::failure::text(&e)
                ),
                "check the backend (PULUMI_BACKEND_URL) and the passphrase, as for a run",
            ));
        }
    };
    let text = match &o.name {
        Some(name) => one(&project.name, &outputs, name, o)?,
        None if o.json => {
            serde_json::to_string_pretty(&Value::Object(shown(&outputs, o.show_secrets))).expect("JSON") + "\n"
        }
        None => {
            if outputs.values.is_empty() {
                report::info(&format!(
                    "{} has no outputs in the backend {backend} (not deployed, or destroyed)",
                    project.name
                ));
            }
            table(&shown(&outputs, o.show_secrets))
        }
    };
    write_result(&text)?;
    Ok(exit::SUCCESS)
}

/// The outputs as shown: secrets `[secret]` unless asked.
fn shown(outputs: &Outputs, show_secrets: bool) -> Map<String, Value> {
    if show_secrets {
        outputs.values.clone()
    } else {
        outputs.redacted()
    }
}

/// One output: raw text for a string (a file's content as it is), JSON for anything else.
fn one(project: &str, outputs: &Outputs, name: &str, o: &OutputOptions) -> Result<String, RunnerError> {
    let Some(value) = outputs.values.get(name) else {
        let names: Vec<&str> = outputs.values.keys().map(String::as_str).collect();
        return Err(RunnerError::failed(
            format!("{project} has no output `{name}`"),
            if names.is_empty() {
                "it has no outputs: is it deployed?".to_string()
            } else {
                format!("its outputs: {}", names.join(", "))
            },
        ));
    };
    if outputs.secret.contains(name) && !o.show_secrets {
        return Err(secret_refused(project, name));
    }
    Ok(match value {
        _ if o.json => serde_json::to_string_pretty(value).expect("JSON") + "\n",
        Value::String(text) if text.ends_with('\n') => text.clone(),
        Value::String(text) => format!("{text}\n"),
        other => format!("{other}\n"),
    })
}

/// The refusal to print a secret output not asked for with `--show-secrets`.
fn secret_refused(project: &str, name: &str) -> RunnerError {
    RunnerError::failed(
        format!("the output `{name}` of {project} is a secret: its value is printed only when asked"),
        format!("add --show-secrets: `runner output {project} {name} --show-secrets > file`"),
    )
}

/// Whether the last up of `project` recorded its output `name` as a secret (its value kept
/// as [`REDACTED`]); `false` when nothing says so.
fn recorded_secret(s: &Settings, t: &StackContext, project: &str, name: &str) -> bool {
    let Ok((state, _)) = crate::runstate::RunState::current(&t.run_dir, &t.provider, &|p| s.ws.show(p)) else {
        return false;
    };
    state
        .projects
        .get(project)
        .and_then(|p| p.outputs.as_ref())
        .and_then(|outputs| outputs.get(name))
        .is_some_and(|v| v.as_str() == Some(REDACTED))
}

/// `name  value`, one output a line; a value of several lines shows its first and how many.
fn table(values: &Map<String, Value>) -> String {
    let width = values.keys().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for (name, value) in values {
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let lines = text.lines().count();
        let shown = if lines > 1 {
            format!(
                "{} … ({lines} lines: `runner output PROJECT {name}` prints them)",
                text.lines().next().unwrap_or_default()
            )
        } else if text == REDACTED {
            format!("{REDACTED} (--show-secrets shows it)")
        } else {
            text
        };
        let _ = writeln!(out, "{name:<width$}  {shown}");
    }
    out
}
