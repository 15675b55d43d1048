//! Configuration the runner reads before running: the environment file, the environment its
//! children see, the shared stack configuration, the questions for what it lacks, the secrets —
//! all prepared in one phase before any project runs ([`prepare`]) — and the checks of
//! `validate`.

pub(crate) mod backend;
pub(crate) mod checks;
pub(crate) mod env;
pub(crate) mod env_file;
pub(crate) mod generate;
pub(crate) mod passphrase;
pub(crate) mod prepare;
pub(crate) mod questions;
pub(crate) mod request;
pub(crate) mod save;
pub(crate) mod shape;
pub(crate) mod stackedit;
pub(crate) mod stackfile;
pub(crate) mod terminal;

pub(crate) use save::SecretStore;

/// The prefix of every variable the runner reads or sets for itself. `RUNNER_` is the CI's:
/// GitHub Actions sets `RUNNER_WORKSPACE`, `RUNNER_TEMP`, `RUNNER_DEBUG`… on every job.
pub(crate) const PREFIX: &str = "MARA_";
/// The prefix before [`PREFIX`], still read for one release (with a warning).
pub(crate) const OLD_PREFIX: &str = "RUNNER_";
/// A stack configuration key given in the environment: `MARA_CONFIG_AWS_REGION`.
pub(crate) const CONFIG_PREFIX: &str = "MARA_CONFIG_";
/// A secret given in the environment: `MARA_SECRET_SIRIUS_LEDGER_PWD`.
pub(crate) const SECRET_PREFIX: &str = "MARA_SECRET_";
/// A stack output handed to a hook script: `MARA_OUTPUT_KUBECONFIG`.
pub(crate) const OUTPUT_PREFIX: &str = "MARA_OUTPUT_";

/// The command line that stores secret `key` where `project` reads it (the shared stack file,
/// or the secrets store's own), run from the workspace: `pulumi config set` needs the project's
/// directory, the right `--config-file` (which `runner pulumi` gives it) and the stack to exist
/// (`stack select --create` makes it when new, and only selects it otherwise).
pub(crate) fn set_secret_command(project: &str, provider: &str, stack: &str, key: &str) -> String {
    let pulumi = format!("runner pulumi {project} -p {provider} -s {stack} --");
    format!("{pulumi} stack select --create && {pulumi} config set --secret {key}")
}

/// `prefix` and the key upper-cased, anything but letters and digits as `_`: `aws:region` →
/// `MARA_CONFIG_AWS_REGION`; `kic-helm:fqdn` → `MARA_CONFIG_KIC_HELM_FQDN`.
pub(crate) fn env_name(prefix: &str, key: &str) -> String {
    let tail: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{tail}")
}

/// The name a variable of the runner had before [`PREFIX`]: `MARA_SECRET_X` → `RUNNER_SECRET_X`.
pub(crate) fn old_name(name: &str) -> Option<String> {
    name.strip_prefix(PREFIX).map(|rest| format!("{OLD_PREFIX}{rest}"))
}

/// A variable the user gives the runner (`MARA_CONFIG_…`, `MARA_SECRET_…`) as `lookup` finds
/// it, else under its old name (`RUNNER_…`, read for one more release: see [`old_names_given`]).
pub(crate) fn given(lookup: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).or_else(|| lookup(&old_name(name)?))
}

/// The variables given under their old names (`RUNNER_CONFIG_…`, `RUNNER_SECRET_…`) among
/// `names`, each with its new name, sorted: what the one warning of a run lists.
pub(crate) fn old_names_given<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let old = [CONFIG_PREFIX, SECRET_PREFIX].map(|p| old_name(p).expect("a MARA_ prefix"));
    let mut found: Vec<(String, String)> = names
        .into_iter()
        .filter(|n| old.iter().any(|o| n.starts_with(o.as_str()) && n.len() > o.len()))
        .map(|n| (n.to_string(), format!("{PREFIX}{}", &n[OLD_PREFIX.len()..])))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Warns once about the variables the process environment or the environment file gives under
/// their old names.
pub(crate) fn warn_old_names(env: &env::Env) {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .chain(env.overlay().keys().cloned())
        .collect();
    if let Some(w) = old_names_warning(&old_names_given(names.iter().map(String::as_str))) {
        crate::report::warning(&w);
    }
}

/// The warning for variables given under their old names, or `None`.
pub(crate) fn old_names_warning(found: &[(String, String)]) -> Option<String> {
    if found.is_empty() {
        return None;
    }
    let list: Vec<String> = found.iter().map(|(o, n)| format!("{o} → {n}")).collect();
    Some(format!(
        "{} read under {} old name{}, for this release only: rename {}: {} (`RUNNER_*` belongs to the CI: GitHub Actions sets RUNNER_WORKSPACE, RUNNER_TEMP…)",
        if found.len() == 1 {
            "a variable is"
        } else {
            "variables are"
        },
        if found.len() == 1 { "its" } else { "their" },
        if found.len() == 1 { "" } else { "s" },
        if found.len() == 1 { "it" } else { "them" },
        list.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_are_upper_case_with_underscores() {
        assert_eq!(env_name(CONFIG_PREFIX, "kic-helm:fqdn"), "MARA_CONFIG_KIC_HELM_FQDN");
        assert_eq!(
            env_name(SECRET_PREFIX, "sirius:accounts_pwd"),
            "MARA_SECRET_SIRIUS_ACCOUNTS_PWD"
        );
    }

    #[test]
    fn old_names_are_read_after_the_new_ones_and_listed() {
        let env = |n: &str| match n {
            "RUNNER_CONFIG_AWS_REGION" => Some("eu-west-1".to_string()),
            "MARA_SECRET_X" | "RUNNER_SECRET_X" => Some(n.to_string()),
            _ => None,
        };
        assert_eq!(given(&env, "MARA_CONFIG_AWS_REGION").as_deref(), Some("eu-west-1"));
        assert_eq!(given(&env, "MARA_SECRET_X").as_deref(), Some("MARA_SECRET_X"));
        assert_eq!(given(&env, "MARA_SECRET_Y"), None);
        let found = old_names_given(["RUNNER_TEMP", "RUNNER_SECRET_X", "RUNNER_CONFIG_", "PATH"]);
        assert_eq!(found, [("RUNNER_SECRET_X".to_string(), "MARA_SECRET_X".to_string())]);
        assert!(
            old_names_warning(&found)
                .unwrap()
                .contains("RUNNER_SECRET_X → MARA_SECRET_X")
        );
        assert_eq!(old_names_warning(&[]), None);
    }
}
