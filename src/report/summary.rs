//! The machine-readable summary of a run (`.runner/last-run.json`, `--summary FILE`); its
//! schema is `schemas/summary.schema.json`. Secret outputs are redacted.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::status::Told;
use crate::exec::{Outcome, RunResult};
use crate::plan::{Operation, Plan};
use crate::runstate::timestamp;

pub(crate) const SCHEMA_VERSION: u32 = 1;

/// What a run was: an operation, or a drift check (which runs previews).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Up,
    Destroy,
    Refresh,
    Preview,
    Drift,
}

impl Kind {
    pub(crate) fn of(operation: Operation, drift: bool) -> Self {
        match operation {
            _ if drift => Kind::Drift,
            Operation::Up => Kind::Up,
            Operation::Destroy => Kind::Destroy,
            Operation::Refresh => Kind::Refresh,
            Operation::Preview => Kind::Preview,
        }
    }

    /// The operation its projects ran.
    pub(crate) fn operation(self) -> Operation {
        match self {
            Kind::Up => Operation::Up,
            Kind::Destroy => Operation::Destroy,
            Kind::Refresh => Operation::Refresh,
            Kind::Preview | Kind::Drift => Operation::Preview,
        }
    }

    /// As a person names it: `drift`, or the operation.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::Drift => "drift",
            other => other.operation().as_str(),
        }
    }
}

#[derive(Serialize)]
struct Summary<'a> {
    schema_version: u32,
    operation: Kind,
    provider: &'a str,
    stack: &'a str,
    targets: Vec<&'a str>,
    started: String,
    ended: String,
    duration_seconds: f64,
    /// `succeeded`, `failed` or `interrupted`.
    result: Outcome,
    exit_code: i32,
    /// The makespan predicted before the run (seconds), when every project that ran had an
    /// estimate.
    predicted_makespan_s: Option<f64>,
    projects: Vec<ProjectSummary<'a>>,
}

#[derive(Serialize)]
struct ProjectSummary<'a> {
    name: &'a str,
    status: Told,
    reason: Option<String>,
    operation: Operation,
    started: Option<String>,
    ended: Option<String>,
    duration_seconds: Option<f64>,
    /// The estimate it ran with (learned from past runs, else declared; 0 when the run was to
    /// settle it without running), beside `duration_seconds`.
    estimate_s: Option<f64>,
    outputs: Option<Map<String, Value>>,
    changes: &'a BTreeMap<String, u64>,
    /// What a drift check found resource by resource (left out when nothing).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    drift: &'a [crate::exec::ResourceDiff],
    error: Option<String>,
}

/// What was predicted before the run: each project's estimate (seconds, by name), the makespan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Predicted<'a> {
    pub(crate) estimates: &'a BTreeMap<String, f64>,
    pub(crate) makespan: Option<f64>,
}

pub(crate) fn render(
    plan: &Plan<'_>,
    stack: &str,
    result: &RunResult,
    started: SystemTime,
    exit_code: i32,
    predicted: Predicted<'_>,
    drift: bool,
) -> String {
    let ended = SystemTime::now();
    let outcome = if result.interrupted {
        Outcome::Interrupted
    } else if result.failed() {
        Outcome::Failed
    } else {
        Outcome::Succeeded
    };
    let doc = Summary {
        schema_version: SCHEMA_VERSION,
        operation: Kind::of(plan.operation, drift),
        provider: &plan.provider.name,
        stack,
        targets: plan.targets.iter().map(|&i| plan.name(i)).collect(),
        started: timestamp(started),
        ended: timestamp(ended),
        duration_seconds: secs(ended.duration_since(started).unwrap_or_default()),
        result: outcome,
        exit_code,
        predicted_makespan_s: predicted.makespan.map(round),
        projects: result
            .results
            .iter()
            .map(|(name, f)| ProjectSummary {
                name,
                status: Told::of(f, drift),
                reason: super::reason::of(&f.status),
                operation: plan.operation,
                started: f.started.map(timestamp),
                ended: f.started.map(|_| timestamp(f.ended)),
                duration_seconds: f.started.and_then(|s| f.ended.duration_since(s).ok()).map(secs),
                estimate_s: predicted.estimates.get(name.as_str()).copied().map(round),
                outputs: f.outputs.as_ref().map(crate::exec::Outputs::kept),
                changes: &f.changes,
                drift: if drift { &f.diffs } else { &[] },
                error: f.error.as_ref().map(super::failure::text),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&doc).expect("summary serializes") + "\n"
}

fn secs(d: std::time::Duration) -> f64 {
    round(d.as_secs_f64())
}

/// Milliseconds are enough.
fn round(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
