//! What a project's `up` depended on, input by input (a file of its directory, a stack-file key,
//! an environment variable, an upstream project's outputs), each with a keyed digest of its
//! value. The scheduler compares two of them whole to tell whether a project must run again;
//! the run state keeps them, and says which input changed. Made by `runstate::Digests`.

use serde::{Deserialize, Serialize};

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
