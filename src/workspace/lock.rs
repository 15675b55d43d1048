//! One runner at a time per workspace: Pulumi locks each stack, this keeps two runners from
//! interleaving whole plans and the run state. The lock file names its holder (`runner pid N
//! on HOST for stack S`, and when the process started), so a reader that takes no lock
//! (`status`) can tell a run that is going from one whose runner was killed.

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use super::{RunDir, Workspace};
use crate::error::RunnerError;

/// Held while the run lasts; the operating system releases it when the process ends, however it
/// ends. Taken again by the same process (`--switch-stack` takes it before the environment
/// file is changed, the run after that), it is the same lock.
#[derive(Debug)]
pub(crate) struct WorkspaceLock {
    _file: Arc<File>,
}

/// The lock this process holds, while any guard of it lives.
static HELD: Mutex<Option<(PathBuf, Weak<File>)>> = Mutex::new(None);

impl WorkspaceLock {
    pub(crate) fn take(ws: &Workspace, run_dir: &RunDir) -> Result<Self, RunnerError> {
        let path = run_dir.lock();
        let io = |source| RunnerError::Io {
            context: format!("cannot open {}", ws.show(&path)),
            source,
        };
        let mut held = HELD.lock().expect("not poisoned");
        if let Some((p, file)) = held.as_ref()
            && *p == path
            && let Some(file) = file.upgrade()
        {
            return Ok(WorkspaceLock { _file: file });
        }
        // Only `.runner/` before the lock: a refused run leaves no stack directory behind.
        run_dir.create_base().map_err(io)?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .read(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(RunnerError::Busy {
                    message: format!(
                        "another runner is already running in this workspace (lock: {})",
                        ws.show(&path)
                    ),
                    help: "wait for it to finish; the lock is released when it ends".into(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        run_dir.create().map_err(io)?;
        let holder = Holder::this(run_dir.stack());
        file.set_len(0)
            .and_then(|()| file.write_all(holder.line().as_bytes()))
            .map_err(io)?;
        let file = Arc::new(file);
        *held = Some((path, Arc::downgrade(&file)));
        Ok(WorkspaceLock { _file: file })
    }
}

/// Who holds (or last held) the workspace lock, as its file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    pub(crate) pid: i32,
    pub(crate) host: String,
    pub(crate) stack: String,
    /// When the process started (clock ticks since boot), to tell it from a later process that
    /// was given the same pid.
    pub(crate) started: Option<u64>,
}

/// Whether a run of a stack is going, as far as the workspace lock tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Going {
    /// A runner of this host runs it now.
    Yes,
    /// No runner runs it: its holder ended (killed, if the run state says a run is going), or
    /// runs another stack, or no runner ever took the lock.
    No,
    /// Cannot be told: a runner of another host, or a lock written by an older runner.
    Unknown,
}

impl Holder {
    /// This process, running `stack`.
    fn this(stack: &str) -> Self {
        let pid = i32::try_from(std::process::id()).unwrap_or(0);
        Holder {
            pid,
            host: this_host(),
            stack: stack.to_string(),
            started: start_ticks(pid),
        }
    }

    /// `runner pid 4242 on build-7 for stack dev started 123456`
    fn line(&self) -> String {
        let started = self.started.map(|t| format!(" started {t}")).unwrap_or_default();
        format!(
            "runner pid {} on {} for stack {}{started}\n",
            self.pid, self.host, self.stack
        )
    }

    fn parse(text: &str) -> Option<Self> {
        let rest = text.trim().strip_prefix("runner pid ")?;
        let (pid, rest) = rest.split_once(" on ")?;
        let (host, rest) = rest.split_once(" for stack ")?;
        let (stack, started) = match rest.split_once(" started ") {
            Some((stack, t)) => (stack, Some(t.parse().ok()?)),
            None => (rest, None),
        };
        Some(Holder {
            pid: pid.parse().ok()?,
            host: host.to_string(),
            stack: stack.to_string(),
            started,
        })
    }

    /// It runs now: on this host, alive, and the very process that wrote the lock.
    fn alive(&self) -> bool {
        alive(self.pid) && (self.started.is_none() || start_ticks(self.pid) == self.started)
    }
}

/// Whether a run of `run_dir`'s stack is going, from the workspace lock's holder; the lock
/// itself is not taken, so a run starting now is never refused for it.
pub(crate) fn going(run_dir: &RunDir) -> Going {
    let path = run_dir.lock();
    let text = match crate::fs::read_bytes(&path, 4096) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Going::No,
        Err(_) => return Going::Unknown,
    };
    match Holder::parse(&text) {
        None => Going::Unknown,
        Some(h) if h.host != this_host() => Going::Unknown,
        Some(h) if h.alive() && h.stack == run_dir.stack() => Going::Yes,
        Some(_) => Going::No,
    }
}

/// This machine's host name, as locks name it.
pub(crate) fn this_host() -> String {
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
pub(crate) fn alive(pid: i32) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        use nix::sys::signal::kill;
        use nix::unistd::Pid;
        pid > 0 && !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH)) && !zombie(pid)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// `pid (comm) S …` of Linux's `/proc/<pid>/stat`: the fields after the last `)` (comm may hold
/// one).
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// A process that ended and that its parent has not reaped yet (state `Z`): it runs no more,
/// whatever a signal 0 says. A `pulumi` whose runner was killed with it stays such until
/// something reaps it, which in a container may be never.
fn zombie(pid: i32) -> bool {
    stat_fields(pid).is_some_and(|f| f.first().is_some_and(|s| s == "Z"))
}

/// When process `pid` started, in clock ticks since boot (`starttime`, field 22 of its stat).
fn start_ticks(pid: i32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_line_reads_back_and_names_this_process() {
        let me = Holder::this("dev");
        assert_eq!(Holder::parse(&me.line()), Some(me.clone()));
        assert!(me.alive());
        assert!(me.started.is_some());
        let older = Holder::parse("runner pid 17 on laptop for stack qa").unwrap();
        assert_eq!((older.pid, older.stack.as_str(), older.started), (17, "qa", None));
        // The same pid given to a later process is not the runner that wrote the lock.
        let reused = Holder {
            started: me.started.map(|t| t + 1),
            ..me
        };
        assert!(!reused.alive());
        assert_eq!(Holder::parse("kubectl"), None);
        assert_eq!(Holder::parse(""), None);
    }
}
