//! What execution reports: one stream of events that every reporter (terminal, plain lines,
//! JSON summary, run-state file) consumes. Nothing in execution prints.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::exec::because::{Because, Runs};
use crate::exec::outcome::Outcome;
use crate::exec::outputs::Outputs;
use crate::plan::Operation;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Shown with `-d` only: what the runner does and why.
    Debug,
    Info,
    Warning,
}

/// How a project ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Succeeded,
    Failed,
    /// Ran past its timeout and was stopped.
    TimedOut,
    /// Cut short by Ctrl-C (or SIGTERM, SIGHUP) while it ran: not failed, to be run again.
    Interrupted,
    /// Not run because something it waits for failed or was skipped.
    Skipped(Because),
    /// Not run because nothing it depends on changed since it last succeeded, or nothing was
    /// there to act on (refresh or destroy of a stack never deployed).
    Unchanged(Because),
    /// Not started: the run stopped (a failure without `--keep-going`, or an interrupt).
    NotStarted(Because),
    /// Preview only: something it reads from is not deployed yet, so there is nothing to preview.
    Waits(Because),
}

impl Status {
    /// How it ended, without the reason.
    pub fn outcome(&self) -> Outcome {
        match self {
            Status::Succeeded => Outcome::Succeeded,
            Status::Failed => Outcome::Failed,
            Status::TimedOut => Outcome::TimedOut,
            Status::Interrupted => Outcome::Interrupted,
            Status::Skipped(_) => Outcome::Skipped,
            Status::Unchanged(_) => Outcome::Unchanged,
            Status::NotStarted(_) => Outcome::NotStarted,
            Status::Waits(_) => Outcome::Waits,
        }
    }

    /// Why it ended without running.
    pub fn because(&self) -> Option<&Because> {
        match self {
            Status::Skipped(because)
            | Status::Unchanged(because)
            | Status::NotStarted(because)
            | Status::Waits(because) => Some(because),
            Status::Succeeded | Status::Failed | Status::TimedOut | Status::Interrupted => None,
        }
    }

    /// It ran and did not succeed.
    pub fn is_failure(&self) -> bool {
        self.outcome().is_failure()
    }

    /// Lets what waits for it go ahead.
    pub fn unblocks(&self) -> bool {
        matches!(self, Status::Succeeded | Status::Unchanged(_))
    }
}

/// Whether the engine's counts hold a change: anything but keeping or reading a resource, as
/// Pulumi's own `--expect-no-changes` counts (`ResourceChanges.HasChanges`).
pub fn would_change(c: &BTreeMap<String, u64>) -> bool {
    c.iter().any(|(op, n)| is_change(op) && *n > 0)
}

/// One kind of step counts as a change (see [`would_change`]).
pub fn is_change(op: &str) -> bool {
    !matches!(op, "same" | "read" | "discard" | "read-replacement" | "refresh")
}

/// A resource a preview would change, and how its inputs differ (from the engine's
/// `resourcePreEvent`s). Values are compact JSON, secrets `[secret]` as the engine blinds them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
pub struct ResourceDiff {
    /// `type::name`: `aws:s3/bucket:Bucket::logs`.
    pub resource: String,
    /// The engine's step.
    pub op: ResourceStep,
    /// The inputs that differ, leaf by leaf (none for a `create` or a `delete`).
    pub properties: Vec<PropertyDiff>,
}

/// A step of the engine that changes a resource (Pulumi's `op`), as the runner tells it; the
/// engine's other steps (`same`, `read`, `refresh`…) change nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ResourceStep {
    Create,
    Update,
    Replace,
    Delete,
}

impl ResourceStep {
    /// The step Pulumi's engine names `op`, when it is one that changes a resource.
    pub fn of(op: &str) -> Option<ResourceStep> {
        match op {
            "create" => Some(ResourceStep::Create),
            "update" => Some(ResourceStep::Update),
            "replace" => Some(ResourceStep::Replace),
            "delete" => Some(ResourceStep::Delete),
            _ => None,
        }
    }
}

/// One input that differs: its path, and its value in the stack's state (refreshed from the
/// cloud with `--refresh`) and in the program with the stack configuration. `None`: absent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
pub struct PropertyDiff {
    /// `tags.team`, `ports[0]`.
    pub path: String,
    pub deployed: Option<String>,
    pub declared: Option<String>,
}

/// The end of one project.
#[derive(Debug, Clone)]
pub struct Finished {
    pub status: Status,
    pub started: Option<SystemTime>,
    pub ended: SystemTime,
    pub outputs: Option<Outputs>,
    /// Resource changes from the engine's summary (`create`, `update`, `same`, …).
    pub changes: BTreeMap<String, u64>,
    /// A preview's changes resource by resource (empty for other operations).
    pub diffs: Vec<ResourceDiff>,
    /// What went wrong, for a failure (worded by `report::failure`).
    pub error: Option<crate::exec::Failure>,
    /// The inputs it ran with, and the digest of the outputs it produced (for resume).
    pub inputs: Option<crate::exec::Inputs>,
    pub outputs_digest: Option<String>,
}

impl Finished {
    /// Settled without running (skipped, unchanged, not started…), now.
    pub fn settled(status: Status, inputs: Option<crate::exec::Inputs>) -> Self {
        Finished {
            status,
            started: None,
            ended: SystemTime::now(),
            outputs: None,
            changes: BTreeMap::new(),
            diffs: Vec::new(),
            error: None,
            inputs,
            outputs_digest: None,
        }
    }

    /// How long it ran: none when it never started (or the clock went back).
    pub fn took(&self) -> Option<Duration> {
        self.ended.duration_since(self.started?).ok()
    }
}

#[derive(Debug, Clone)]
pub enum Event {
    Started {
        project: String,
        operation: Operation,
        at: SystemTime,
    },
    Line {
        project: String,
        stream: Stream,
        text: String,
    },
    Note {
        project: Option<String>,
        level: Level,
        message: String,
    },
    /// The scheduler runs a project an `up` skips when unchanged, and says why (a debug note).
    Runs { project: String, why: Runs },
    /// The run was interrupted (Ctrl-C, SIGTERM, SIGHUP): every running project gets SIGINT,
    /// and after `grace` SIGTERM, then SIGKILL, or sooner at each further signal.
    Stopping { grace: std::time::Duration },
    /// A project has run `minutes` and still does (said every few minutes).
    StillRunning { project: String, minutes: u64 },
    /// A project ran past its timeout (`after`): it is being stopped as an interrupt stops one.
    TimedOut {
        project: String,
        after: std::time::Duration,
    },
    Finished {
        project: String,
        operation: Operation,
        result: Box<Finished>,
    },
}
