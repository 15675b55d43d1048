//! Storing values through the `pulumi` CLI, so they are encrypted by the stack's own secrets
//! provider: `pulumi config set --secret` with the value on standard input (never in argv, where
//! a process listing would show it).

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;

use super::{locks, process};
use crate::config::SecretStore;
use crate::config::env::Env;
use crate::config::prepare::StoreError;
use crate::config::stackedit;

pub(crate) struct Store {
    pub(crate) program: PathBuf,
    pub(crate) stack: String,
    /// The project directories whose stack this store selected or created: the run then
    /// needs no `stack select` of its own there.
    created: Mutex<BTreeSet<PathBuf>>,
    /// `--remove-stale-locks`: a stack creation refused only by stale lock files removes them.
    remove_stale_locks: bool,
}

impl Store {
    pub(crate) fn new(program: PathBuf, stack: &str, remove_stale_locks: bool) -> Self {
        Store {
            program,
            stack: stack.to_string(),
            created: Mutex::default(),
            remove_stale_locks,
        }
    }

    /// The project directories whose stack exists now, because this store made sure of it.
    pub(crate) fn stacks_made(&self) -> BTreeSet<PathBuf> {
        self.created.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn command(&self, dir: &Path, env: &Env, args: &[&str]) -> std::process::Command {
        let mut c = process::command(&self.program, dir);
        c.args(args).stdout(Stdio::null());
        env.apply_for_pulumi(&mut c);
        c
    }
}

impl SecretStore for Store {
    fn create_stack(&self, dir: &Path, env: &Env) -> Result<Vec<String>, StoreError> {
        let what = "pulumi stack select --create";
        let args = [
            "stack",
            "select",
            "--create",
            "--stack",
            &self.stack,
            "--non-interactive",
        ];
        let mut notes = Vec::new();
        let mut out = run(self.command(dir, env, &args), None, what)?;
        // Creating a stack holds its lock (`CreateStack`), which a killed creation leaves.
        // Only lock files are removed here: `pulumi cancel` needs the stack.
        if self.remove_stale_locks
            && !out.status.success()
            && let Some(held) = locks::all_stale(&String::from_utf8_lossy(&out.stderr))
            && let Some(files) = held.iter().map(locks::StackLock::file).collect::<Option<Vec<_>>>()
        {
            for (lock, file) in held.iter().zip(&files) {
                std::fs::remove_file(file).map_err(|e| format!("cannot remove the stale lock {}: {e}", lock.url))?;
                notes.push(locks::removed(lock));
            }
            out = run(self.command(dir, env, &args), None, what)?;
        }
        checked(&out, what)?;
        if let Ok(mut created) = self.created.lock() {
            created.insert(dir.to_path_buf());
        }
        Ok(notes)
    }

    fn set_secret(
        &self,
        dir: &Path,
        env: &Env,
        key: &str,
        value: &str,
        config_file: Option<&Path>,
    ) -> Result<(), StoreError> {
        let file = config_file.map(|f| f.display().to_string());
        let mut args = vec!["config", "set", "--secret", "--stack", &self.stack, "--non-interactive"];
        if let Some(f) = &file {
            args.extend(["--config-file", f.as_str()]);
        }
        args.extend(["--", key]);
        let mut c = self.command(dir, env, &args);
        c.stdin(Stdio::piped());
        // `pulumi` drops one trailing newline from what it reads (`--raw`, which would not, is
        // too new to rely on): one more keeps the value exactly as it is, line ends and all.
        let line = format!("{value}\n");
        Ok(finish(c, Some(&line), &format!("pulumi config set --secret {key}"))?)
    }

    fn reach(&self, dir: &Path, env: &Env) -> Result<(), StoreError> {
        let what = "pulumi whoami";
        Ok(finish(
            self.command(dir, env, &["whoami", "--non-interactive"]),
            None,
            what,
        )?)
    }

    /// `config set --secret` of a throwaway key into a scratch file of no salt: `pulumi` gives
    /// it a new one (`DefaultSecretManager`), which is read back.
    fn new_salt(&self, dir: &Path, env: &Env) -> Result<String, StoreError> {
        let what = "pulumi config set --secret (to make a passphrase salt)";
        let scratch = Scratch::new("salt", &self.stack);
        self.set_secret(dir, env, "runner:salt", "salt", Some(&scratch.0))?;
        let text = std::fs::read_to_string(&scratch.0).map_err(|e| format!("`{what}` wrote no stack file: {e}"))?;
        stackedit::top_level(&text)
            .ok()
            .and_then(|top| top.get("encryptionsalt")?.as_str().map(str::to_string))
            .ok_or_else(|| {
                format!("`{what}` wrote no encryptionsalt (is the stack's secrets provider a passphrase?)").into()
            })
    }
}

/// A scratch stack file (a copy, or none yet), removed when dropped: what `pulumi` may write
/// goes there.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str, stack: &str) -> Self {
        Scratch(std::env::temp_dir().join(format!("runner-{what}-{}-{stack}.yaml", std::process::id())))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn finish(c: std::process::Command, input: Option<&str>, what: &str) -> Result<(), String> {
    checked(&run(c, input, what)?, what)
}

/// The engine's message tells whether a lock refused the stack.
impl From<String> for StoreError {
    fn from(message: String) -> Self {
        StoreError {
            locked: super::messages::says(&message, super::messages::Message::StackLocked),
            message,
        }
    }
}

/// Runs `c` to its end, `input` on its standard input.
fn run(mut c: std::process::Command, input: Option<&str>, what: &str) -> Result<std::process::Output, String> {
    let mut child = c.spawn().map_err(|e| format!("cannot start `{what}`: {e}"))?;
    if let Some(text) = input
        && let Some(mut stdin) = child.stdin.take()
    {
        let _ = stdin.write_all(text.as_bytes());
    }
    child.wait_with_output().map_err(|e| format!("`{what}`: {e}"))
}

/// A run that failed, in words: its exit, its last line, and the locks that refused the stack.
fn checked(out: &std::process::Output, what: &str) -> Result<(), String> {
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let held = !locks::parse(&stderr).is_empty();
    // A lock's refusal ends with the lock's own line: its first line says what happened.
    let line = if held {
        super::messages::line_of(&stderr, super::messages::Message::StackLocked).unwrap_or_default()
    } else {
        process::last_line(&stderr)
    };
    let line = line.trim();
    let error = format!(
        "`{what}` failed (exit {}){}",
        out.status.code().map_or_else(|| "by signal".into(), |c| c.to_string()),
        if line.is_empty() {
            String::new()
        } else {
            format!(": {line}")
        }
    );
    let mut error = error;
    for note in locks::described(&stderr) {
        error.push_str("\n  ");
        error.push_str(&note);
    }
    Err(error)
}
