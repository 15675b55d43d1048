//! The record of a run, written once after it (`.runner/last-run.json`, `--summary FILE`;
//! its schema is `schemas/summary.schema.json`) and read by every view of a run that is over:
//! `runner report` and `--report` (the HTML report), `status --format gantt|gantt-svg` and
//! GitHub's job summary (the timeline), `runner logs`. A run builds it from its result in
//! memory; a later command reads the file back into the same type. Secret outputs are redacted.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::failure;
use super::status::Told;
use crate::exec::{Outcome, ResourceDiff, RunResult};
use crate::plan::{Operation, Plan, RunKind};
use crate::runstate::timestamp;

pub(crate) const SCHEMA_VERSION: u32 = 1;

/// A run, as its record holds it. Times are as the run state writes them
/// (`2026-11-22T14:06:03.881Z`), seconds rounded to milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
pub(crate) struct Summary {
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::version"))]
    pub(crate) schema_version: u32,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::run_kind"))]
    pub(crate) operation: RunKind,
    pub(crate) provider: String,
    pub(crate) stack: String,
    pub(crate) targets: Vec<String>,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::time"))]
    pub(crate) started: String,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::time"))]
    pub(crate) ended: String,
    #[cfg_attr(test, schemars(range(min = 0.0)))]
    pub(crate) duration_seconds: f64,
    /// `succeeded`, `failed` or `interrupted`.
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::result"))]
    pub(crate) result: Outcome,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::exit_code"))]
    pub(crate) exit_code: i32,
    /// The makespan predicted before the run from every project's estimate (learned from past
    /// successful runs, else declared) and the scheduler's rules; null when a project that ran
    /// had no estimate.
    #[cfg_attr(test, schemars(range(min = 0.0)))]
    pub(crate) predicted_makespan_s: Option<f64>,
    /// Every project of the plan, in run order.
    pub(crate) projects: Vec<ProjectSummary>,
}

/// One project of a run's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
pub(crate) struct ProjectSummary {
    pub(crate) name: String,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::told"))]
    pub(crate) status: Told,
    /// Why it was skipped, unchanged, not started or waits, in words (`report::reason`).
    pub(crate) reason: Option<String>,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::operation"))]
    pub(crate) operation: Operation,
    /// `null` when it did not run.
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::time_or_null"))]
    pub(crate) started: Option<String>,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::time_or_null"))]
    pub(crate) ended: Option<String>,
    #[cfg_attr(test, schemars(range(min = 0.0)))]
    pub(crate) duration_seconds: Option<f64>,
    /// The seconds it was expected to take: learned from its past successful runs of this
    /// operation, else its provider file's estimate; 0 when the run was to settle it without
    /// running; null when unknown.
    #[cfg_attr(test, schemars(range(min = 0.0)))]
    pub(crate) estimate_s: Option<f64>,
    /// Stack outputs after a successful up; secret values are `"[secret]"`.
    pub(crate) outputs: Option<Map<String, Value>>,
    /// Resource changes by kind (create, update, delete, same…) from Pulumi's engine events.
    #[serde(default)]
    pub(crate) changes: BTreeMap<String, u64>,
    /// Drift only, when the check found differences: each resource an up would change, with
    /// each input whose deployed value differs from the declared one (secrets `"[secret]"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) drift: Vec<ResourceDiff>,
    /// For a failure: the step that failed and the last lines of its output.
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::text_or_null"))]
    pub(crate) error: Option<failure::Kept>,
}

/// What was predicted before the run: each project's estimate (seconds, by name), the makespan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Predicted<'a> {
    pub(crate) estimates: &'a BTreeMap<String, f64>,
    pub(crate) makespan: Option<f64>,
}

/// What a run was, beside its result: its plan, its stack, when it started and ended, its exit
/// code, what was predicted, and whether it was a drift check.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'a> {
    pub(crate) plan: &'a Plan<'a>,
    pub(crate) stack: &'a str,
    pub(crate) started: SystemTime,
    pub(crate) ended: SystemTime,
    pub(crate) exit_code: i32,
    pub(crate) predicted: Predicted<'a>,
    pub(crate) kind: RunKind,
}

impl Summary {
    /// No project of it ran (every one unchanged, skipped or not started).
    pub(crate) fn ran_nothing(&self) -> bool {
        self.projects.iter().all(|p| p.started.is_none())
    }

    /// The record of a run that just ended, from its result in memory.
    pub(crate) fn of(run: &Run<'_>, result: &RunResult) -> Self {
        let plan = run.plan;
        let outcome = if result.interrupted {
            Outcome::Interrupted
        } else if result.failed() {
            Outcome::Failed
        } else {
            Outcome::Succeeded
        };
        Summary {
            schema_version: SCHEMA_VERSION,
            operation: run.kind,
            provider: plan.provider.name.clone(),
            stack: run.stack.to_string(),
            targets: plan.targets.iter().map(|&i| plan.name(i).to_string()).collect(),
            started: timestamp(run.started),
            ended: timestamp(run.ended),
            duration_seconds: secs(run.ended.duration_since(run.started).unwrap_or_default()),
            result: outcome,
            exit_code: run.exit_code,
            predicted_makespan_s: run.predicted.makespan.map(round),
            projects: result
                .results
                .iter()
                .map(|(name, f)| ProjectSummary {
                    name: name.clone(),
                    status: Told::of(f, run.kind),
                    reason: super::reason::of(&f.status),
                    operation: plan.operation,
                    started: f.started.map(timestamp),
                    ended: f.started.map(|_| timestamp(f.ended)),
                    duration_seconds: f.took().map(secs),
                    estimate_s: run.predicted.estimates.get(name.as_str()).copied().map(round),
                    outputs: f.outputs.as_ref().map(crate::exec::Outputs::kept),
                    changes: f.changes.clone(),
                    drift: if run.kind.is_drift() {
                        f.diffs.clone()
                    } else {
                        Vec::new()
                    },
                    error: f.error.as_ref().map(failure::Kept::of),
                })
                .collect(),
        }
    }

    /// A record written before, from its text.
    pub(crate) fn read(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }

    /// The record as its file holds it.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a summary serializes") + "\n"
    }

    /// The project named `name`, when the run's plan had it.
    pub(crate) fn project(&self, name: &str) -> Option<&ProjectSummary> {
        self.projects.iter().find(|p| p.name == name)
    }
}

/// The runs the views' tests draw.
#[cfg(test)]
pub(crate) fn schema() -> schemars::Schema {
    crate::schemas::document::<Summary>(
        "summary.schema.json",
        "runner run summary",
        "Written after every up, destroy, refresh and preview to last-run.json in the workspace (and to --summary FILE). Secret outputs read \"[secret]\". Fields may be added without changing schema_version.",
    )
}

#[cfg(test)]
impl Summary {
    /// A failed `up` of `projects` in the stack dev of the provider local, from 10:00:00 to
    /// `ended` on 2026-11-26.
    pub(crate) fn failed_up(ended: &str, duration_seconds: f64, projects: Vec<ProjectSummary>) -> Summary {
        Summary {
            schema_version: 1,
            operation: RunKind::Up,
            provider: "local".into(),
            stack: "dev".into(),
            targets: Vec::new(),
            started: "2026-11-26T10:00:00.000Z".into(),
            ended: ended.into(),
            duration_seconds,
            result: Outcome::Failed,
            exit_code: 1,
            predicted_makespan_s: None,
            projects,
        }
    }
}

#[cfg(test)]
impl ProjectSummary {
    /// The `up` of `name`, ended as `status`, with nothing else told.
    pub(crate) fn up(name: &str, status: Outcome) -> ProjectSummary {
        ProjectSummary {
            name: name.into(),
            status: Told::Ended(status),
            reason: None,
            operation: Operation::Up,
            started: None,
            ended: None,
            duration_seconds: None,
            estimate_s: None,
            outputs: None,
            changes: BTreeMap::new(),
            drift: Vec::new(),
            error: None,
        }
    }
}

fn secs(d: std::time::Duration) -> f64 {
    round(d.as_secs_f64())
}

/// Milliseconds are enough.
fn round(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use crate::exec::{
        Because, Failure, Finished, How, Outcome, Outputs, PropertyDiff, ResourceDiff, RunResult, Status,
    };
    use crate::plan::{Operation, Plan};

    /// `ms` after a fixed instant.
    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_787_339_880_000 + ms)
    }

    /// A run with every kind of end, at fixed times: its graph and its result.
    fn fixture() -> (crate::provider::Provider, RunResult) {
        let p = crate::provider::for_tests(
            [
                ("net", vec![]),
                ("db", vec!["net"]),
                ("app", vec!["db"]),
                ("cache", vec![]),
                ("web", vec!["cache"]),
                ("old", vec![]),
                ("slow", vec![]),
                ("late", vec![]),
            ]
            .into_iter()
            .map(|(n, ns): (&str, Vec<&str>)| (n.to_string(), ns.into_iter().map(str::to_string).collect())),
        );
        let ran = |status: Status, from: u64, to: u64| Finished {
            started: Some(at(from)),
            ended: at(to),
            ..Finished::settled(status, None)
        };
        let mut outputs = Outputs::default();
        outputs.values.insert("url".into(), "http://x/".into());
        outputs.values.insert("pw".into(), "hunter2".into());
        outputs.secret.insert("pw".into());
        let net = Finished {
            outputs: Some(outputs),
            changes: BTreeMap::from([("create".to_string(), 2), ("same".to_string(), 1)]),
            diffs: vec![ResourceDiff {
                resource: "pulumi:index:Stash::net".into(),
                op: crate::exec::ResourceStep::Update,
                properties: vec![PropertyDiff {
                    path: "input".into(),
                    deployed: Some("1".into()),
                    declared: None,
                }],
            }],
            ..ran(Status::Succeeded, 10, 1_234)
        };
        let db = Finished {
            error: Some(
                Failure::ended(
                    "pulumi up",
                    How::Exited(1),
                    vec!["error: boom".into(), "  at line 3".into()],
                )
                .noted(["a note".to_string()]),
            ),
            ..ran(Status::Failed, 1_300, 2_000)
        };
        let results = vec![
            ("net".to_string(), net),
            ("db".to_string(), db),
            (
                "app".to_string(),
                Finished::settled(
                    Status::Skipped(Because::Upstream {
                        name: "db".into(),
                        outcome: Outcome::Failed,
                    }),
                    None,
                ),
            ),
            (
                "cache".to_string(),
                Finished::settled(Status::Unchanged(Because::NothingChanged), None),
            ),
            (
                "web".to_string(),
                Finished::settled(
                    Status::Waits(Because::NotDeployed {
                        waits_for: vec!["cache".into()],
                    }),
                    None,
                ),
            ),
            (
                "old".to_string(),
                Finished::settled(Status::NotStarted(Because::StoppedAfter { failed: "db".into() }), None),
            ),
            (
                "slow".to_string(),
                Finished {
                    error: Some(Failure::timed_out(
                        Duration::from_secs(2),
                        Some(Failure::said("pulumi up was interrupted")),
                    )),
                    ..ran(Status::TimedOut, 5, 2_005)
                },
            ),
            ("late".to_string(), ran(Status::Interrupted, 100, 900)),
        ];
        (
            p,
            RunResult {
                results,
                interrupted: false,
            },
        )
    }

    /// The fixture's record, as an up or as a drift check.
    fn record(drift: bool) -> super::Summary {
        let (p, result) = fixture();
        let estimates = BTreeMap::from([("net".to_string(), 1.2345), ("db".to_string(), 3.0)]);
        let plan = Plan::new(&p, if drift { Operation::Preview } else { Operation::Up }, &[]).unwrap();
        let run = super::Run {
            plan: &plan,
            stack: "dev",
            started: at(0),
            ended: at(2_345),
            exit_code: 1,
            predicted: super::Predicted {
                estimates: &estimates,
                makespan: Some(4.567_89),
            },
            kind: crate::plan::RunKind::of(plan.operation, drift),
        };
        super::Summary::of(&run, &result)
    }

    /// The record of a drift check as the summary before the one record type wrote it (the
    /// schema's every kind of end), byte for byte.
    const DRIFT: &str = include_str!("summary_drift.json");

    #[test]
    fn a_run_is_recorded_as_it_always_was_and_reads_back_the_same() {
        assert_eq!(record(true).to_json(), DRIFT);
        for summary in [record(true), record(false)] {
            let text = summary.to_json();
            let read = super::Summary::read(&text).unwrap();
            assert_eq!(read, summary);
            assert_eq!(read.to_json(), text);
        }
        let up = record(false);
        assert!(
            !up.to_json().contains("\"drift\""),
            "no drift key outside a drift check"
        );
        let db = up.project("db").and_then(|p| p.error.as_ref()).unwrap();
        assert_eq!(db.headline, "pulumi up exited with code 1: error: boom");
    }
}
