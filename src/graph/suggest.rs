//! Suggestions for a misspelt name: the closest candidate by edit distance.

/// The candidate closest to `name` by edit distance, when it is close enough to be a likely typo.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = limit(name);
    candidates
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}

/// How many edits still make a likely typo of `name`.
fn limit(name: &str) -> usize {
    (name.chars().count() / 3).max(2)
}

/// Many names indexed once, for many lookups (a big graph may have a misspelt reference in
/// every tenth program): a trie walked with one row of the edit-distance table per character,
/// leaving every branch whose row is already past the limit. Same answers as [`closest`].
#[derive(Debug, Default)]
pub struct NameIndex {
    /// Node 0 is the root; each node's children by character, and the name ending there.
    nodes: Vec<TrieNode>,
}

#[derive(Debug, Default)]
struct TrieNode {
    children: Vec<(char, usize)>,
    name: Option<String>,
}

impl NameIndex {
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut index = NameIndex {
            nodes: vec![TrieNode::default()],
        };
        for name in names {
            let mut at = 0;
            for c in name.chars() {
                let found = index.nodes[at].children.iter().find(|(k, _)| *k == c).map(|&(_, n)| n);
                at = found.unwrap_or_else(|| {
                    index.nodes.push(TrieNode::default());
                    let next = index.nodes.len() - 1;
                    index.nodes[at].children.push((c, next));
                    next
                });
            }
            index.nodes[at].name = Some(name.to_string());
        }
        index
    }

    /// The indexed name closest to `name`, as [`closest`] over all of them would give.
    pub fn closest(&self, name: &str) -> Option<String> {
        let query: Vec<char> = name.chars().collect();
        let walk = Walk {
            index: self,
            query: &query,
            limit: limit(name),
        };
        let first: Vec<usize> = (0..=query.len()).collect();
        let mut best: Option<(usize, &str)> = None;
        for &(c, child) in &self.nodes[0].children {
            walk.descend(child, c, &first, None, &mut best);
        }
        best.map(|(_, n)| n.to_string())
    }
}

struct Walk<'a> {
    index: &'a NameIndex,
    query: &'a [char],
    limit: usize,
}

impl<'a> Walk<'a> {
    /// Row of the table for the prefix ending in `c` at `node`, from its parent's row (and the
    /// grandparent's, with the parent's character, for a swap of neighbours).
    fn descend(
        &self,
        node: usize,
        c: char,
        parent: &[usize],
        grand: Option<(&[usize], char)>,
        best: &mut Option<(usize, &'a str)>,
    ) {
        let a = self.query;
        let mut row = Vec::with_capacity(parent.len());
        row.push(parent[0] + 1);
        for i in 1..=a.len() {
            let cost = usize::from(a[i - 1] != c);
            let mut d = (parent[i] + 1).min(row[i - 1] + 1).min(parent[i - 1] + cost);
            if let Some((g, pc)) = grand
                && i > 1
                && a[i - 1] == pc
                && a[i - 2] == c
            {
                d = d.min(g[i - 2] + 1);
            }
            row.push(d);
        }
        let n = &self.index.nodes[node];
        if let Some(name) = &n.name {
            let d = row[a.len()];
            if d <= self.limit && best.is_none_or(|b| (d, name.as_str()) < b) {
                *best = Some((d, name.as_str()));
            }
        }
        // No longer name under this prefix can come back within the limit, or beat the best
        // found so far (a tie can still win on the name, so only a worse row is left).
        let bound = best.map_or(self.limit, |(d, _)| d.min(self.limit));
        if row.iter().min().is_some_and(|&m| m > bound) {
            return;
        }
        for &(next, child) in &n.children {
            self.descend(child, next, &row, Some((parent, c)), best);
        }
    }
}

/// Edit distance over chars where swapping two neighbours counts as one edit (optimal string
/// alignment), so `vcp` is one typo away from `vpc`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("vcp", "vpc"), 1);
        assert_eq!(
            closest("certmgr", ["certmgr2", "logstore"].into_iter()),
            Some("certmgr2".into())
        );
    }

    #[test]
    fn the_index_answers_as_closest_does() {
        // Pseudo-random names over a small alphabet, so many are within reach of each other.
        let mut seed: u64 = 11;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet: Vec<char> = "abcé-1".chars().collect();
        let mut word = |len: u64| -> String {
            (0..len)
                .map(|_| alphabet[usize::try_from(next() % 6).unwrap()])
                .collect()
        };
        let names: Vec<String> = (0..300).map(|i| word(1 + i % 9)).collect();
        let index = NameIndex::new(names.iter().map(String::as_str));
        let mut found = 0;
        for i in 0..400 {
            let q = word(i % 11);
            let expected = closest(&q, names.iter().map(String::as_str));
            found += usize::from(expected.is_some());
            assert_eq!(index.closest(&q), expected, "query {q:?}");
        }
        assert!(found > 100, "the queries exercise suggestions: {found}");
        assert_eq!(NameIndex::new(["vpc", "eks"]).closest("vcp"), Some("vpc".into()));
        assert_eq!(NameIndex::new(["vpc"]).closest("kubernetes"), None);
    }
}
