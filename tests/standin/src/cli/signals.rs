//! The signals the stand-in has seen (set by the handler the library installs first) and what
//! waits on them: an operation's work (`operations`) and a program's blocking read (`program`),
//! which the engine cancels at once, as the real CLI does.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::Duration;

use crate::fail::{Failure, cancelled, fail};

/// Signals seen since start (SIGINT / SIGTERM), set by the handler in `main`.
pub static SIGNALS: AtomicUsize = AtomicUsize::new(0);
/// The last of them.
pub static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How the CLI names a signal in its messages: `^C` for SIGINT.
pub fn signal_name(signal: i32) -> &'static str {
    if signal == signal_hook::consts::SIGTERM {
        "SIGTERM"
    } else {
        "^C"
    }
}

/// Exit code of a [`Failure`] a program's evaluation returns when a signal cancelled it.
pub const CANCELLED_WHILE_EVALUATING: i32 = 8;

/// `read` done on a thread of its own while the program waits for it, unless a signal comes
/// first: the engine cancels an update at once, without waiting for its language host, which
/// may be blocked reading (a FIFO nobody writes to), `pkg/engine/deployment.go`. Then a failure
/// with [`CANCELLED_WHILE_EVALUATING`], and the thread is left to the process's end.
pub fn unless_cancelled<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> Result<T, Failure> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read());
    });
    loop {
        if SIGNALS.load(Ordering::SeqCst) > 0 {
            return Err(cancelled("program"));
        }
        match rx.recv_timeout(Duration::from_millis(10)) {
            Ok(v) => return Ok(v),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(fail("the program's read ended")),
        }
    }
}
