//! What the preparation before a run is asked ([`Request`]: the workspace, the provider, the
//! stack, what runs, who can be asked) and what it hands the run ([`Ready`]).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::env::Env;
use super::passphrase::SaltCheck;
use super::set_secret_command;
use super::stackfile::{self, StackFile};
use crate::diagnostic::Problem;
use crate::error::RunnerError;
use crate::provider::{Project, Provider};
use crate::workspace::Workspace;

/// The documented defaults every question starts from.
pub(crate) const EXAMPLE_FILE: &str = "config/pulumi/Pulumi.stackname.yaml.example";

pub(crate) struct Request<'a> {
    pub(crate) ws: &'a Workspace,
    pub(crate) provider: &'a Provider,
    pub(crate) stack: &'a str,
    /// The environment every child gets; the passphrase is added when it is asked.
    pub(crate) env: Env,
    /// The projects whose secrets this run needs (none for `destroy`).
    pub(crate) secrets_for: Vec<&'a Project>,
    /// The projects whose programs it runs (their configuration is checked against the
    /// stack's): none for `destroy` and `refresh`.
    pub(crate) runs: Vec<&'a Project>,
    /// A person can be asked (a terminal, not CI, not `--non-interactive`).
    pub(crate) interactive: bool,
    pub(crate) mode: Mode,
    /// Nothing would run unless an answer changes something (an `up` with every project
    /// unchanged): the passphrase is not asked then.
    pub(crate) idle: bool,
    /// `--switch-stack` switched the workspace to this stack, and a refusal switches it back:
    /// the command suggested to fix it must switch again.
    pub(crate) switched: bool,
}

impl Request<'_> {
    /// The command that asks for what is missing, as the workspace is left after a refusal.
    pub(super) fn asks(&self) -> String {
        let switch = if self.switched { " --switch-stack" } else { "" };
        format!("runner validate -p {} -s {}{switch}", self.provider.name, self.stack)
    }
}

/// What the preparation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A run: ask, write the answers, check.
    Run,
    /// `validate`: as a run, and also the `pulumi` CLI and the passphrase against the stack files.
    Validate,
    /// `validate --check`: ask nothing and write nothing; report what a run would still ask.
    Check,
}

/// Ready to run: the environment every `pulumi` gets (with the passphrase when one was asked).
#[derive(Debug)]
pub(crate) struct Ready {
    pub(crate) env: Env,
    pub(crate) config_file: PathBuf,
    /// The stack configuration with the answers (secret values as `[secret]`).
    pub(crate) config: Map<String, Value>,
    /// Every secret value this run knows of (answers, `MARA_SECRET_*`, the provider tokens'
    /// variables, the passphrase): never to be printed.
    pub(crate) secrets: Vec<String>,
    /// The passphrase's check against the stack's salts, still under way: a run takes its
    /// verdict ([`Ready::passphrase_problem`]) before its first project starts.
    pub(crate) passphrase_check: Option<SaltCheck>,
}

impl Ready {
    /// A wrong passphrase, as one problem (waits for the check).
    pub(crate) fn passphrase_problem(&mut self, show: &dyn Fn(&Path) -> String) -> Option<Problem> {
        self.passphrase_check.take()?.problem(&self.env, show)
    }
}

impl Request<'_> {
    /// The secrets store's directory, and its own stack file: the secrets already stored (by
    /// key; values stay encrypted).
    pub(super) fn store(&self) -> Result<(Option<PathBuf>, StackFile), RunnerError> {
        let Some(p) = self.provider.projects.iter().find(|p| p.secrets_store) else {
            return Ok((None, StackFile::default()));
        };
        let dir = self.ws.root.join(&p.path);
        let path = stackfile::own(&dir, self.stack);
        let file = StackFile::load(&path, &self.ws.show(&path)).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
        Ok((Some(dir), file))
    }

    /// The stack files whose salt `pulumi` checks the passphrase against: the shared one, and
    /// the secrets store's own.
    pub(super) fn salted(&self, shared: &Path, store_dir: Option<&Path>) -> Vec<PathBuf> {
        let mut salted = vec![shared.to_path_buf()];
        salted.extend(store_dir.map(|d| stackfile::own(d, self.stack)));
        salted
    }

    /// [`set_secret_command`] through the secrets store (`store`), which keeps its own stack
    /// file, or through a project that reads the shared one.
    pub(super) fn set_secret(&self, store: bool, key: &str) -> String {
        let project = self
            .provider
            .projects
            .iter()
            .find(|p| p.secrets_store == store)
            .map_or("PROJECT", |p| p.name.as_str());
        set_secret_command(project, &self.provider.name, self.stack, key)
    }
}
