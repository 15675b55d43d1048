//! How long a run will take, before it starts: each project's estimate (learned from its past
//! successful runs, else the `estimate` its provider file declares), nothing for a project the
//! run will settle without running (unchanged on `up`, waiting in a preview, never deployed on
//! `destroy` and `refresh`), and the makespan of the scheduler's rules played over them.

use std::collections::{BTreeMap, BTreeSet};

use crate::plan::{Operation, Plan};
use crate::runstate::History;

#[derive(Debug, Clone, Default)]
pub(crate) struct Prediction {
    /// Seconds each project of the plan should take, by name, when it has an estimate (0 for
    /// one the run will settle without running).
    pub(crate) estimates: BTreeMap<String, f64>,
    /// The predicted makespan in seconds, when every project that runs has an estimate.
    pub(crate) makespan: Option<f64>,
    /// How many of the estimates were learned from past runs.
    pub(crate) learned: usize,
    /// The other stack they were learned on, when this one has no runs of its own.
    pub(crate) learned_on: Option<String>,
    /// The makespan when the projects that run only if their upstream's outputs change do not
    /// run, and how many those are (none: `makespan` is the whole prediction).
    pub(crate) unless_outputs_change: Option<(f64, usize)>,
}

/// What the run will not run: a project whose `up` would find it unchanged, a preview of a
/// project waiting for something not deployed, a destroy or refresh of a stack never deployed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settled {
    pub(crate) names: BTreeSet<String>,
    /// Projects an `up` runs only when what they read of a project that runs changes.
    pub(crate) maybe: BTreeSet<String>,
}

impl Settled {
    /// From the projects an `up` would skip, or (other operations) from the projects deployed.
    /// A destroy or refresh settles only a project the run state knows and knows undeployed:
    /// one it has no record of (a fresh checkout, a CI job) may well be in the backend, and is
    /// predicted to run.
    pub(crate) fn new(
        plan: &Plan<'_>,
        (skipped_by_up, maybe): (&BTreeSet<String>, BTreeSet<String>),
        (deployed, recorded): (&BTreeSet<String>, &BTreeSet<String>),
    ) -> Self {
        let names = plan
            .order
            .iter()
            .map(|&i| (i, plan.name(i)))
            .filter(|&(i, name)| match plan.operation {
                Operation::Up => skipped_by_up.contains(name),
                Operation::Preview => {
                    !plan.only
                        && plan
                            .provider
                            .graph
                            .needs(i)
                            .iter()
                            .any(|n| !deployed.contains(plan.name(n.node)))
                }
                Operation::Destroy | Operation::Refresh => recorded.contains(name) && !deployed.contains(name),
            })
            .map(|(_, name)| name.to_string())
            .collect();
        let maybe = if plan.operation == Operation::Up {
            maybe
        } else {
            BTreeSet::new()
        };
        Settled { names, maybe }
    }
}

pub(crate) fn predict(plan: &Plan<'_>, history: &History, settled: &Settled, parallel: usize) -> Prediction {
    let mut estimates = BTreeMap::new();
    let mut learned = 0;
    let mut learned_on = None;
    let mut unknown = false;
    for &i in &plan.order {
        let name = plan.name(i);
        let estimate = if settled.names.contains(name) {
            Some(0.0)
        } else if let Some((secs, on)) = history.estimate_from(name, plan.operation) {
            learned += 1;
            if let Some(other) = on {
                learned_on = Some(other.to_string());
            }
            Some(secs)
        } else if plan.operation == Operation::Up {
            #[allow(clippy::cast_precision_loss)]
            plan.project(i).estimate.map(|s| s as f64)
        } else {
            // The provider file estimates an up: a destroy or a drift check weighed by it was
            // off by twice or more (7.7 s for an 18 s guess). No guess until one is measured.
            None
        };
        match estimate {
            Some(secs) => {
                estimates.insert(name.to_string(), secs);
            }
            None => unknown = true,
        }
    }
    let known = !unknown && !plan.order.is_empty();
    let makespan_if = |runs: &dyn Fn(&str) -> bool| {
        let by_node: BTreeMap<usize, f64> = plan
            .order
            .iter()
            .map(|&i| {
                (
                    i,
                    if runs(plan.name(i)) {
                        estimates[plan.name(i)]
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        plan.provider
            .graph
            .simulate(
                &plan.subset,
                plan.operation.direction(),
                parallel,
                plan.operation != Operation::Preview,
                &|i| by_node.get(&i).copied().unwrap_or(0.0),
            )
            .makespan
    };
    let makespan = known.then(|| makespan_if(&|_| true));
    let maybe = plan
        .order
        .iter()
        .filter(|&&i| settled.maybe.contains(plan.name(i)) && estimates.get(plan.name(i)).is_some_and(|&e| e > 0.0))
        .count();
    let unless_outputs_change =
        (known && maybe > 0).then(|| (makespan_if(&|name| !settled.maybe.contains(name)), maybe));
    Prediction {
        estimates,
        makespan,
        learned,
        learned_on,
        unless_outputs_change,
    }
}

impl Prediction {
    /// Says the prediction, when there is one, before the run starts.
    pub(crate) fn say(&self, plan: &Plan<'_>) {
        if let Some(line) = self.line(plan) {
            crate::report::info(&line);
        }
    }

    /// The line said before the run starts, when there is a prediction.
    pub(crate) fn line(&self, plan: &Plan<'_>) -> Option<String> {
        let makespan = self.makespan?;
        let running = self.estimates.values().filter(|&&e| e > 0.0).count();
        // Nothing will run: nothing to predict (the run says so in one line).
        if running == 0 {
            return None;
        }
        let runs = match &self.learned_on {
            Some(other) => format!("stack {other}'s runs"),
            None => "past runs".to_string(),
        };
        let from = match self.learned {
            0 => "from the provider's estimates".to_string(),
            n if n == running => format!("learned from {runs}"),
            n => format!("{n} learned from {runs}, the others from the provider's estimates"),
        };
        let all = crate::render::count(plan.order.len(), "project");
        // `--only` first reads from the backend what it waits for (a `pulumi` each): not priced,
        // but said, so the wait before the first project is no surprise.
        let reads = if plan.only {
            let mut them: Vec<usize> = plan.outside().iter().map(|&(_, other, _)| other).collect();
            them.sort_unstable();
            them.dedup();
            match (them.len(), plan.operation.direction()) {
                (0, _) => String::new(),
                (n, crate::graph::Direction::Forward) => {
                    format!(
                        ", after reading the outputs of {} it waits for",
                        crate::render::count(n, "project")
                    )
                }
                (n, crate::graph::Direction::Reverse) => {
                    format!(
                        ", after checking {} that need it are gone",
                        crate::render::count(n, "project")
                    )
                }
            }
        } else {
            String::new()
        };
        Some(match self.unless_outputs_change {
            // Some run only if the outputs they read change: the least and the most.
            Some((least, maybe)) if maybe < running => format!(
                "Predicted: about {} for {} of {all}, up to {} if the {maybe} that read their outputs run too ({from}){reads}",
                about(least),
                running - maybe,
                about(makespan)
            ),
            _ => format!(
                "Predicted: about {} for {running} of {all} ({from}){reads}",
                about(makespan)
            ),
        })
    }
}

/// `4.2s`, `3m 20s`, `1h 05m`.
pub(crate) fn about(seconds: f64) -> String {
    if seconds < 60.0 {
        format!("{seconds:.1}s")
    } else {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let s = seconds.round() as u64;
        if s < 3600 {
            format!("{}m {:02}s", s / 60, s % 60)
        } else {
            format!("{}h {:02}m", s / 3600, s % 3600 / 60)
        }
    }
}
