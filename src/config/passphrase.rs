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

use serde_json::{Map, Value};

use super::backend::{BACKEND_VAR, Backend};
use super::env::{Env, Passphrase, PassphraseFrom};
use super::questions::{Ask, Context};
use super::stackedit;
use super::stackfile::{self, StackFile};
use crate::diagnostic::Problem;
use crate::error::RunnerError;
use crate::workspace::Workspace;

/// Said once a typed passphrase opened the stack: how not to be asked at every command.
const TIP: &str = "to be asked no more in this shell: export PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE, a file holding it)";

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
    environment: &str,
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
        // Read now, as `pulumi` will: a file that cannot be (a pipe, a device, an I/O error, a
        // passphrase that is not text) is one problem here, not every project failing.
        return Ok(crate::fs::read_text(&f).err().map(|e| {
            let why = if e.kind() == std::io::ErrorKind::InvalidData {
                "its passphrase is not UTF-8 text".to_string()
            } else {
                e.to_string()
            };
            Problem::new(
                format!("PULUMI_CONFIG_PASSPHRASE_FILE names {f}, which cannot be read: {why}"),
                "point it at a readable file holding the passphrase as text",
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
            let wrong = SaltCheck::start(&p, salted).wrong();
            if wrong.is_empty() || attempt == 3 {
                env.set_passphrase(p);
                // Asked at each command otherwise.
                if wrong.is_empty() {
                    crate::report::info(TIP);
                }
                break;
            }
            crate::report::warning("incorrect passphrase: it does not open this stack's secrets; try again");
        }
        return Ok(None);
    }
    let backend = Backend::parse(&var(BACKEND_VAR).unwrap_or_default());
    Ok(Some(Problem::new(
        format!(
            "the backend {backend} needs a passphrase to open the stacks' secrets (pulumi reads them on every operation), and none is set"
        ),
        format!(
            "set PULUMI_CONFIG_PASSPHRASE in the environment, or PULUMI_CONFIG_PASSPHRASE_FILE to a file that holds it (in the environment or in {environment})"
        ),
    )))
}

/// [`obtain`], and the check of what was obtained against `salted` started.
pub(crate) fn obtain_checked(
    cx: &Context<'_>,
    ws: &crate::workspace::Workspace,
    file: &StackFile,
    salted: &[PathBuf],
    env: &mut Env,
    ask: &mut dyn Ask,
) -> std::io::Result<(Option<Problem>, Option<SaltCheck>)> {
    if let Some(p) = obtain(
        cx.var,
        &ws.show(&ws.root.join(super::env_file::ENVIRONMENT_FILE)),
        cx.interactive,
        file,
        salted,
        env,
        ask,
    )? {
        return Ok((Some(p), None));
    }
    let check = in_use(env, file)
        .then(|| env.effective_passphrase())
        .flatten()
        .map(|(p, _)| SaltCheck::start(&p, salted));
    Ok((None, check))
}

/// The `encryptionsalt` of a stack file, if it has one.
pub(crate) fn salt_of(path: &Path) -> Option<String> {
    match salt_in(path)? {
        Salt::Text(s) => Some(s),
        Salt::NotText(_) => None,
    }
}

/// An `encryptionsalt:` as written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Salt {
    Text(String),
    /// A number, a list…: what it is.
    NotText(&'static str),
}

fn salt_in(path: &Path) -> Option<Salt> {
    let text = std::fs::read_to_string(path).ok()?;
    let top = stackedit::top_level(&text).ok()?;
    Some(match top.get("encryptionsalt")? {
        Value::String(s) => Salt::Text(s.clone()),
        Value::Number(_) => Salt::NotText("a number"),
        Value::Bool(_) => Salt::NotText("true or false"),
        Value::Array(_) => Salt::NotText("a list"),
        Value::Object(_) => Salt::NotText("a mapping"),
        Value::Null => Salt::NotText("empty"),
    })
}

/// The key derivation's round count, decided once: the real CLI's. Only a build for tests (with
/// debug assertions, as `cargo test` builds it; never a release build, what `cargo install`
/// makes) takes the stand-in's `PULUMI_STANDIN_KDF_ITERATIONS`, the fewer rounds its salts are
/// made with when the tests set it.
fn rounds() -> u32 {
    static ROUNDS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *ROUNDS.get_or_init(|| {
        let standin = || {
            std::env::var("PULUMI_STANDIN_KDF_ITERATIONS")
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0)
        };
        cfg!(debug_assertions)
            .then(standin)
            .flatten()
            .unwrap_or(pulumi_passphrase::ROUNDS)
    })
}

/// The values of a stack file's secrets, opened in memory on demand (one key derivation, the
/// first time): to compare a stored secret with what the environment gives, never to show it.
pub(crate) struct Stored<'a> {
    file: &'a StackFile,
    env: &'a Env,
    crypter: std::cell::OnceCell<Option<pulumi_passphrase::Crypter>>,
}

impl<'a> Stored<'a> {
    pub(crate) fn new(file: &'a StackFile, env: &'a Env) -> Self {
        Stored {
            file,
            env,
            crypter: std::cell::OnceCell::new(),
        }
    }

    /// The value stored under `key`; `None` when there is none or it cannot be opened (no
    /// passphrase yet, another one, a damaged value).
    pub(crate) fn value(&self, key: &str) -> Option<String> {
        let secure = self.file.config.get(key)?.get("secure")?.as_str()?;
        self.crypter()?.decrypt(secure).ok()
    }

    /// Whether there is a key to open the values with: a passphrase (its variable, or a file
    /// that can be read) and the file's salt.
    pub(crate) fn opens(&self) -> bool {
        self.crypter().is_some()
    }

    fn crypter(&self) -> Option<&pulumi_passphrase::Crypter> {
        self.crypter
            .get_or_init(|| {
                let passphrase = self.env.effective_passphrase()?.0;
                let salt = salt_of(&self.file.path)?;
                pulumi_passphrase::Crypter::open(passphrase.expose(), &salt, rounds()).ok()
            })
            .as_ref()
    }
}

/// A check under way: one thread per salted stack file.
#[derive(Debug)]
pub(crate) struct SaltCheck {
    /// The files of one salt, and what the passphrase makes of it.
    files: Vec<(Vec<PathBuf>, JoinHandle<Verdict>)>,
}

/// What a passphrase makes of a salt.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Opens,
    Wrong,
    /// Not a salt the CLI can read: what is wrong with it.
    Malformed(String),
}

impl SaltCheck {
    /// Starts checking `passphrase` against the salt of each of `files` that has one: once per
    /// salt (the shared file's is often a copy of the secrets store's).
    pub(crate) fn start(passphrase: &Passphrase, files: &[PathBuf]) -> SaltCheck {
        let rounds = rounds();
        let mut salts: Vec<(Vec<PathBuf>, Salt)> = Vec::new();
        for (f, salt) in files.iter().filter_map(|f| Some((f.clone(), salt_in(f)?))) {
            match salts.iter_mut().find(|(_, s)| *s == salt) {
                Some((same, _)) => same.push(f),
                None => salts.push((vec![f], salt)),
            }
        }
        let files = salts
            .into_iter()
            .map(|(f, salt)| {
                let p = passphrase.expose().to_string();
                let opens = move || match salt {
                    Salt::NotText(what) => Verdict::Malformed(format!("its encryptionsalt is {what}, not text")),
                    Salt::Text(salt) => match pulumi_passphrase::Crypter::open(&p, &salt, rounds) {
                        Ok(_) => Verdict::Opens,
                        Err(pulumi_passphrase::Error::Incorrect) => Verdict::Wrong,
                        Err(e) => Verdict::Malformed(format!("its encryptionsalt is not one the CLI reads ({e})")),
                    },
                };
                (f, std::thread::spawn(opens))
            })
            .collect();
        SaltCheck { files }
    }

    /// Each file's verdict (waits for the check).
    fn verdicts(self) -> Vec<(PathBuf, Verdict)> {
        self.files
            .into_iter()
            .flat_map(|(files, h)| {
                let v = h.join().unwrap_or(Verdict::Opens);
                files.into_iter().map(move |f| (f, v.clone()))
            })
            .collect()
    }

    /// The files whose salt the passphrase does not open (waits for the check).
    pub(crate) fn wrong(self) -> Vec<PathBuf> {
        self.verdicts()
            .into_iter()
            .filter_map(|(f, v)| (v == Verdict::Wrong).then_some(f))
            .collect()
    }

    /// The check's verdict as one problem: a salt the CLI cannot read, named with its file (not
    /// the passphrase's fault, nor another file's); else which files the passphrase does not
    /// open and where it came from.
    pub(crate) fn problem(self, env: &Env, show: &dyn Fn(&Path) -> String) -> Option<Problem> {
        let verdicts = self.verdicts();
        if let Some((f, Verdict::Malformed(what))) = verdicts.iter().find(|(_, v)| matches!(v, Verdict::Malformed(_))) {
            return Some(Problem::new(
                format!("{} is damaged: {what}", show(f)),
                "restore its `encryptionsalt:` line (from version control or a backup); without it, the secrets \
                 stored with it cannot be read",
            ));
        }
        let wrong: Vec<PathBuf> = verdicts
            .into_iter()
            .filter_map(|(f, v)| (v == Verdict::Wrong).then_some(f))
            .collect();
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

/// For a command that hands one project's stack to `pulumi` without running the graph (`output`,
/// `pulumi`): the environment with the passphrase a file backend needs, from the environment or
/// asked once at a terminal. Without one and nobody to ask: the problem, with its fix (exit 3).
pub(crate) fn with_passphrase(
    ws: &Workspace,
    stack: &str,
    env: Env,
    interactive: bool,
    ask: &mut dyn Ask,
) -> Result<Env, RunnerError> {
    let path = stackfile::path(&ws.root, stack);
    let file = StackFile::load(&path, &ws.show(&path)).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
    let mut env = env;
    let var_env = env.clone();
    let var = move |name: &str| var_env.get(name);
    let example = Map::new();
    let cx = Context {
        var: &var,
        example: &example,
        file_shown: &file.shown,
        // Only the passphrase is asked here: no secret key is reported missing.
        asks: "",
        interactive,
        defaults: false,
    };
    let (mut problem, check) =
        obtain_checked(&cx, ws, &file, std::slice::from_ref(&path), &mut env, ask).map_err(|source| {
            RunnerError::Io {
                context: "cannot read the answer from the terminal".into(),
                source,
            }
        })?;
    ask.finished();
    problem = problem.or_else(|| check?.problem(&env, &|f| ws.show(f)));
    if let Some(p) = problem {
        return Err(RunnerError::Problems(vec![p]));
    }
    Ok(env)
}
