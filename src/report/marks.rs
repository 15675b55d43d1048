//! The marks of a project's changes to resources (`+2 ~1 =3 >1`), as the log's closing table,
//! the job summary and the report show them, and what each stands for.

use std::collections::BTreeMap;

use crate::exec::is_change;

/// `~1 update, +2 create`
pub(crate) fn spelled(c: &BTreeMap<String, u64>) -> String {
    let mut parts = Vec::new();
    for (key, n) in c.iter().filter(|(op, n)| is_change(op) && **n > 0) {
        match MARKS.iter().find(|(k, _, _)| k == key) {
            Some((_, mark, _)) => parts.push(format!("{mark}{n} {key}")),
            None => parts.push(format!("{n} {key}")),
        }
    }
    parts.join(", ")
}

/// The operations on resources the changes column shows, their marks, and what a mark says.
/// (Pulumi marks a read `>` too: a read resource is one of those its stack holds, which
/// `status` counts.)
const MARKS: [(&str, &str, &str); 6] = [
    ("create", "+", "created"),
    ("update", "~", "updated"),
    ("replace", "±", "replaced"),
    ("delete", "-", "deleted"),
    ("same", "=", "unchanged"),
    ("read", ">", "read"),
];

/// What each mark of [`changes`] stands for: `+ created, ~ updated, …` (under the report's and
/// the job summary's tables).
pub(crate) fn marks_legend() -> String {
    MARKS.map(|(_, mark, says)| format!("{mark} {says}")).join(", ")
}

/// `+2 ~1 -1 =3`: resources created (or to create), updated, replaced, deleted, unchanged.
pub(crate) fn changes(c: &BTreeMap<String, u64>) -> String {
    let mut parts = Vec::new();
    for (key, mark, _) in MARKS {
        if let Some(n) = c.get(key).filter(|n| **n > 0) {
            parts.push(format!("{mark}{n}"));
        }
    }
    parts.join(" ")
}
