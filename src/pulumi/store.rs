//! Storing values through the `pulumi` CLI, so they are encrypted by the stack's own secrets
//! provider: `pulumi config set --secret` with the value on standard input (never in argv, where
//! a process listing would show it).

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;

use super::messages::{self, Message};
use super::{locks, process};
use crate::config::SecretStore;
use crate::config::env::Env;
use crate::config::save::StoreError;
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

/// How many times (half a second apart) creating the store's stack is tried again while another
/// process holds its lock: jobs of an export starting at once each create it, and a creation
/// holds the lock for well under a second.
const CREATION_WAITS: usize = 20;

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
        // The locks are read from the backend's lock directory, never from the refusal's text
        // (a lock's fields can forge a line of it).
        if self.remove_stale_locks
            && !out.status.success()
            && locks::says_locked(&String::from_utf8_lossy(&out.stderr))
            && let Ok(Some(project)) = crate::programs::Program::name_in(dir)
            && let Some(held) = locks::stale_in_dir(&crate::config::backend::Backend::of(env), &project, &self.stack)
        {
            for (file, lock) in &held {
                // The lock and the attributes the backend keeps beside it, as every other
                // removal of a stale lock does.
                locks::remove_file(file)
                    .map_err(|e| StoreError::said(format!("cannot remove the stale lock {}: {e}", lock.url)))?;
                notes.push(locks::removed(lock));
            }
            out = run(self.command(dir, env, &args), None, what)?;
        }
        // Another process (a job of an export started at once) is creating it, which holds its
        // lock for a moment, or created it meanwhile: waited for, then selected.
        let said = |out: &std::process::Output, m: Message| {
            !out.status.success() && messages::says(&String::from_utf8_lossy(&out.stderr), m)
        };
        for _ in 0..CREATION_WAITS {
            if !said(&out, Message::StackLocked) && !said(&out, Message::LockFile) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
            out = run(self.command(dir, env, &args), None, what)?;
        }
        if said(&out, Message::StackExists) {
            let select: Vec<&str> = args.iter().copied().filter(|a| *a != "--create").collect();
            out = run(self.command(dir, env, &select), None, what)?;
        }
        checked(&out, what, self.remove_stale_locks)?;
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
        finish(c, Some(&line), &format!("pulumi config set --secret {key}"))
    }

    fn reach(&self, dir: &Path, env: &Env) -> Result<(), StoreError> {
        finish(
            self.command(dir, env, &["whoami", "--non-interactive"]),
            None,
            "pulumi whoami",
        )
    }

    /// `config set --secret` of a throwaway key into a scratch file of no salt: `pulumi` gives
    /// it a new one (`DefaultSecretManager`), which is read back.
    fn new_salt(&self, dir: &Path, env: &Env) -> Result<String, StoreError> {
        let what = "pulumi config set --secret (to make a passphrase salt)";
        let scratch = Scratch::new("salt", &self.stack);
        self.set_secret(dir, env, "runner:salt", "salt", Some(&scratch.0))?;
        let text = std::fs::read_to_string(&scratch.0)
            .map_err(|e| StoreError::said(format!("`{what}` wrote no stack file: {e}")))?;
        stackedit::top_level(&text)
            .ok()
            .and_then(|top| top.get("encryptionsalt")?.as_str().map(str::to_string))
            .ok_or_else(|| {
                StoreError::said(format!(
                    "`{what}` wrote no encryptionsalt (is the stack's secrets provider a passphrase?)"
                ))
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

fn finish(c: std::process::Command, input: Option<&str>, what: &str) -> Result<(), StoreError> {
    checked(&run(c, input, what)?, what, false)
}

/// Runs `c` to its end, `input` on its standard input.
fn run(mut c: std::process::Command, input: Option<&str>, what: &str) -> Result<std::process::Output, StoreError> {
    let mut child = c
        .spawn()
        .map_err(|e| StoreError::said(format!("cannot start `{what}`: {e}")))?;
    if let Some(text) = input
        && let Some(mut stdin) = child.stdin.take()
    {
        let _ = stdin.write_all(text.as_bytes());
    }
    child
        .wait_with_output()
        .map_err(|e| StoreError::said(format!("`{what}`: {e}")))
}

/// A run that failed, as a failure: how it ended, what it said, and the locks that refused the
/// stack (then the error is [`StoreError::Locked`]).
fn checked(out: &std::process::Output, what: &str, removal_tried: bool) -> Result<(), StoreError> {
    if out.status.success() {
        return Ok(());
    }
    let ended = process::Ended::of(out);
    let failure = process::failure(what, &ended, &[]);
    if messages::classify(&ended.stderr).contains(&Message::StackLocked) {
        Err(StoreError::Locked(Box::new(
            failure.noted(locks::described(&ended.stderr, removal_tried)),
        )))
    } else {
        Err(StoreError::Failed(Box::new(failure)))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;

    use super::*;

    fn ended(code: i32, stderr: &str) -> std::process::Output {
        std::process::Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    /// A lock's refusal is a kind of its own (its fix differs), told by the engine's message,
    /// and worded as every failure is.
    #[test]
    fn a_locks_refusal_is_its_own_kind_worded_as_a_failure() {
        let locked = "error: could not create stack: the stack is currently locked by 1 lock(s). Either wait for \
                      the other process(es) to end or delete the lock file with `pulumi cancel`.\n  \
                      file:///w/.pulumi/locks/organization/iam/dev/a.json: created by ann@h (pid 1) at \
                      2026-11-23T10:00:00Z\n";
        let what = "pulumi stack select --create";
        let Err(e @ StoreError::Locked(_)) = checked(&ended(1, locked), what, false) else {
            panic!("not locked")
        };
        assert!(
            e.to_string().starts_with(
                "pulumi stack select --create exited with code 1: error: could not create stack: the stack is \
                 currently locked by 1 lock(s)"
            ),
            "{e}"
        );
        let Err(e @ StoreError::Failed(_)) = checked(&ended(255, "error: no such backend\n"), "pulumi whoami", false)
        else {
            panic!("not failed")
        };
        assert_eq!(
            e.to_string(),
            "pulumi whoami exited with code 255: error: no such backend"
        );
        assert_eq!(checked(&ended(0, ""), what, false), Ok(()));
    }
}
