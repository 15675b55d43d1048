//! Storing values through the `pulumi` CLI, so they are encrypted by the stack's own secrets
//! provider: `pulumi config set --secret` with the value on standard input (never in argv, where
//! a process listing would show it).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

pub struct PulumiConfig<'a> {
    pub program: &'a Path,
    pub stack: &'a str,
    pub env: &'a BTreeMap<String, String>,
}

impl PulumiConfig<'_> {
    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(self.program);
        c.args(args)
            .current_dir(dir)
            .envs(self.env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    /// `pulumi stack select --create`: the project's stack exists (and its own stack file holds
    /// the passphrase salt) afterwards.
    pub fn select(&self, dir: &Path) -> Result<(), String> {
        let c = self.command(
            dir,
            &[
                "stack",
                "select",
                "--create",
                "--stack",
                self.stack,
                "--non-interactive",
            ],
        );
        finish(c, None, "pulumi stack select --create")
    }

    /// `pulumi config set --secret KEY` in `dir`, into `config_file` when given (else the
    /// project's own `Pulumi.<stack>.yaml`).
    pub fn set_secret(&self, dir: &Path, key: &str, value: &str, config_file: Option<&Path>) -> Result<(), String> {
        let file = config_file.map(|f| f.display().to_string());
        let mut args = vec!["config", "set", "--secret", "--stack", self.stack, "--non-interactive"];
        if let Some(f) = &file {
            args.extend(["--config-file", f.as_str()]);
        }
        args.extend(["--", key]);
        let mut c = self.command(dir, &args);
        c.stdin(Stdio::piped());
        finish(c, Some(value), &format!("pulumi config set --secret {key}"))
    }
}

fn finish(mut c: Command, input: Option<&str>, what: &str) -> Result<(), String> {
    let mut child = c.spawn().map_err(|e| format!("cannot start `{what}`: {e}"))?;
    if let Some(text) = input
        && let Some(mut stdin) = child.stdin.take()
    {
        // The real CLI reads the value from a non-terminal stdin, trailing newline stripped.
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| format!("`{what}`: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    Err(format!(
        "`{what}` failed (exit {}){}",
        out.status.code().map_or_else(|| "by signal".into(), |c| c.to_string()),
        if last.is_empty() {
            String::new()
        } else {
            format!(": {last}")
        }
    ))
}
