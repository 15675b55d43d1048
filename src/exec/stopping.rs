//! How running projects are stopped, written once: SIGINT first (Pulumi cancels cleanly), then,
//! after the grace period — or at the next signal — SIGTERM, then after the grace period again —
//! or at the one after — SIGKILL, as nextest does. Ctrl-C (SIGTERM, SIGHUP) stops every running
//! project this way; a project's timeout stops that project alone the same way.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The three steps of stopping, each a token the running process's task waits on.
#[derive(Debug, Clone)]
pub(crate) struct Escalation {
    interrupt: CancellationToken,
    terminate: CancellationToken,
    kill: CancellationToken,
    grace: Duration,
    /// When the next, harder step is due (none before the first step, none after the last).
    next: Option<Instant>,
}

/// Which step a call to [`Escalation::step`] took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Interrupt,
    Terminate,
    Kill,
}

impl Escalation {
    /// Over the given tokens (a run's own, or one job's children of them).
    pub(crate) fn new(
        (interrupt, terminate, kill): (CancellationToken, CancellationToken, CancellationToken),
        grace: Duration,
    ) -> Self {
        Escalation {
            interrupt,
            terminate,
            kill,
            grace,
            next: None,
        }
    }

    /// Takes the next step (the first whose token is not yet cancelled, however it was), and
    /// sets when the one after it is due.
    pub(crate) fn step(&mut self) -> Stop {
        let step = if !self.interrupt.is_cancelled() {
            self.interrupt.cancel();
            Stop::Interrupt
        } else if !self.terminate.is_cancelled() {
            self.terminate.cancel();
            Stop::Terminate
        } else {
            self.kill.cancel();
            Stop::Kill
        };
        self.next = match step {
            Stop::Kill => None,
            _ => crate::duration::after(Instant::now(), self.grace),
        };
        step
    }

    /// When the next step is due, if one is.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.next
    }

    pub(crate) fn interrupt(&self) -> &CancellationToken {
        &self.interrupt
    }

    pub(crate) fn terminate(&self) -> &CancellationToken {
        &self.terminate
    }

    pub(crate) fn kill(&self) -> &CancellationToken {
        &self.kill
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> (CancellationToken, CancellationToken, CancellationToken) {
        (
            CancellationToken::new(),
            CancellationToken::new(),
            CancellationToken::new(),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn each_step_is_harder_and_the_next_is_due_after_the_grace() {
        let mut e = Escalation::new(tokens(), Duration::from_secs(10));
        assert_eq!(e.next(), None, "nothing is due before the first step");
        assert_eq!(e.step(), Stop::Interrupt);
        assert!(e.interrupt().is_cancelled() && !e.terminate().is_cancelled());
        assert_eq!(e.next(), Some(Instant::now() + Duration::from_secs(10)));
        assert_eq!(e.step(), Stop::Terminate);
        assert_eq!(e.step(), Stop::Kill);
        assert!(e.kill().is_cancelled());
        assert_eq!(e.next(), None, "nothing after SIGKILL");
    }

    #[tokio::test(start_paused = true)]
    async fn a_step_taken_elsewhere_is_not_taken_again() {
        let (i, t, k) = tokens();
        let mut job = Escalation::new(
            (i.child_token(), t.child_token(), k.child_token()),
            Duration::from_secs(1),
        );
        // The run was interrupted: the job's own first step is SIGTERM.
        i.cancel();
        assert_eq!(job.step(), Stop::Terminate);
        // A grace past any clock is never due (no panic).
        let mut forever = Escalation::new(tokens(), Duration::MAX);
        forever.step();
        assert_eq!(forever.next(), None);
    }
}
