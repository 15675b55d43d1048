//! The machine-readable summary of a run (`.runner/last-run.json`, `--summary FILE`); its
//! schema is `schemas/summary.schema.json`. Secret outputs are redacted.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::exec::RunResult;
use crate::plan::Plan;
use crate::runstate::timestamp;

pub(crate) const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Summary<'a> {
    schema_version: u32,
    operation: &'a str,
    provider: &'a str,
    stack: &'a str,
    targets: Vec<&'a str>,
    started: String,
    ended: String,
    duration_seconds: f64,
    /// `succeeded`, `failed` or `interrupted`.
    result: &'a str,
    exit_code: i32,
    /// The makespan predicted before the run (seconds), when every project that ran had an
    /// estimate.
    predicted_makespan_s: Option<f64>,
    projects: Vec<ProjectSummary<'a>>,
}

#[derive(Serialize)]
struct ProjectSummary<'a> {
    name: &'a str,
    status: &'a str,
    reason: Option<&'a str>,
    operation: &'a str,
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
        "interrupted"
    } else if result.failed() {
        "failed"
    } else {
        "succeeded"
    };
    let doc = Summary {
        schema_version: SCHEMA_VERSION,
        operation: if drift { "drift" } else { plan.operation.as_str() },
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
                status: super::status_word(f, drift),
                reason: f.status.reason(),
                operation: plan.operation.as_str(),
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
