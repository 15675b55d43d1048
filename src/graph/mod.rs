//! The project graph: pure data and algorithms (no I/O, no processes, no terminal).
//!
//! Nodes are projects, edges point from a project to the projects it needs. Everything about
//! order lives here: topological order, waves, the critical path, target subsets and the reverse
//! order for destroy. Errors carry an opaque [`Origin`] so the caller can point into its files.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

mod layer;
mod measured;
mod simulate;
mod suggest;

pub use layer::Layer;
pub use measured::{Measured, Span};
pub use simulate::Simulated;
pub use suggest::{NameIndex, closest, edit_distance};

/// Where a name was written, as the caller understands it (file index and byte range).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Origin {
    pub file: usize,
    pub start: usize,
    pub end: usize,
}

/// Why one project waits for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::VariantArray)]
pub enum EdgeKind {
    /// The project reads the other's stack outputs.
    Data,
    /// The project only has to run after the other; no output is read.
    Order,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Data => "data",
            EdgeKind::Order => "order",
        }
    }
}

/// A declared need, before names are resolved.
#[derive(Debug, Clone)]
pub struct NeedSpec {
    pub name: String,
    pub kind: EdgeKind,
    pub origin: Origin,
}

/// A project as the graph needs to know it.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub name: String,
    pub origin: Origin,
    pub layer: Layer,
    pub needs: Vec<NeedSpec>,
    /// Estimated duration in seconds, when the provider file gives one.
    pub estimate: Option<u64>,
}

/// A resolved need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    pub node: usize,
    pub kind: EdgeKind,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("project `{name}` is declared twice")]
    Duplicate {
        name: String,
        first: Origin,
        second: Origin,
    },
    #[error("project `{project}` needs `{need}`, which is not a project of this graph")]
    UnknownNeed {
        project: String,
        need: String,
        origin: Origin,
        suggestion: Option<String>,
    },
    #[error("project `{project}` needs itself")]
    SelfNeed { project: String, origin: Origin },
    #[error("project `{project}` lists `{need}` twice")]
    RepeatedNeed {
        project: String,
        need: String,
        origin: Origin,
    },
    #[error(
        "the estimates along {} add up to more than {} seconds",
        chain.join(" → "),
        u64::MAX
    )]
    EstimateOverflow {
        /// The chain of needs whose estimates overflow, in run order.
        chain: Vec<String>,
        /// Where the last project of the chain is declared.
        origin: Origin,
    },
    #[error("dependency cycle: {}", cycle.join(" → "))]
    Cycle {
        /// The names along the cycle, first name repeated at the end.
        cycle: Vec<String>,
        /// Where the first edge of the cycle is declared.
        origin: Origin,
    },
}

/// A validated, acyclic project graph.
#[derive(Debug, Clone)]
pub struct ProjectGraph {
    nodes: Vec<NodeSpec>,
    needs: Vec<Vec<Need>>,
    dependents: Vec<Vec<Need>>,
    index: foldhash::HashMap<String, usize>,
    /// Topological order (needs first), ties broken by declaration order.
    topo: Vec<usize>,
}

/// Direction of a run: `Forward` runs needs first (up, refresh, preview), `Reverse` runs
/// dependents first (destroy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Reverse,
}

/// How the critical path was weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weighing {
    /// Every project counts 1.
    Count,
    /// Projects count their `estimate` seconds (1 when they give none).
    Estimate,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriticalPath {
    /// Node indices in run order.
    pub nodes: Vec<usize>,
    pub weight: u64,
    pub weighing: Weighing,
}

impl ProjectGraph {
    /// Builds and validates the graph, reporting every problem found (not just the first).
    pub fn build(nodes: Vec<NodeSpec>) -> Result<Self, Vec<GraphError>> {
        let mut errors = Vec::new();
        let mut index: foldhash::HashMap<String, usize> =
            foldhash::HashMap::with_capacity_and_hasher(nodes.len(), foldhash::fast::RandomState::default());
        for (i, node) in nodes.iter().enumerate() {
            if let Some(&first) = index.get(&node.name) {
                errors.push(GraphError::Duplicate {
                    name: node.name.clone(),
                    first: nodes[first].origin,
                    second: node.origin,
                });
            } else {
                index.insert(node.name.clone(), i);
            }
        }

        let mut needs: Vec<Vec<Need>> = vec![Vec::new(); nodes.len()];
        let mut dependents: Vec<Vec<Need>> = vec![Vec::new(); nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            if index.get(&node.name) != Some(&i) {
                continue; // a duplicate, already reported
            }
            let mut seen = BTreeSet::new();
            for need in &node.needs {
                if need.name == node.name {
                    errors.push(GraphError::SelfNeed {
                        project: node.name.clone(),
                        origin: need.origin,
                    });
                    continue;
                }
                if !seen.insert(need.name.as_str()) {
                    errors.push(GraphError::RepeatedNeed {
                        project: node.name.clone(),
                        need: need.name.clone(),
                        origin: need.origin,
                    });
                    continue;
                }
                match index.get(&need.name) {
                    Some(&j) => {
                        needs[i].push(Need {
                            node: j,
                            kind: need.kind,
                        });
                        dependents[j].push(Need {
                            node: i,
                            kind: need.kind,
                        });
                    }
                    None => errors.push(GraphError::UnknownNeed {
                        project: node.name.clone(),
                        need: need.name.clone(),
                        origin: need.origin,
                        suggestion: closest(&need.name, index.keys().map(String::as_str)),
                    }),
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }

        let graph = ProjectGraph {
            topo: Vec::new(),
            nodes,
            needs,
            dependents,
            index,
        };
        let graph = match graph.topological_order() {
            Some(topo) => ProjectGraph { topo, ..graph },
            None => return Err(graph.cycles()),
        };
        graph.check_estimates()?;
        Ok(graph)
    }

    /// Every chain's estimated seconds fit in a `u64`: the critical path of any subset, and
    /// what the scheduler counts behind each project, are sums along one of these chains.
    fn check_estimates(&self) -> Result<(), Vec<GraphError>> {
        let mut best = vec![0u64; self.nodes.len()];
        let mut prev: Vec<Option<usize>> = vec![None; self.nodes.len()];
        for &i in &self.topo {
            let before = self.needs[i].iter().map(|n| n.node).max_by_key(|&n| best[n]);
            let base = before.map_or(0, |n| best[n]);
            prev[i] = before;
            let Some(total) = base.checked_add(self.nodes[i].estimate.unwrap_or(1)) else {
                let mut chain = vec![i];
                while let Some(p) = prev[*chain.last().expect("not empty")] {
                    chain.push(p);
                }
                chain.reverse();
                return Err(vec![GraphError::EstimateOverflow {
                    chain: chain.iter().map(|&c| self.nodes[c].name.clone()).collect(),
                    origin: self.nodes[i].origin,
                }]);
            };
            best[i] = total;
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Replaces a project's estimate (seconds), e.g. by one learned from past runs.
    pub fn set_estimate(&mut self, i: usize, seconds: Option<u64>) {
        self.nodes[i].estimate = seconds;
    }

    pub fn node(&self, i: usize) -> &NodeSpec {
        &self.nodes[i]
    }

    pub fn name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The closest project name to `name`, for "did you mean" hints.
    pub fn suggest(&self, name: &str) -> Option<String> {
        closest(name, self.nodes.iter().map(|n| n.name.as_str()))
    }

    /// What `i` needs, in declaration order.
    pub fn needs(&self, i: usize) -> &[Need] {
        &self.needs[i]
    }

    /// What needs `i`, in declaration order of the dependents.
    pub fn dependents(&self, i: usize) -> &[Need] {
        &self.dependents[i]
    }

    /// Topological order over the whole graph: needs first, ties broken by declaration order.
    pub fn order(&self) -> &[usize] {
        &self.topo
    }

    /// Kahn's algorithm with a min-heap on (layer, declaration index), so the order is
    /// deterministic and reads layer by layer, in file order, wherever the graph leaves a choice.
    /// `None` when there is a cycle.
    fn topological_order(&self) -> Option<Vec<usize>> {
        let key = |i: usize| Reverse((self.nodes[i].layer, i));
        let mut missing: Vec<usize> = self.needs.iter().map(Vec::len).collect();
        let mut ready: BinaryHeap<Reverse<(Layer, usize)>> = missing
            .iter()
            .enumerate()
            .filter(|(_, m)| **m == 0)
            .map(|(i, _)| key(i))
            .collect();
        let mut order = Vec::with_capacity(self.nodes.len());
        while let Some(Reverse((_, i))) = ready.pop() {
            order.push(i);
            for d in &self.dependents[i] {
                missing[d.node] -= 1;
                if missing[d.node] == 0 {
                    ready.push(key(d.node));
                }
            }
        }
        (order.len() == self.nodes.len()).then_some(order)
    }

    /// Every cycle (one per strongly connected component), spelled out along its edges.
    fn cycles(&self) -> Vec<GraphError> {
        let mut g: DiGraph<usize, ()> = DiGraph::with_capacity(self.nodes.len(), 0);
        let ids: Vec<NodeIndex> = (0..self.nodes.len()).map(|i| g.add_node(i)).collect();
        for (i, needs) in self.needs.iter().enumerate() {
            for n in needs {
                g.add_edge(ids[i], ids[n.node], ());
            }
        }
        let mut errors = Vec::new();
        let mut components: Vec<Vec<usize>> = tarjan_scc(&g)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<usize> = c.into_iter().map(|n| g[n]).collect();
                c.sort_unstable();
                c
            })
            .collect();
        components.sort();
        for component in components {
            let members: BTreeSet<usize> = component.iter().copied().collect();
            let cycle = self.cycle_within(component[0], &members);
            let origin = self.need_origin(cycle[0], cycle[1]);
            errors.push(GraphError::Cycle {
                cycle: cycle.iter().map(|&i| self.nodes[i].name.clone()).collect(),
                origin,
            });
        }
        errors
    }

    /// A shortest cycle through `start` inside one strongly connected component (breadth-first
    /// along needs), returned with `start` at both ends.
    fn cycle_within(&self, start: usize, members: &BTreeSet<usize>) -> Vec<usize> {
        let mut parent: HashMap<usize, usize> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(i) = queue.pop_front() {
            for n in &self.needs[i] {
                if !members.contains(&n.node) {
                    continue;
                }
                if n.node == start {
                    // Walk back from i to start, then read it forwards: start → … → i → start.
                    let mut back = Vec::new();
                    let mut at = i;
                    while at != start {
                        back.push(at);
                        at = parent[&at];
                    }
                    back.reverse();
                    let mut path = vec![start];
                    path.extend(back);
                    path.push(start);
                    return path;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(n.node) {
                    e.insert(i);
                    queue.push_back(n.node);
                }
            }
        }
        unreachable!("a strongly connected component of more than one node has a cycle through each node")
    }

    fn need_origin(&self, from: usize, to: usize) -> Origin {
        self.nodes[from]
            .needs
            .iter()
            .find(|n| n.name == self.nodes[to].name)
            .map_or(self.nodes[from].origin, |n| n.origin)
    }

    /// `targets` with everything they need, transitively (the subset `up --target` runs).
    pub fn with_needs(&self, targets: &[usize]) -> BTreeSet<usize> {
        closure(targets, &self.needs)
    }

    /// `targets` with everything that needs them, transitively (the subset `destroy --target`
    /// removes: dependents cannot outlive what they read).
    pub fn with_dependents(&self, targets: &[usize]) -> BTreeSet<usize> {
        closure(targets, &self.dependents)
    }

    /// Run order of `subset`: topological for `Forward`, its reverse for `Reverse`.
    pub fn run_order(&self, subset: &BTreeSet<usize>, direction: Direction) -> Vec<usize> {
        let mut order: Vec<usize> = self.topo.iter().copied().filter(|i| subset.contains(i)).collect();
        if direction == Direction::Reverse {
            order.reverse();
        }
        order
    }

    /// What `i` waits for in a run of `subset` in `direction`.
    pub fn waits_for<'a>(
        &'a self,
        i: usize,
        subset: &'a BTreeSet<usize>,
        direction: Direction,
    ) -> impl Iterator<Item = Need> + 'a {
        let edges = match direction {
            Direction::Forward => &self.needs[i],
            Direction::Reverse => &self.dependents[i],
        };
        edges.iter().copied().filter(|n| subset.contains(&n.node))
    }

    /// Wave of each project of `subset` (1-based): a project runs in the wave after the last of
    /// those it waits for. Projects of one wave can run at the same time. Returns the waves, each
    /// in run order, and the wave number per node (0 for nodes outside the subset).
    pub fn waves(&self, subset: &BTreeSet<usize>, direction: Direction) -> (Vec<Vec<usize>>, Vec<usize>) {
        let order = self.run_order(subset, direction);
        let mut wave_of = vec![0usize; self.nodes.len()];
        let mut waves: Vec<Vec<usize>> = Vec::new();
        for &i in &order {
            let w = 1 + self
                .waits_for(i, subset, direction)
                .map(|n| wave_of[n.node])
                .max()
                .unwrap_or(0);
            wave_of[i] = w;
            if waves.len() < w {
                waves.resize_with(w, Vec::new);
            }
            waves[w - 1].push(i);
        }
        (waves, wave_of)
    }

    /// The longest chain of `subset` in `direction`: by estimate when any project of the subset
    /// has one (projects without count 1 s), else by count. Ties go to the chain found first in
    /// run order, so the result is deterministic.
    pub fn critical_path(&self, subset: &BTreeSet<usize>, direction: Direction) -> CriticalPath {
        let weighing = if subset.iter().any(|&i| self.nodes[i].estimate.is_some()) {
            Weighing::Estimate
        } else {
            Weighing::Count
        };
        let weight = |i: usize| match weighing {
            Weighing::Count => 1,
            Weighing::Estimate => self.nodes[i].estimate.unwrap_or(1),
        };
        let order = self.run_order(subset, direction);
        let mut best = vec![0u64; self.nodes.len()];
        let mut prev: Vec<Option<usize>> = vec![None; self.nodes.len()];
        let mut end: Option<usize> = None;
        for &i in &order {
            let mut before = None;
            let mut base = 0;
            for n in self.waits_for(i, subset, direction) {
                if before.is_none() || best[n.node] > base {
                    base = best[n.node];
                    before = Some(n.node);
                }
            }
            best[i] = base + weight(i);
            prev[i] = before;
            if end.is_none_or(|e| best[i] > best[e]) {
                end = Some(i);
            }
        }
        let mut nodes = Vec::new();
        let mut at = end;
        while let Some(i) = at {
            nodes.push(i);
            at = prev[i];
        }
        nodes.reverse();
        CriticalPath {
            weight: end.map_or(0, |e| best[e]),
            nodes,
            weighing,
        }
    }
}

fn closure(targets: &[usize], edges: &[Vec<Need>]) -> BTreeSet<usize> {
    let mut seen: BTreeSet<usize> = targets.iter().copied().collect();
    let mut stack: Vec<usize> = targets.to_vec();
    while let Some(i) = stack.pop() {
        for n in &edges[i] {
            if seen.insert(n.node) {
                stack.push(n.node);
            }
        }
    }
    seen
}

impl ProjectGraph {
    /// For each project of `subset`, the weight of the longest chain from it to the end of the
    /// run (itself included): the scheduler starts the ready project with the most left behind
    /// it first, which keeps the makespan close to the critical path.
    pub fn remaining(&self, subset: &BTreeSet<usize>, direction: Direction) -> Vec<u64> {
        let weighing = self.critical_path(subset, direction).weighing;
        let mut rest = vec![0u64; self.nodes.len()];
        let order = self.run_order(subset, direction);
        let opposite = match direction {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        };
        for &i in order.iter().rev() {
            let own = match weighing {
                Weighing::Count => 1,
                Weighing::Estimate => self.nodes[i].estimate.unwrap_or(1),
            };
            let after = self
                .waits_for(i, subset, opposite)
                .map(|n| rest[n.node])
                .max()
                .unwrap_or(0);
            rest[i] = own + after;
        }
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A services project that needs `needs` for data (the simulation's tests build graphs of them too).
    pub(super) fn node(name: &str, needs: &[&str]) -> NodeSpec {
        NodeSpec {
            name: name.into(),
            origin: Origin::default(),
            layer: Layer::Services,
            needs: needs
                .iter()
                .map(|n| NeedSpec {
                    name: (*n).into(),
                    kind: EdgeKind::Data,
                    origin: Origin::default(),
                })
                .collect(),
            estimate: None,
        }
    }

    fn names(g: &ProjectGraph, ids: &[usize]) -> Vec<String> {
        ids.iter().map(|&i| g.name(i).to_string()).collect()
    }

    fn diamond() -> ProjectGraph {
        ProjectGraph::build(vec![
            node("app", &["db", "cache"]),
            node("db", &["net"]),
            node("cache", &["net"]),
            node("net", &[]),
            node("lonely", &[]),
        ])
        .unwrap()
    }

    #[test]
    fn topological_order_puts_needs_first_and_keeps_declaration_order_on_ties() {
        let g = diamond();
        assert_eq!(names(&g, g.order()), ["net", "db", "cache", "app", "lonely"]);
    }

    #[test]
    fn waves_group_what_can_run_together() {
        let g = diamond();
        let all: BTreeSet<usize> = (0..g.len()).collect();
        let (waves, _) = g.waves(&all, Direction::Forward);
        let waves: Vec<Vec<String>> = waves.iter().map(|w| names(&g, w)).collect();
        assert_eq!(waves, [vec!["net", "lonely"], vec!["db", "cache"], vec!["app"]]);
        let (waves, _) = g.waves(&all, Direction::Reverse);
        let waves: Vec<Vec<String>> = waves.iter().map(|w| names(&g, w)).collect();
        assert_eq!(waves, [vec!["lonely", "app"], vec!["cache", "db"], vec!["net"]]);
    }

    #[test]
    fn targets_take_their_needs_on_up_and_their_dependents_on_destroy() {
        let g = diamond();
        let db = g.find("db").unwrap();
        let up = g.with_needs(&[db]);
        assert_eq!(names(&g, &g.run_order(&up, Direction::Forward)), ["net", "db"]);
        let down = g.with_dependents(&[db]);
        assert_eq!(names(&g, &g.run_order(&down, Direction::Reverse)), ["app", "db"]);
    }

    #[test]
    fn estimates_that_overflow_along_a_chain_are_an_error() {
        let mut nodes = vec![node("a", &[]), node("b", &["a"]), node("c", &["b"]), node("d", &[])];
        for n in &mut nodes[..3] {
            n.estimate = Some(i64::MAX.unsigned_abs());
        }
        let errors = ProjectGraph::build(nodes.clone()).unwrap_err();
        assert_eq!(
            errors,
            [GraphError::EstimateOverflow {
                chain: vec!["a".into(), "b".into(), "c".into()],
                origin: Origin::default(),
            }]
        );
        assert_eq!(
            errors[0].to_string(),
            "the estimates along a → b → c add up to more than 18446744073709551615 seconds"
        );
        // Side by side they do not add up: the largest chain still fits.
        nodes[1].needs.clear();
        nodes[2].needs.clear();
        let g = ProjectGraph::build(nodes).unwrap();
        let all: BTreeSet<usize> = (0..4).collect();
        assert_eq!(
            g.critical_path(&all, Direction::Forward).weight,
            i64::MAX.unsigned_abs()
        );
        assert!(
            g.remaining(&all, Direction::Reverse)
                .iter()
                .all(|&w| w <= i64::MAX.unsigned_abs())
        );
    }

    #[test]
    fn critical_path_by_count_and_by_estimate() {
        let g = diamond();
        let all: BTreeSet<usize> = (0..g.len()).collect();
        let cp = g.critical_path(&all, Direction::Forward);
        assert_eq!(cp.weighing, Weighing::Count);
        assert_eq!(cp.weight, 3);
        assert_eq!(names(&g, &cp.nodes), ["net", "db", "app"]);

        let mut nodes = vec![
            node("app", &["db", "cache"]),
            node("db", &["net"]),
            node("cache", &["net"]),
            node("net", &[]),
        ];
        nodes[2].estimate = Some(100);
        nodes[1].estimate = Some(10);
        let g = ProjectGraph::build(nodes).unwrap();
        let all: BTreeSet<usize> = (0..g.len()).collect();
        let cp = g.critical_path(&all, Direction::Forward);
        assert_eq!(cp.weighing, Weighing::Estimate);
        assert_eq!(names(&g, &cp.nodes), ["net", "cache", "app"]);
        assert_eq!(cp.weight, 102);
        let cp = g.critical_path(&all, Direction::Reverse);
        assert_eq!(names(&g, &cp.nodes), ["app", "cache", "net"]);
    }

    #[test]
    fn remaining_weight_counts_the_longest_chain_to_the_end() {
        let g = diamond();
        let all: BTreeSet<usize> = (0..g.len()).collect();
        let rest = g.remaining(&all, Direction::Forward);
        let by_name = |n: &str| rest[g.find(n).unwrap()];
        assert_eq!(
            (by_name("net"), by_name("db"), by_name("app"), by_name("lonely")),
            (3, 2, 1, 1)
        );
        let rest = g.remaining(&all, Direction::Reverse);
        assert_eq!(rest[g.find("app").unwrap()], 3);
        assert_eq!(rest[g.find("net").unwrap()], 1);
    }

    #[test]
    fn each_cycle_is_spelled_out_once() {
        let cases = [
            (
                vec![node("a", &["b"]), node("b", &["c"]), node("c", &["a"]), node("d", &[])],
                &["dependency cycle: a → b → c → a"][..],
            ),
            (
                vec![
                    node("a", &["b"]),
                    node("b", &["a"]),
                    node("x", &["y"]),
                    node("y", &["x"]),
                ],
                &["dependency cycle: a → b → a", "dependency cycle: x → y → x"],
            ),
        ];
        for (nodes, cycles) in cases {
            let errors = ProjectGraph::build(nodes).unwrap_err();
            let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
            assert_eq!(text, cycles);
        }
    }

    #[test]
    fn unknown_needs_suggest_the_closest_name_and_all_are_reported() {
        let errors =
            ProjectGraph::build(vec![node("vpc", &[]), node("eks", &["vcp"]), node("app", &["zzzzzz"])]).unwrap_err();
        assert_eq!(errors.len(), 2);
        match &errors[0] {
            GraphError::UnknownNeed { suggestion, .. } => assert_eq!(suggestion.as_deref(), Some("vpc")),
            e => panic!("unexpected {e:?}"),
        }
        match &errors[1] {
            GraphError::UnknownNeed { suggestion, .. } => assert_eq!(suggestion, &None),
            e => panic!("unexpected {e:?}"),
        }
    }

    #[test]
    fn duplicates_self_needs_and_repeats_are_rejected() {
        let errors = ProjectGraph::build(vec![
            node("a", &["a"]),
            node("b", &["c", "c"]),
            node("c", &[]),
            node("c", &[]),
        ])
        .unwrap_err();
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "project `c` is declared twice",
                "project `a` needs itself",
                "project `b` lists `c` twice"
            ]
        );
    }
}
