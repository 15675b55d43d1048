//! The engine that runs projects with the `pulumi` CLI: non-interactive, with `--stack` on every
//! command, the shared stack configuration (`--config-file`), and the environment overlay; each
//! command a child started by [`process`]. A stack the run state knows to exist is used without
//! `stack select`. After a successful `up`, the project's outputs are read once (which are
//! secret, the operation's event log tells) and its hooks run. Also here: the secrets store
//! (`pulumi config set --secret`).
// A failed step ends the job: returning its `JobEnd` as the error keeps the flow plain, and
// failures are rare enough that their size does not matter.
#![allow(clippy::result_large_err)]

mod attached;
mod deployed;
mod drift;
mod events;
pub(crate) mod hooks;
mod locks;
pub(crate) mod messages;
mod process;
mod redact;
mod store;
mod unlock;

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::config::backend::Backend;
use crate::config::env::Env;
use crate::exec::{Because, Control, Engine, Event, Failure, How, Job, JobEnd, Level, Outputs, Status};
use crate::plan::Operation;
use crate::provider::Hook;
use crate::workspace::RunDir;

pub(crate) use attached::attached;
pub(crate) use deployed::Deployed;
pub(crate) use drift::Drift;
use events::EventLog;
pub(crate) use hooks::prune_kubeconfig;
use messages::Message;
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
    /// What the command line asks of every `pulumi` of the run.
    pub(crate) flags: RunFlags,
    /// Projects whose stack exists (the run state says so, or the preparation created it): their
    /// operation runs without a `stack select` first.
    pub(crate) known_stacks: BTreeSet<String>,
    /// Projects whose `up` refreshes first (`--refresh`): a drift check found their stack
    /// changed, maybe outside Pulumi, which an `up` of the recorded state would not see.
    pub(crate) refresh_first: BTreeSet<String>,
}

/// What the command line asks of every `pulumi` a run starts: resolved once with the run's other
/// options (`cli::run`) and handed to the engine whole. A flag that becomes an argument of
/// `pulumi` is a field here and its argument in [`Pulumi::run_operation`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RunFlags {
    /// `destroy --prune-kubeconfig`: remove what `kubeconfig-merge` added.
    pub(crate) prune_kubeconfig: bool,
    /// `--remove-stale-locks`: a stack lock left by a process of this host that no longer runs
    /// is removed, and the operation tried again once.
    pub(crate) remove_stale_locks: bool,
    /// `drift`: previews are drift checks (see [`Drift`]).
    pub(crate) drift: Option<Drift>,
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
            scratch: Some(self.run_dir.scratch()),
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
        let run = || async {
            let cmd = self.command(job, &args);
            say(job, control, &cmd);
            self.step(job, control)
                .run(cmd, true, None)
                .await
                .map_err(JobEnd::failed)
        };
        let mut end = run().await?;
        self.clear_own_locks(job, control, &end);
        // Creating a stack holds its lock (`CreateStack`), which a killed creation leaves.
        if create && end.code != Some(0) {
            match self.remove_stale_locks(job, control, &end.stderr).await {
                Some(Ok(())) => end = run().await?,
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        match end.code {
            Some(0) => Ok(true),
            _ if !create && messages::says(&end.stderr, Message::NoStack) => Ok(false),
            _ => Err(JobEnd::failed(self.explained(
                job,
                process::failure("pulumi stack select", &end, &[]),
                &end.stderr,
            ))),
        }
    }

    /// Reads the stack's outputs, values in memory only. When the operation's event log holds
    /// them and none is secret, they are taken from it: no `pulumi` starts. Otherwise one
    /// `stack output --show-secrets` (the log blinds secrets, and a secret's change must change
    /// the outputs' digest, so that what reads it runs again), which of them are secret told by
    /// the log; only when the log cannot tell, a second read without `--show-secrets`
    /// (secrets read `"[secret]"` there).
    async fn outputs(&self, job: &Job, control: &Control, log: &EventLog) -> Result<Outputs, JobEnd> {
        if let Some(outputs) = log.plain_outputs() {
            return Ok(outputs);
        }
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
        let parse = |end: Result<Ended, process::NotRun>| -> Result<Map<String, Value>, JobEnd> {
            let end = end.map_err(JobEnd::failed)?;
            if end.code != Some(0) {
                return Err(failed("pulumi stack output", &end));
            }
            serde_json::from_str(&end.captured).map_err(|e| {
                JobEnd::failed(format!(
                    "pulumi stack output --json printed something that is not a JSON object: {e}"
                ))
            })
        };
        let step = self.step(job, control);
        let shown = parse(step.run(read(true), true, None).await)?;
        let outputs = match log.mark(shown.clone()) {
            Some(o) => o,
            None => Outputs::from_pair(shown, &parse(step.run(read(false), true, None).await)?),
        };
        self.redactor.add(outputs.secret_texts());
        Ok(outputs)
    }

    /// Makes sure the stack exists before an operation: `stack select --create` for `up` and
    /// `preview`; for `refresh` and `destroy` `Ok(false)` when there is none (nothing to act on).
    async fn ensure_stack(&self, job: &Job, control: &Control) -> Result<bool, JobEnd> {
        match job.operation {
            Operation::Up | Operation::Preview => self.select(job, control, true).await,
            Operation::Refresh | Operation::Destroy => self.select(job, control, false).await,
        }
    }

    /// The operation itself (`pulumi up …`), and what its event log told.
    async fn run_operation(&self, job: &Job, control: &Control) -> Result<(Ended, EventLog), JobEnd> {
        let name = &job.project.name;
        let op = job.operation;
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
        args.extend(drift::flags(self.flags.drift));
        if op == Operation::Up && self.refresh_first.contains(name) {
            args.push("--refresh");
        }
        args.extend(["--event-log", event_log_arg.as_str()]);
        let mut cmd = self.command(job, &args);
        // `--event-log` exists only with PULUMI_DEBUG_COMMANDS (Automation API sets it too).
        cmd.env("PULUMI_DEBUG_COMMANDS", "true");
        say(job, control, &cmd);
        let _ = std::fs::create_dir_all(&scratch);
        let end = self
            .step(job, control)
            .run(cmd, false, None)
            .await
            .map_err(JobEnd::failed)?;
        self.clear_own_locks(job, control, &end);
        let log = EventLog::read(&event_log);
        let _ = std::fs::remove_file(&event_log);
        Ok((end, log))
    }

    async fn operation(&self, job: &Job, control: &Control) -> JobEnd {
        let name = &job.project.name;
        let op = job.operation;
        if let Some(end) = self.select_deployed(job, control).await {
            return end;
        }
        // A drift check has selected the stack already.
        let known = self.flags.drift.is_some() || self.known_stacks.contains(name);
        if !known {
            match self.ensure_stack(job, control).await {
                Ok(true) => {}
                Ok(false) => return no_deployment(name, op, control),
                Err(e) => return e,
            }
        }
        // Stopped while the stack was being selected (which is let finish): the operation
        // does not start.
        if control.interrupt.is_cancelled() {
            return JobEnd::ended(Status::NotStarted(Because::Interrupted));
        }
        let (mut end, mut log) = match self.run_operation(job, control).await {
            Ok(ran) => ran,
            Err(e) => return e,
        };
        if known && missing_stack(&end) {
            // The run state knew a stack the backend does not have (removed by hand, another
            // backend): select or create it as for a new one, once, and run again.
            match self.ensure_stack(job, control).await {
                Ok(true) => match self.run_operation(job, control).await {
                    Ok(ran) => (end, log) = ran,
                    Err(e) => return e,
                },
                Ok(false) => return no_deployment(name, op, control),
                Err(e) => return e,
            }
        }
        match self.after_stale_locks(job, control, &end).await {
            Some(Ok(ran)) => (end, log) = ran,
            Some(Err(e)) => return e,
            None => {}
        }
        let mut changes = std::mem::take(&mut log.changes);
        if end.interrupted {
            return JobEnd {
                status: Status::Interrupted,
                changes,
                ..JobEnd::failed(Failure::ended(
                    format!("pulumi {}", op.as_str()),
                    How::Interrupted,
                    Vec::new(),
                ))
            };
        }
        if let Some(failed) = self.verdict(job, control, &end, &log, &mut changes) {
            return JobEnd { changes, ..failed };
        }
        let mut result = JobEnd {
            changes,
            diffs: self.redactor.scrub_diffs(std::mem::take(&mut log.diffs)),
            ..JobEnd::ended(Status::Succeeded)
        };
        if op == Operation::Destroy
            && self.flags.prune_kubeconfig
            && job.project.merges_kubeconfig()
            && let Err(e) = self.prune(job, control)
        {
            return e;
        }
        if op == Operation::Up {
            match self.outputs(job, control, &log).await {
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

    /// The operation's end as a failure, when it is one: a non-zero exit (unless a drift check
    /// found changes, its answer), or an error the engine reported while it exited 0 (a
    /// resource `creating failed`: what it did is not what the program declares, so the
    /// project is not done and runs again). A drift check's server-side apply conflicts are
    /// drift, told in a note and counted in `changes`.
    fn verdict(
        &self,
        job: &Job,
        control: &Control,
        end: &Ended,
        log: &EventLog,
        changes: &mut std::collections::BTreeMap<String, u64>,
    ) -> Option<JobEnd> {
        let op = job.operation;
        let said = log.said(&end.stderr);
        if drift::conflicts_found(self.flags.drift, end, &said, changes, |conflicts| {
            let _ = control.events.send(Event::Note {
                project: Some(job.project.name.clone()),
                level: Level::Warning,
                message: conflict_note(conflicts),
            });
        }) {
            return None;
        }
        if end.code != Some(0) && !drift::found(self.flags.drift, end, changes) {
            let what = format!("pulumi {}", op.as_str());
            return Some(JobEnd::failed(self.explained(
                job,
                process::failure(&what, end, log.cause()),
                &said,
            )));
        }
        if end.code == Some(0) && !log.errors.is_empty() && self.flags.drift.is_none() {
            let cause = format!("exited 0, but reported an error:\n{}", log.errors.join("\n"));
            return Some(JobEnd::failed(Failure::of(format!("pulumi {}", op.as_str()), cause)));
        }
        None
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
            Err(e) => Err(JobEnd::failed(Failure::of("pruning the kubeconfig", e.to_string()))),
        }
    }

    /// The project's `on_success` hooks, in order; the first failure fails the project.
    async fn hooks(&self, job: &Job, control: &Control, outputs: &Outputs) -> Result<(), JobEnd> {
        let ctx = hooks::AfterUp {
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
                        .map_err(|e| JobEnd::failed(Failure::of(format!("hook {}", builtin.name()), e.to_string())))?;
                    let _ = control.events.send(Event::Note {
                        project: Some(job.project.name.clone()),
                        level,
                        message,
                    });
                }
                Hook::Script(path) => {
                    let prepared = hooks::script(path, &ctx)
                        .map_err(|e| JobEnd::failed(Failure::of(format!("hook {path}"), e.to_string())))?;
                    for message in &prepared.warnings {
                        let _ = control.events.send(Event::Note {
                            project: Some(job.project.name.clone()),
                            level: Level::Warning,
                            message: message.clone(),
                        });
                    }
                    let mut cmd = process::command(&prepared.program, &self.root);
                    self.env.apply_for_tool(&mut cmd);
                    cmd.envs(&prepared.env);
                    let end = self
                        .step(job, control)
                        .run(cmd, false, Some(prepared.stdin))
                        .await
                        .map_err(|e| JobEnd::failed(Failure::of(format!("hook {path}"), e.to_string())));
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

impl Pulumi {
    /// A failure's text with what the engine's messages in `said` (its standard error and
    /// event log's errors) tell about it: the locks that refused the stack
    /// ([`locks::described`]), files among them that are no lock ([`locks::broken`]), a
    /// passphrase that does not open the project's own stack file, a field another manager owns.
    fn explained(&self, job: &Job, error: Failure, said: &str) -> Failure {
        let mut notes = Vec::new();
        for message in messages::classify(said) {
            match message {
                Message::StackLocked => notes.extend(locks::described(said, self.flags.remove_stale_locks)),
                Message::UnreadableLock => {
                    let broken = locks::broken(&Backend::of(&self.env), &job.project.name, &self.stack);
                    notes.extend(locks::broken_notes(&broken));
                }
                Message::IncorrectPassphrase => notes.push(format!(
                    "the passphrase does not open {}'s own stack file ({}): it was made with another; \
                     give the passphrase this stack was created with",
                    job.project.name,
                    crate::config::stackfile::own(std::path::Path::new(&job.project.path), &self.stack).display()
                )),
                Message::FieldConflict => notes.push(conflict_note(&messages::field_conflicts(said))),
                Message::ReleaseGone => notes.push(format!(
                    "a Helm release of {0} is gone from the cluster already (removed outside Pulumi), so deleting it \
                     fails each time: `runner pulumi {0} -s {1} -- refresh --yes` takes what is left into its state, \
                     then run the same command again",
                    job.project.name, self.stack
                )),
                Message::NoStack | Message::StackExists | Message::LockFile | Message::NoChangesExpected => {}
            }
        }
        error.noted(notes)
    }
}

/// What a server-side apply conflict means and the two ways out: a field a program sets was
/// changed by another field manager (kubectl, say), and the Kubernetes provider does not take
/// it back unless told to.
pub(crate) fn conflict_note(conflicts: &[messages::FieldConflict]) -> String {
    let owned = if conflicts.is_empty() {
        "another field manager owns a field the program sets".to_string()
    } else {
        conflicts
            .iter()
            .map(|c| format!("`{}` owns {}", c.manager, c.field))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "changed outside Pulumi: {owned} (a server-side apply conflict), so the Kubernetes provider will not \
         set it back; undo that change, or let Pulumi take such fields back: \
         PULUMI_K8S_ENABLE_PATCH_FORCE=true in config/pulumi/environment (every Kubernetes resource), or the \
         annotation `pulumi.com/patchForce: \"true\"` on the resource in its program"
    )
}

/// A step that failed, with what it printed as the cause.
fn failed(what: &str, end: &Ended) -> JobEnd {
    JobEnd::failed(process::failure(what, end, &[]))
}

/// The operation failed because the stack does not exist (`no stack named 'dev' found`).
fn missing_stack(end: &Ended) -> bool {
    end.code != Some(0) && !end.interrupted && messages::says(&end.stderr, Message::NoStack)
}

/// `refresh` or `destroy` of a stack that does not exist: nothing to act on.
fn no_deployment(name: &str, op: Operation, control: &Control) -> JobEnd {
    if op == Operation::Refresh {
        let _ = control.events.send(Event::Note {
            project: Some(name.to_string()),
            level: Level::Warning,
            message: format!("{name} has no previous deployment: nothing to refresh"),
        });
    }
    JobEnd::ended(Status::Unchanged(Because::NoDeployment))
}
