//! Pulumi's stack locks, when one stops a run: whose it is, and whether it is stale. A lock
//! left by a process of this host that no longer runs is stale, and with
//! `--remove-stale-locks` that one lock is removed (on a file backend: its file; elsewhere
//! `pulumi cancel`, only when every lock of the stack is stale, since it removes them all). A
//! lock of another host is reported with its host and age, never removed.

use std::time::SystemTime;

use super::messages::{Message, says};
use crate::config::backend::Backend;

pub(crate) use crate::workspace::{alive, this_host};

/// One lock as `pulumi` reports it: `  <url>: created by <user>@<host> (pid <n>) at <time>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StackLock {
    pub(crate) url: String,
    pub(crate) owner: Owner,
    pub(crate) at: String,
}

/// Whose a lock is: `<user>@<host> (pid <n>)`, the process that took it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) pid: i32,
}

/// The locks a refusal names (`the stack is currently locked by N lock(s)…`); none when the
/// text is not such a refusal.
pub(crate) fn parse(stderr: &str) -> Vec<StackLock> {
    if !says(stderr, Message::StackLocked) {
        return Vec::new();
    }
    stderr
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (url, rest) = line.split_once(": created by ")?;
            // Every backend keeps a stack's locks under `.pulumi/locks/`: a line naming anything
            // else is a lock's own field (a user name with a line break), not a lock.
            if !url.contains("/.pulumi/locks/") {
                return None;
            }
            let (who, rest) = rest.split_once(" (pid ")?;
            let (pid, at) = rest.split_once(") at ")?;
            let (user, host) = who.rsplit_once('@')?;
            Some(StackLock {
                url: url.to_string(),
                owner: Owner {
                    user: user.to_string(),
                    host: host.to_string(),
                    pid: pid.trim().parse().ok()?,
                },
                at: at.trim().to_string(),
            })
        })
        .collect()
}

impl StackLock {
    /// Left by a process of this host that no longer runs.
    pub(crate) fn stale(&self) -> bool {
        self.owner.host == this_host() && !alive(self.owner.pid)
    }

    /// What a person needs to know about it.
    pub(crate) fn describe(&self) -> String {
        let age = rfc3339(&self.at)
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .map(|d| format!(", {} ago", crate::duration::age(d)))
            .unwrap_or_default();
        let Owner { user, host, pid } = &self.owner;
        if *host != this_host() {
            format!(
                "locked by {}@{} (pid {}) since {}{age}: another machine's lock, left alone; wait for it, or cancel it there",
                user, host, pid, self.at
            )
        } else if self.stale() {
            format!(
                "locked by pid {} of this host since {}{age}, which no longer runs: a stale lock ({})",
                pid, self.at, self.url
            )
        } else {
            format!(
                "locked by pid {} of this host since {}{age}, still running: wait for it to end",
                pid, self.at
            )
        }
    }
}

/// The locks a refusal names, when there are some, as many as `pulumi` counted (a lock's user
/// or host can hold a line break and forge another line: a refusal that reads as more locks
/// than it counts is not trusted), and every one is stale: what `--remove-stale-locks` may
/// cancel on a backend that is not a directory.
pub(crate) fn all_stale(stderr: &str) -> Option<Vec<StackLock>> {
    let held = parse(stderr);
    let trusted = counted(stderr) == Some(held.len());
    (trusted && !held.is_empty() && held.iter().all(StackLock::stale)).then_some(held)
}

/// Whether `stderr` is a refusal for the stack's locks.
pub(crate) fn says_locked(stderr: &str) -> bool {
    says(stderr, Message::StackLocked)
}

/// How many locks `pulumi` says hold the stack: `…locked by N lock(s)…`.
fn counted(stderr: &str) -> Option<usize> {
    let (_, rest) = stderr.split_once("currently locked by ")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// The locks of a file backend's stack as its lock directory holds them, when every one is
/// stale: each a regular file `*.json` directly in that directory (read there, never from the
/// refusal's text, which a lock's own fields can forge), left by a process of this host that
/// no longer runs. `None` when there is none, when one is not stale or not a lock, or when a
/// link stands anywhere between the backend's directory and the locks (a shared backend's
/// writer could aim it elsewhere): nothing outside that directory is ever removed.
pub(crate) fn stale_in_dir(
    backend: &Backend,
    project: &str,
    stack: &str,
) -> Option<Vec<(std::path::PathBuf, StackLock)>> {
    let root = backend.dir()?;
    let dir = backend.lock_dir(project, stack)?;
    let below = dir.strip_prefix(root).ok()?;
    if std::fs::canonicalize(&dir).ok()? != std::fs::canonicalize(root).ok()?.join(below) {
        return None;
    }
    let mut locks = Vec::new();
    for entry in std::fs::read_dir(&dir).ok()?.filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        if !entry.file_type().ok()?.is_file() {
            return None;
        }
        let lock: serde_json::Value = serde_json::from_slice(&crate::fs::read_bytes(&path, 64 << 10).ok()?).ok()?;
        let text = |k: &str| lock.get(k).and_then(serde_json::Value::as_str).map(str::to_string);
        let lock = StackLock {
            url: path.display().to_string(),
            owner: Owner {
                user: text("username").unwrap_or_default(),
                host: text("hostname")?,
                pid: i32::try_from(lock.get("pid")?.as_u64()?).ok()?,
            },
            at: text("timestamp").unwrap_or_default(),
        };
        if !lock.stale() {
            return None;
        }
        locks.push((path, lock));
    }
    locks.sort_by(|a, b| a.0.cmp(&b.0));
    (!locks.is_empty()).then_some(locks)
}

/// The locks that refused the stack, each described, the stale ones with the flag that removes
/// them, or, when that flag was given (`removal_tried`) and they are still there, why it left
/// them: a failure's notes.
pub(crate) fn described(stderr: &str, removal_tried: bool) -> Vec<String> {
    let held = parse(stderr);
    if counted(stderr).is_some_and(|n| n != held.len()) {
        // A lock's own fields made the refusal read as another lock: say nothing it claims.
        return vec![format!(
            "pulumi counted {} lock(s) but its refusal reads as {}: a lock's user or host holds a line break; \
             look at the stack's locks yourself (`runner pulumi PROJECT -- cancel` removes them all)",
            counted(stderr).unwrap_or_default(),
            held.len()
        )];
    }
    held.iter()
        .map(|lock| {
            let mut line = crate::report::text::visible(&lock.describe()).into_owned();
            if lock.stale() && removal_tried {
                line.push_str(
                    "; `--remove-stale-locks` left it: it removes only regular files of the stack's own lock \
                     directory (look at the lock yourself; `runner pulumi PROJECT -- cancel` removes every lock \
                     of the stack)",
                );
            } else if lock.stale() {
                line.push_str("; `--remove-stale-locks` removes it");
            }
            line
        })
        .collect()
}

/// Files in the stack's lock directory of a file backend that do not read as a lock (asked when
/// `pulumi` failed with a JSON error: it reads every file there as a lock). The file backend
/// writes a lock through a temporary file beside it (`no_tmp_dir`), which a process killed at
/// that moment leaves behind.
pub(crate) fn broken(backend: &Backend, project: &str, stack: &str) -> Vec<std::path::PathBuf> {
    let Some(dir) = backend.lock_dir(project, stack) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            std::fs::read(p)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_none_or(|v| !v.is_object())
        })
        .collect();
    out.sort();
    out
}

/// The lock files of the stack in a file backend  that the process
/// `pid` of this host took: what a `pulumi` the runner stopped (or saw killed) left behind. It
/// no longer runs (the runner waited for it), so they are stale by definition.
pub(crate) fn left_by(pid: u32, backend: &Backend, project: &str, stack: &str) -> Vec<std::path::PathBuf> {
    let Some(dir) = backend.lock_dir(project, stack) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let host = this_host();
    let mut out: Vec<std::path::PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            let lock = crate::fs::read_text(p)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
            lock.is_some_and(|l| l["pid"].as_u64() == Some(u64::from(pid)) && l["hostname"] == host.as_str())
        })
        .collect();
    out.sort();
    out
}

/// Removes a lock file of a file backend, and the attributes the backend keeps beside each of
/// its files (`<file>.attrs`, as gocloud's fileblob deletes them).
pub(crate) fn remove_file(file: &std::path::Path) -> Result<(), NotRemoved> {
    let not_removed = |path: std::path::PathBuf| move |source| NotRemoved { path, source };
    std::fs::remove_file(file).map_err(not_removed(file.to_path_buf()))?;
    let mut attrs = file.as_os_str().to_owned();
    attrs.push(".attrs");
    let attrs = std::path::PathBuf::from(attrs);
    match std::fs::remove_file(&attrs) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(not_removed(attrs)(e)),
        _ => Ok(()),
    }
}

/// A lock file, or the attributes beside it, that could not be removed.
#[derive(Debug, thiserror::Error)]
#[error("cannot remove {}: {source}", path.display())]
pub(crate) struct NotRemoved {
    path: std::path::PathBuf,
    source: std::io::Error,
}

/// `error` with each of the [`broken`] lock files named, and what to do about it.
pub(crate) fn broken_notes(broken: &[std::path::PathBuf]) -> Vec<String> {
    broken
        .iter()
        .map(|file| {
            // The backend reads a lock's attributes (`<lock>.attrs`, JSON) with the lock.
            if file.extension().is_some_and(|x| x == "attrs") {
                format!(
                    "{} is not the attributes file the backend keeps beside a lock (not a JSON object), and pulumi reads it with the lock; remove it",
                    file.display()
                )
            } else {
                format!(
                    "{} is not a lock, and pulumi reads every file there as one: a file left by a pulumi killed while it took the stack's lock; remove it",
                    file.display()
                )
            }
        })
        .collect()
}

/// A stale lock removed, in words.
pub(crate) fn removed(lock: &StackLock) -> String {
    format!(
        "removed the stale lock {} (pid {} no longer runs)",
        lock.url, lock.owner.pid
    )
}

/// What removing a stale lock that could not be removed left: said under the failure.
pub(crate) fn not_removed(lock: &StackLock) -> String {
    format!("so the stale lock {} stays", lock.url)
}

/// A time as Go's `time.RFC3339` writes it: UTC (`Z`), or local time with its offset
/// (`+02:00`), which the CLI uses for a lock's time.
fn rfc3339(at: &str) -> Option<SystemTime> {
    let offset = at.len().checked_sub(6).and_then(|i| {
        // (Not a char boundary: not a time the CLI wrote.)
        let (clock, zone) = (at.get(..i)?, at.get(i..)?);
        let sign = match zone.as_bytes().first()? {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        let (h, m) = zone[1..].split_once(':')?;
        let seconds = h.parse::<u64>().ok()? * 3600 + m.parse::<u64>().ok()? * 60;
        Some((clock, sign, seconds))
    });
    match offset {
        Some((clock, sign, seconds)) => {
            let local = humantime::parse_rfc3339_weak(clock).ok()?;
            let by = std::time::Duration::from_secs(seconds);
            // Local time is ahead of UTC by a positive offset.
            if sign > 0 {
                local.checked_sub(by)
            } else {
                local.checked_add(by)
            }
        }
        None => humantime::parse_rfc3339_weak(at).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock whose user holds a line break and a second, forged lock line: the refusal reads
    /// as two locks where pulumi counted one, and is not trusted.
    #[test]
    fn a_forged_second_lock_line_is_not_trusted() {
        let stderr = format!(
            "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n  \
             s3://b/.pulumi/locks/organization/iam/dev/a.json: created by ann\n  file:///home/victim/.ssh/id_rsa: created by x@{host} (pid 999999) at 2026-11-23T10:00:00Z@{host} (pid 999998) at 2026-11-23T10:00:00Z\n",
            host = this_host()
        );
        assert_eq!(counted(&stderr), Some(1));
        assert!(all_stale(&stderr).is_none());
    }

    #[test]
    fn a_broken_file_among_the_locks_is_named_for_what_it_is() {
        let notes = broken_notes(&[
            std::path::PathBuf::from("/w/locks/a.json.1f.tmp"),
            std::path::PathBuf::from("/w/locks/b.json.attrs"),
        ]);
        assert!(notes[0].starts_with("/w/locks/a.json.1f.tmp is not a lock, and pulumi reads every file there as one"));
        assert!(
            notes[1].starts_with("/w/locks/b.json.attrs is not the attributes file the backend keeps beside a lock")
        );
        assert!(notes.iter().all(|n| n.ends_with("; remove it")));
    }

    #[test]
    fn a_refusal_names_its_locks() {
        let stderr = "error: the stack is currently locked by 2 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n  \
                      file:///w/.pulumi/locks/organization/iam/dev/a.json: created by ann@build-7 (pid 4242) at 2026-11-23T10:00:00Z\n  \
                      s3://b/.pulumi/locks/organization/iam/dev/b.json: created by bob@laptop (pid 17) at 2026-11-23T11:00:00Z\n";
        let locks = parse(stderr);
        assert_eq!(locks.len(), 2);
        assert_eq!(locks[0].owner.host, "build-7");
        assert_eq!(locks[0].owner.pid, 4242);
        assert_eq!(locks[0].url, "file:///w/.pulumi/locks/organization/iam/dev/a.json");
        assert!(parse("error: something else").is_empty());
    }

    #[test]
    fn a_lock_time_with_an_offset_is_the_same_instant_in_utc() {
        let utc = rfc3339("2026-11-23T08:00:00Z").unwrap();
        assert_eq!(rfc3339("2026-11-23T10:00:00+02:00"), Some(utc));
        assert_eq!(rfc3339("2026-11-23T03:00:00-05:00"), Some(utc));
        assert_eq!(
            rfc3339("2026-11-23T08:00:00.250Z")
                .unwrap()
                .duration_since(utc)
                .unwrap()
                .as_millis(),
            250
        );
        assert_eq!(rfc3339("yesterday"), None);
        assert_eq!(rfc3339("x€12345"), None);
    }
}
