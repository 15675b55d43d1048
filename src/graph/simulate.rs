//! A run predicted before (or while) it happens: the scheduler's own rules — a project starts
//! once what it waits for has ended, at most `parallel` at once, among ready projects the one
//! with the longest chain still behind it first — played over estimated durations.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use super::{Direction, ProjectGraph};

/// When each project of a simulated run ends, in seconds from its start.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulated {
    /// The end of the last project.
    pub makespan: f64,
    /// The end of each project of the subset, by node.
    pub ends: HashMap<usize, f64>,
}

impl ProjectGraph {
    /// Plays a run of `subset` in `direction` where project `i` takes `duration(i)` seconds (0
    /// for one that will not run, what is left for one already running). `ordered`: projects
    /// wait for their needs (false for a preview, where nothing waits).
    pub fn simulate(
        &self,
        subset: &BTreeSet<usize>,
        direction: Direction,
        parallel: usize,
        ordered: bool,
        duration: &dyn Fn(usize) -> f64,
    ) -> Simulated {
        let order = self.run_order(subset, direction);
        let position: HashMap<usize, usize> = order.iter().enumerate().map(|(p, &i)| (i, p)).collect();
        let remaining = self.remaining(subset, direction);
        let mut missing: HashMap<usize, usize> = HashMap::new();
        let mut blocks: HashMap<usize, Vec<usize>> = HashMap::new();
        for &i in &order {
            let waits: Vec<usize> = if ordered {
                self.waits_for(i, subset, direction).map(|n| n.node).collect()
            } else {
                Vec::new()
            };
            for &w in &waits {
                blocks.entry(w).or_default().push(i);
            }
            missing.insert(i, waits.len());
        }
        let mut ready: BinaryHeap<(u64, Reverse<usize>, usize)> = order
            .iter()
            .filter(|i| missing[i] == 0)
            .map(|&i| (remaining[i], Reverse(position[&i]), i))
            .collect();
        let mut running: Vec<(f64, usize)> = Vec::new();
        let mut ends = HashMap::new();
        let mut now: f64 = 0.0;
        loop {
            while running.len() < parallel.max(1) {
                let Some((_, _, i)) = ready.pop() else { break };
                running.push((now + duration(i).max(0.0), i));
            }
            // The next to end; among equal ends, the first in run order.
            let Some(k) = (0..running.len()).min_by(|&a, &b| {
                running[a]
                    .0
                    .total_cmp(&running[b].0)
                    .then(position[&running[a].1].cmp(&position[&running[b].1]))
            }) else {
                break;
            };
            let (end, i) = running.swap_remove(k);
            now = end;
            ends.insert(i, end);
            for &d in blocks.get(&i).map_or(&[][..], Vec::as_slice) {
                let m = missing.get_mut(&d).expect("every project has a count");
                *m -= 1;
                if *m == 0 {
                    ready.push((remaining[d], Reverse(position[&d]), d));
                }
            }
        }
        Simulated { makespan: now, ends }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::node;
    use super::*;

    /// a → b → d, a → c.
    fn chain_and_fork() -> ProjectGraph {
        ProjectGraph::build(vec![
            node("a", &[]),
            node("b", &["a"]),
            node("c", &["a"]),
            node("d", &["b"]),
        ])
        .unwrap()
    }

    #[test]
    fn a_simulated_run_follows_the_needs_and_the_limit() {
        // a 1 s, b 2 s, c 5 s, d 1 s.
        let g = chain_and_fork();
        let all: BTreeSet<usize> = (0..g.len()).collect();
        let secs = [1.0, 2.0, 5.0, 1.0];
        let d = |i: usize| secs[i];
        let wide = g.simulate(&all, Direction::Forward, 8, true, &d);
        assert!((wide.makespan - 6.0).abs() < 1e-9, "{wide:?}");
        assert!((wide.ends[&3] - 4.0).abs() < 1e-9);
        // One at a time: everything in a row.
        let narrow = g.simulate(&all, Direction::Forward, 1, true, &d);
        assert!((narrow.makespan - 9.0).abs() < 1e-9);
        // Nothing waits (a preview): the longest alone.
        let preview = g.simulate(&all, Direction::Forward, 8, false, &d);
        assert!((preview.makespan - 5.0).abs() < 1e-9);
        // Destroy runs dependents first: d and c at once, b after d, a after b and c.
        let destroy = g.simulate(&all, Direction::Reverse, 8, true, &d);
        assert!((destroy.makespan - 6.0).abs() < 1e-9, "{destroy:?}");
        assert!((destroy.ends[&1] - 3.0).abs() < 1e-9, "{destroy:?}");
    }
}
