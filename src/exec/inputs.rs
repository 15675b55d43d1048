//! What a project's `up` depended on, input by input (a file of its directory, a stack-file key,
//! an environment variable, an upstream project's outputs), each with a keyed digest of its
//! value. The scheduler compares two of them whole to tell whether a project must run again;
//! the run state keeps them, and says which input changed. Made by `runstate::Digests`.

use serde::{Deserialize, Serialize};

/// The name of the one input that stands for a folder's files when they are too many to list
/// (a name no file has: it cannot start a relative path).
pub const ALL_FILES: &str = "/*";

/// How an input differs from its last up's, in the order a change is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    Added,
    Changed,
    Removed,
}

/// The first input (by kind, then name) that differs between a project's last up and now,
/// and how many more do: what the reasons name ("stack file key `x` changed, and 2 more").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputChange {
    pub kind: InputKind,
    pub name: String,
    pub how: Change,
    pub more: usize,
}

/// The kinds of input, in the order a change is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    Config,
    File,
    Named,
    #[serde(rename = "env")]
    Environment,
    Upstream,
}

/// One input: its kind, its name, and the first 16 hex digits of a keyed digest of its value
/// (64 bits tell values apart and keep the state small).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputDigest {
    pub kind: InputKind,
    pub name: String,
    pub digest: String,
}

/// The inputs of a project's `up`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Inputs {
    /// Input by input, in the order they are taken (an empty list: a project with no input).
    Each(Vec<InputDigest>),
    /// One digest of everything, as runners before the list kept it: it equals no list, so the
    /// project runs once more, and that `up` keeps a list.
    Whole(String),
}
