//! The runner's own handling of SIGINT (Ctrl-C), SIGTERM and SIGHUP, from the first question to the end
//! of the run. While projects run, each signal is one message for the scheduler (it stops new
//! work at the first and kills at the second), so tests inject signals through a channel without
//! sending any. Before that — at a question, or between the last question and the first project
//! — a signal ends the runner at once with exit 130, after the action set for that moment
//! (restoring the terminal, saying what was left undone).
//!
//! While `runner pulumi` waits for its `pulumi`, each signal is relayed as it came (which one
//! it was) to that child's process group instead: the runner ends with the child.
//!
//! One listener for the whole process: once a signal handler is installed it stays installed,
//! so a second, later listener would only see signals after it started and Ctrl-C would be lost
//! in between.

use std::sync::{Mutex, OnceLock};

use tokio::sync::mpsc::UnboundedSender;

/// What runs before the runner exits on a signal nobody forwards.
type Action = Box<dyn Fn() + Send>;

pub struct Hub {
    forward: Mutex<Option<UnboundedSender<()>>>,
    relay: Mutex<Option<std::sync::mpsc::Sender<Received>>>,
    actions: Mutex<Vec<Action>>,
    /// What is undone before the runner exits on a signal, whatever the moment's action.
    undo: Mutex<Vec<Action>>,
    /// The runner is ending on a signal: a second path to the end (the terminal's read sees the
    /// Ctrl-C too) waits for it instead of saying it again.
    ending: std::sync::atomic::AtomicBool,
}

/// Which signal the runner received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP (the terminal or SSH session went away).
    HangUp,
}

/// The process's listener, started on first use.
pub fn hub() -> &'static Hub {
    static HUB: OnceLock<Hub> = OnceLock::new();
    static STARTED: OnceLock<()> = OnceLock::new();
    let hub = HUB.get_or_init(|| Hub {
        forward: Mutex::new(None),
        relay: Mutex::new(None),
        actions: Mutex::new(Vec::new()),
        undo: Mutex::new(Vec::new()),
        ending: std::sync::atomic::AtomicBool::new(false),
    });
    STARTED.get_or_init(|| listen(hub));
    hub
}

impl Hub {
    /// While the guard lives, every signal becomes one message on `tx`.
    pub fn forward_to(&'static self, tx: UnboundedSender<()>) -> Forwarding {
        *self.forward.lock().expect("not poisoned") = Some(tx);
        Forwarding(self)
    }

    /// While the guard lives, every signal is sent on `tx` as received (before any forwarding
    /// to a run): for a child that must get the very signal the runner got.
    pub fn relay_to(&'static self, tx: std::sync::mpsc::Sender<Received>) -> Relaying {
        *self.relay.lock().expect("not poisoned") = Some(tx);
        Relaying(self)
    }

    /// While the guard lives, `action` runs before the runner exits on a signal (the latest
    /// action set is the one that runs).
    pub fn on_interrupt(&'static self, action: impl Fn() + Send + 'static) -> OnInterrupt {
        self.actions.lock().expect("not poisoned").push(Box::new(action));
        OnInterrupt(self)
    }

    fn signalled(&self, received: Received) {
        if let Some(tx) = self.relay.lock().expect("not poisoned").as_ref()
            && tx.send(received).is_ok()
        {
            return;
        }
        if let Some(tx) = self.forward.lock().expect("not poisoned").as_ref()
            && tx.send(()).is_ok()
        {
            return;
        }
        self.end();
    }

    /// While the guard lives, `undo` runs before the runner exits on a signal, after the
    /// moment's action (a `--switch-stack` put back when nothing ran).
    pub fn undo_on_interrupt(&'static self, undo: impl Fn() + Send + 'static) -> Undo {
        self.undo.lock().expect("not poisoned").push(Box::new(undo));
        Undo(self)
    }

    /// Ends the runner as a signal does before any project started (exit 130): the moment's
    /// action, then every undo; said once, however many paths get here.
    pub fn end(&self) -> ! {
        if self.ending.swap(true, std::sync::atomic::Ordering::SeqCst) {
            // The other path exits the process.
            loop {
                std::thread::park();
            }
        }
        if let Some(action) = self.actions.lock().expect("not poisoned").last() {
            action();
        }
        for undo in self.undo.lock().expect("not poisoned").iter().rev() {
            undo();
        }
        std::process::exit(crate::error::exit::INTERRUPTED);
    }
}

/// The undo set by [`Hub::undo_on_interrupt`] is removed when this is dropped.
pub struct Undo(&'static Hub);

impl std::fmt::Debug for Undo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Undo")
    }
}

impl Drop for Undo {
    fn drop(&mut self) {
        self.0.undo.lock().expect("not poisoned").pop();
    }
}

/// Signals go back to ending the runner when this is dropped.
pub struct Forwarding(&'static Hub);

impl Drop for Forwarding {
    fn drop(&mut self) {
        *self.0.forward.lock().expect("not poisoned") = None;
    }
}

/// Signals are no longer relayed when this is dropped (the channel closes with it).
pub struct Relaying(&'static Hub);

impl Drop for Relaying {
    fn drop(&mut self) {
        *self.0.relay.lock().expect("not poisoned") = None;
    }
}

/// The action set by [`Hub::on_interrupt`] is removed when this is dropped.
pub struct OnInterrupt(&'static Hub);

impl Drop for OnInterrupt {
    fn drop(&mut self) {
        self.0.actions.lock().expect("not poisoned").pop();
    }
}

/// A thread of its own waits for the signals, so they are seen whatever the rest is doing
/// (reading a terminal, waiting for a child).
fn listen(hub: &'static Hub) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return;
    };
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                ) else {
                    let _ = ready_tx.send(());
                    return;
                };
                let _ = ready_tx.send(());
                loop {
                    let received = tokio::select! {
                        _ = int.recv() => Received::Interrupt,
                        _ = term.recv() => Received::Terminate,
                        // An SSH session dropping: stop cleanly as for Ctrl-C.
                        _ = hup.recv() => Received::HangUp,
                    };
                    hub.signalled(received);
                }
            }
            #[cfg(not(unix))]
            {
                let _ = ready_tx.send(());
                while tokio::signal::ctrl_c().await.is_ok() {
                    hub.signalled(Received::Interrupt);
                }
            }
        });
    });
    // The handlers are in place before anything that a signal must interrupt begins.
    let _ = ready_rx.recv();
}
