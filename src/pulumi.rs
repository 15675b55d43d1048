//! The engine that runs projects with the `pulumi` CLI: each command a child process in its own
//! process group (so Ctrl-C reaches it only through the runner), non-interactive, with
//! `--stack` on every command, the shared stack configuration (`--config-file`), and the
//! environment overlay. Output is streamed line by line as events, scrubbed of known secrets.
// A failed step ends the job: returning its `JobEnd` as the error keeps the flow plain, and
// failures are rare enough that their size does not matter.
#![allow(clippy::result_large_err)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::exec::{Control, Engine, Event, Job, JobEnd, Level, Outputs, Status, Stream};
use crate::hooks;
use crate::plan::Operation;

/// Lines of output kept per project for the failure message.
const TAIL: usize = 15;

/// Secret values seen so far (stack outputs marked secret), removed from every printed line.
#[derive(Debug, Clone, Default)]
pub struct Redactor(Arc<RwLock<Vec<String>>>);

impl Redactor {
    pub fn add(&self, texts: Vec<String>) {
        let mut known = self.0.write().expect("not poisoned");
        for t in texts {
            if !known.contains(&t) {
                known.push(t);
            }
        }
        // Longest first, so a secret containing another is removed whole.
        known.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    pub fn scrub(&self, line: &str) -> String {
        let known = self.0.read().expect("not poisoned");
        let mut out = line.to_string();
        for s in known.iter() {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), crate::exec::outputs::REDACTED);
            }
        }
        out
    }
}

pub struct Pulumi {
    /// The command to run (`pulumi`, found on PATH).
    pub program: PathBuf,
    pub root: PathBuf,
    pub provider: String,
    pub stack: String,
    /// `config/pulumi/Pulumi.<stack>.yaml`, absolute.
    pub config_file: PathBuf,
    /// Variables set on every child on top of the process environment.
    pub env: BTreeMap<String, String>,
    /// Scratch files (event logs, hook inputs), removed after use.
    pub scratch: PathBuf,
    pub redactor: Redactor,
    /// `destroy --prune-kubeconfig`: remove what `kubeconfig-merge` added.
    pub prune_kubeconfig: bool,
}

/// How one command ended.
struct StepEnd {
    code: Option<i32>,
    /// Standard output when captured (never printed: it may hold secrets).
    captured: String,
    stderr: String,
    interrupted: bool,
}

impl Pulumi {
    fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(&self.program);
        c.args(args)
            .current_dir(cwd)
            .envs(&self.env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        c.process_group(0);
        c
    }

    /// Runs one command for `project`, streaming its lines unless `capture` (then stdout is
    /// returned instead). Ctrl-C: SIGINT to the group on `interrupt`, SIGKILL on `kill`.
    async fn step(
        &self,
        project: &str,
        mut cmd: Command,
        control: &Control,
        capture: bool,
        input: Option<String>,
    ) -> Result<StepEnd, String> {
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()))?;
        if let Some(text) = input
            && let Some(mut stdin) = child.stdin.take()
        {
            // Written to the pipe, never to argv or a file.
            let _ = stdin.write_all(text.as_bytes()).await;
            drop(stdin);
        }
        let pid = child.id();
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        // Captured stdout stays raw and unprinted (it may hold secrets, e.g. `stack output
        // --show-secrets`); everything printed is scrubbed, and stderr is kept for the error.
        let out_task = self.pump(stdout, Stream::Stdout, project, control, !capture, capture);
        let err_task = self.pump(stderr, Stream::Stderr, project, control, true, true);
        let mut interrupted = false;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                () = control.interrupt.cancelled(), if !interrupted => {
                    interrupted = true;
                    signal_group(pid, Signal::Interrupt);
                }
                () = control.kill.cancelled() => {
                    signal_group(pid, Signal::Kill);
                    break child.wait().await;
                }
            }
        };
        let captured = out_task.await.unwrap_or_default();
        let stderr = err_task.await.unwrap_or_default();
        let code = status.map_err(|e| format!("waiting for pulumi: {e}"))?.code();
        Ok(StepEnd {
            code,
            captured,
            stderr,
            interrupted,
        })
    }

    /// Reads a child's pipe line by line: `forward` sends each line (scrubbed) as an event;
    /// `keep` collects the lines, scrubbed when forwarded and raw when not.
    fn pump<R>(
        &self,
        pipe: R,
        stream: Stream,
        project: &str,
        control: &Control,
        forward: bool,
        keep: bool,
    ) -> tokio::task::JoinHandle<String>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
    {
        let events = control.events.clone();
        let redactor = self.redactor.clone();
        let name = project.to_string();
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            let mut kept = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = if forward { redactor.scrub(&line) } else { line };
                if keep {
                    kept.push_str(&line);
                    kept.push('\n');
                }
                if forward {
                    let _ = events.send(Event::Line {
                        project: name.clone(),
                        stream,
                        text: line,
                    });
                }
            }
            kept
        })
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
        let cmd = self.command(&self.project_dir(job), &args);
        let end = self
            .step(&job.project.name, cmd, control, true, None)
            .await
            .map_err(JobEnd::failed)?;
        match end.code {
            Some(0) => Ok(true),
            _ if !create && end.stderr.contains("no stack named") => Ok(false),
            code => Err(step_failed("pulumi stack select", code, &end)),
        }
    }

    /// Reads the stack's outputs, values in memory only: `--show-secrets` for the values, and
    /// once without to learn which are secret.
    async fn outputs(&self, job: &Job, control: &Control) -> Result<Outputs, JobEnd> {
        let dir = self.project_dir(job);
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
            self.command(&dir, &args)
        };
        // Both reads at once: they only read the stack's state.
        let (shown, hidden) = tokio::join!(
            self.step(&job.project.name, read(true), control, true, None),
            self.step(&job.project.name, read(false), control, true, None)
        );
        let shown = shown.map_err(JobEnd::failed)?;
        if shown.code != Some(0) {
            return Err(step_failed("pulumi stack output", shown.code, &shown));
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
        let config = self.config_file.display().to_string();
        let event_log = self.scratch.join(format!("{name}-{}.events.jsonl", op.as_str()));
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
        let mut cmd = self.command(&self.project_dir(job), &args);
        // `--event-log` exists only with PULUMI_DEBUG_COMMANDS (Automation API sets it too).
        cmd.env("PULUMI_DEBUG_COMMANDS", "true");
        let _ = std::fs::create_dir_all(&self.scratch);
        let end = match self.step(name, cmd, control, false, None).await {
            Ok(end) => end,
            Err(e) => return JobEnd::failed(e),
        };
        let changes = read_changes(&event_log);
        let _ = std::fs::remove_file(&event_log);
        if end.interrupted {
            return JobEnd {
                changes,
                ..JobEnd::failed(format!("pulumi {} was interrupted", op.as_str()))
            };
        }
        if end.code != Some(0) {
            return JobEnd {
                changes,
                ..step_failed(&format!("pulumi {}", op.as_str()), end.code, &end)
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
        let state_dir = self.scratch.parent().unwrap_or(&self.scratch);
        match hooks::prune_kubeconfig(state_dir, &job.project.name) {
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
        for hook in &job.project.on_success {
            let ctx = hooks::Context {
                root: &self.root,
                provider: &self.provider,
                stack: &self.stack,
                project: &job.project,
                outputs,
                upstream: &job.upstream,
                env: &self.env,
                state_dir: self.scratch.parent().unwrap_or(&self.scratch),
                scratch: &self.scratch,
            };
            match hook {
                crate::provider::Hook::Builtin(name) => {
                    let note = hooks::builtin(name, &ctx).map_err(|e| JobEnd::failed(format!("hook {name}: {e}")))?;
                    let _ = control.events.send(Event::Note {
                        project: Some(job.project.name.clone()),
                        level: note.0,
                        message: note.1,
                    });
                }
                crate::provider::Hook::Script(path) => {
                    let prepared =
                        hooks::script(path, &ctx).map_err(|e| JobEnd::failed(format!("hook {path}: {e}")))?;
                    let mut cmd = Command::new(&prepared.program);
                    cmd.current_dir(&self.root)
                        .envs(&self.env)
                        .envs(&prepared.env)
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .kill_on_drop(true);
                    #[cfg(unix)]
                    cmd.process_group(0);
                    let end = self
                        .step(&job.project.name, cmd, control, false, Some(prepared.stdin))
                        .await
                        .map_err(|e| JobEnd::failed(format!("hook {path}: {e}")));
                    let _ = std::fs::remove_file(&prepared.outputs_file);
                    let end = end?;
                    if end.code != Some(0) {
                        return Err(step_failed(&format!("hook {path}"), end.code, &end));
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

fn step_failed(what: &str, code: Option<i32>, end: &StepEnd) -> JobEnd {
    let how = match code {
        Some(c) => format!("exited with code {c}"),
        None => "was killed by a signal".into(),
    };
    let tail: Vec<&str> = end
        .stderr
        .lines()
        .rev()
        .take(TAIL)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let mut error = format!("{what} {how}");
    if !tail.is_empty() {
        error.push_str(":\n");
        error.push_str(&tail.join("\n"));
    }
    JobEnd::failed(error)
}

/// The `summaryEvent.resourceChanges` of an engine event log, if it has one.
fn read_changes(path: &Path) -> BTreeMap<String, u64> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("summaryEvent").and_then(|s| s.get("resourceChanges")).cloned())
        .next_back()
        .and_then(|c| serde_json::from_value(c).ok())
        .unwrap_or_default()
}

#[derive(Clone, Copy)]
enum Signal {
    Interrupt,
    Kill,
}

/// Sends a signal to the child's whole process group (Pulumi's plugins and language hosts too).
fn signal_group(pid: Option<u32>, signal: Signal) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal as S, killpg};
        use nix::unistd::Pid;
        let s = match signal {
            Signal::Interrupt => S::SIGINT,
            Signal::Kill => S::SIGKILL,
        };
        let _ = killpg(Pid::from_raw(pid), s);
    }
    #[cfg(not(unix))]
    let _ = (pid, signal);
}
