//! Writing what was answered: the stack file's new entries, the provider's token secrets into
//! it and the planned projects' secrets into the store's own stack, each encrypted by `pulumi`
//! through a [`SecretStore`]; the passphrase's salt put where the parallel runs find it. A store
//! that fails is said with its fix, and at a terminal tried again with the answers kept.

use std::path::Path;

use serde_json::Value;

use super::env::Env;
use super::passphrase;
use super::questions::{Answers, Ask};
use super::request::{EXAMPLE_FILE, Request};
use super::stackedit;
use super::stackfile::{self, StackFile};
use crate::diagnostic::Problem;
use crate::error::RunnerError;
use crate::exec::Failure;
use crate::fs::{NewFile, write_atomic};
use crate::report;

/// Why the store could not do what was asked, as a failure (worded by `report::failure`; boxed,
/// as the error of every store call).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StoreError {
    /// A lock on the stack refused it: the fix is to wait, or to remove a stale lock.
    #[error("{}", report::failure::text(.0))]
    Locked(Box<Failure>),
    /// It failed otherwise, or `pulumi` could not be started.
    #[error("{}", report::failure::text(.0))]
    Failed(Box<Failure>),
}

impl StoreError {
    /// A failure told in the runner's words alone.
    pub(crate) fn said(what: impl Into<String>) -> Self {
        StoreError::Failed(Box::new(Failure::said(what)))
    }
}

/// Where secret answers go, encrypted by the stack's own secrets provider (`pulumi config set
/// --secret`: `crate::pulumi::Store`).
pub(crate) trait SecretStore {
    /// Creates the stack of the project in `dir` when missing (its own stack file then holds the
    /// passphrase salt); notes of what it removed on the way (stale locks).
    fn create_stack(&self, dir: &Path, env: &Env) -> Result<Vec<String>, StoreError>;

    /// Stores `key` in the stack of the project in `dir`: into `config_file` when given, else
    /// the project's own `Pulumi.<stack>.yaml`.
    fn set_secret(
        &self,
        dir: &Path,
        env: &Env,
        key: &str,
        value: &str,
        config_file: Option<&Path>,
    ) -> Result<(), StoreError>;

    /// Reaches the state backend (`pulumi whoami` from the project in `dir`): done before any
    /// question, so a backend that cannot be reached costs no typed answer.
    fn reach(&self, dir: &Path, env: &Env) -> Result<(), StoreError>;

    /// A new `encryptionsalt` for the passphrase, made by `pulumi` for the stack of the project
    /// in `dir` in a scratch stack file: for when the project's own file has none (its stack
    /// was made elsewhere, e.g. from another clone against the same backend).
    fn new_salt(&self, dir: &Path, env: &Env) -> Result<String, StoreError>;
}

/// Said before the wait of storing the secrets: how many, and how many of them were made here
/// (more are stored than were asked then: said, so the counts add up).
fn storing(r: &Request<'_>, answers: &Answers) -> String {
    let made: Vec<String> = r
        .secrets_for
        .iter()
        .flat_map(|p| &p.secrets)
        .filter(|s| s.generate.is_some())
        .flat_map(crate::provider::Secret::keys)
        .collect();
    let made = answers.secrets.iter().filter(|(k, _)| made.contains(k)).count();
    let of_them = if made > 0 {
        format!(" ({made} of them made here)")
    } else {
        String::new()
    };
    format!(
        "storing {} secrets{of_them}, one `pulumi config set --secret` each…",
        answers.secrets.len()
    )
}

/// Writes the answers: the stack file (with `kubernetes:infra_type`), the provider's token
/// secrets into it and the projects' secrets into the store's own stack, both encrypted by
/// `pulumi`. The shared file gets its passphrase salt now, before projects run in parallel and
/// would each try to add one.
pub(super) fn save(
    r: &Request<'_>,
    file: &StackFile,
    answers: &Answers,
    (store, env): (&dyn SecretStore, &Env),
    store_dir: Option<&Path>,
    passphrase: bool,
    retry: &mut dyn FnMut(&StoreError) -> bool,
) -> Result<(), RunnerError> {
    let ws = r.ws;
    let write_err = |source| RunnerError::Io {
        context: format!("cannot write {}", file.shown),
        source,
    };
    let mut entries = Vec::new();
    if let Some(t) = &r.provider.infra_type
        && !file.config.contains_key("kubernetes:infra_type")
    {
        entries.push(("kubernetes:infra_type".to_string(), Value::from(t.as_str())));
    }
    entries.extend(answers.config.iter().cloned());
    if !entries.is_empty() {
        let header = format!(
            "# The stack configuration every project of stack `{}` shares, written by `runner` for the\n\
             # {} provider. {} documents every key.\n",
            r.stack, r.provider.name, EXAMPLE_FILE
        );
        if let Some(dir) = file.path.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let text = file
            .with_entries(&header, &entries)
            .map_err(|p| RunnerError::Problems(vec![p]))?;
        write_atomic(&file.path, text.as_bytes(), NewFile::Default).map_err(write_err)?;
        if !answers.defaulted.is_empty() {
            let used: Vec<String> = answers.defaulted.iter().map(|(k, v)| format!("{k}={v}")).collect();
            report::info(&format!("used defaults: {}", used.join(", ")));
        }
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        report::info(&format!("wrote {}: {}", file.shown, keys.join(", ")));
    }

    // Writing the entries never adds a salt: the file as read says whether one is there.
    let needs_salt = passphrase && !file.has_secrets_provider();
    if answers.secrets.is_empty() && answers.shared_secrets.is_empty() && !needs_salt {
        return Ok(());
    }
    let failed = |e: StoreError| RunnerError::Problems(vec![Problem::new(e.to_string(), store_fix(&e))]);
    // Each step of storing, tried again while `retry` says so.
    let mut stored = |step: &mut dyn FnMut() -> Result<(), StoreError>| loop {
        match step() {
            Ok(()) => return Ok(()),
            Err(e) if retry(&e) => {}
            Err(e) => return Err(failed(e)),
        }
    };
    // Any project serves to run `pulumi config` against the shared file: the store if there is one.
    let dir = store_dir
        .map(Path::to_path_buf)
        .or_else(|| r.provider.projects.first().map(|p| ws.root.join(&p.path)));
    let Some(dir) = dir else { return Ok(()) };
    stored(&mut || {
        for note in store.create_stack(&dir, env)? {
            report::warning(&note);
        }
        Ok(())
    })?;
    for (key, value) in &answers.shared_secrets {
        stored(&mut || store.set_secret(&dir, env, key, value, Some(&file.path)))?;
        report::info(&format!("stored {key} (encrypted) in {}", file.shown));
    }
    if let Some(store_dir) = store_dir
        && !answers.secrets.is_empty()
    {
        // Each is a `pulumi` start (its key derivation included): say so before the wait.
        if answers.secrets.len() > 1 {
            report::info(&storing(r, answers));
        }
        for (key, value) in &answers.secrets {
            stored(&mut || store.set_secret(store_dir, env, key, value, None))?;
        }
        let keys: Vec<&str> = answers.secrets.iter().map(|(k, _)| k.as_str()).collect();
        let own = ws.show(&stackfile::own(store_dir, r.stack));
        report::info(&format!("stored {} (encrypted) in {own}", keys.join(", ")));
        // Said once stored: a run refused before this forgets what it made (the next makes anew).
        for made in &answers.made {
            report::info(made);
        }
    }
    if needs_salt && passphrase::salt_of(&file.path).is_none() {
        // The project's own file has a salt when `stack select --create` made the stack or a
        // secret was stored there; else `pulumi` makes one (never left to the parallel runs).
        let own = stackfile::own(&dir, r.stack);
        let salt = match passphrase::salt_of(&own) {
            Some(salt) => salt,
            None => store.new_salt(&dir, env).map_err(failed)?,
        };
        copy_salt(&salt, &file.path, &file.shown).map_err(|e| match e {
            SaltError::Io(source) => write_err(source),
            SaltError::Refused(p) => RunnerError::Problems(vec![p]),
        })?;
    }
    Ok(())
}

/// At a terminal a failure to store is said, and storing is tried again when the person says
/// so: the answers typed (the secrets too) are still here, so nothing is asked twice.
pub(super) fn ask_again(at_terminal: bool, ask: &mut dyn Ask) -> impl FnMut(&StoreError) -> bool + '_ {
    move |e: &StoreError| {
        at_terminal && {
            report::warning(&format!("{e}\n  fix: {}", store_fix(e)));
            ask.confirm("The answers are kept: fix it, then store them again?")
                .unwrap_or(false)
        }
    }
}

/// How to go on when storing failed.
fn store_fix(e: &StoreError) -> &'static str {
    if matches!(e, StoreError::Locked(_)) {
        "wait for the process that holds the lock to end; if it no longer runs, remove its lock: `runner up` (or \
         `preview`, `refresh`, `destroy`) with `--remove-stale-locks` does; nothing else was changed"
    } else {
        "check the passphrase and the backend (PULUMI_BACKEND_URL), then run again; nothing else was changed"
    }
}

/// Why the salt could not be copied.
enum SaltError {
    Io(std::io::Error),
    Refused(Problem),
}

/// Puts `salt` (any salt made with the same passphrase serves) at the top of the shared file,
/// unless that has one by now. The shared file is edited through its syntax tree and checked
/// before it is written ([`stackedit::add_salt`]).
fn copy_salt(salt: &str, to: &Path, shown: &str) -> Result<(), SaltError> {
    let shared = match std::fs::read_to_string(to) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(SaltError::Io(e)),
    };
    match stackedit::add_salt(&shared, salt) {
        Ok(Some(text)) => write_atomic(to, text.as_bytes(), NewFile::Default).map_err(SaltError::Io),
        Ok(None) => Ok(()),
        Err(stackedit::Refused(why)) => Err(SaltError::Refused(Problem::new(
            format!("{shown}: cannot add the passphrase salt safely: {why}; the file was left unchanged"),
            format!(
                "add `encryptionsalt: {}` as a top-level key of {shown} by hand, then run again",
                stackedit::yaml_key(salt)
            ),
        ))),
    }
}
