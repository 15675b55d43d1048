//! The backend passphrase: whether the stack needs one, where it comes from (the environment,
//! the environment file, `PULUMI_CONFIG_PASSPHRASE_FILE`, the prompt), and the check that it
//! opens the stack's salts before any project starts — as `pulumi` checks it when it loads a
//! stack, so a wrong one is one error here rather than every project failing.
//!
//! The check is done in-process (the `pulumi-passphrase` crate, the real CLI's key derivation
//! and cipher), on threads started as soon as the passphrase is known and joined just before it
//! matters: a `pulumi` start to ask would cost several times the tenth of a second it takes.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use serde_json::Value;

use super::backend::{BACKEND_VAR, Backend};
use super::env::{Env, Passphrase, PassphraseFrom};
use super::questions::{Ask, Context};
use super::stackedit;
use super::stackfile::StackFile;
use crate::diagnostic::Problem;

/// A backend that keeps secrets with a passphrase (a file or cloud-storage backend) and a
/// stack file without a KMS secrets provider.
pub(crate) fn in_use(env: &Env, file: &StackFile) -> bool {
    let kms = file.secrets_provider().is_some_and(|p| !p.contains("passphrase"));
    Backend::of(env).keeps_secrets_with_passphrase() && !kms
}

/// The passphrase: from `PULUMI_CONFIG_PASSPHRASE(_FILE)`, else asked (twice on first use; again
/// while what is typed does not open `salted`, up to three times) and handed to `pulumi` in its
/// environment only. `Some` problem when it cannot be had.
fn obtain(
    var: &dyn Fn(&str) -> Option<String>,
    interactive: bool,
    file: &StackFile,
    salted: &[PathBuf],
    env: &mut Env,
    ask: &mut dyn Ask,
) -> std::io::Result<Option<Problem>> {
    if !in_use(env, file) || env.passphrase().is_some() {
        return Ok(None);
    }
    if let Some(f) = var("PULUMI_CONFIG_PASSPHRASE_FILE") {
        return Ok((!Path::new(&f).is_file()).then(|| {
            Problem::new(
                format!("PULUMI_CONFIG_PASSPHRASE_FILE names {f}, which cannot be read"),
                "point it at a readable file holding the passphrase",
            )
        }));
    }
    if interactive {
        let first = !file.has_secrets_provider();
        let question = if first {
            "Passphrase to protect this stack's secrets (choose one; it is not stored)"
        } else {
            "Passphrase of this stack's secrets"
        };
        for attempt in 1..=3 {
            let p = Passphrase::new(ask.hidden(question, None, first)?);
            let wrong = Check::start(&p, salted).wrong();
            if wrong.is_empty() || attempt == 3 {
                env.set_passphrase(p);
                break;
            }
            crate::report::warning("incorrect passphrase: it does not open this stack's secrets; try again");
        }
        return Ok(None);
    }
    let backend = Backend::parse(&var(BACKEND_VAR).unwrap_or_default());
    Ok(Some(Problem::new(
        format!("the backend {backend} needs a passphrase to encrypt secrets, and none is set"),
        "set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE in the environment (or in config/pulumi/environment for the file)",
    )))
}

/// [`obtain`], and the check of what was obtained against `salted` started.
pub(crate) fn obtain_checked(
    cx: &Context<'_>,
    file: &StackFile,
    salted: &[PathBuf],
    env: &mut Env,
    ask: &mut dyn Ask,
) -> std::io::Result<(Option<Problem>, Option<Check>)> {
    if let Some(p) = obtain(cx.var, cx.interactive, file, salted, env, ask)? {
        return Ok((Some(p), None));
    }
    let check = in_use(env, file)
        .then(|| env.effective_passphrase())
        .flatten()
        .map(|(p, _)| Check::start(&p, salted));
    Ok((None, check))
}

/// The `encryptionsalt` of a stack file, if it has one.
pub(crate) fn salt_of(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    stackedit::top_level(&text)
        .ok()?
        .get("encryptionsalt")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A check under way: one thread per salted stack file.
#[derive(Debug)]
pub(crate) struct Check {
    /// The files of one salt, and whether the passphrase opens it.
    files: Vec<(Vec<PathBuf>, JoinHandle<bool>)>,
}

impl Check {
    /// Starts checking `passphrase` against the salt of each of `files` that has one: once per
    /// salt (the shared file's is often a copy of the secrets store's).
    pub(crate) fn start(passphrase: &Passphrase, files: &[PathBuf]) -> Check {
        // The stand-in's round count (its test switch) only in a build for tests: a release
        // build, what `cargo install` makes, checks with the real CLI's, whatever is set.
        let rounds = if cfg!(debug_assertions) {
            pulumi_passphrase::rounds()
        } else {
            pulumi_passphrase::ROUNDS
        };
        let mut salts: Vec<(Vec<PathBuf>, String)> = Vec::new();
        for (f, salt) in files.iter().filter_map(|f| Some((f.clone(), salt_of(f)?))) {
            match salts.iter_mut().find(|(_, s)| *s == salt) {
                Some((same, _)) => same.push(f),
                None => salts.push((vec![f], salt)),
            }
        }
        let files = salts
            .into_iter()
            .map(|(f, salt)| {
                let p = passphrase.expose().to_string();
                // A malformed salt is left to `pulumi`, which says what it makes of it.
                let opens = move || {
                    !matches!(
                        pulumi_passphrase::Crypter::open(&p, &salt, rounds),
                        Err(pulumi_passphrase::Error::Incorrect)
                    )
                };
                (f, std::thread::spawn(opens))
            })
            .collect();
        Check { files }
    }

    /// The files whose salt the passphrase does not open (waits for the check).
    pub(crate) fn wrong(self) -> Vec<PathBuf> {
        self.files
            .into_iter()
            .filter_map(|(f, h)| (!h.join().unwrap_or(true)).then_some(f))
            .flatten()
            .collect()
    }

    /// The check's verdict as one problem: which files it does not open and where the
    /// passphrase came from.
    pub(crate) fn problem(self, env: &Env, show: &dyn Fn(&Path) -> String) -> Option<Problem> {
        let wrong = self.wrong();
        if wrong.is_empty() {
            return None;
        }
        // Where it came from (reading a passphrase file once).
        let origin = env.effective_passphrase().map(|(_, from)| from);
        let from = origin.map_or_else(
            || "the passphrase".to_string(),
            |from| from.describe(env.get("PULUMI_CONFIG_PASSPHRASE_FILE").as_deref()),
        );
        let files: Vec<String> = wrong.iter().map(|f| show(f)).collect();
        let fix = match origin {
            Some(PassphraseFrom::PassphraseFile) => "put the passphrase this stack was created with in that file",
            Some(PassphraseFrom::EnvironmentFile) => {
                "set PULUMI_CONFIG_PASSPHRASE in config/pulumi/environment to the passphrase this stack was created with"
            }
            Some(PassphraseFrom::Prompt) => "run again and type the passphrase this stack was created with",
            _ => "set PULUMI_CONFIG_PASSPHRASE to the passphrase this stack was created with",
        };
        Some(Problem::new(
            format!(
                "the passphrase from {from} does not open {} (made with another passphrase)",
                files.join(" and ")
            ),
            fix,
        ))
    }
}
