//! The run state under `.runner/<stack>/state.json`: per project, how its last operation ended,
//! when, and the digests that let `up` skip what has not changed. Written atomically after
//! every change, so an interrupted run leaves a consistent file to resume from. Holds no secret
//! values: outputs are redacted and digests are keyed.

mod digests;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::exec::{Event, Outputs, Resume, Status};
use crate::fs::{NewFile, write_atomic};
use crate::plan::{Operation, Plan};
use crate::provider::Provider;
use crate::workspace::RunDir;

pub(crate) use digests::{Digests, Outside};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct RunState {
    pub schema_version: u32,
    pub stack: String,
    pub projects: BTreeMap<String, ProjectState>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct ProjectState {
    /// `running`, `succeeded`, `failed`, `skipped`, `unchanged`, `not started`, `waits`.
    pub status: String,
    pub operation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// The stack holds a deployment made by the runner (`up` succeeded and no destroy since).
    #[serde(default)]
    pub deployed: bool,
    /// Inputs digest of the last successful `up`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_digest: Option<String>,
    /// Outputs digest of the last successful `up`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs_digest: Option<String>,
    /// Outputs of the last successful `up`, secrets redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Map<String, Value>>,
}

impl RunState {
    /// The state of `run_dir`'s stack; a fresh one when none was written yet.
    pub(crate) fn load(run_dir: &RunDir) -> Result<Self, String> {
        let path = run_dir.state();
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a run state the runner can read ({e}); delete it to start afresh",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RunState {
                schema_version: 1,
                stack: run_dir.stack().to_string(),
                projects: BTreeMap::new(),
            }),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    pub(crate) fn save(&self, run_dir: &RunDir) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).expect("state serializes") + "\n";
        write_atomic(&run_dir.state(), text.as_bytes(), NewFile::Default)
    }

    /// The projects whose stacks hold a deployment made by the runner.
    pub(crate) fn deployed(&self) -> BTreeSet<String> {
        self.projects
            .iter()
            .filter(|(_, p)| p.deployed)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// What the last successful `up` of each project left, for skipping unchanged projects
    /// (`fresh`: nothing is skipped, but the digests are still taken for the next run).
    pub(crate) fn resume(&self, provider: &Provider, digests: Digests, fresh: bool) -> Resume {
        let previous = self
            .projects
            .iter()
            .filter(|(_, p)| !fresh && p.deployed && p.operation == "up" && p.status != "failed")
            .filter_map(|(n, p)| Some((n.clone(), (p.inputs_digest.clone()?, p.outputs_digest.clone()?))))
            .collect();
        let paths: BTreeMap<String, String> = provider
            .projects
            .iter()
            .map(|p| (p.name.clone(), p.path.clone()))
            .collect();
        let digests = Arc::new(digests);
        let for_outputs = digests.clone();
        Resume {
            previous,
            inputs: Box::new(move |name, upstream| digests.inputs(&paths[name], upstream)),
            outputs: Box::new(move |o| for_outputs.outputs(o)),
        }
    }

    /// Whether an `up` of `plan` would find every project unchanged since its last successful
    /// `up` (the scheduler's own test, made before anything runs).
    pub(crate) fn up_to_date(&self, plan: &Plan<'_>, digests: &Digests) -> bool {
        let mut outputs: BTreeMap<&str, &str> = BTreeMap::new();
        for &i in &plan.order {
            let name = plan.name(i);
            let Some(p) = self.projects.get(name) else { return false };
            let (Some(inputs), Some(out)) = (&p.inputs_digest, &p.outputs_digest) else {
                return false;
            };
            if !p.deployed || p.operation != "up" || p.status == "failed" {
                return false;
            }
            let upstream = plan
                .waits_for(i)
                .iter()
                .map(|n| {
                    let up = plan.name(n.node);
                    (up.to_string(), outputs.get(up).copied().unwrap_or_default().to_string())
                })
                .collect();
            if &digests.inputs(&plan.project(i).path, &upstream) != inputs {
                return false;
            }
            outputs.insert(name, out);
        }
        true
    }

    /// Keeps the state in step with an event; `true` when it changed in a way worth saving at
    /// once (a project started or ended).
    pub(crate) fn apply(&mut self, ev: &Event) -> bool {
        match ev {
            Event::Started { project, operation, at } => {
                let p = self.projects.entry(project.clone()).or_default();
                p.status = "running".into();
                p.operation = operation.as_str().into();
                p.started = Some(timestamp(*at));
                p.ended = None;
                true
            }
            Event::Finished {
                project,
                operation,
                result,
            } => {
                let p = self.projects.entry(project.clone()).or_default();
                let ran = result.started.is_some();
                match (&result.status, operation) {
                    // Settled without running: keep what the last real run recorded.
                    (
                        Status::Unchanged { .. }
                        | Status::Skipped { .. }
                        | Status::NotStarted { .. }
                        | Status::Waits { .. },
                        _,
                    ) if !ran => {
                        if p.status == "running" {
                            p.status = result.status.name().into();
                        }
                        return true;
                    }
                    (Status::Succeeded, Operation::Up) => {
                        p.deployed = true;
                        p.inputs_digest.clone_from(&result.inputs_digest);
                        p.outputs_digest.clone_from(&result.outputs_digest);
                        p.outputs = result.outputs.as_ref().map(Outputs::redacted);
                    }
                    (Status::Succeeded | Status::Unchanged { .. }, Operation::Destroy) => {
                        p.deployed = false;
                        p.inputs_digest = None;
                        p.outputs_digest = None;
                        p.outputs = None;
                    }
                    (Status::Failed, Operation::Up) => {
                        // A failed up may have changed some resources: it must run again.
                        p.inputs_digest = None;
                    }
                    _ => {}
                }
                p.status = result.status.name().into();
                p.operation = operation.as_str().into();
                p.started = result.started.map(timestamp);
                p.ended = Some(timestamp(result.ended));
                true
            }
            Event::Line { .. } | Event::Note { .. } => false,
        }
    }
}

/// `2026-11-22T14:06:03.881Z`, for the state and the summary.
pub(crate) fn timestamp(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_787_339_880_123);
        assert_eq!(timestamp(t), "2026-08-21T19:18:00.123Z");
    }
}
