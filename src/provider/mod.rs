//! Providers: the model the rest of the runner sees. A provider file (`providers/<name>.toml`,
//! format in `load/file.rs`) lists its projects, includes shared layers and rewires their
//! projects; [`load`] reads, merges and checks them all into a [`Provider`] whose projects index
//! its graph.

mod load;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::diagnostic::SourceFile;
use crate::graph::{Layer, ProjectGraph};

pub use load::{LoadError, file_names, valid_project_name};
pub(crate) use load::{entries, load, load_seeing};

/// What a file of `providers/` is: a provider, or a shared layer providers include.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    #[default]
    Provider,
    Layer,
}

/// One entry of `providers/`, as `list-providers` shows it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub kind: FileKind,
    pub description: String,
    /// The `kubernetes:infra_type` its stacks are marked with.
    pub infra_type: Option<String>,
}

/// A provider, merged with its layers and checked: its projects index its graph's nodes.
#[derive(Debug, Clone)]
pub struct Provider {
    pub name: String,
    pub description: String,
    pub infra_type: Option<String>,
    /// The provider file, as shown to the user.
    pub file: String,
    pub required_tools: Vec<String>,
    /// How to get a required tool (`install` of the provider file), by its name.
    pub install: std::collections::BTreeMap<String, String>,
    /// Environment variables holding the cloud credentials the programs need (names only).
    pub credentials: Vec<String>,
    pub projects: Vec<Project>,
    pub prompts: Vec<Prompt>,
    pub checks: Vec<Check>,
    pub graph: ProjectGraph,
    /// The provider file and its layers, indexed by the graph's `Origin::file`.
    pub sources: Vec<SourceFile>,
}

impl Provider {
    /// `file:line:column` of a place in the provider's files.
    pub fn locate(&self, origin: crate::graph::Origin) -> String {
        self.sources
            .get(origin.file)
            .map_or_else(|| self.file.clone(), |f| f.location(origin.start))
    }

    /// Uses durations learned from past runs (seconds, by project) as the estimates of the
    /// projects they name, in place of the declared ones.
    pub fn learn_estimates(&mut self, learned: &std::collections::BTreeMap<String, f64>) {
        for (i, p) in self.projects.iter_mut().enumerate() {
            if let Some(secs) = learned.get(&p.name) {
                // Whole seconds, at least one: what the critical path weighs.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let whole = secs.round().max(1.0) as u64;
                p.estimate = Some(whole);
                self.graph.set_estimate(i, Some(whole));
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Project {
    pub name: String,
    pub description: Option<String>,
    /// Directory of the Pulumi project, relative to the workspace root.
    pub path: String,
    pub layer: Layer,
    pub on_success: Vec<Hook>,
    pub secrets: Vec<Secret>,
    /// Keeps the graph's secrets in its own stack configuration, so it runs without the shared
    /// configuration file (MARA's `kubernetes/secrets`).
    pub secrets_store: bool,
    pub estimate: Option<u64>,
    /// How long it may run before it is stopped (`timeout = "45m"`).
    pub timeout: Option<std::time::Duration>,
    /// The file that declares the project, as shown to the user.
    pub declared_in: String,
    /// The `stat` of its `Pulumi.yaml` when the provider was loaded: the program cache's key
    /// (`crate::programs`), so a big graph looks at each file once.
    pub program_stat: Option<std::fs::Metadata>,
}

impl Project {
    /// Its `up` merges a kubeconfig into the user's (the built-in `kubeconfig-merge` hook).
    pub fn merges_kubeconfig(&self) -> bool {
        self.on_success.contains(&Hook::Builtin(Builtin::KubeconfigMerge))
    }
}

/// What runs after a project's `up` succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hook {
    /// Built into the runner.
    Builtin(Builtin),
    /// A script under `scripts/`, relative to the workspace root.
    Script(String),
}

impl Hook {
    pub fn as_str(&self) -> &str {
        match self {
            Hook::Builtin(b) => b.name(),
            Hook::Script(s) => s,
        }
    }
}

/// The hooks the runner implements itself; any other hook is a script under `scripts/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Builtin {
    /// The project's `kubeconfig` output merged into the user's kubeconfig.
    KubeconfigMerge,
}

impl Builtin {
    pub const ALL: &'static [Builtin] = <Builtin as strum::VariantArray>::VARIANTS;

    /// The name a provider file gives it in `on_success`.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::KubeconfigMerge => "kubeconfig-merge",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|b| b.name() == name)
    }
}

/// A secret a project needs, stored encrypted in the `secrets` project's stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    pub key: String,
    pub question: String,
    pub default: Option<String>,
    /// Asked without echo (a password); `hidden = false` for a user name.
    pub hidden: bool,
    /// Made by the runner the first time, never asked (`generate = "rsa-key-pair"`).
    pub generate: Option<Generate>,
}

impl Secret {
    /// The keys it stores: its own, and for a key pair `<key>_pub`, the public key.
    pub fn keys(&self) -> impl Iterator<Item = String> + '_ {
        let public = self.generate.map(|Generate::RsaKeyPair| format!("{}_pub", self.key));
        std::iter::once(self.key.clone()).chain(public)
    }
}

/// What the runner makes for a secret nobody is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generate {
    /// An RSA key pair of 2048 bits: the private key (PKCS#8 PEM) under the secret's key, the
    /// public one (`SubjectPublicKeyInfo` PEM) under `<key>_pub`.
    RsaKeyPair,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptType {
    #[default]
    String,
    #[serde(alias = "integer")]
    Int,
    #[serde(alias = "boolean")]
    Bool,
    List,
    /// A file path: `~` is expanded, so programs (`fn::readFile`) get an absolute path; asked
    /// again until the file exists.
    Path,
    /// A context of the kubeconfig file another prompt names (`kubeconfig = "ns:key"`): its
    /// contexts are offered, its `current-context` is the default.
    Context,
    /// An `http://`, `https://` or `oci://` URL with a host and no user or password in it (a
    /// value of the stack file is carried into every export and shown in logs).
    Url,
    /// An IPv4 or IPv6 address range, `10.0.0.0/16`: a typo found when it is typed, not minutes
    /// later inside a cloud's API.
    Cidr,
    /// A duration such as `7d` or `1h30m`: numbers each with its unit, as log stores and Go
    /// programs read them.
    Duration,
}

/// A prompt's default as written; strings may refer to earlier answers as `${ns:key}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum PromptDefault {
    Bool(bool),
    Int(i64),
    Text(String),
    List(Vec<String>),
}

/// A check `validate` (and every run) makes: one of `any_of` must be set (`env:NAME` in the
/// environment or `config:ns:key` in the stack configuration), and/or `command` must succeed
/// (run with `env_from_config` variables taken from the stack configuration), and/or the
/// `kubeconfig` file a configuration key names must exist and hold the context another names.
/// With `when_projects`, only for graphs that hold one of those projects.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub description: String,
    #[serde(default)]
    pub any_of: Vec<String>,
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub env_from_config: BTreeMap<String, String>,
    pub kubeconfig: Option<KubeconfigCheck>,
    #[serde(default)]
    pub when_projects: Vec<String>,
    pub fix: String,
}

/// The configuration keys that name a kubeconfig file and a context in it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubeconfigCheck {
    /// The key holding the file's path, e.g. `kubernetes:kubeconfig`.
    pub file: String,
    /// The key holding the context's name, e.g. `kubernetes:context_name`.
    pub context: Option<String>,
}

/// A stack-configuration value the provider asks for when the stack file lacks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub key: String,
    pub question: String,
    pub kind: PromptType,
    /// `type = "context"`: the key of the prompt that names the kubeconfig file.
    pub kubeconfig: Option<String>,
    pub default: Option<PromptDefault>,
    pub default_env: Option<String>,
    pub secret: bool,
    pub skip_if_env: Option<String>,
    pub none_value: Option<String>,
    /// Asked only when `config/pulumi/Pulumi.stackname.yaml.example` sets the key (its value
    /// the default): a site's choice offered to every new stack, nothing asked elsewhere.
    pub only_if_in_example: bool,
}

#[cfg(test)]
impl Prompt {
    /// A prompt of `kind` for `key` ("`key`?") with nothing else set: the tests' starting point.
    pub(crate) fn plain(key: &str, kind: PromptType) -> Prompt {
        Prompt {
            key: key.into(),
            question: format!("{key}?"),
            kind,
            default: None,
            default_env: None,
            secret: false,
            skip_if_env: None,
            none_value: None,
            kubeconfig: None,
            only_if_in_example: false,
        }
    }
}

/// A provider of the given projects (each with the names it needs, every need a data edge),
/// for the tests and the benchmark of what runs a graph.
#[doc(hidden)]
pub fn for_tests(projects: impl IntoIterator<Item = (String, Vec<String>)>) -> Provider {
    use crate::graph::{EdgeKind, NeedSpec, NodeSpec, Origin};
    let projects: Vec<(String, Vec<String>)> = projects.into_iter().collect();
    let nodes = projects
        .iter()
        .map(|(name, needs)| NodeSpec {
            name: name.clone(),
            origin: Origin::default(),
            layer: Layer::Services,
            needs: needs
                .iter()
                .map(|n| NeedSpec {
                    name: n.clone(),
                    kind: EdgeKind::Data,
                    origin: Origin::default(),
                })
                .collect(),
            estimate: None,
        })
        .collect();
    Provider {
        name: "t".into(),
        description: String::new(),
        infra_type: None,
        file: "t.toml".into(),
        required_tools: vec![],
        install: std::collections::BTreeMap::new(),
        credentials: vec![],
        projects: projects
            .iter()
            .map(|(name, _)| Project {
                name: name.clone(),
                description: None,
                path: format!("projects/{name}"),
                layer: Layer::Services,
                on_success: vec![],
                secrets: vec![],
                secrets_store: false,
                estimate: None,
                timeout: None,
                declared_in: "t.toml".into(),
                program_stat: None,
            })
            .collect(),
        prompts: vec![],
        checks: vec![],
        graph: ProjectGraph::build(nodes).expect("a test graph has no cycle"),
        sources: vec![],
    }
}
