//! What an `up` would run now, and why, told from the run state and the digests before anything
//! runs (nothing is written): `status` shows it, and the prediction of a run leaves out what it
//! would skip.

use std::collections::BTreeMap;
use std::path::Path;

use super::digests::changed_input;
use super::{Digests, ProjectState, Recorded, RunState, journal};
use crate::exec::{InputChange, Outcome};
use crate::plan::{Operation, Plan};
use crate::provider::Provider;
use crate::workspace::RunDir;

/// Whether an `up` would run a project, and why (or why not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    pub(crate) runs: bool,
    pub(crate) why: Why,
}

/// Why an `up` would run a project, or skip it (worded by `report::reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    /// The runner never ran it with this stack.
    NeverRun,
    /// A run is doing this operation on it now.
    Running(Operation),
    /// This command (`runner pulumi P -- destroy`) changed its stack outside a run since.
    ChangedBy(String),
    /// Its last operation was cut short (its runner ended before it did).
    CutShort(Operation),
    /// Its last operation failed, timed out or was interrupted.
    Ended(Operation, Outcome),
    /// The runner deployed nothing there (or destroyed it since).
    NotDeployed,
    /// It waits for this project, which runs (its outputs may change).
    After(String),
    /// Skipped: unchanged since its last up.
    Unchanged,
    /// Its inputs changed since its last up: which one, when the digests tell.
    InputsChanged(Option<InputChange>),
    /// Its last refresh took changes made outside Pulumi into the state.
    Refreshed,
    /// A drift check found its stack differs from its program and configuration: because this
    /// input changed since its last up, when the digests tell.
    Drifted(Option<InputChange>),
    /// Its last up left no digest of its inputs.
    NoRecord,
}

impl Pending {
    fn runs(why: Why) -> Self {
        Pending { runs: true, why }
    }
}

impl RunState {
    /// The state as it is now, written nothing: `state.json` with the changes a run still going
    /// (or one that crashed) has only journaled so far (lines about `provider`'s projects
    /// only), and a warning for each journal line left out.
    pub(crate) fn current(
        run_dir: &RunDir,
        provider: &Provider,
        show: &dyn Fn(&Path) -> String,
    ) -> Result<(Self, Vec<String>), super::StateError> {
        let mut state = RunState::load(run_dir, show)?;
        let path = run_dir.journal();
        let shown = show(&path);
        let known = super::known(provider);
        let (records, warnings) = journal::read(&path, &shown, &|p| known.contains(p))
            .map_err(|source| super::StateError::UnreadableJournal { shown, source })?;
        for r in &records {
            state.apply(r);
        }
        Ok((state, warnings))
    }

    /// For each project of `plan` (an `up`), in run order, what an `up` would do with it:
    /// run it (never deployed by the runner, its last `up` failed, its inputs changed since,
    /// something it waits for runs first) or skip it (unchanged since its last successful `up`).
    /// `digests`: as an `up` would take them now (`None`: none kept yet, so everything runs).
    pub(crate) fn pending(&self, plan: &Plan<'_>, digests: Option<&Digests>) -> Vec<(String, Pending)> {
        let mut outputs: BTreeMap<&str, &str> = BTreeMap::new();
        let mut running: BTreeMap<&str, bool> = BTreeMap::new();
        let mut out = Vec::new();
        for &i in &plan.order {
            let name = plan.name(i);
            let upstream: Vec<&str> = plan.waits_for(i).iter().map(|n| plan.name(n.node)).collect();
            let first_running = upstream.iter().find(|u| running.get(*u).copied().unwrap_or(false));
            let p = self.projects.get(name);
            let pending = match p {
                None => Pending::runs(Why::NeverRun),
                Some(p) if p.status == Recorded::Running => Pending::runs(Why::Running(p.operation)),
                Some(ProjectState {
                    inputs: None,
                    changed_by: Some(by),
                    ..
                }) => Pending::runs(Why::ChangedBy(by.clone())),
                Some(p) if p.status == Recorded::CutShort && p.operation != Operation::Preview => {
                    Pending::runs(Why::CutShort(p.operation))
                }
                Some(ProjectState {
                    status: Recorded::Ended(outcome @ (Outcome::Failed | Outcome::TimedOut | Outcome::Interrupted)),
                    operation,
                    ..
                }) if *operation != Operation::Preview => Pending::runs(Why::Ended(*operation, *outcome)),
                Some(p) if !p.deployed => Pending::runs(Why::NotDeployed),
                Some(p) => {
                    // Every need counts, as in the run: those outside the plan (`--only`,
                    // `--exclude`) with the outputs their last up recorded.
                    let upstream = || {
                        plan.need_digests(
                            i,
                            |j| outputs.get(plan.name(j)).copied(),
                            |u| self.projects.get(u).and_then(|p| p.last_up()).map(|(_, out)| out),
                        )
                    };
                    match (p.last_up(), digests, first_running) {
                        (_, _, Some(u)) => Pending::runs(Why::After((*u).to_string())),
                        (Some((inputs, out)), Some(d), None) => {
                            let now = d.inputs(&plan.project(i).path, &upstream());
                            if now == *inputs {
                                outputs.insert(name, out);
                                Pending {
                                    runs: false,
                                    why: Why::Unchanged,
                                }
                            } else {
                                Pending::runs(Why::InputsChanged(changed_input(inputs, &now)))
                            }
                        }
                        _ if p.operation == Operation::Refresh => Pending::runs(Why::Refreshed),
                        _ if p.operation == Operation::Preview
                            || p.checked.as_ref().is_some_and(super::Checked::drifted) =>
                        {
                            // What changed here since the last up, when that is why it differs.
                            let changed = p.inputs.as_ref().zip(digests).and_then(|(inputs, d)| {
                                changed_input(inputs, &d.inputs(&plan.project(i).path, &upstream()))
                            });
                            Pending::runs(Why::Drifted(changed))
                        }
                        _ => Pending::runs(Why::NoRecord),
                    }
                }
            };
            running.insert(name, pending.runs);
            out.push((name.to_string(), pending));
        }
        out
    }
}
