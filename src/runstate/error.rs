//! Why the run state (or what runs learned) cannot be read: each case named for what it means,
//! worded with the file and the fix. The commands turn it into a usage error (exit 2).

#[derive(Debug, thiserror::Error)]
pub(crate) enum StateError {
    #[error("{shown} is not a run state the runner can read ({source}); delete it to start afresh")]
    NotAState { shown: String, source: serde_json::Error },
    #[error(
        "{shown} is a run state of schema version {found}, which this runner does not know (it writes {writes}); \
         use the runner that wrote it, or delete it to start afresh"
    )]
    UnknownSchema { shown: String, found: u32, writes: u32 },
    #[error(
        "{shown} is the run state of stack `{found}`, not `{expected}`: it was copied or moved; delete it to start afresh"
    )]
    OtherStack {
        shown: String,
        found: String,
        expected: String,
    },
    #[error("cannot read {shown}: {source}; remove it to start afresh")]
    Unreadable { shown: String, source: std::io::Error },
    #[error("cannot read {shown}: {source}; remove it (what past runs took is learnt again)")]
    UnreadableHistory { shown: String, source: std::io::Error },
    #[error(
        "cannot read the run state's journal {shown}: {source}; remove it (what it recorded since the last run ended \
         is forgotten: those projects run again)"
    )]
    UnreadableJournal { shown: String, source: std::io::Error },
    #[error(
        "cannot fold {shown} into the run state: {source}; remove it to go on (what it recorded since the last run \
         ended is forgotten: those projects run again; no stack is touched)"
    )]
    NotFolded { shown: String, source: std::io::Error },
}
