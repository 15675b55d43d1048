//! The engine that runs projects with the `pulumi` CLI: non-interactive, with `--stack` on every
//! command, the shared stack configuration (`--config-file`), and the environment overlay; each
//! command a child started by [`process`]. After a successful `up`, the project's outputs are
//! read and its hooks run. Also here: the secrets store (`pulumi config set --secret`).
// A failed step ends the job: returning its `JobEnd` as the error keeps the flow plain, and
// failures are rare enough that their size does not matter.
#![allow(clippy::result_large_err)]

mod deployed;
pub(crate) mod hooks;
mod process;
mod redact;
mod store;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::env::Env;
use crate::exec::{Control, Engine, Event, Job, JobEnd, Level, Outputs, Status};
use crate::plan::Operation;
use crate::provider::Hook;
use crate::workspace::RunDir;

pub(crate) use deployed::Deployed;
pub(crate) use hooks::prune_kubeconfig;
use process::{Ended, Step};
pub(crate) use redact::Redactor;
pub(crate) use store::Store;

pub(crate) struct Pulumi {
    /// The command to run (`pulumi`, found on PATH).
    pub(crate) program: PathBuf,
    pub(crate) root: PathBuf,
    pub(crate) provider: String,
    pub(crate) stack: String,
    /// `config/pulumi/Pulumi.<stack>.yaml`, absolute.
    pub(crate) config_file: PathBuf,
    /// The overlay and the passphrase for every child.
    pub(crate) env: Env,
    /// Scratch files (event logs, hook inputs, removed after use) and hook records.
    pub(crate) run_dir: RunDir,
    pub(crate) redactor: Redactor,
    /// `destroy --prune-kubeconfig`: remove what `kubeconfig-merge` added.
    pub(crate) prune_kubeconfig: bool,
}

impl Pulumi {
    /// `pulumi ARGS` in the project's directory, with the overlay and the passphrase.
    fn command(&self, job: &Job, args: &[&str]) -> std::process::Command {
        let mut c = process::command(&self.program, &self.project_dir(job));
        c.args(args);
        self.env.apply_for_pulumi(&mut c);
        c
    }

    fn step<'a>(&'a self, job: &'a Job, control: &'a Control) -> Step<'a> {
        Step {
            project: &job.project.name,
            control,
            redactor: &self.redactor,
        }
    }

    fn project_dir(&self, job: &Job) -> PathBuf {
        self.root.join(&job.project.path)
    }

    /// `pulumi stack select --stack S` (with `--create` when asked). `Ok(false)`: no such stack.
    async fn select(&self, job: &Job, control: &Control, create: bool) -> Result<bool, JobEnd> {
        let mut args = vec!["stack", "select", "--stack", &self.stack, "--non-interactive"];
        if create {
            args.push("--create");
        }
        let cmd = self.command(job, &args);
        say(job, control, &cmd);
        let end = self
            .step(job, control)
            .run(cmd, true, None)
            .await
            .map_err(JobEnd::failed)?;
        match end.code {
            Some(0) => Ok(true),
            _ if !create && end.stderr.contains("no stack named") => Ok(false),
            _ => Err(failed("pulumi stack select", &end)),
        }
    }

    /// Reads the stack's outputs, values in memory only: `--show-secrets` for the values, and
    /// once without to learn which are secret.
    async fn outputs(&self, job: &Job, control: &Control) -> Result<Outputs, JobEnd> {
        let read = |show: bool| {
            let mut args = vec![
                "stack",
                "output",
                "--json",
                "--stack",
                self.stack.as_str(),
                "--non-interactive",
            ];
            if show {
                args.push("--show-secrets");
            }
            let cmd = self.command(job, &args);
            say(job, control, &cmd);
            cmd
        };
        // Both reads at once: they only read the stack's state.
        let step = self.step(job, control);
        let (shown, hidden) = tokio::join!(step.run(read(true), true, None), step.run(read(false), true, None));
        let shown = shown.map_err(JobEnd::failed)?;
        if shown.code != Some(0) {
            return Err(failed("pulumi stack output", &shown));
        }
        let hidden = hidden.map_err(JobEnd::failed)?;
        let parse = |text: &str| -> Result<Map<String, Value>, JobEnd> {
            serde_json::from_str(text).map_err(|e| {
                JobEnd::failed(format!(
                    "pulumi stack output --json printed something that is not a JSON object: {e}"
                ))
            })
        };
        let outputs = Outputs::from_pair(parse(&shown.captured)?, &parse(&hidden.captured)?);
        self.redactor.add(outputs.secret_texts());
        Ok(outputs)
    }

    async fn operation(&self, job: &Job, control: &Control) -> JobEnd {
        let name = &job.project.name;
        let op = job.operation;
        match op {
            Operation::Up | Operation::Preview => {
                if let Err(e) = self.select(job, control, true).await {
                    return e;
                }
            }
            Operation::Refresh | Operation::Destroy => match self.select(job, control, false).await {
                Ok(true) => {}
                Ok(false) => {
                    if op == Operation::Refresh {
                        let _ = control.events.send(Event::Note {
                            project: Some(name.clone()),
                            level: Level::Warning,
                            message: format!("{name} has no previous deployment: nothing to refresh"),
                        });
                    }
                    return JobEnd {
                        status: Status::Unchanged {
                            reason: "no previous deployment".into(),
                        },
                        outputs: None,
                        changes: BTreeMap::new(),
                        error: None,
                    };
                }
                Err(e) => return e,
            },
        }
        let scratch = self.run_dir.scratch();
        let config = self.config_file.display().to_string();
        let event_log = scratch.join(format!("{name}-{}.events.jsonl", op.as_str()));
        let event_log_arg = event_log.display().to_string();
        let mut args = vec![op.as_str(), "--stack", self.stack.as_str(), "--non-interactive"];
        // The secrets store reads its own `Pulumi.<stack>.yaml`, where the secrets are.
        if !job.project.secrets_store {
            args.extend(["--config-file", config.as_str()]);
        }
        if op != Operation::Preview {
            args.extend(["--yes", "--skip-preview"]);
        }
        args.extend(["--event-log", event_log_arg.as_str()]);
        let mut cmd = self.command(job, &args);
        // `--event-log` exists only with PULUMI_DEBUG_COMMANDS (Automation API sets it too).
        cmd.env("PULUMI_DEBUG_COMMANDS", "true");
        say(job, control, &cmd);
        let _ = std::fs::create_dir_all(&scratch);
        let end = match self.step(job, control).run(cmd, false, None).await {
            Ok(end) => end,
            Err(e) => return JobEnd::failed(e),
        };
        let engine = EngineLog::read(&event_log);
        let _ = std::fs::remove_file(&event_log);
        let changes = engine.changes;
        if end.interrupted {
            return JobEnd {
                changes,
                ..JobEnd::failed(format!("pulumi {} was interrupted", op.as_str()))
            };
        }
        if end.code != Some(0) {
            let what = format!("pulumi {}", op.as_str());
            return JobEnd {
                changes,
                ..JobEnd::failed(process::failure(&what, &end, &engine.errors))
            };
        }
        let mut result = JobEnd {
            status: Status::Succeeded,
            outputs: None,
            changes,
            error: None,
        };
        if op == Operation::Destroy
            && self.prune_kubeconfig
            && job.project.merges_kubeconfig()
            && let Err(e) = self.prune(job, control)
        {
            return e;
        }
        if op == Operation::Up {
            match self.outputs(job, control).await {
                Ok(o) => result.outputs = Some(o),
                Err(e) => return e,
            }
            if let Err(e) = self
                .hooks(job, control, result.outputs.as_ref().expect("just set"))
                .await
            {
                return JobEnd {
                    changes: result.changes,
                    ..e
                };
            }
        }
        result
    }

    /// `destroy --prune-kubeconfig`: removes what `kubeconfig-merge` added for the project.
    fn prune(&self, job: &Job, control: &Control) -> Result<(), JobEnd> {
        match hooks::prune_kubeconfig(&self.run_dir, &job.project.name) {
            Ok(Some(message)) => {
                let _ = control.events.send(Event::Note {
                    project: Some(job.project.name.clone()),
                    level: Level::Info,
                    message,
                });
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(JobEnd::failed(format!("pruning the kubeconfig: {e}"))),
        }
    }

    /// The project's `on_success` hooks, in order; the first failure fails the project.
    async fn hooks(&self, job: &Job, control: &Control, outputs: &Outputs) -> Result<(), JobEnd> {
        let ctx = hooks::Context {
            root: &self.root,
            provider: &self.provider,
            stack: &self.stack,
            project: &job.project,
            outputs,
            upstream: &job.upstream,
            env: &self.env,
            run_dir: &self.run_dir,
        };
        for hook in &job.project.on_success {
            match hook {
                Hook::Builtin(builtin) => {
                    let (level, message) = hooks::builtin(*builtin, &ctx)
                        .map_err(|e| JobEnd::failed(format!("hook {}: {e}", builtin.name())))?;
                    let _ = control.events.send(Event::Note {
                        project: Some(job.project.name.clone()),
                        level,
                        message,
                    });
                }
                Hook::Script(path) => {
                    let prepared =
                        hooks::script(path, &ctx).map_err(|e| JobEnd::failed(format!("hook {path}: {e}")))?;
                    let mut cmd = process::command(&prepared.program, &self.root);
                    self.env.apply_for_tool(&mut cmd);
                    cmd.envs(&prepared.env);
                    let end = self
                        .step(job, control)
                        .run(cmd, false, Some(prepared.stdin))
                        .await
                        .map_err(|e| JobEnd::failed(format!("hook {path}: {e}")));
                    let _ = std::fs::remove_file(&prepared.outputs_file);
                    let end = end?;
                    if end.code != Some(0) {
                        return Err(failed(&format!("hook {path}"), &end));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Engine for Pulumi {
    async fn run(&self, job: Job, control: Control) -> JobEnd {
        self.operation(&job, &control).await
    }
}

/// Says (with `-d`) which command runs where; values never travel on the command line.
fn say(job: &Job, control: &Control, cmd: &std::process::Command) {
    let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
    let _ = control.events.send(Event::Note {
        project: Some(job.project.name.clone()),
        level: Level::Debug,
        message: format!(
            "{} {} (in {})",
            cmd.get_program().to_string_lossy(),
            args.join(" "),
            job.project.path
        ),
    });
}

/// A step that failed, with what it printed as the cause.
fn failed(what: &str, end: &Ended) -> JobEnd {
    JobEnd::failed(process::failure(what, end, &[]))
}

/// What the engine's event log (`--event-log`) tells about an operation.
#[derive(Debug, Default, PartialEq)]
struct EngineLog {
    /// `summaryEvent.resourceChanges`: `create`, `update`, `same`, …
    changes: BTreeMap<String, u64>,
    /// The messages of `diagnosticEvent`s of severity `error`, colour tags removed: the cause
    /// of a failure (Pulumi prints them on standard output, among the progress).
    errors: Vec<String>,
}

impl EngineLog {
    fn read(path: &Path) -> Self {
        let mut log = EngineLog::default();
        let Ok(text) = std::fs::read_to_string(path) else {
            return log;
        };
        for event in text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
            if let Some(c) = event.get("summaryEvent").and_then(|s| s.get("resourceChanges")) {
                log.changes = serde_json::from_value(c.clone()).unwrap_or_default();
            }
            if let Some(d) = event.get("diagnosticEvent")
                && d.get("severity").and_then(Value::as_str) == Some("error")
                && let Some(message) = d.get("message").and_then(Value::as_str)
            {
                let message = strip_colour_tags(message).trim().to_string();
                if !message.is_empty() && !log.errors.contains(&message) {
                    log.errors.push(message);
                }
            }
        }
        log
    }
}

/// Pulumi's colour tags (`<{%reset%}>`, `<{%fg 1%}>`) removed.
fn strip_colour_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<{%") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find("%}>") else {
            rest = &rest[start..];
            break;
        };
        rest = &rest[start + end + 3..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_log_gives_the_changes_and_the_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"sequence":0,"timestamp":1,"preludeEvent":{"config":{}}}"#,
                "\n",
                r#"{"sequence":1,"timestamp":1,"diagnosticEvent":{"message":"<{%fg 1%}>creating failed: quota<{%reset%}>\n","color":"raw","severity":"error"}}"#,
                "\n",
                r#"{"sequence":2,"timestamp":1,"diagnosticEvent":{"message":"just so you know\n","color":"raw","severity":"warning"}}"#,
                "\n",
                r#"{"sequence":3,"timestamp":1,"summaryEvent":{"resourceChanges":{"create":2,"same":1}}}"#,
                "\n",
                r#"{"sequence":4,"#,
            ),
        )
        .unwrap();
        let log = EngineLog::read(&path);
        assert_eq!(log.errors, ["creating failed: quota"]);
        assert_eq!(log.changes, BTreeMap::from([("create".into(), 2), ("same".into(), 1)]));
        assert_eq!(EngineLog::read(&dir.path().join("none")), EngineLog::default());
    }
}
