//! Why a project did not succeed, as data: made once where it happens (the engine, the
//! executor's timeout), worded only by `report::failure` for every view (live, plain, summary,
//! `JUnit`, CI annotations, the HTML report). Nothing parses a failure's text again.

use std::time::Duration;

/// A project's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What failed: `pulumi up`, `hook scripts/smoke-test.sh`, `pruning the kubeconfig`; `None`
    /// for a failure told in the runner's own words alone.
    pub step: Option<String>,
    /// How its process ended, when one did.
    pub how: Option<How>,
    /// The cause, line by line: the engine's error diagnostics, else the end of what the step
    /// printed, else the runner's words.
    pub cause: Vec<String>,
    /// What the runner adds, a line each: the locks that refused the stack and whether they are
    /// stale, files that are no lock, a passphrase that does not open the stack.
    pub notes: Vec<String>,
    /// Where in the project's program the engine placed the error, when it did.
    pub at: Option<SourceLine>,
}

/// A line of a file in a project's directory (`Pulumi.yaml` line 17), as the engine named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// Relative to the project's directory.
    pub file: String,
    pub line: u32,
}

/// How a failed step's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    Exited(i32),
    /// Killed by the named signal (`SIGKILL`), or by one with no name (its number).
    Killed(String),
    /// Cut short by the run's interrupt.
    Interrupted,
    /// Stopped at its timeout; what the stop left of it (its own failure), if anything.
    TimedOut {
        after: Duration,
        left: Option<Box<Failure>>,
    },
}

impl Failure {
    /// A failure told in the runner's words: `what` (its first line the headline).
    pub fn said(what: impl Into<String>) -> Self {
        Failure {
            step: None,
            how: None,
            cause: vec![what.into()],
            notes: Vec::new(),
            at: None,
        }
    }

    /// `step` failed because of `cause` (one line or several).
    pub fn of(step: impl Into<String>, cause: impl Into<String>) -> Self {
        Failure {
            step: Some(step.into()),
            how: None,
            cause: vec![cause.into()],
            notes: Vec::new(),
            at: None,
        }
    }

    /// `step`'s process ended `how`, with these lines as the cause.
    pub fn ended(step: impl Into<String>, how: How, cause: Vec<String>) -> Self {
        Failure {
            step: Some(step.into()),
            how: Some(how),
            cause,
            notes: Vec::new(),
            at: None,
        }
    }

    /// Stopped at its timeout `after`, `left` what the stop left of it.
    pub fn timed_out(after: Duration, left: Option<Failure>) -> Self {
        Failure {
            step: None,
            how: Some(How::TimedOut {
                after,
                left: left.map(Box::new),
            }),
            cause: Vec::new(),
            notes: Vec::new(),
            at: None,
        }
    }

    /// With `notes` added.
    #[must_use]
    pub fn noted(mut self, notes: impl IntoIterator<Item = String>) -> Self {
        self.notes.extend(notes);
        self
    }

    /// Whether a cause line says `text` (the engine's message a caller acts on).
    pub fn cause_says(&self, says: impl Fn(&str) -> bool) -> bool {
        self.cause.iter().any(|l| says(l))
    }
}

impl From<String> for Failure {
    fn from(what: String) -> Self {
        Failure::said(what)
    }
}

impl From<&str> for Failure {
    fn from(what: &str) -> Self {
        Failure::said(what)
    }
}
