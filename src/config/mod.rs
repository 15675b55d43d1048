//! Configuration the runner reads before running: the environment file, the environment its
//! children see, the shared stack configuration, the questions for what it lacks, the secrets —
//! all prepared in one phase before any project runs ([`prepare`]) — and the checks of
//! `validate`.

pub(crate) mod checks;
pub(crate) mod env;
pub(crate) mod environment;
pub(crate) mod prepare;
pub(crate) mod questions;
pub(crate) mod stackedit;
pub(crate) mod stackfile;
pub(crate) mod terminal;

pub(crate) use prepare::SecretStore;

/// A stack configuration key given in the environment: `RUNNER_CONFIG_AWS_REGION`.
pub(crate) const CONFIG_PREFIX: &str = "RUNNER_CONFIG_";
/// A secret given in the environment: `RUNNER_SECRET_SIRIUS_LEDGER_PWD`.
pub(crate) const SECRET_PREFIX: &str = "RUNNER_SECRET_";
/// A stack output handed to a hook script: `RUNNER_OUTPUT_KUBECONFIG`.
pub(crate) const OUTPUT_PREFIX: &str = "RUNNER_OUTPUT_";

/// `prefix` and the key upper-cased, anything but letters and digits as `_`: `aws:region` →
/// `RUNNER_CONFIG_AWS_REGION`; `kic-helm:fqdn` → `RUNNER_CONFIG_KIC_HELM_FQDN`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_are_upper_case_with_underscores() {
        assert_eq!(env_name(CONFIG_PREFIX, "kic-helm:fqdn"), "RUNNER_CONFIG_KIC_HELM_FQDN");
        assert_eq!(
            env_name(SECRET_PREFIX, "sirius:accounts_pwd"),
            "RUNNER_SECRET_SIRIUS_ACCOUNTS_PWD"
        );
    }
}
