//! The environment the runner's children see: the process environment overlaid by the
//! environment file's values and the runner's defaults, looked up in that order by [`Env::get`].
//! The backend passphrase is kept apart ([`Passphrase`]) and handed only to `pulumi`: hook
//! scripts and credential checks (`aws sts get-caller-identity`…) never see it.

use std::collections::BTreeMap;
use std::fmt;
use std::process::Command;

/// The variable Pulumi reads the passphrase from.
pub(crate) const PASSPHRASE_VAR: &str = "PULUMI_CONFIG_PASSPHRASE";

/// The backend passphrase: never printed (its `Debug` says so), never written.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Passphrase(String);

impl Passphrase {
    pub(crate) fn new(value: String) -> Self {
        Passphrase(value)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Passphrase([secret])")
    }
}

/// Where the passphrase `pulumi` will use comes from: said when it is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PassphraseFrom {
    /// `PULUMI_CONFIG_PASSPHRASE` in the runner's environment.
    Environment,
    /// `PULUMI_CONFIG_PASSPHRASE` in the environment file.
    EnvironmentFile,
    /// The file `PULUMI_CONFIG_PASSPHRASE_FILE` names.
    PassphraseFile,
    /// Typed at the runner's prompt.
    Prompt,
}

impl PassphraseFrom {
    /// In words, for an error: "`PULUMI_CONFIG_PASSPHRASE` in the environment".
    pub(crate) fn describe(self, passphrase_file: Option<&str>) -> String {
        match self {
            PassphraseFrom::Environment => format!("{PASSPHRASE_VAR} in the environment"),
            PassphraseFrom::EnvironmentFile => {
                format!("{PASSPHRASE_VAR} in {}", super::env_file::ENVIRONMENT_FILE)
            }
            PassphraseFrom::PassphraseFile => format!(
                "the file PULUMI_CONFIG_PASSPHRASE_FILE names ({})",
                passphrase_file.unwrap_or_default()
            ),
            PassphraseFrom::Prompt => "the prompt".to_string(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    /// Set on every child on top of the process environment (the passphrase left out).
    overlay: BTreeMap<String, String>,
    passphrase: Option<(Passphrase, PassphraseFrom)>,
}

impl Env {
    /// The overlay from the environment file's variables and the runner's defaults; a
    /// `PULUMI_CONFIG_PASSPHRASE` among them (or in the process environment) becomes the
    /// passphrase. An empty passphrase is a passphrase to Pulumi.
    pub(crate) fn new(mut overlay: BTreeMap<String, String>) -> Self {
        let passphrase = match overlay.remove(PASSPHRASE_VAR) {
            Some(p) => Some((Passphrase(p), PassphraseFrom::EnvironmentFile)),
            None => std::env::var(PASSPHRASE_VAR)
                .ok()
                .map(|p| (Passphrase(p), PassphraseFrom::Environment)),
        };
        Env { overlay, passphrase }
    }

    /// A variable as a child sees it: the overlay first, then the process environment; an
    /// empty value counts as unset.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.overlay
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.is_empty())
    }

    /// The variables set on every child, the passphrase not among them.
    pub(crate) fn overlay(&self) -> &BTreeMap<String, String> {
        &self.overlay
    }

    pub(crate) fn passphrase(&self) -> Option<&Passphrase> {
        self.passphrase.as_ref().map(|(p, _)| p)
    }

    /// Typed at the prompt.
    pub(crate) fn set_passphrase(&mut self, p: Passphrase) {
        self.passphrase = Some((p, PassphraseFrom::Prompt));
    }

    /// The passphrase `pulumi` will use, as it finds it (`readPassphrase`):
    /// `PULUMI_CONFIG_PASSPHRASE` (even empty), else the trimmed contents of the file
    /// `PULUMI_CONFIG_PASSPHRASE_FILE` names; with where it came from. `None` when there is none
    /// (or the file cannot be read: `pulumi` says so itself).
    pub(crate) fn effective_passphrase(&self) -> Option<(Passphrase, PassphraseFrom)> {
        if let Some(p) = &self.passphrase {
            return Some(p.clone());
        }
        let file = self.get("PULUMI_CONFIG_PASSPHRASE_FILE")?;
        let text = std::fs::read_to_string(file).ok()?;
        Some((Passphrase(text.trim().to_string()), PassphraseFrom::PassphraseFile))
    }

    /// For a tool that is not `pulumi` (a hook script, a credential check): the overlay, and no
    /// passphrase even when the process environment has one.
    pub(crate) fn apply_for_tool(&self, cmd: &mut Command) {
        cmd.envs(&self.overlay).env_remove(PASSPHRASE_VAR);
    }

    /// For `pulumi`: the overlay and the passphrase.
    pub(crate) fn apply_for_pulumi(&self, cmd: &mut Command) {
        cmd.envs(&self.overlay);
        if let Some((p, _)) = &self.passphrase {
            cmd.env(PASSPHRASE_VAR, p.expose());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `cmd` sets `name` to: `Some(value)`, or `None` when it is left to the process
    /// environment; `removed` when the child will not have it at all.
    fn set(cmd: &Command, name: &str) -> (Option<String>, bool) {
        match cmd.get_envs().find(|(k, _)| *k == name) {
            Some((_, Some(v))) => (Some(v.to_string_lossy().into_owned()), false),
            Some((_, None)) => (None, true),
            None => (None, false),
        }
    }

    #[test]
    fn the_passphrase_reaches_pulumi_and_no_other_tool() {
        let env = Env::new(BTreeMap::from([
            ("PULUMI_CONFIG_PASSPHRASE".to_string(), "hunter2".to_string()),
            ("AWS_REGION".to_string(), "eu-west-1".to_string()),
        ]));
        assert_eq!(format!("{:?}", env.passphrase().unwrap()), "Passphrase([secret])");
        let mut pulumi = Command::new("pulumi");
        env.apply_for_pulumi(&mut pulumi);
        assert_eq!(set(&pulumi, PASSPHRASE_VAR), (Some("hunter2".into()), false));
        let mut hook = Command::new("hook");
        env.apply_for_tool(&mut hook);
        assert_eq!(set(&hook, PASSPHRASE_VAR), (None, true), "removed, not inherited");
        assert_eq!(set(&hook, "AWS_REGION"), (Some("eu-west-1".into()), false));
        assert_eq!(env.get("AWS_REGION").as_deref(), Some("eu-west-1"));
    }
}
