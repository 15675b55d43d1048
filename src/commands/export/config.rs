//! What every format of an export takes ([`Common`]), read here and checked before any file is
//! made: the state backend, refused unless every engine reaches it (the policy is
//! `Backend::reachable_by`); the shared stack file, its plain values carried and its secrets
//! only named; the keys of the project secrets; the credentials the jobs need.

use std::path::Path;

use serde_json::{Map, Value};

use super::repo;
use crate::config::backend::{BACKEND_VAR, Backend, Reach};
use crate::config::prepare;
use crate::config::questions::{self, Answers, Ask};
use crate::config::stackfile::{self, StackFile};
use crate::config::{SECRET_PREFIX, env_name};
use crate::error::RunnerError;
use crate::export::{Common, Format, SecretKey};
use crate::provider::Prompt;
use crate::report;
use crate::settings::{Settings, StackContext};

/// What every format of a `format` export takes. One that runs no project (a catalog) needs
/// neither a backend the engines reach nor the stack's values.
pub(super) fn common(s: &Settings, t: &StackContext, format: Format) -> Result<Common, RunnerError> {
    let url = t.env.get(BACKEND_VAR).unwrap_or_default();
    if !format.runs_projects() {
        return Ok(Common {
            stack: t.stack.clone(),
            credentials: Vec::new(),
            backend: url,
            config: Map::new(),
            config_secrets: Vec::new(),
            store_secrets: Vec::new(),
            workspace: workspace_in_repository(&s.ws.root),
        });
    }
    let backend = shared_backend(&s.ws.root, &url, format)?;
    let config = read(s, t)?;
    // A generated key pair too: an engine's jobs share no store, so the pair is made once and
    // kept in the engine's secrets (or made again by every run of the secrets project).
    let project_secrets: Vec<String> = t
        .provider
        .projects
        .iter()
        .flat_map(|p| p.secrets.iter().flat_map(crate::provider::Secret::keys))
        .collect();
    Ok(Common {
        stack: t.stack.clone(),
        credentials: credentials(&backend, &t.provider.credentials),
        backend,
        config: config.plain,
        config_secrets: config.secrets,
        store_secrets: secret_keys(project_secrets.iter().map(String::as_str)),
        workspace: workspace_in_repository(&s.ws.root),
    })
}

/// The workspace's directory inside its git checkout (`examples/local/`), `""` at the top or
/// outside git (a CI job checks out the repository and starts at its root).
fn workspace_in_repository(root: &Path) -> String {
    let Some(top) = repo::top(root) else {
        return String::new();
    };
    let (Ok(top), Ok(root)) = (std::fs::canonicalize(&top), std::fs::canonicalize(root)) else {
        return String::new();
    };
    match root.strip_prefix(&top) {
        Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/", rel.to_string_lossy()),
        _ => String::new(),
    }
}

/// `url` (`PULUMI_BACKEND_URL`), refused unless every job of a `format` export reaches it:
/// never the workspace's own file backend under `root` (the one used when the variable is not
/// set), nor one inside the workspace or its repository; a shared disk is named in a note.
fn shared_backend(root: &Path, url: &str, format: Format) -> Result<String, RunnerError> {
    let refuse = |why: String| {
        Err(RunnerError::usage(
            format!(
                "`export {}` needs a state backend every engine reaches: {why}",
                format.as_str()
            ),
            format!(
                "set PULUMI_BACKEND_URL (in the environment or config/pulumi/environment) to a shared backend — \
                 {} or {}{} — and move the stacks there (`pulumi stack export` / `pulumi stack import`, or \
                 `runner up` again)",
                Backend::SHARED_BUCKETS.join(", "),
                Backend::SHARED_SERVICE,
                if format == Format::GitlabCi {
                    " (or a file:///DIR every runner mounts, outside the repository)"
                } else {
                    ""
                }
            ),
        ))
    };
    if url == format!("file://{}", root.join(".pulumi-state").display()) {
        return refuse(format!(
            "PULUMI_BACKEND_URL is not set, so the runner uses the workspace's own file backend ({url}), which no \
             other machine can read"
        ));
    }
    let backend = Backend::parse(url);
    let top = repo::top(root);
    let checkouts: Vec<&Path> = [root].into_iter().chain(top.as_deref()).collect();
    match backend.reachable_by(format, &checkouts) {
        Ok(Reach::Anywhere) => Ok(url.to_string()),
        Ok(Reach::SharedDisk(dir)) => {
            report::info(&format!(
                "note: PULUMI_BACKEND_URL is {url}, a shared disk: every GitLab runner that takes these jobs must \
                 mount {} at that path",
                dir.display()
            ));
            Ok(url.to_string())
        }
        Err(why) => refuse(why.to_string()),
    }
}

/// The shared stack configuration: its plain values, and the keys of its secrets.
#[derive(Debug)]
struct Config {
    plain: Map<String, Value>,
    secrets: Vec<SecretKey>,
}

/// Reads the shared stack configuration, refused when a job would refuse it (another
/// provider's stack) or when it is missing or empty.
fn read(s: &Settings, t: &StackContext) -> Result<Config, RunnerError> {
    let path = stackfile::path(&s.ws.root, &t.stack);
    let shown = s.ws.show(&path);
    let file = StackFile::load(&path, &shown).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
    // What every exported job would refuse, refused here.
    if let Some(p) = prepare::provider_lock(&t.provider, &file) {
        return Err(RunnerError::Problems(vec![p]));
    }
    // What every run refuses in the file (a value of the wrong type, a URL's password, which
    // an export would carry into a repository), refused before anything is written.
    let problems = prepare::file_problems(&t.provider, &file);
    if !problems.is_empty() {
        return Err(RunnerError::Problems(problems));
    }
    if file.config.is_empty() {
        return Err(RunnerError::usage(
            format!("the stack configuration {shown} is missing or empty: an export carries its values"),
            format!(
                "create it first with `runner validate -p {} -s {}` (it asks for what is missing)",
                t.provider.name, t.stack
            ),
        ));
    }
    let answered = unanswered(s, t, &file)?;
    let mut config = split(file.config);
    config.plain.extend(answered);
    Ok(config)
}

/// The values a run would take for the prompts the stack file leaves unanswered, with nobody
/// to ask: each from its `MARA_CONFIG_…` variable or its default (the example file's), said. An
/// engine that runs no runner (PKO) has only what the export carries, so a key with neither is
/// refused here, as a run would refuse it. Secrets are never carried: only their names.
fn unanswered(s: &Settings, t: &StackContext, file: &StackFile) -> Result<Vec<(String, Value)>, RunnerError> {
    let example = prepare::example(&s.ws)?;
    let env = t.env.clone();
    let var = move |name: &str| crate::config::given(&|n: &str| env.get(n), name);
    let asks = format!("runner validate -p {} -s {}", t.provider.name, t.stack);
    let cx = questions::Context {
        var: &var,
        example: &example,
        file_shown: &file.shown,
        asks: &asks,
        interactive: false,
        defaults: true,
    };
    let plain: Vec<Prompt> = t.provider.prompts.iter().filter(|p| !p.secret).cloned().collect();
    let mut answers = Answers::default();
    questions::prompts(&cx, &plain, &file.config, file.is_new(), &mut Nobody, &mut answers).map_err(|source| {
        RunnerError::Io {
            context: "cannot take the stack's defaults".into(),
            source,
        }
    })?;
    if !answers.problems.is_empty() {
        return Err(RunnerError::Problems(answers.problems));
    }
    if !answers.defaulted.is_empty() {
        let taken: Vec<String> = answers.defaulted.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        report::info(&format!(
            "note: {} lacks {}: the export carries the defaults a run would take ({}); `runner validate -p {} -s {}` \
             writes them into the file",
            file.shown,
            crate::render::count(taken.len(), "key"),
            taken.join(", "),
            t.provider.name,
            t.stack
        ));
    }
    Ok(answers.config)
}

/// Nobody to ask: an export's questions are answered by variables and defaults alone.
struct Nobody;

impl Ask for Nobody {
    fn text(&mut self, _: &str, _: Option<&str>, _: &questions::AnswerCheck<'_>) -> std::io::Result<String> {
        Err(std::io::Error::other("nobody to ask"))
    }
    fn hidden(&mut self, _: &str, _: Option<&str>, _: bool) -> std::io::Result<String> {
        Err(std::io::Error::other("nobody to ask"))
    }
    fn confirm(&mut self, _: &str) -> std::io::Result<bool> {
        Err(std::io::Error::other("nobody to ask"))
    }
}

/// A stack file's values: the plain ones kept in order, the secret ones (`secure:`) by key.
fn split(config: Map<String, Value>) -> Config {
    let mut plain = Map::new();
    let mut secrets = Vec::new();
    for (key, value) in config {
        if value.get("secure").is_some() {
            secrets.push(SecretKey {
                env: env_name(SECRET_PREFIX, &key),
                key,
            });
        } else {
            plain.insert(key, value);
        }
    }
    Config { plain, secrets }
}

/// The project secrets of the graph by key, in graph order, each once (the secrets store keeps
/// them all).
fn secret_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<SecretKey> {
    let mut out: Vec<SecretKey> = Vec::new();
    for key in keys {
        if !out.iter().any(|s| s.key == key) {
            out.push(SecretKey {
                key: key.to_string(),
                env: env_name(SECRET_PREFIX, key),
            });
        }
    }
    out
}

/// The backend's credentials (and the passphrase), then the provider's, each once.
fn credentials(backend: &str, provider: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let all = Backend::parse(backend)
        .credentials()
        .into_iter()
        .map(str::to_string)
        .chain(provider.iter().cloned());
    for c in all {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refusal(root: &Path, url: &str, format: Format) -> String {
        match shared_backend(root, url, format) {
            Err(RunnerError::Usage { message, .. }) => message,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn the_shared_backend_is_one_every_engine_reaches() {
        let ws = tempfile::tempdir().unwrap();
        let own = format!("file://{}", ws.path().join(".pulumi-state").display());
        assert_eq!(
            refusal(ws.path(), &own, Format::GitlabCi),
            format!(
                "`export gitlab-ci` needs a state backend every engine reaches: PULUMI_BACKEND_URL is not set, so \
                 the runner uses the workspace's own file backend ({own}), which no other machine can read"
            )
        );
        assert_eq!(
            shared_backend(ws.path(), "s3://state?region=eu-west-1", Format::Pko).unwrap(),
            "s3://state?region=eu-west-1"
        );
        assert_eq!(
            shared_backend(ws.path(), "file:///srv/state", Format::GitlabCi).unwrap(),
            "file:///srv/state"
        );
        assert!(
            refusal(ws.path(), "file:///srv/state", Format::Kebap).ends_with("kebap runs its jobs on do not mount")
        );
        let inside = format!("file://{}/state", ws.path().display());
        assert!(refusal(ws.path(), &inside, Format::GitlabCi).contains("a file backend inside the repository"));
        assert!(refusal(ws.path(), "state", Format::Backstage).ends_with("is state, which is not a URL"));
    }

    #[test]
    fn plain_values_travel_and_secrets_are_named_by_key() {
        let config = json!({
            "aws:region": "us-east-1",
            "prometheus:adminpass": {"secure": "v1:abc"},
            "vpc:azs": ["a", "b"],
        });
        let split = split(config.as_object().cloned().unwrap());
        assert_eq!(split.plain.keys().collect::<Vec<_>>(), ["aws:region", "vpc:azs"]);
        assert_eq!(split.secrets.len(), 1);
        assert_eq!(
            (split.secrets[0].key.as_str(), split.secrets[0].env.as_str()),
            ("prometheus:adminpass", "MARA_SECRET_PROMETHEUS_ADMINPASS")
        );
    }

    #[test]
    fn secret_keys_and_credentials_come_once_in_their_order() {
        let keys = secret_keys(["sirius:ledger_pwd", "prometheus:adminpass", "sirius:ledger_pwd"]);
        let keys: Vec<(&str, &str)> = keys.iter().map(|k| (k.key.as_str(), k.env.as_str())).collect();
        assert_eq!(
            keys,
            [
                ("sirius:ledger_pwd", "MARA_SECRET_SIRIUS_LEDGER_PWD"),
                ("prometheus:adminpass", "MARA_SECRET_PROMETHEUS_ADMINPASS")
            ]
        );
        let provider = ["AWS_ACCESS_KEY_ID".to_string(), "AWS_REGION".to_string()];
        assert_eq!(
            credentials("s3://state", &provider),
            [
                "PULUMI_CONFIG_PASSPHRASE",
                "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY",
                "AWS_REGION"
            ]
        );
        assert_eq!(credentials("https://api.pulumi.com", &[]), ["PULUMI_ACCESS_TOKEN"]);
    }
}
