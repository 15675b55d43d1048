//! A plan: which projects of a provider's graph one operation touches, in which order, in which
//! waves, and along which critical path. Pure: built from a loaded [`Provider`].

use std::collections::BTreeSet;

use crate::error::RunnerError;
use crate::graph::{self, CriticalPath, Direction, EdgeKind, Need};
use crate::provider::{Project, Provider};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, strum::VariantArray)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Up,
    Destroy,
    Refresh,
    Preview,
}

impl Operation {
    /// Every operation, in the order they are listed to a person.
    pub const ALL: &'static [Operation] = <Operation as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Up => "up",
            Operation::Destroy => "destroy",
            Operation::Refresh => "refresh",
            Operation::Preview => "preview",
        }
    }

    /// Destroy runs dependents first; everything else runs needs first.
    pub fn direction(self) -> Direction {
        match self {
            Operation::Destroy => Direction::Reverse,
            _ => Direction::Forward,
        }
    }
}

/// What a run is, decided once from the command: an operation, or a drift check (`runner
/// drift`), which runs previews and tells each as what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RunKind {
    Up,
    Destroy,
    Refresh,
    Preview,
    Drift,
}

impl RunKind {
    pub(crate) fn of(operation: Operation, drift: bool) -> Self {
        match operation {
            _ if drift => RunKind::Drift,
            Operation::Up => RunKind::Up,
            Operation::Destroy => RunKind::Destroy,
            Operation::Refresh => RunKind::Refresh,
            Operation::Preview => RunKind::Preview,
        }
    }

    /// The operation its projects run.
    pub(crate) fn operation(self) -> Operation {
        match self {
            RunKind::Up => Operation::Up,
            RunKind::Destroy => Operation::Destroy,
            RunKind::Refresh => Operation::Refresh,
            RunKind::Preview | RunKind::Drift => Operation::Preview,
        }
    }

    /// A drift check: its previews are told as drift (`drifted`, `no drift`).
    pub(crate) fn is_drift(self) -> bool {
        self == RunKind::Drift
    }

    /// As a person names the run: `drift`, or the operation.
    pub(crate) fn word(self) -> &'static str {
        match self {
            RunKind::Drift => "drift",
            other => other.operation().as_str(),
        }
    }

    /// As a person names what one project does in it: `drift check`, or the operation.
    pub(crate) fn step_word(self) -> &'static str {
        match self {
            RunKind::Drift => "drift check",
            other => other.operation().as_str(),
        }
    }
}

/// A project name the command line gave that the provider does not have: the one way it is
/// told, with the closest name (a usage error, exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown project `{name}` (given to {flag}): provider {provider} has no such project")]
pub struct UnknownTarget {
    pub name: String,
    /// Where it was given: a flag (`--target`, `--only`, `--exclude`), or the command it is the
    /// argument of (`` `runner logs` ``).
    pub flag: &'static str,
    pub provider: String,
    pub suggestion: Option<String>,
}

impl UnknownTarget {
    /// `name`, given to `flag`, which `provider` does not have.
    pub fn new(provider: &Provider, name: &str, flag: &'static str) -> Self {
        UnknownTarget {
            name: name.to_string(),
            flag,
            provider: provider.name.clone(),
            suggestion: provider.graph.suggest(name),
        }
    }
}

/// The fix: the closest name, and where to see them all.
impl From<UnknownTarget> for RunnerError {
    fn from(e: UnknownTarget) -> Self {
        let list = format!("see the projects with `runner show-plan -p {}`", e.provider);
        let help = match &e.suggestion {
            Some(x) => format!("did you mean `{x}`? {list}"),
            None => list,
        };
        RunnerError::usage(e.to_string(), help)
    }
}

#[derive(Debug, Clone)]
pub struct Plan<'p> {
    pub provider: &'p Provider,
    pub operation: Operation,
    /// The targets as given (empty: the whole graph).
    pub targets: Vec<usize>,
    pub subset: BTreeSet<usize>,
    /// Projects in run order.
    pub order: Vec<usize>,
    /// Waves in order, each in run order.
    pub waves: Vec<Vec<usize>>,
    wave_of: Vec<usize>,
    pub critical: CriticalPath,
    on_critical: BTreeSet<usize>,
    /// `--only`: the plan is one project, run alone; what it waits for is outside the plan and
    /// must have been done before (see [`Plan::outside`]).
    pub only: bool,
}

impl<'p> Plan<'p> {
    /// Plans `operation` over `provider`'s graph, or over `targets` with what they need (up,
    /// refresh, preview) or with what needs them (destroy).
    pub fn new(provider: &'p Provider, operation: Operation, targets: &[String]) -> Result<Self, UnknownTarget> {
        let graph = &provider.graph;
        let mut target_ids = Vec::new();
        for t in targets {
            match graph.find(t) {
                Some(i) if !target_ids.contains(&i) => target_ids.push(i),
                Some(_) => {}
                None => {
                    return Err(UnknownTarget::new(provider, t, "--target"));
                }
            }
        }
        let direction = operation.direction();
        let subset = if target_ids.is_empty() {
            (0..graph.len()).collect()
        } else if direction == Direction::Reverse {
            graph.with_dependents(&target_ids)
        } else {
            graph.with_needs(&target_ids)
        };
        let order = graph.run_order(&subset, direction);
        let (waves, wave_of) = graph.waves(&subset, direction);
        let critical = graph.critical_path(&subset, direction);
        let on_critical = critical.nodes.iter().copied().collect();
        Ok(Plan {
            provider,
            operation,
            targets: target_ids,
            subset,
            order,
            waves,
            wave_of,
            critical,
            on_critical,
            only: false,
        })
    }

    /// A plan of exactly one project, run alone (`--only`): what it waits for is assumed done,
    /// and [`Plan::outside`] lists it so the caller can prove it.
    pub fn only(provider: &'p Provider, operation: Operation, target: &str) -> Result<Self, UnknownTarget> {
        let mut plan = Plan::new(provider, operation, &[])?;
        let Some(i) = provider.graph.find(target) else {
            return Err(UnknownTarget::new(provider, target, "--only"));
        };
        let subset: BTreeSet<usize> = [i].into();
        let direction = operation.direction();
        let (waves, wave_of) = provider.graph.waves(&subset, direction);
        let critical = provider.graph.critical_path(&subset, direction);
        plan.on_critical = critical.nodes.iter().copied().collect();
        plan.targets = vec![i];
        plan.order = vec![i];
        plan.subset = subset;
        plan.waves = waves;
        plan.wave_of = wave_of;
        plan.critical = critical;
        plan.only = true;
        Ok(plan)
    }

    /// The plan without `names` and what cannot run without them: on `up`, `refresh` and
    /// `preview` every project that needs one or runs after one (its dependents, transitively);
    /// on `destroy` every project one of them needs, which must outlive it. Returns the plan
    /// and what was left out, in run order.
    pub fn excluding(mut self, names: &[String]) -> Result<(Self, Vec<usize>), UnknownTarget> {
        let graph = &self.provider.graph;
        let mut ids = Vec::new();
        for n in names {
            let Some(i) = graph.find(n) else {
                return Err(UnknownTarget::new(self.provider, n, "--exclude"));
            };
            ids.push(i);
        }
        if ids.is_empty() {
            return Ok((self, Vec::new()));
        }
        let direction = self.operation.direction();
        let out = match direction {
            Direction::Forward => graph.with_dependents(&ids),
            Direction::Reverse => graph.with_needs(&ids),
        };
        let left_out: Vec<usize> = self.order.iter().copied().filter(|i| out.contains(i)).collect();
        let subset: BTreeSet<usize> = self.subset.difference(&out).copied().collect();
        let (waves, wave_of) = graph.waves(&subset, direction);
        let critical = graph.critical_path(&subset, direction);
        self.on_critical = critical.nodes.iter().copied().collect();
        self.order = graph.run_order(&subset, direction);
        self.targets.retain(|t| subset.contains(t));
        self.subset = subset;
        self.waves = waves;
        self.wave_of = wave_of;
        self.critical = critical;
        Ok((self, left_out))
    }

    /// What the plan's projects wait for that is outside the plan, as (project of the plan,
    /// what it waits for, kind), in declaration order: on `up`, `refresh` and `preview` its needs
    /// (which must be deployed), on `destroy` its dependents (which must be gone).
    pub fn outside(&self) -> Vec<(usize, usize, EdgeKind)> {
        let graph = &self.provider.graph;
        self.order
            .iter()
            .flat_map(|&i| {
                let edges = match self.operation.direction() {
                    Direction::Forward => graph.needs(i),
                    Direction::Reverse => graph.dependents(i),
                };
                edges
                    .iter()
                    .filter(|n| !self.subset.contains(&n.node))
                    .map(move |n| (i, n.node, n.kind))
            })
            .collect()
    }

    pub fn project(&self, i: usize) -> &'p Project {
        &self.provider.projects[i]
    }

    pub fn name(&self, i: usize) -> &'p str {
        &self.provider.projects[i].name
    }

    /// 1-based wave of a project of the plan.
    pub fn wave(&self, i: usize) -> usize {
        self.wave_of[i]
    }

    pub fn is_critical(&self, i: usize) -> bool {
        self.on_critical.contains(&i)
    }

    /// What `i` waits for in this plan (its needs on up, its dependents on destroy).
    pub fn waits_for(&self, i: usize) -> Vec<Need> {
        self.provider
            .graph
            .waits_for(i, &self.subset, self.operation.direction())
            .collect()
    }

    /// Declared needs of `i` of one kind, whether or not they are in the plan.
    pub fn needs(&self, i: usize, kind: EdgeKind) -> Vec<&'p str> {
        self.provider
            .graph
            .needs(i)
            .iter()
            .filter(|n| n.kind == kind)
            .map(|n| self.name(n.node))
            .collect()
    }

    /// The output digest of everything `i` needs, by name, whether or not it is in the plan:
    /// `inside` gives a need's in the plan, `outside` one's left out of it (`--only`,
    /// `--exclude`); a need with none (never deployed) counts as empty.
    pub fn need_digests<'d>(
        &self,
        i: usize,
        inside: impl Fn(usize) -> Option<&'d str>,
        outside: impl Fn(&str) -> Option<&'d str>,
    ) -> std::collections::BTreeMap<String, String> {
        self.provider
            .graph
            .needs(i)
            .iter()
            .map(|n| {
                let name = self.name(n.node);
                let digest = if self.subset.contains(&n.node) {
                    inside(n.node)
                } else {
                    outside(name)
                };
                (name.to_string(), digest.unwrap_or_default().to_string())
            })
            .collect()
    }

    /// Edges between projects of the plan as (runs first, runs after, kind), sorted by the run
    /// position of both ends so every rendering is deterministic.
    pub fn edges(&self) -> Vec<(usize, usize, EdgeKind)> {
        let mut position = vec![usize::MAX; self.provider.projects.len()];
        for (p, &i) in self.order.iter().enumerate() {
            position[i] = p;
        }
        let mut edges: Vec<(usize, usize, EdgeKind)> = self
            .order
            .iter()
            .flat_map(|&i| self.waits_for(i).into_iter().map(move |n| (n.node, i, n.kind)))
            .collect();
        edges.sort_by_key(|&(a, b, _)| (position[a], position[b]));
        edges
    }

    /// Is the edge `a → b` (run order) on the critical path?
    pub fn is_critical_edge(&self, a: usize, b: usize) -> bool {
        self.critical.nodes.windows(2).any(|w| w[0] == a && w[1] == b)
    }

    /// The layers present in the plan, in run order (reversed for destroy).
    pub fn layers(&self) -> Vec<crate::graph::Layer> {
        let mut layers: Vec<_> = self
            .subset
            .iter()
            .map(|&i| self.project(i).layer)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if self.operation.direction() == Direction::Reverse {
            layers.reverse();
        }
        layers
    }

    pub fn weighing_unit(&self) -> &'static str {
        match self.critical.weighing {
            graph::Weighing::Count => "projects",
            graph::Weighing::Estimate => "seconds",
        }
    }
}
