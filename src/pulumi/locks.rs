//! Pulumi's stack locks, when one stops a run: whose it is, and whether it is stale. A lock
//! left by a process of this host that no longer runs is stale, and with
//! `--remove-stale-locks` that one lock is removed (on a file backend: its file; elsewhere
//! `pulumi cancel`, only when every lock of the stack is stale, since it removes them all). A
//! lock of another host is reported with its host and age, never removed.

use std::time::SystemTime;

/// One lock as `pulumi` reports it: `  <url>: created by <user>@<host> (pid <n>) at <time>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StackLock {
    pub(crate) url: String,
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) pid: i32,
    pub(crate) at: String,
}

/// The locks a refusal names (`the stack is currently locked by N lock(s)…`); none when the
/// text is not such a refusal.
pub(crate) fn parse(stderr: &str) -> Vec<StackLock> {
    if !stderr.contains("the stack is currently locked") {
        return Vec::new();
    }
    stderr
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (url, rest) = line.split_once(": created by ")?;
            let (who, rest) = rest.split_once(" (pid ")?;
            let (pid, at) = rest.split_once(") at ")?;
            let (user, host) = who.rsplit_once('@')?;
            Some(StackLock {
                url: url.to_string(),
                user: user.to_string(),
                host: host.to_string(),
                pid: pid.trim().parse().ok()?,
                at: at.trim().to_string(),
            })
        })
        .collect()
}

impl StackLock {
    /// Left by a process of this host that no longer runs.
    pub(crate) fn stale(&self) -> bool {
        self.host == this_host() && !alive(self.pid)
    }

    /// The lock's file, on a file backend.
    pub(crate) fn file(&self) -> Option<&str> {
        self.url.strip_prefix("file://")
    }

    /// What a person needs to know about it.
    pub(crate) fn describe(&self) -> String {
        let age = humantime::parse_rfc3339_weak(&self.at)
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .map(|d| {
                format!(
                    ", {} ago",
                    humantime::format_duration(std::time::Duration::from_secs(d.as_secs()))
                )
            })
            .unwrap_or_default();
        if self.host != this_host() {
            format!(
                "locked by {}@{} (pid {}) since {}{age}: another machine's lock, left alone; wait for it, or cancel it there",
                self.user, self.host, self.pid, self.at
            )
        } else if self.stale() {
            format!(
                "locked by pid {} of this host since {}{age}, which no longer runs: a stale lock ({})",
                self.pid, self.at, self.url
            )
        } else {
            format!(
                "locked by pid {} of this host since {}{age}, still running: wait for it to end",
                self.pid, self.at
            )
        }
    }
}

fn this_host() -> String {
    #[cfg(unix)]
    {
        nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
    #[cfg(not(unix))]
    String::new()
}

/// The process exists (a signal 0 reaches it, or is refused for want of permission).
fn alive(pid: i32) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        use nix::sys::signal::kill;
        use nix::unistd::Pid;
        pid > 0 && !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_its_locks() {
        let stderr = "error: the stack is currently locked by 2 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n  \
                      file:///w/.pulumi/locks/organization/iam/dev/a.json: created by ann@build-7 (pid 4242) at 2026-11-23T10:00:00Z\n  \
                      s3://b/.pulumi/locks/organization/iam/dev/b.json: created by bob@laptop (pid 17) at 2026-11-23T11:00:00Z\n";
        let locks = parse(stderr);
        assert_eq!(locks.len(), 2);
        assert_eq!(locks[0].host, "build-7");
        assert_eq!(locks[0].pid, 4242);
        assert_eq!(locks[0].file(), Some("/w/.pulumi/locks/organization/iam/dev/a.json"));
        assert_eq!(locks[1].file(), None);
        assert!(parse("error: something else").is_empty());
    }
}
