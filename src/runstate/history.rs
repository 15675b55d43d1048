//! What past runs teach (`RunDir::durations`): per project and operation, how long its last
//! successful runs took (the last [`KEPT`]), and how many resources its stack held after its
//! last operation. The learned durations weigh `show-plan`'s critical path, the live view's ETA
//! and the summary's prediction; `status` shows the resources. Holds no secret.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::exec::{RunResult, Status};
use crate::fs::{NewFile, write_atomic};
use crate::plan::Operation;
use crate::workspace::RunDir;

/// Durations kept per project and operation: the estimate is their median.
const KEPT: usize = 5;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct History {
    #[serde(default)]
    schema_version: u32,
    /// The provider whose runs taught it: another provider's projects take other times (an
    /// EKS cluster is not a local one), so a plan for another provider learns nothing here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provider: Option<String>,
    #[serde(default)]
    projects: BTreeMap<String, Learned>,
    /// Another stack of the workspace whose runs of the same provider stand in for this one's
    /// until it has its own: a second stack's projects take about what the first's took (read
    /// only; never recorded into, never saved).
    #[serde(skip)]
    fallback: Option<(String, Box<History>)>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
struct Learned {
    /// Seconds of the last successful runs, oldest first, by operation.
    #[serde(default)]
    durations: BTreeMap<String, Vec<f64>>,
    /// Resources in the stack after the last successful operation that changes or reads them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resources: Option<u64>,
}

/// Operations whose steps leave a resource in the stack (a read resource is kept too).
const KEEPS: [&str; 8] = [
    "create",
    "update",
    "same",
    "replace",
    "read",
    "import",
    "import-replacement",
    "read-replacement",
];

impl History {
    /// What past runs of `run_dir`'s stack left; nothing learned when none, or when it is not
    /// JSON the runner wrote (it is only a guide, and the next run rewrites it). What is no
    /// file to read (a pipe, a device, a directory, a file larger than any run writes) is
    /// refused, naming it and the fix: the next run would write through it.
    pub(crate) fn load(run_dir: &RunDir, show: &dyn Fn(&std::path::Path) -> String) -> Result<Self, super::StateError> {
        let path = run_dir.durations();
        let bytes = match crate::fs::read_bytes(&path, crate::fs::READ_LIMIT) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(History::default()),
            Err(source) => {
                return Err(super::StateError::UnreadableHistory {
                    shown: show(&path),
                    source,
                });
            }
        };
        let mut history: History = serde_json::from_slice(&bytes).unwrap_or_default();
        // What no run took (negative, not a number, past any timeout) is no guide: left out, so
        // every sum of estimates stays a number of seconds.
        let longest = crate::duration::MAX.as_secs_f64();
        for learned in history.projects.values_mut() {
            for kept in learned.durations.values_mut() {
                kept.retain(|s| (0.0..=longest).contains(s));
            }
        }
        Ok(history)
    }

    pub(crate) fn save(&self, run_dir: &RunDir) -> std::io::Result<()> {
        let doc = History {
            schema_version: 1,
            provider: self.provider.clone(),
            projects: self.projects.clone(),
            fallback: None,
        };
        let text = serde_json::to_string_pretty(&doc).expect("history serializes") + "\n";
        write_atomic(&run_dir.durations(), text.as_bytes(), NewFile::Default)
    }

    /// Learns from a finished run of `provider`'s projects: the duration of every project that
    /// succeeded, and what its stack holds now. Another provider's lessons are forgotten.
    pub(crate) fn record(&mut self, provider: &str, operation: Operation, result: &RunResult) {
        if self.provider.as_deref().is_some_and(|p| p != provider) {
            self.projects.clear();
        }
        self.provider = Some(provider.to_string());
        for (name, f) in &result.results {
            if f.status != Status::Succeeded {
                continue;
            }
            let Some(took) = f.took() else {
                continue;
            };
            let learned = self.projects.entry(name.clone()).or_default();
            let kept = learned.durations.entry(operation.as_str().to_string()).or_default();
            kept.push((took.as_secs_f64() * 1000.0).round() / 1000.0);
            if kept.len() > KEPT {
                kept.drain(..kept.len() - KEPT);
            }
            match operation {
                Operation::Destroy => learned.resources = Some(0),
                Operation::Up | Operation::Refresh => {
                    learned.resources = Some(
                        f.changes
                            .iter()
                            .filter(|(op, _)| KEEPS.contains(&op.as_str()))
                            .map(|(_, n)| n)
                            .sum(),
                    );
                }
                Operation::Preview => {}
            }
        }
    }

    /// Takes `other`'s runs (of the stack `stack`) for the projects this history has learned
    /// nothing of, when it is of the same provider: what a new stack's prediction starts from.
    pub(crate) fn falling_back_to(mut self, stack: &str, other: History, provider: &str) -> Self {
        if other.provider.as_deref().is_none_or(|p| p == provider) && !other.projects.is_empty() {
            self.fallback = Some((stack.to_string(), Box::new(other)));
        }
        self
    }

    /// The learned duration of `project`'s `operation` in seconds (the median of the last
    /// runs), and the other stack it was learned on when not this one.
    pub(crate) fn estimate_from(&self, project: &str, operation: Operation) -> Option<(f64, Option<&str>)> {
        if let Some(secs) = self.own_estimate(project, operation) {
            return Some((secs, None));
        }
        let (stack, other) = self.fallback.as_ref()?;
        Some((other.own_estimate(project, operation)?, Some(stack.as_str())))
    }

    /// The learned duration of `project`'s `operation` in seconds ([`Self::estimate_from`]).
    pub(crate) fn estimate(&self, project: &str, operation: Operation) -> Option<f64> {
        self.estimate_from(project, operation).map(|(secs, _)| secs)
    }

    fn own_estimate(&self, project: &str, operation: Operation) -> Option<f64> {
        let mut kept = self.projects.get(project)?.durations.get(operation.as_str())?.clone();
        if kept.is_empty() {
            return None;
        }
        kept.sort_by(f64::total_cmp);
        let mid = kept.len() / 2;
        Some(if kept.len() % 2 == 1 {
            kept[mid]
        } else {
            f64::midpoint(kept[mid - 1], kept[mid])
        })
    }

    /// Every project's learned duration of `operation` under `provider`: nothing when another
    /// provider's runs taught it (a history from before the provider was kept is taken as is).
    pub(crate) fn estimates(&self, provider: &str, operation: Operation) -> BTreeMap<String, f64> {
        if self.provider.as_deref().is_some_and(|p| p != provider) {
            return BTreeMap::new();
        }
        let borrowed = self.fallback.iter().flat_map(|(_, other)| other.projects.keys());
        self.projects
            .keys()
            .chain(borrowed)
            .filter_map(|p| Some((p.clone(), self.estimate(p, operation)?)))
            .collect()
    }

    /// Resources in `project`'s stack after its last successful operation, when known.
    pub(crate) fn resources(&self, project: &str) -> Option<u64> {
        self.projects.get(project)?.resources
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::exec::Finished;

    fn finished(status: Status, secs: u64, changes: &[(&str, u64)]) -> Finished {
        let started = SystemTime::UNIX_EPOCH;
        Finished {
            started: Some(started),
            ended: started + Duration::from_secs(secs),
            changes: changes.iter().map(|(k, n)| ((*k).to_string(), *n)).collect(),
            ..Finished::settled(status, None)
        }
    }

    #[test]
    fn the_estimate_is_the_median_of_the_last_successful_runs() {
        let mut h = History::default();
        for secs in [10, 100, 12, 11, 13, 14, 90] {
            let result = RunResult {
                results: vec![
                    (
                        "eks".into(),
                        finished(Status::Succeeded, secs, &[("create", 2), ("read", 3)]),
                    ),
                    ("vpc".into(), finished(Status::Failed, 1, &[])),
                ],
                interrupted: false,
            };
            h.record("aws", Operation::Up, &result);
        }
        // The last five: 12, 11, 13, 14, 90.
        assert_eq!(h.estimate("eks", Operation::Up), Some(13.0));
        assert_eq!(h.estimate("eks", Operation::Destroy), None);
        assert_eq!(h.estimate("vpc", Operation::Up), None, "failures teach nothing");
        assert_eq!(h.resources("eks"), Some(5));
        let result = RunResult {
            results: vec![(
                "eks".into(),
                finished(Status::Succeeded, 4, &[("delete", 2), ("discard", 3)]),
            )],
            interrupted: false,
        };
        h.record("aws", Operation::Destroy, &result);
        assert_eq!(h.resources("eks"), Some(0));
        assert_eq!(
            h.estimates("aws", Operation::Destroy),
            BTreeMap::from([("eks".to_string(), 4.0)])
        );
        // Another provider's plan learns nothing from these runs; its own run starts afresh.
        assert!(h.estimates("do", Operation::Destroy).is_empty());
        h.record(
            "do",
            Operation::Up,
            &RunResult {
                results: vec![],
                interrupted: false,
            },
        );
        assert_eq!(h.estimate("eks", Operation::Up), None);
    }
}
