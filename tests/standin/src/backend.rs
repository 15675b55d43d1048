//! The DIY file backend in project mode (`pkg/backend/diy`): `.pulumi/meta.yaml`,
//! `stacks/<project>/<stack>.json` (+ `.bak`), `history/`, `backups/`, per-stack `locks/`.
//! Directories are listed, and files deleted, as the backend's blob store does (gocloud's
//! fileblob): the `<file>.attrs` beside a blob is hidden from a listing and deleted with it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fail::{Failure, fail};
use crate::fsutil::write_atomic;
use crate::time;

pub const VERSION: &str = "v3.259.0";

pub struct Backend {
    /// The directory that holds `.pulumi/`.
    pub dir: PathBuf,
    pub url: String,
}

/// Where `PULUMI_HOME` is (default `~/.pulumi`).
pub fn home() -> PathBuf {
    match std::env::var_os("PULUMI_HOME") {
        Some(h) if !h.is_empty() => PathBuf::from(h),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".pulumi"),
    }
}

/// Backend URL: `PULUMI_BACKEND_URL` > Pulumi.yaml `backend.url` > credentials.json `current`.
pub fn url(project_backend: Option<&str>) -> Option<String> {
    if let Ok(u) = std::env::var("PULUMI_BACKEND_URL")
        && !u.is_empty()
    {
        return Some(u);
    }
    if let Some(u) = project_backend {
        return Some(u.to_string());
    }
    let creds = std::fs::read_to_string(home().join("credentials.json")).ok()?;
    let v: Value = serde_json::from_str(&creds).ok()?;
    v["current"].as_str().map(str::to_string)
}

/// The directory a `file://` URL names (`~` expanded, relative to the current directory).
pub fn url_dir(url: &str) -> Result<PathBuf, Failure> {
    let Some(rest) = url.strip_prefix("file://") else {
        return Err(fail(format!(
            "the pulumi stand-in supports only file:// backends, not {url}; set PULUMI_BACKEND_URL=file://<dir>"
        )));
    };
    let rest = rest.split('?').next().unwrap_or_default();
    let path = if rest == "~" || rest.starts_with("~/") {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(rest.trim_start_matches('~').trim_start_matches('/'))
    } else {
        std::env::current_dir().unwrap_or_default().join(rest)
    };
    Ok(path)
}

impl Backend {
    pub fn open(url: &str) -> Result<Self, Failure> {
        let dir = url_dir(url)?;
        if !dir.is_dir() {
            return Err(fail(format!(
                "unable to open state directory \"{url}\": stat {}: no such file or directory",
                dir.display()
            )));
        }
        let b = Backend {
            dir,
            url: format!("file://{}", url_dir(url)?.display()),
        };
        let meta = b.dir.join(".pulumi/meta.yaml");
        if !meta.exists() {
            write_atomic(&meta, b"version: 1\n")?;
        }
        Ok(b)
    }

    pub fn stack_file(&self, project: &str, stack: &str) -> PathBuf {
        self.dir.join(format!(".pulumi/stacks/{project}/{stack}.json"))
    }

    pub fn exists(&self, project: &str, stack: &str) -> bool {
        self.stack_file(project, stack).is_file()
    }

    pub fn checkpoint(&self, project: &str, stack: &str) -> Result<Option<Value>, Failure> {
        let path = self.stack_file(project, stack);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| fail(format!("could not read deployment {}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(fail(format!("could not read {}: {e}", path.display()))),
        }
    }

    /// Writes the checkpoint (compact JSON, as v3.238+), keeping the previous one as `.bak`.
    pub fn save(&self, project: &str, stack: &str, deployment: &Value) -> Result<(), Failure> {
        let path = self.stack_file(project, stack);
        if path.exists() {
            let _ = std::fs::copy(&path, path.with_extension("json.bak"));
        }
        let doc = json!({
            "version": 3,
            "checkpoint": { "stack": format!("organization/{project}/{stack}"), "latest": deployment }
        });
        write_atomic(&path, serde_json::to_string(&doc).expect("JSON").as_bytes())
    }

    /// A new deployment (manifest + secrets provider), as `stack init` writes.
    pub fn deployment(salt: &str, resources: Option<Vec<Value>>) -> Value {
        let mut d = json!({
            "manifest": { "time": time::rfc3339(time::now()), "magic": "", "version": VERSION },
            "secrets_providers": { "type": "passphrase", "state": { "salt": salt } },
        });
        if let Some(r) = resources
            && !r.is_empty()
        {
            d["resources"] = Value::Array(r);
        }
        d["metadata"] = json!({});
        d
    }

    /// History entry, checkpoint copy and backup after a (non-preview) operation.
    pub fn record(&self, project: &str, stack: &str, info: &Value) -> Result<(), Failure> {
        let nanos = time::unix_nanos();
        let hist = self.dir.join(format!(".pulumi/history/{project}/{stack}"));
        write_atomic(
            &hist.join(format!("{stack}-{nanos}.history.json")),
            serde_json::to_string_pretty(info).expect("JSON").as_bytes(),
        )?;
        let current = std::fs::read(self.stack_file(project, stack)).unwrap_or_default();
        write_atomic(&hist.join(format!("{stack}-{nanos}.checkpoint.json")), &current)?;
        let backup = self
            .dir
            .join(format!(".pulumi/backups/{project}/{stack}/{stack}.{nanos}.json"));
        write_atomic(&backup, &current)
    }

    fn lock_dir(&self, project: &str, stack: &str) -> PathBuf {
        self.dir.join(format!(".pulumi/locks/organization/{project}/{stack}"))
    }

    /// Takes the per-stack lock: check, write our lock file, check again (`lock.go`).
    pub fn lock(&self, project: &str, stack: &str) -> Result<Lock, Failure> {
        let dir = self.lock_dir(project, stack);
        Self::check_unlocked(&dir, None)?;
        // The backend's lock id is a random UUID (`uuid.New()`, diy/backend.go).
        let hex = time::random_hex(16);
        let id = format!(
            "{}-{}-4{}-a{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[13..16],
            &hex[17..20],
            &hex[20..]
        );
        let path = dir.join(format!("{id}.json"));
        let content = json!({
            "pid": std::process::id(),
            "username": username(),
            "hostname": hostname(),
            "timestamp": time::rfc3339(time::now()),
        });
        write_atomic(&path, serde_json::to_string(&content).expect("JSON").as_bytes())?;
        let lock = Lock { path };
        Self::check_unlocked(&dir, Some(&lock.path))?;
        Ok(lock)
    }

    /// `checkForLock`: every file the backend lists in the stack's lock directory but our own
    /// is a lock, whatever its name (an `.attrs` is not listed); one that does not read as a lock
    /// fails the command with the reading's error.
    fn check_unlocked(dir: &Path, ours: Option<&Path>) -> Result<(), Failure> {
        let others: Vec<PathBuf> = list(dir).into_iter().filter(|p| Some(p.as_path()) != ours).collect();
        if others.is_empty() {
            return Ok(());
        }
        let mut message = format!(
            "the stack is currently locked by {} lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.",
            others.len()
        );
        for p in &others {
            let text = std::fs::read_to_string(p).map_err(|e| fail(format!("open {}: {e}", p.display())))?;
            let info: Value = serde_json::from_str(&text).map_err(|_| fail(go_json_error(&text)))?;
            // `lockURLForError`: the backend's URL (`massageBlobPath` adds `?no_tmp_dir=true`)
            // with the lock's path joined in, written by Go's net/url; the time as the lock
            // holds it (its writer's zone), to the second (`time.RFC3339`).
            let _ = write!(
                message,
                "\n  file://{}?no_tmp_dir=true: created by {}@{} (pid {}) at {}",
                go_escaped_path(&p.display().to_string()),
                info["username"].as_str().unwrap_or_default(),
                info["hostname"].as_str().unwrap_or_default(),
                info["pid"].as_i64().unwrap_or_default(),
                go_rfc3339(info["timestamp"].as_str().unwrap_or_default()),
            );
        }
        Err(fail(message))
    }

    /// `pulumi cancel` (`CancelCurrentUpdate`): every file the backend lists in the stack's lock
    /// directory is deleted (with its `.attrs`); directories stay, and so does an `.attrs` whose
    /// file is gone, which no listing shows.
    pub fn unlock_all(&self, project: &str, stack: &str) {
        for file in list(&self.lock_dir(project, stack)) {
            let _ = delete(&file);
        }
    }
}

/// The files of `dir` as the backend lists them (`listBucket`: gocloud fileblob's `ListPaged`
/// with the delimiter `/`): sorted by name, subdirectories left out (each caller skips them),
/// and no `<file>.attrs`, the attributes fileblob keeps beside each blob it writes and skips
/// ("the self-generated attribute files", `blob/fileblob/fileblob.go`). None when `dir` is missing.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.path())
        .filter(|p| !p.as_os_str().as_encoded_bytes().ends_with(ATTRS.as_bytes()))
        .collect();
    files.sort();
    files
}

/// The suffix of fileblob's attribute files (`attrsExt`).
const ATTRS: &str = ".attrs";

/// Deletes a file as fileblob's `Delete` does: the file, then its `.attrs` when there is one.
fn delete(file: &Path) -> std::io::Result<()> {
    std::fs::remove_file(file)?;
    let mut attrs = file.as_os_str().to_owned();
    attrs.push(ATTRS);
    match std::fs::remove_file(PathBuf::from(attrs)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// A time as Go's `time.RFC3339` writes the one it read: no fraction of a second, `Z` for UTC.
fn go_rfc3339(at: &str) -> String {
    let (clock, zone) = match at.strip_suffix('Z') {
        Some(clock) => (clock, "Z"),
        None if at.len() > 6 && at.is_char_boundary(at.len() - 6) => at.split_at(at.len() - 6),
        None => return at.to_string(),
    };
    let clock = clock.split_once('.').map_or(clock, |(whole, _)| whole);
    let zone = if zone == "+00:00" { "Z" } else { zone };
    format!("{clock}{zone}")
}

/// Go's `encoding/json` words for text that is not JSON, as far as the stand-in tells them.
fn go_json_error(text: &str) -> String {
    match text.trim_start().chars().next() {
        None => "unexpected end of JSON input".into(),
        Some(c) if !matches!(c, '{' | '[' | '"' | '-' | '0'..='9' | 't' | 'f' | 'n') => {
            format!("invalid character '{c}' looking for beginning of value")
        }
        Some(_) => "unexpected end of JSON input".into(),
    }
}

/// A held stack lock, released on drop (a killed process leaves it behind, as the real one):
/// `Unlock` deletes it through the blob store, its `.attrs` with it.
pub struct Lock {
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = delete(&self.path);
    }
}

/// A path as Go's `url.URL.EscapedPath` writes it: letters, digits and `-_.~$&+,/:;=@` as they
/// are, every other byte `%XX`.
fn go_escaped_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

pub fn username() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "root".into())
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map_or_else(|_| "localhost".into(), |h| h.trim().to_string())
}
