//! A child run as the terminal's own (`runner pulumi`: its questions, its Ctrl-C, its
//! Ctrl-Z), unlike the children of a run, whose output the runner reads: the terminal's
//! foreground given to the child's process group while it runs, and the runner's signals relayed
//! to it.

/// Runs `cmd` as the terminal's own (`runner pulumi`: its questions, its Ctrl-C) and returns its
/// exit code, as a shell reports it (128 + the signal that killed it: 130 for SIGINT). The child
/// is in a process group of its own, which gets every SIGINT and SIGTERM sent to the runner, as
/// it came, and a SIGHUP as SIGINT (it ignores the hang-up itself: [`ignoring_hangup`]). When
/// the runner is the terminal's foreground job the child's group is made the foreground while
/// it runs, so the terminal's Ctrl-C reaches the child alone (once) and it can read the
/// terminal; Ctrl-Z stops it and then the runner, as a shell's job stops, and `fg` gives the
/// terminal back to it.
#[cfg(unix)]
pub(crate) fn attached(cmd: &std::process::Command) -> std::io::Result<i32> {
    use nix::errno::Errno;
    use nix::sys::signal::{Signal as S, killpg, raise};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::Pid;
    use std::sync::atomic::{AtomicBool, Ordering};

    let mut cmd = ignoring_hangup(cmd);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let relaying = crate::exec::signals::hub().relay_to(tx);
    let terminal = Terminal::ours();
    let child = cmd.spawn()?;
    let group = Pid::from_raw(i32::try_from(child.id()).map_err(std::io::Error::other)?);
    let ended = std::sync::Arc::new(AtomicBool::new(false));
    let forwarder = {
        let ended = ended.clone();
        std::thread::spawn(move || {
            use crate::exec::signals::Received;
            for received in rx {
                if ended.load(Ordering::SeqCst) {
                    break;
                }
                // A hang-up (an SSH session dropping) is a Ctrl-C to pulumi: Go's default for
                // SIGHUP kills it at once, mid-update, its stack lock left.
                let signal = match received {
                    Received::Interrupt | Received::HangUp => S::SIGINT,
                    Received::Terminate => S::SIGTERM,
                };
                let _ = killpg(group, signal);
            }
        })
    };
    if let Some(t) = &terminal {
        t.give(group);
    }
    let flags = terminal.as_ref().map(|_| WaitPidFlag::WUNTRACED);
    let code = loop {
        match waitpid(group, flags) {
            Ok(WaitStatus::Exited(_, code)) => break Ok(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => break Ok(128 + signal as i32),
            Ok(WaitStatus::Stopped(_, signal)) => {
                let Some(t) = &terminal else { continue };
                // A read of the terminal before it was given (the child was quick) only waited
                // for it. Ctrl-Z, or a read while the runner's job is not the terminal's: the
                // runner stops too, the terminal back with it, until its shell continues it.
                if !(matches!(signal, S::SIGTTIN | S::SIGTTOU) && t.in_front(group)) {
                    t.take(group);
                    let _ = raise(S::SIGSTOP);
                }
                t.give(group);
                let _ = killpg(group, S::SIGCONT);
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => break Err(std::io::Error::from(e)),
        }
    };
    ended.store(true, Ordering::SeqCst);
    if let Some(t) = &terminal {
        t.take(group);
    }
    drop(relaying);
    let _ = forwarder.join();
    code
}

/// `cmd` started with SIGHUP ignored, through `sh` (`trap '' HUP`, then `exec`): a terminal that
/// hangs up sends SIGHUP to its foreground group, the child's, and a Go program started with
/// SIGHUP ignored keeps ignoring it; the runner relays the hang-up as SIGINT instead.
#[cfg(unix)]
fn ignoring_hangup(cmd: &std::process::Command) -> std::process::Command {
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg("trap '' HUP; exec \"$0\" \"$@\"")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    same_place_and_env(&mut sh, cmd);
    sh
}

/// Gives `to` the working directory and the environment changes of `from`: a command run in
/// `from`'s stead runs where, and with what, `from` would have.
fn same_place_and_env(to: &mut std::process::Command, from: &std::process::Command) {
    if let Some(dir) = from.get_current_dir() {
        to.current_dir(dir);
    }
    for (k, v) in from.get_envs() {
        match v {
            Some(v) => to.env(k, v),
            None => to.env_remove(k),
        };
    }
}

#[cfg(not(unix))]
pub(crate) fn attached(cmd: &std::process::Command) -> std::io::Result<i32> {
    let (tx, _held) = std::sync::mpsc::channel();
    let _swallowed = crate::exec::signals::hub().relay_to(tx);
    let mut copy = std::process::Command::new(cmd.get_program());
    copy.args(cmd.get_args());
    same_place_and_env(&mut copy, cmd);
    Ok(copy.status()?.code().unwrap_or(1))
}

/// The terminal the runner was started from, while the runner's process group is its
/// foreground job: the one a child run [`attached`] gets for as long as it runs.
#[cfg(unix)]
struct Terminal {
    /// A copy of the descriptor it was found on.
    fd: std::os::fd::OwnedFd,
    ours: nix::unistd::Pid,
}

#[cfg(unix)]
impl Terminal {
    /// Standard input, output or error, the first that is a terminal whose foreground job is
    /// the runner's process group.
    fn ours() -> Option<Self> {
        use std::os::fd::AsFd as _;
        let ours = nix::unistd::getpgrp();
        [
            std::io::stdin().as_fd(),
            std::io::stdout().as_fd(),
            std::io::stderr().as_fd(),
        ]
        .into_iter()
        .find(std::io::IsTerminal::is_terminal)
        .and_then(|fd| fd.try_clone_to_owned().ok())
        .map(|fd| Terminal { fd, ours })
        .filter(|t| t.front() == Some(ours))
    }

    /// The terminal's foreground process group.
    fn front(&self) -> Option<nix::unistd::Pid> {
        nix::unistd::tcgetpgrp(&self.fd).ok()
    }

    /// The runner's job is the terminal's foreground: its own group or the child's `group`.
    fn in_front(&self, group: nix::unistd::Pid) -> bool {
        self.front().is_some_and(|front| front == self.ours || front == group)
    }

    /// Makes the child's `group` the terminal's foreground, when the runner's job is.
    fn give(&self, group: nix::unistd::Pid) {
        if self.in_front(group) {
            self.set(group);
        }
    }

    /// Makes the runner's group the terminal's foreground again, when the child's `group` is
    /// (never taking it from another job).
    fn take(&self, group: nix::unistd::Pid) {
        if self.front() == Some(group) {
            self.set(self.ours);
        }
    }

    /// `tcsetpgrp` with SIGTTOU held back on this thread: from a group that is not in the
    /// foreground it would stop the runner instead.
    fn set(&self, group: nix::unistd::Pid) {
        use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
        let mut ttou = SigSet::empty();
        ttou.add(Signal::SIGTTOU);
        let mut before = SigSet::empty();
        let blocked = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&ttou), Some(&mut before)).is_ok();
        let _ = nix::unistd::tcsetpgrp(&self.fd, group);
        if blocked {
            let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&before), None);
        }
    }
}
