//! The run's signals as messages for the scheduler: each SIGINT (Ctrl-C) or SIGTERM is one
//! message, so the scheduler stops new work at the first and kills at the second. The source is
//! a channel, so tests inject signals without sending any.

use tokio::sync::mpsc::UnboundedSender;

/// Forwards every SIGINT and SIGTERM to `tx` until the receiver is gone.
pub async fn forward(tx: UnboundedSender<()>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) else {
            return;
        };
        loop {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            if tx.send(()).is_err() {
                return;
            }
        }
    }
    #[cfg(not(unix))]
    loop {
        if tokio::signal::ctrl_c().await.is_err() || tx.send(()).is_err() {
            return;
        }
    }
}
