//! The provider file format: what serde reads from `providers/<name>.toml`, every name with its
//! span so problems point at their line and column.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::provider::{Check, FileKind, PromptDefault, PromptType};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    #[serde(default)]
    pub(super) kind: FileKind,
    pub(super) name: Option<Spanned<String>>,
    pub(super) description: Spanned<String>,
    pub(super) infra_type: Option<String>,
    #[serde(default)]
    pub(super) include: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) exclude: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) required_tools: Vec<String>,
    /// How to get a required tool, by its name: the fix said when it is not on PATH.
    #[serde(default)]
    pub(super) install: BTreeMap<String, String>,
    /// Environment variables holding the cloud credentials its programs need (exports refer to
    /// them as secrets of the engine they run on; their values are never read).
    #[serde(default)]
    pub(super) credentials: Vec<String>,
    #[serde(default, rename = "project")]
    pub(super) projects: Vec<RawProject>,
    #[serde(default)]
    pub(super) rewire: BTreeMap<String, Spanned<RawRewire>>,
    #[serde(default, rename = "prompt")]
    pub(super) prompts: Vec<Spanned<RawPrompt>>,
    #[serde(default, rename = "check")]
    pub(super) checks: Vec<Check>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProject {
    pub(super) name: Spanned<String>,
    pub(super) description: Option<Spanned<String>>,
    pub(super) path: Spanned<String>,
    pub(super) layer: Spanned<String>,
    #[serde(default)]
    pub(super) needs: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) after: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) on_success: Vec<Spanned<String>>,
    pub(super) estimate: Option<Spanned<u64>>,
    pub(super) timeout: Option<Spanned<String>>,
    #[serde(default, rename = "secret")]
    pub(super) secrets: Vec<RawSecret>,
    #[serde(default)]
    pub(super) secrets_store: Option<Spanned<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSecret {
    pub(super) key: Spanned<String>,
    pub(super) question: String,
    pub(super) default: Option<String>,
    #[serde(default = "yes")]
    pub(super) hidden: bool,
    #[serde(default)]
    pub(super) generate: Option<crate::provider::Generate>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRewire {
    /// Another directory for the project's program, under the same Pulumi project name (a
    /// variant that reads this provider's projects).
    pub(super) path: Option<Spanned<String>>,
    pub(super) needs: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub(super) add_needs: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) remove_needs: Vec<Spanned<String>>,
    pub(super) after: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub(super) add_after: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) remove_after: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrompt {
    pub(super) key: Spanned<String>,
    pub(super) question: String,
    #[serde(default, rename = "type")]
    pub(super) kind: PromptType,
    pub(super) default: Option<Spanned<PromptDefault>>,
    pub(super) default_env: Option<String>,
    #[serde(default)]
    pub(super) secret: bool,
    pub(super) skip_if_env: Option<String>,
    pub(super) none_value: Option<String>,
    pub(super) kubeconfig: Option<String>,
    #[serde(default)]
    pub(super) only_if_in_example: bool,
}

fn yes() -> bool {
    true
}
