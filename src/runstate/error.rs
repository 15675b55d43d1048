//! Why the run state (or what runs learned) cannot be read: each case named for what it means,
//! worded with the file and the fix. The commands turn it into a usage error (exit 2).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum StateError {
    #[error("{} is not a run state the runner can read ({source}); delete it to start afresh", path.display())]
    NotAState { path: PathBuf, source: serde_json::Error },
    #[error(
        "{} is a run state of schema version {found}, which this runner does not know (it writes {writes}); \
         use the runner that wrote it, or delete it to start afresh",
        path.display()
    )]
    UnknownSchema { path: PathBuf, found: u32, writes: u32 },
    #[error(
        "{} is the run state of stack `{found}`, not `{expected}`: it was copied or moved; delete it to start afresh",
        path.display()
    )]
    OtherStack {
        path: PathBuf,
        found: String,
        expected: String,
    },
    #[error("cannot read {}: {source}; remove it to start afresh", path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },
    #[error("cannot read {}: {source}; remove it (what past runs took is learnt again)", path.display())]
    UnreadableHistory { path: PathBuf, source: std::io::Error },
    #[error(
        "cannot read the run state's journal {shown}: {source}; remove it (what it recorded since the last run ended \
         is forgotten: those projects run again)"
    )]
    UnreadableJournal { shown: String, source: std::io::Error },
    #[error("cannot fold {shown} into the run state: {source}")]
    NotFolded { shown: String, source: std::io::Error },
}
