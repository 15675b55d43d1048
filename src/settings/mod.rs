//! The command line, the environment and the workspace's files resolved once, before any work,
//! into plain values: the workspace, whether a person can be asked, the output style; for
//! commands that need them, the provider, the stack (the environment file's `PULUMI_STACK`
//! rules) and the environment every child sees. Nothing downstream reads flags or guesses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::backend::BACKEND_VAR;
use crate::config::env::Env;
use crate::config::env_file::{self, ENVIRONMENT_FILE, EnvironmentFile};
use crate::config::terminal::Console;
use crate::error::{RunnerError, exit};
use crate::provider::Provider;
use crate::report::ci::CiSystem;
use crate::report::{Banner, Style};
use crate::workspace::{RunDir, Workspace, WorkspaceLock};

mod chosen_provider;
mod stack;

use chosen_provider::{load_provider, recorded_provider};
pub(crate) use stack::provider_flag;
use stack::{StackSource, record_stack, say_once, stack, unknown_stack};

/// The global flags, as given.
#[derive(Debug, Clone)]
pub(crate) struct Flags {
    pub(crate) workspace: Option<PathBuf>,
    pub(crate) provider: Option<String>,
    pub(crate) stack: Option<String>,
    pub(crate) banner: Banner,
    pub(crate) non_interactive: bool,
    /// `--switch-stack`: a `-s` that differs from the environment file's `PULUMI_STACK` replaces it.
    pub(crate) switch_stack: bool,
}

/// What every command that works in a workspace shares.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) ws: Workspace,
    pub(crate) style: Style,
    /// The terminal the runner was started at (the questions ask it as its kind allows).
    pub(crate) console: Console,
    pub(crate) banner: Banner,
    /// A person can be asked: a terminal, not CI, no `--non-interactive`.
    pub(crate) interactive: bool,
    /// Progress can be drawn live: standard error is a terminal that can redraw, not in CI.
    pub(crate) live: bool,
    /// The CI job that runs the runner (`CI` is set), and whose own output the runner speaks
    /// where it knows it (groups, annotations, the job summary); `None` outside CI.
    pub(crate) ci: Option<CiSystem>,
    provider: Option<String>,
    stack: Option<String>,
    switch_stack: bool,
}

/// The provider and stack a command works on, and the environment its children see.
#[derive(Debug)]
pub(crate) struct StackContext {
    pub(crate) provider: Provider,
    pub(crate) stack: String,
    pub(crate) env: Env,
    pub(crate) run_dir: RunDir,
    /// The backend is the file backend inside the workspace (no `PULUMI_BACKEND_URL` given).
    pub(crate) default_backend: bool,
    /// The workspace lock, when resolving the target changed the environment file (a stack
    /// recorded or switched): taken before, so a busy workspace is refused with the file
    /// unchanged, and held for the command (the run takes the same lock).
    _lock: Option<WorkspaceLock>,
    /// The stack `--switch-stack` switched the workspace from (the environment file's before).
    switched_from: Option<String>,
    /// While it lives, a signal that ends the runner before anything ran (at a question) puts
    /// the switch back, as a refusal does.
    _undo: Option<crate::exec::signals::Undo>,
}

impl StackContext {
    /// `--switch-stack` switched the workspace to this stack for this command.
    pub(crate) fn switched(&self) -> bool {
        self.switched_from.is_some()
    }

    /// Puts the workspace back on the stack `--switch-stack` switched it from when the command
    /// ended with nothing run: refused (usage, validation) or not confirmed. A switch is kept
    /// once the stack was used.
    pub(crate) fn settle_switch(&self, ws: &Workspace, outcome: &Result<i32, RunnerError>) {
        let Some(old) = &self.switched_from else { return };
        let code = match outcome {
            Ok(code) => *code,
            Err(e) => e.exit_code(),
        };
        if !matches!(code, exit::USAGE | exit::VALIDATION | exit::DECLINED) {
            return;
        }
        let path = ws.root.join(ENVIRONMENT_FILE);
        say_switched_back(&path, &ws.show(&path), old, &self.stack);
    }
}

/// While it lives, a signal that ends the runner puts `PULUMI_STACK=old` back.
fn undo_switch(ws: &Workspace, old: &str, stack: &str) -> crate::exec::signals::Undo {
    let path = ws.root.join(ENVIRONMENT_FILE);
    let shown = ws.show(&path);
    let (old, stack) = (old.to_string(), stack.to_string());
    crate::exec::signals::hub().undo_on_interrupt(move || say_switched_back(&path, &shown, &old, &stack))
}

/// Puts `PULUMI_STACK=old` back into the environment file at `path` (`shown`), and says so:
/// nothing ran on `stack`.
fn say_switched_back(path: &Path, shown: &str, old: &str, stack: &str) {
    match env_file::set_stack(path, old) {
        Ok(()) => crate::report::info(&format!(
            "Switched the workspace back to stack {old}: nothing ran on {stack} (PULUMI_STACK={old} in {shown})"
        )),
        Err(e) => crate::report::warning(&format!(
            "the workspace stays switched to stack {stack}: cannot write PULUMI_STACK={old} back to {shown}: {e}"
        )),
    }
}

impl Settings {
    pub(crate) fn resolve(flags: Flags, style: Style, console: Console, cwd: &Path) -> Result<Self, RunnerError> {
        text_variables(std::env::vars_os())?;
        let ws = Workspace::locate(flags.workspace.as_deref(), cwd)?;
        crate::report::debug(style, &format!("workspace: {}", ws.root.display()));
        let ci = in_ci();
        Ok(Settings {
            ws,
            style,
            console,
            banner: flags.banner,
            interactive: !flags.non_interactive && !ci && console.stdin && console.stderr,
            // A dumb terminal cannot redraw: it gets plain lines as they come.
            live: !ci && console.redraws(),
            ci: CiSystem::detect(&|k| std::env::var(k).ok()),
            provider: flags.provider,
            stack: flags.stack,
            switch_stack: flags.switch_stack,
        })
    }

    /// The provider named by `-p`, loaded and checked. Missing or unknown is a usage error that
    /// lists the providers there are.
    pub(crate) fn provider(&self, command: &str) -> Result<Provider, RunnerError> {
        self.provider_seeing(command, &crate::programs::NoStats)
    }

    /// [`Self::provider`], with the `stat`s of project programs that were taken ahead.
    pub(crate) fn provider_seeing(
        &self,
        command: &str,
        stats: &dyn crate::programs::ProgramStats,
    ) -> Result<Provider, RunnerError> {
        // Without -p, the provider the workspace's stack file was written for, as the commands
        // of a stack take it (a stack file that cannot be read leaves the usual question).
        // Said as a stack's commands say it (once for a day's work), written nowhere: these
        // commands only read.
        let recorded = match &self.provider {
            Some(_) => None,
            None => self.known_stack().and_then(|stack| {
                let (name, note) = recorded_provider(&self.ws, &stack).ok().flatten()?;
                Some((stack, name, note))
            }),
        };
        let name = self
            .provider
            .as_deref()
            .or(recorded.as_ref().map(|(_, name, _)| name.as_str()));
        let provider = load_provider(&self.ws, name, command, stats)?;
        if let Some((stack, name, note)) = &recorded
            && !note.is_empty()
            && !stack::said_before(&self.ws, stack, name)
        {
            crate::report::info(note);
        }
        crate::report::debug(self.style, &format!("provider file: {}", provider.file));
        Ok(provider)
    }

    /// The workspace's stack: `PULUMI_STACK` of its environment file, when it names one.
    pub(crate) fn workspace_stack(&self) -> Option<String> {
        let path = self.ws.root.join(ENVIRONMENT_FILE);
        EnvironmentFile::load(&path, &self.ws.show(&path))
            .ok()?
            .vars
            .get("PULUMI_STACK")
            .filter(|s| !s.is_empty())
            .map(|s| s.to_lowercase())
    }

    /// The other stacks configured in this workspace.
    pub(crate) fn stacks_besides(&self, stack: &str) -> Vec<String> {
        stack::known_stacks(&self.ws)
            .into_iter()
            .filter(|other| other != stack)
            .collect()
    }

    /// The other stacks of this workspace that its runs left with a project deployed.
    pub(crate) fn deployed_stacks_besides(&self, stack: &str) -> Vec<String> {
        self.stacks_besides(stack)
            .into_iter()
            .filter(|other| {
                crate::runstate::RunState::load(&self.ws.run_dir(other), &|p| self.ws.show(p))
                    .is_ok_and(|state| !state.deployed().is_empty())
            })
            .collect()
    }

    /// The stack `-s` names, else `PULUMI_STACK` of the environment file or the process
    /// environment, when any: nothing checked, nothing written (for what only reads what past
    /// runs left, such as `show-plan`'s learned estimates).
    pub(crate) fn known_stack(&self) -> Option<String> {
        let from_file = || self.workspace_stack();
        let from_process = || {
            std::env::var("PULUMI_STACK")
                .ok()
                .filter(|s| !s.is_empty())
                .map(|s| s.to_lowercase())
        };
        self.stack.clone().or_else(from_file).or_else(from_process)
    }

    /// The provider, then the stack (MARA's order of checks) and the environment; the
    /// environment file is read once for both. Without `-p`, the provider is the one the stack
    /// file was written for (`kubernetes:infra_type`), said in a note.
    pub(crate) fn stack_context(&self, command: &str) -> Result<StackContext, RunnerError> {
        self.resolve_stack_context(command, false)
    }

    /// As [`Self::target`], writing nothing: neither `PULUMI_STACK` into the environment file
    /// nor the embedded backend's directory (`validate --check`). A `--switch-stack` given is
    /// said to be left undone.
    pub(crate) fn stack_context_unchanged(&self, command: &str) -> Result<StackContext, RunnerError> {
        if self.switch_stack {
            let why = if command == "validate" {
                "`validate --check` changes no file".to_string()
            } else {
                format!("`{command}` only reads")
            };
            // The stack typed, when it is a plain name (it is copied into a command to type).
            let stack = self
                .stack
                .as_deref()
                .filter(|s| stack::valid_stack_name(s))
                .unwrap_or("STACK");
            let p = self
                .provider
                .as_deref()
                .map(|name| provider_flag(&self.ws, name))
                .unwrap_or_default();
            crate::report::info(&format!(
                "--switch-stack left undone: {why}; `runner validate{p} -s {stack} --switch-stack` switches"
            ));
        }
        self.resolve_stack_context(command, true)
    }

    fn resolve_stack_context(&self, command: &str, read_only: bool) -> Result<StackContext, RunnerError> {
        let path = self.ws.root.join(ENVIRONMENT_FILE);
        // Read once; a problem in it is reported after the provider's (MARA's order), unless
        // the provider is to be found through it (no `-p`): then it is the problem to fix.
        let file = EnvironmentFile::load(&path, &self.ws.show(&path));
        if self.provider.is_none()
            && let Err(problems) = &file
        {
            return Err(RunnerError::in_configuration(problems.clone()));
        }
        // Only a stack already known and configured can name its provider; anything else is the
        // usual missing-provider error, before anything is written. A stack file that cannot be
        // read is the problem to fix, not the provider.
        let named = || -> Result<Option<(String, String)>, RunnerError> {
            let Ok(file) = file.as_ref() else { return Ok(None) };
            let Ok((stack, _)) = stack(
                &self.ws,
                file,
                self.stack.as_deref(),
                (self.switch_stack, read_only),
                command,
            ) else {
                return Ok(None);
            };
            recorded_provider(&self.ws, &stack)
        };
        let recorded = match &self.provider {
            None => named()?,
            Some(_) => None,
        };
        let provider = match (&self.provider, recorded) {
            (None, Some((name, note))) => {
                let stack = file.as_ref().ok().and_then(|f| {
                    stack(
                        &self.ws,
                        f,
                        self.stack.as_deref(),
                        (self.switch_stack, read_only),
                        command,
                    )
                    .ok()
                    .map(|(s, _)| s)
                });
                say_once(&self.ws, stack.as_deref(), &name, &note);
                load_provider(&self.ws, Some(&name), command, &crate::programs::NoStats)?
            }
            (None, None) if read_only && !matches!(command, "validate" | "export") => {
                // Looking at a stack this workspace never configured nor ran: say so, not that a
                // provider is missing.
                if let Some(problem) = file.as_ref().ok().and_then(|f| {
                    let (stack, _) = stack(
                        &self.ws,
                        f,
                        self.stack.as_deref(),
                        (self.switch_stack, read_only),
                        command,
                    )
                    .ok()?;
                    unknown_stack(&self.ws, &stack, command)
                }) {
                    return Err(problem);
                }
                self.provider(command)?
            }
            _ => self.provider(command)?,
        };
        let file = file.map_err(RunnerError::in_configuration)?;
        let (stack, source) = stack(
            &self.ws,
            &file,
            self.stack.as_deref(),
            (self.switch_stack, read_only),
            command,
        )?;
        // A stack never configured nor run has nothing to show: most likely a typo.
        if read_only
            && !matches!(command, "validate" | "export")
            && let Some(problem) = unknown_stack(&self.ws, &stack, command)
        {
            return Err(problem);
        }
        let mut lock = None;
        if !read_only && source != StackSource::Recorded {
            // Another runner may be running the file's stack: refused before the file changes.
            lock = Some(WorkspaceLock::take(&self.ws, &self.ws.run_dir(&stack))?);
            record_stack(&self.ws, &stack, &source)?;
        }
        // The file as the run leaves it: the same variables on the first run as on the next.
        let mut vars = file.vars;
        vars.insert("PULUMI_STACK".into(), stack.clone());
        let given_backend = vars.contains_key(BACKEND_VAR) || std::env::var_os(BACKEND_VAR).is_some();
        let env = Env::new(overlay(&self.ws, vars, read_only)?);
        let run_dir = self.ws.run_dir(&stack);
        let switched_from = match source {
            StackSource::Switched(old) if !read_only => Some(old),
            _ => None,
        };
        let undo = switched_from.as_ref().map(|old| undo_switch(&self.ws, old, &stack));
        Ok(StackContext {
            provider,
            stack,
            env,
            run_dir,
            default_backend: !given_backend,
            _lock: lock,
            switched_from,
            _undo: undo,
        })
    }
}

/// The variables the runner reads as text (its own, Pulumi's, `KUBECONFIG`) must be text: one
/// that is not valid UTF-8 is named, rather than taken for unset (a passphrase "missing") or
/// read as something else. Other variables go to the children untouched.
fn text_variables(vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>) -> Result<(), RunnerError> {
    const READ: [&str; 5] = ["MARA_", "RUNNER_CONFIG_", "RUNNER_SECRET_", "PULUMI_", "KUBECONFIG"];
    for (name, value) in vars {
        let name = name.to_string_lossy();
        if value.to_str().is_none() && READ.iter().any(|p| name.starts_with(p)) {
            return Err(RunnerError::usage(
                format!("the environment variable {name} is not valid UTF-8 text"),
                format!("set {name} to UTF-8 text (or unset it): the runner and pulumi read it as text"),
            ));
        }
    }
    Ok(())
}

/// `CI` set to anything but empty, `false` or `0`.
fn in_ci() -> bool {
    ci_says(std::env::var("CI").ok().as_deref())
}

/// A value of `CI` that says the runner runs in a CI job: anything but unset, empty, `false` or `0`.
pub(crate) fn ci_says(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The variables every child gets on top of the process environment: the environment file's,
/// `PULUMI_SKIP_UPDATE_CHECK=true` unless set, and the embedded file backend (created on first
/// use, unless `read_only`) unless a backend is chosen.
fn overlay(
    ws: &Workspace,
    mut vars: BTreeMap<String, String>,
    read_only: bool,
) -> Result<BTreeMap<String, String>, RunnerError> {
    let set = |vars: &BTreeMap<String, String>, k: &str| vars.contains_key(k) || std::env::var_os(k).is_some();
    if !set(&vars, "PULUMI_SKIP_UPDATE_CHECK") {
        vars.insert("PULUMI_SKIP_UPDATE_CHECK".into(), "true".into());
    }
    if !set(&vars, BACKEND_VAR) {
        let state = ws.root.join(".pulumi-state");
        if !read_only {
            std::fs::create_dir_all(&state).map_err(|source| RunnerError::Io {
                context: format!("cannot create the state directory {}", ws.show(&state)),
                source,
            })?;
        }
        vars.insert(BACKEND_VAR.into(), format!("file://{}", state.display()));
    }
    Ok(vars)
}
