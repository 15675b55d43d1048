//! Execution: runs a plan's projects through an [`Engine`] as soon as what they wait for has
//! finished, at most `parallel` at once, and reports everything as [`Event`]s. It knows the
//! plan and the engine trait, nothing about terminals or files; signals reach it as messages
//! ([`signals`]).

mod because;
pub mod event;
mod failure;
pub mod inputs;
mod outcome;
pub mod outputs;
mod scheduler;
pub mod signals;
mod stopping;

use std::collections::BTreeMap;
use std::future::Future;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use because::{Because, Runs};
pub use event::{
    Event, Finished, Level, PropertyDiff, ResourceDiff, ResourceStep, Status, Stream, is_change, would_change,
};
pub use failure::{Failure, How, SourceLine};
pub use inputs::{ALL_FILES, Change, InputChange, InputDigest, InputKind, Inputs};
pub use outcome::Outcome;
pub use outputs::Outputs;
pub use scheduler::{InputsDigest, Options, Policy, Resume, RunResult, execute};

use crate::plan::Operation;
use crate::provider::Project;

/// One project to run.
#[derive(Debug, Clone)]
pub struct Job {
    pub project: Project,
    pub operation: Operation,
    /// Outputs of the projects it needs that ran in this run, by name (for hooks).
    pub upstream: BTreeMap<String, Outputs>,
}

/// How a job talks back and how it is stopped.
#[derive(Debug, Clone)]
pub struct Control {
    pub events: UnboundedSender<Event>,
    /// First Ctrl-C (or a timeout): ask the running process to stop (SIGINT to its group).
    pub interrupt: CancellationToken,
    /// Still running after the grace period, or a second Ctrl-C: SIGTERM.
    pub terminate: CancellationToken,
    /// Still running after another grace period, or a third Ctrl-C: SIGKILL.
    pub kill: CancellationToken,
}

/// How a job ended, as the engine saw it.
#[derive(Debug, Clone)]
pub struct JobEnd {
    pub status: Status,
    pub outputs: Option<Outputs>,
    pub changes: BTreeMap<String, u64>,
    /// A preview's changes resource by resource.
    pub diffs: Vec<ResourceDiff>,
    pub error: Option<Failure>,
}

impl JobEnd {
    pub fn failed(error: impl Into<Failure>) -> Self {
        JobEnd {
            error: Some(error.into()),
            ..JobEnd::ended(Status::Failed)
        }
    }

    /// Ended with `status`, nothing else to tell.
    pub fn ended(status: Status) -> Self {
        JobEnd {
            status,
            outputs: None,
            changes: BTreeMap::new(),
            diffs: Vec::new(),
            error: None,
        }
    }
}

/// Runs one project's operation: the `pulumi` CLI in production, a fake in scheduler tests.
pub trait Engine: Send + Sync + 'static {
    fn run(&self, job: Job, control: Control) -> impl Future<Output = JobEnd> + Send;
}
