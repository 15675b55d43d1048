//! The command line, the environment and the workspace's files resolved once, before any work,
//! into plain values: the workspace, whether a person can be asked, the output style; for
//! commands that need them, the provider, the stack (the environment file's `PULUMI_STACK`
//! rules) and the environment every child sees. Nothing downstream reads flags or guesses.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use crate::config::env::Env;
use crate::config::environment::{self, ENVIRONMENT_FILE, EnvironmentFile};
use crate::error::RunnerError;
use crate::graph;
use crate::provider::{self, FileKind, LoadError, Provider};
use crate::report::{Banner, Style};
use crate::workspace::{PROVIDERS_DIR, RunDir, Workspace};

/// The global flags, as given.
#[derive(Debug, Clone)]
pub(crate) struct Flags {
    pub(crate) workspace: Option<PathBuf>,
    pub(crate) provider: Option<String>,
    pub(crate) stack: Option<String>,
    pub(crate) banner: Banner,
    pub(crate) non_interactive: bool,
}

/// What every command that works in a workspace shares.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) ws: Workspace,
    pub(crate) style: Style,
    pub(crate) banner: Banner,
    /// A person can be asked: a terminal, not CI, no `--non-interactive`.
    pub(crate) interactive: bool,
    /// Progress can be drawn live: standard error is a terminal that can redraw, not in CI.
    pub(crate) live: bool,
    provider: Option<String>,
    stack: Option<String>,
}

/// The provider and stack a command works on, and the environment its children see.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) provider: Provider,
    pub(crate) stack: String,
    pub(crate) env: Env,
    pub(crate) run_dir: RunDir,
}

impl Settings {
    pub(crate) fn resolve(flags: Flags, style: Style, cwd: &Path) -> Result<Self, RunnerError> {
        let ws = Workspace::locate(flags.workspace.as_deref(), cwd)?;
        crate::report::debug(style, &format!("workspace: {}", ws.root.display()));
        let ci = in_ci();
        let terminal = std::io::stderr().is_terminal();
        // A dumb terminal cannot redraw: it gets plain lines as they come.
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        Ok(Settings {
            ws,
            style,
            banner: flags.banner,
            interactive: !flags.non_interactive && !ci && std::io::stdin().is_terminal() && terminal,
            live: !ci && terminal && !dumb,
            provider: flags.provider,
            stack: flags.stack,
        })
    }

    /// The provider named by `-p`, loaded and checked. Missing or unknown is a usage error that
    /// lists the providers there are.
    pub(crate) fn provider(&self, command: &str) -> Result<Provider, RunnerError> {
        let provider = load_provider(&self.ws, self.provider.as_deref(), command)?;
        crate::report::debug(self.style, &format!("provider file: {}", provider.file));
        Ok(provider)
    }

    /// The provider, then the stack (MARA's order of checks) and the environment; the
    /// environment file is read once for both.
    pub(crate) fn target(&self, command: &str) -> Result<Target, RunnerError> {
        let provider = self.provider(command)?;
        let path = self.ws.root.join(ENVIRONMENT_FILE);
        let file = EnvironmentFile::load(&path, &self.ws.show(&path)).map_err(RunnerError::Validation)?;
        let stack = stack(&self.ws, &file, self.stack.as_deref(), command)?;
        let env = Env::new(overlay(&self.ws, file.vars)?);
        let run_dir = self.ws.run_dir(&stack);
        Ok(Target {
            provider,
            stack,
            env,
            run_dir,
        })
    }
}

/// `CI` set to anything but empty, `false` or `0`.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The variables every child gets on top of the process environment: the environment file's,
/// `PULUMI_SKIP_UPDATE_CHECK=true` unless set, and the embedded file backend (created on first
/// use) unless a backend is chosen.
fn overlay(ws: &Workspace, mut vars: BTreeMap<String, String>) -> Result<BTreeMap<String, String>, RunnerError> {
    let set = |vars: &BTreeMap<String, String>, k: &str| vars.contains_key(k) || std::env::var_os(k).is_some();
    if !set(&vars, "PULUMI_SKIP_UPDATE_CHECK") {
        vars.insert("PULUMI_SKIP_UPDATE_CHECK".into(), "true".into());
    }
    if !set(&vars, "PULUMI_BACKEND_URL") {
        let state = ws.root.join(".pulumi-state");
        std::fs::create_dir_all(&state).map_err(|source| RunnerError::Io {
            context: format!("cannot create the state directory {}", ws.show(&state)),
            source,
        })?;
        vars.insert("PULUMI_BACKEND_URL".into(), format!("file://{}", state.display()));
    }
    Ok(vars)
}

/// The stack every project uses, and MARA's rules for `PULUMI_STACK` in the environment file:
/// `--stack`, else `PULUMI_STACK` from the file, else from the process environment. A stack in
/// the file or the process environment that differs from `--stack` is refused (exit 2, naming
/// both); the file is created with `PULUMI_STACK=<stack>` when missing, and the line appended
/// (on a line of its own) when the file lacks it.
fn stack(ws: &Workspace, file: &EnvironmentFile, given: Option<&str>, command: &str) -> Result<String, RunnerError> {
    let path = ws.root.join(ENVIRONMENT_FILE);
    let display = ws.show(&path);
    let from_file = file.vars.get("PULUMI_STACK").filter(|s| !s.is_empty()).cloned();
    let from_process = std::env::var("PULUMI_STACK").ok().filter(|s| !s.is_empty());
    let stack = match (given, &from_file, &from_process) {
        (Some(s), _, _) => s.to_string(),
        (None, Some(f), _) => f.to_lowercase(),
        (None, None, Some(p)) => p.to_lowercase(),
        (None, None, None) => {
            return Err(RunnerError::usage(
                format!("`{command}` needs a stack: pass -s/--stack NAME"),
                format!("or set PULUMI_STACK in {display}"),
            ));
        }
    };
    for (other, source) in [
        (&from_file, display.as_str()),
        (&from_process, "the process environment"),
    ] {
        if let Some(o) = other
            && !o.eq_ignore_ascii_case(&stack)
        {
            return Err(RunnerError::usage(
                format!("the stack `{stack}` differs from PULUMI_STACK=`{o}` in {source}"),
                format!("use -s {o}, or change PULUMI_STACK in {source} to {stack} (every project shares one stack)"),
            ));
        }
    }
    if from_file.is_none() {
        environment::add_stack(&path, &stack).map_err(|source| RunnerError::Io {
            context: format!("cannot write PULUMI_STACK to {display}"),
            source,
        })?;
    }
    Ok(stack)
}

/// The provider `name`, loaded and checked.
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
            format!("add a provider file to {}", ws.show(&ws.root.join(PROVIDERS_DIR)))
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
