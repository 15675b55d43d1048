//! Reasons as data: why a project ended without running, and why the scheduler runs one an `up`
//! could have skipped. Made where they are decided (the scheduler, the engine) and worded by
//! `report::reason` alone, the same in every view.

use super::outcome::Outcome;

/// Why a project ended without running (skipped, unchanged, not started, waits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Because {
    /// Something it needs ended without succeeding.
    Upstream { name: String, outcome: Outcome },
    /// The run was interrupted before it started.
    Interrupted,
    /// The run stopped after `failed` failed (no `--keep-going`).
    StoppedAfter { failed: String },
    /// The run stopped before it, for no reason recorded.
    Stopped,
    /// `up`: nothing it depends on changed since its last successful up.
    NothingChanged,
    /// Preview: what it needs is not deployed yet, so there is nothing to preview.
    NotDeployed { waits_for: Vec<String> },
    /// Refresh or destroy of a stack that does not exist: nothing to act on.
    NoDeployment,
    /// Drift check: the backend has no such stack, so nothing is deployed to check.
    NoStack { stack: String },
    /// Drift check: its stack holds no resources (made to store secrets, say, never deployed).
    NoResources { stack: String },
}

/// Why the scheduler runs a project that an `up` skips when nothing it depends on changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runs {
    /// No successful up of it is recorded (or the run is `--fresh`).
    NoRecord,
    /// Its inputs changed since its last successful up; `ran_before`: what it waits for that ran
    /// in this run (their outputs may be what changed).
    InputsChanged { ran_before: Vec<String> },
}
