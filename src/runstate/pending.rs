//! What an `up` would run now, and why, told from the run state and the digests before anything
//! runs (nothing is written): `status` shows it, and the prediction of a run leaves out what it
//! would skip.

use std::collections::BTreeMap;
use std::path::Path;

use super::digests::changed_input;
use super::{Digests, ProjectState, Recorded, RunState, journal};
use crate::exec::Outcome;
use crate::plan::{Operation, Plan};
use crate::provider::Provider;
use crate::workspace::RunDir;

/// Whether an `up` would run a project, and why (or why not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    pub(crate) runs: bool,
    pub(crate) why: String,
}

impl Pending {
    fn runs(why: impl Into<String>) -> Self {
        Pending {
            runs: true,
            why: why.into(),
        }
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
        let mut state = RunState::load(run_dir)?;
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
                None => Pending::runs("never run"),
                Some(p) if p.status == Recorded::Running => {
                    Pending::runs(format!("running now ({})", p.operation.as_str()))
                }
                Some(p) if p.inputs_digest.is_none() && p.changed_by.is_some() => Pending::runs(format!(
                    "`{}` changed its stack since its last up",
                    p.changed_by.as_deref().unwrap_or_default()
                )),
                Some(p) if p.status == Recorded::CutShort && p.operation != Operation::Preview => {
                    Pending::runs(format!(
                        "its last {} was cut short (its runner ended before it did)",
                        p.operation.as_str()
                    ))
                }
                Some(ProjectState {
                    status: Recorded::Ended(outcome @ (Outcome::Failed | Outcome::TimedOut | Outcome::Interrupted)),
                    operation,
                    ..
                }) if *operation != Operation::Preview => {
                    let how = if *outcome == Outcome::Interrupted {
                        "was interrupted".to_string()
                    } else {
                        outcome.to_string()
                    };
                    Pending::runs(format!("its last {} {how}", operation.as_str()))
                }
                Some(p) if !p.deployed => Pending::runs("not deployed"),
                Some(p) => match (p.last_up(), digests, first_running) {
                    (_, _, Some(u)) => Pending::runs(format!("after {u}, which runs (its outputs may change)")),
                    (Some((inputs, out)), Some(d), None) => {
                        // Every need counts, as in the run: those outside the plan (`--only`,
                        // `--exclude`) with the outputs their last up recorded.
                        let upstream = plan
                            .provider
                            .graph
                            .needs(i)
                            .iter()
                            .map(|n| {
                                let u = plan.name(n.node);
                                let digest = if plan.subset.contains(&n.node) {
                                    outputs.get(u).copied()
                                } else {
                                    self.projects.get(u).and_then(|p| p.last_up()).map(|(_, out)| out)
                                };
                                (u.to_string(), digest.unwrap_or_default().to_string())
                            })
                            .collect();
                        let now = d.inputs(&plan.project(i).path, &upstream);
                        if now == inputs {
                            outputs.insert(name, out);
                            Pending {
                                runs: false,
                                why: "unchanged since its last up".into(),
                            }
                        } else {
                            Pending::runs(changed_input(inputs, &now).map_or_else(
                                || "its inputs changed since its last up (program, stack configuration, environment file or a file it reads)".to_string(),
                                |what| format!("{what} since its last up"),
                            ))
                        }
                    }
                    _ if p.operation == Operation::Refresh => {
                        Pending::runs("its last refresh took changes made outside Pulumi into the state")
                    }
                    _ if p.operation == Operation::Preview
                        || p.checked.as_ref().is_some_and(super::Checked::drifted) =>
                    {
                        Pending::runs(
                            "a drift check found its stack differs from its program and configuration (its up \
                             refreshes first)",
                        )
                    }
                    _ => Pending::runs("no record of its inputs"),
                },
            };
            running.insert(name, pending.runs);
            out.push((name.to_string(), pending));
        }
        out
    }
}
