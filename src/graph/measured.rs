//! The critical path of a run that happened: the longest chain of what ran, by measured time,
//! along the graph's edges that were waited on. The plan's critical path (`critical_path`)
//! weighs estimates before a run; this one weighs what each project took, for a run's timeline.

use std::collections::{BTreeMap, BTreeSet};

use super::{Direction, ProjectGraph};

/// A project that ran, by name: when it started and ended (one unit, one origin for all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span<'a> {
    pub name: &'a str,
    pub start: i64,
    pub end: i64,
}

/// The chain that set a run's length: its projects, and its length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured<'a> {
    pub names: BTreeSet<&'a str>,
    pub length: i64,
}

impl ProjectGraph {
    /// The chain of `ran` that set the run's length, by measured time: each project's link is
    /// what held it, the one it started within `slack` of the end of — the last of what it waits
    /// for along the edges of `subset` in `direction`, else whatever freed the slot it took
    /// (`--parallel`). A project that started later than `slack` after either waited for
    /// neither, and begins a chain (a drift check waits for nothing, so its path is one check
    /// long). A project outside `subset` (or no longer in the graph) waits for nothing. Ties go
    /// to the chain whose last project's name sorts first, and within it to the later name, so
    /// that the same run always draws the same path.
    pub fn measured_critical_path<'a>(
        &self,
        ran: &[Span<'a>],
        subset: &BTreeSet<usize>,
        direction: Direction,
        slack: i64,
    ) -> Measured<'a> {
        let mut ran = ran.to_vec();
        ran.sort_by(|a, b| (a.start, a.name).cmp(&(b.start, b.name)));
        let ended: BTreeMap<&str, i64> = ran.iter().map(|s| (s.name, s.end)).collect();
        // By end, for the slot a project took: what ended just before it started, found by a
        // binary search (a scan of every project for each would be quadratic in the run).
        let mut by_end: Vec<(i64, &'a str)> = ran.iter().map(|r| (r.end, r.name)).collect();
        by_end.sort_unstable();
        // Each project's longest chain ending with it, and the project before it there.
        let mut best: BTreeMap<&'a str, (i64, Option<&'a str>)> = BTreeMap::new();
        // In order of start, what held a project has its best chain already.
        for s in &ran {
            let waits: Vec<&str> = self
                .find(s.name)
                .filter(|i| subset.contains(i))
                .map(|i| {
                    self.waits_for(i, subset, direction)
                        .map(|n| self.name(n.node))
                        .collect()
                })
                .unwrap_or_default();
            let last_wait = waits
                .iter()
                .filter_map(|w| ended.get(w).map(|&end| (end, *w)))
                .filter(|&(end, _)| end <= s.start)
                .max();
            let by = match last_wait {
                // Held by what it waits for, or it waited for a slot after that.
                Some((end, w)) if s.start - end <= slack => Some(w),
                _ => by_end[..by_end.partition_point(|&(end, _)| end <= s.start)]
                    .iter()
                    .rev()
                    .take_while(|&&(end, _)| s.start - end <= slack)
                    .find(|&&(_, name)| name != s.name)
                    .map(|&(_, w)| w),
            };
            let before = by.and_then(|w| best.get_key_value(w).map(|(&name, (len, _))| (*len, name)));
            let own = s.end - s.start;
            best.insert(
                s.name,
                match before {
                    Some((len, w)) => (len + own, Some(w)),
                    None => (own, None),
                },
            );
        }
        let Some((&last, &(length, _))) = best
            .iter()
            .max_by_key(|(name, (len, _))| (*len, std::cmp::Reverse(**name)))
        else {
            return Measured {
                names: BTreeSet::new(),
                length: 0,
            };
        };
        let mut names = BTreeSet::new();
        let mut at = Some(last);
        while let Some(n) = at {
            names.insert(n);
            at = best.get(n).and_then(|(_, prev)| *prev);
        }
        Measured { names, length }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::for_tests;

    fn spans<'a>(times: &[(&'a str, i64, i64)]) -> Vec<Span<'a>> {
        times
            .iter()
            .map(|&(name, start, end)| Span { name, start, end })
            .collect()
    }

    #[test]
    fn the_longest_chain_follows_only_the_waits_that_happened() {
        let p = for_tests(
            [("a", vec![]), ("b", vec![]), ("c", vec!["a", "b"]), ("d", vec!["b"])]
                .into_iter()
                .map(|(n, ns): (&str, Vec<&str>)| (n.to_string(), ns.into_iter().map(str::to_string).collect())),
        );
        let all: BTreeSet<usize> = (0..4).collect();
        let g = &p.graph;
        let path = g.measured_critical_path(
            &spans(&[("a", 0, 2), ("b", 0, 1), ("c", 2, 5), ("d", 6, 9)]),
            &all,
            Direction::Forward,
            0,
        );
        assert_eq!(
            path.names,
            BTreeSet::from(["a", "c"]),
            "a (2) then c (3) beats b then d (1 + 3)"
        );
        assert_eq!(path.length, 5);
        // c started before a ended: that edge was not waited on; x is no project of the graph.
        let path = g.measured_critical_path(
            &spans(&[("a", 0, 2), ("b", 0, 1), ("c", 1, 5), ("x", 0, 4)]),
            &all,
            Direction::Forward,
            0,
        );
        assert_eq!(path.names, BTreeSet::from(["b", "c"]));
        assert_eq!(path.length, 5);
        assert_eq!(g.measured_critical_path(&[], &all, Direction::Forward, 0).length, 0);
    }

    /// A run at `--parallel 2`: `c` needs `a`, which ended at 3, but started at 5, when `b`
    /// freed a slot: the chain is `b` then `c`, not `a` then `c` (a wait that did not happen).
    #[test]
    fn a_project_that_waited_for_a_slot_is_held_by_what_freed_it() {
        let p = for_tests(
            [("a", vec![]), ("b", vec![]), ("x", vec![]), ("c", vec!["a"])]
                .into_iter()
                .map(|(n, ns): (&str, Vec<&str>)| (n.to_string(), ns.into_iter().map(str::to_string).collect())),
        );
        let all: BTreeSet<usize> = (0..4).collect();
        let path = p.graph.measured_critical_path(
            &spans(&[("a", 0, 3), ("x", 0, 4), ("b", 3, 5), ("c", 5, 9)]),
            &all,
            Direction::Forward,
            0,
        );
        assert_eq!(
            path.names,
            BTreeSet::from(["a", "b", "c"]),
            "a freed b's slot, b freed c's"
        );
        assert_eq!(path.length, 9);
        // Started long after anything ended: it begins its own chain.
        let path = p
            .graph
            .measured_critical_path(&spans(&[("a", 0, 3), ("c", 20, 24)]), &all, Direction::Forward, 0);
        assert_eq!(path.names, BTreeSet::from(["c"]));
    }
}
