//! Wording: what the stages find wrong, as data ([`Fault`]), and how each is told: the message,
//! a short label under the code, and the fix. Every word a user reads about a provider file
//! comes from here.

use std::ops::Range;

use toml::Spanned;

use super::Loader;
use crate::diagnostic::{FileDiagnostic, SourceFile};
use crate::duration::DurationError;
use crate::graph::{self, GraphError, Layer, Origin};
use crate::provider::{Builtin, PromptType};
use crate::workspace::PROVIDERS_DIR;

/// One thing wrong in a provider or layer file, as data, until it is worded into a
/// [`FileDiagnostic`] here. Its message is its `Display`; the stage that finds it gives what the
/// fix needs (a close name, whether a directory exists).
#[derive(Debug, thiserror::Error)]
pub(super) enum Fault {
    // Reading.
    #[error("cannot read the file: {0}")]
    Unreadable(std::io::Error),
    /// TOML syntax, or a shape serde refused (an unknown key, a wrong type), in toml's words.
    #[error("{0}")]
    Syntax(String),
    #[error("the name `{name}` differs from the file name `{stem}`")]
    NameDiffers { name: String, stem: String },

    // Merging.
    #[error("layer `{0}` is included twice")]
    IncludedTwice(String),
    #[error("included layer `{layer}` does not exist")]
    NoSuchLayer { layer: String, closest: Option<String> },
    #[error("`{0}` is a provider, not a layer")]
    NotALayer(String),
    #[error("a layer cannot include other layers")]
    LayerIncludes,
    #[error("`exclude` belongs in provider files")]
    LayerExcludes,
    #[error("`rewire` belongs in provider files")]
    LayerRewires,
    #[error("`{0}` is declared in this file; exclude only works on included layers")]
    ExcludesOwn(String),
    #[error("cannot exclude `{name}`: no included layer declares it")]
    ExcludesUnknown { name: String, closest: Option<String> },
    #[error("cannot rewire `{name}`: no such project")]
    RewiresUnknown { name: String, closest: Option<String> },
    /// `field` is `needs` or `after`.
    #[error("`{project}` does not list `{need}` in its `{field}`")]
    NothingToRemove {
        project: String,
        need: String,
        field: &'static str,
    },

    // Checking.
    #[error("`{0}` is not a valid Pulumi project name")]
    ProjectName(String),
    #[error("`{0}` starts with `-`: the command line would read it as a flag, so no command could name it")]
    ProjectNameIsAFlag(String),
    #[error("unknown layer `{0}`")]
    UnknownLayer(String),
    #[error("a description must be one line of text, without control characters: {0:?}")]
    NotOneLine(String),
    #[error("project path `{0}` leaves the workspace")]
    PathLeaves(String),
    #[error("project `{project}` has no Pulumi.yaml at `{path}`")]
    NoProgram {
        project: String,
        path: String,
        dir_exists: bool,
    },
    #[error("hook script `{0}` does not exist under scripts/")]
    NoScript(String),
    #[error("unknown hook `{0}`")]
    UnknownHook(String),
    #[error("secret key `{0}` is not of the form namespace:key")]
    SecretKey(String),
    #[error("an estimate of 0 seconds")]
    ZeroEstimate,
    #[error("`{0}` is a timeout {too_long}", too_long = DurationError::TooLong)]
    TimeoutTooLong(String),
    #[error("`{0}` is not a timeout")]
    NotATimeout(String),
    #[error("`{second}` and `{first}` are both the secrets store")]
    TwoStores { first: String, second: String },
    #[error("`{project}` declares the secret `{key}`, but no project keeps secrets")]
    NoStore { project: String, key: String },
    #[error("prompt key `{0}` is not of the form namespace:key")]
    PromptKey(String),
    #[error("prompt `{key}` is declared twice")]
    PromptTwice { key: String, first: Origin },
    #[error("the default of `{key}` does not fit its type `{}`", type_name(*.kind))]
    DefaultType { key: String, kind: PromptType },
    #[error("the context prompt `{0}` does not say which kubeconfig it is a context of")]
    ContextWithoutKubeconfig(String),
    /// A problem of the graph the projects make; `excluded` is where the project an unknown
    /// need names was excluded, if it was.
    #[error("{error}")]
    Graph {
        error: GraphError,
        excluded: Option<Origin>,
    },
}

impl Fault {
    /// The few words under the code.
    fn label(&self) -> &'static str {
        match self {
            // Shown without code, so never under it.
            Fault::Unreadable(_) => "file",
            Fault::Syntax(_) => "here",
            Fault::NameDiffers { .. } => "name",
            Fault::IncludedTwice(_) => "repeated",
            Fault::NoSuchLayer { .. } => "no such layer",
            Fault::NotALayer(_) => "not a layer",
            Fault::LayerIncludes => "include",
            Fault::LayerExcludes => "exclude",
            Fault::LayerRewires => "rewire",
            Fault::ExcludesOwn(_) => "own project",
            Fault::ExcludesUnknown { .. } | Fault::RewiresUnknown { .. } => "unknown project",
            Fault::NothingToRemove { .. } => "nothing to remove",
            Fault::ProjectName(_) | Fault::ProjectNameIsAFlag(_) => "project name",
            Fault::UnknownLayer(_) => "unknown layer",
            Fault::NotOneLine(_) => "description",
            Fault::PathLeaves(_) => "path",
            Fault::NoProgram { .. } => "no Pulumi.yaml here",
            Fault::NoScript(_) => "no such script",
            Fault::UnknownHook(_) => "unknown hook",
            Fault::SecretKey(_) | Fault::PromptKey(_) => "key",
            Fault::ZeroEstimate => "estimate",
            Fault::TimeoutTooLong(_) | Fault::NotATimeout(_) => "timeout",
            Fault::TwoStores { .. } => "second store",
            Fault::NoStore { .. } => "secret without a store",
            Fault::PromptTwice { .. } => "again here",
            Fault::DefaultType { .. } => "default",
            Fault::ContextWithoutKubeconfig(_) => "context",
            Fault::Graph { error, .. } => match error {
                GraphError::Duplicate { .. } => "declared again here",
                GraphError::UnknownNeed { .. } => "unknown project",
                GraphError::SelfNeed { .. } => "itself",
                GraphError::RepeatedNeed { .. } => "repeated",
                GraphError::EstimateOverflow { .. } => "the chain ends here",
                GraphError::Cycle { .. } => "this need starts the cycle",
            },
        }
    }

    /// Told at the bytes `span` of `files[file]`.
    fn diagnostic(self, files: &[SourceFile], file: usize, span: Range<usize>) -> FileDiagnostic {
        let help = self.fix(files);
        FileDiagnostic::new(&files[file], span, self.to_string(), self.label(), Some(help))
    }

    /// Told about the file shown as `display` as a whole.
    fn whole_file(self, files: &[SourceFile], display: &str) -> FileDiagnostic {
        FileDiagnostic::whole_file(display, self.to_string(), Some(self.fix(files)))
    }

    /// How to put it right; `files` locate the places it refers to.
    fn fix(&self, files: &[SourceFile]) -> String {
        let at = |o: &Origin| files[o.file].location(o.start);
        match self {
            Fault::Unreadable(_) => "check that it exists and is readable UTF-8 text".into(),
            Fault::Syntax(_) => "see the provider file format in docs/providers.md (section \"Provider files\")".into(),
            Fault::NameDiffers { name, stem } => {
                format!("set `name = \"{stem}\"` or rename the file to `{name}.toml`")
            }
            Fault::IncludedTwice(_) => "include each layer once".into(),
            Fault::NoSuchLayer { layer, closest } => match closest {
                Some(c) => format!("did you mean `{c}`? Layers are files in {PROVIDERS_DIR}/ with `kind = \"layer\"`"),
                None => {
                    format!("create {PROVIDERS_DIR}/{layer}.toml with `kind = \"layer\"`, or remove it from `include`")
                }
            },
            Fault::NotALayer(name) => format!(
                "only files with `kind = \"layer\"` can be included; move the shared projects of \
                 {PROVIDERS_DIR}/{name}.toml into a layer"
            ),
            Fault::LayerIncludes => "include every layer from the provider file instead".into(),
            Fault::LayerExcludes | Fault::LayerRewires => "move it to the provider file that needs it".into(),
            Fault::ExcludesOwn(_) => "delete its [[project]] table instead".into(),
            Fault::ExcludesUnknown { closest, .. } | Fault::RewiresUnknown { closest, .. } => match closest {
                Some(c) => format!("did you mean `{c}`?"),
                None => "name a project declared in this provider or one of its layers".into(),
            },
            Fault::NothingToRemove { field, .. } => format!("remove it from `remove_{field}`"),
            Fault::ProjectName(_) => "use 1 to 100 characters from A-Z, a-z, 0-9, `_`, `.` and `-`".into(),
            Fault::ProjectNameIsAFlag(name) => {
                format!("start it with a letter or a digit (`{}`)", name.trim_start_matches('-'))
            }
            Fault::UnknownLayer(layer) => {
                let names: Vec<&str> = Layer::ALL.iter().map(|l| l.as_str()).collect();
                match graph::closest(layer, names.iter().copied()) {
                    Some(c) => format!("did you mean `{c}`? Layers are {}", names.join(", ")),
                    None => format!("use one of {}", names.join(", ")),
                }
            }
            Fault::PathLeaves(_) => "give a path relative to the workspace root, such as projects/services/x".into(),
            Fault::NotOneLine(_) => {
                "write it on one line, as plain text (a longer account belongs in a comment)".into()
            }
            Fault::NoProgram {
                project,
                path,
                dir_exists,
            } => {
                if *dir_exists {
                    format!("add {path}/Pulumi.yaml (name: {project}, runtime: yaml)")
                } else {
                    format!("create the directory {path} with a Pulumi.yaml, or fix the path")
                }
            }
            Fault::NoScript(_) => "put hook scripts in scripts/ and give their path, such as scripts/notify.sh".into(),
            Fault::UnknownHook(value) => {
                let names: Vec<&str> = Builtin::ALL.iter().copied().map(Builtin::name).collect();
                let known = format!(
                    "built-in hooks: {}; a script is given by its path under scripts/",
                    names.join(", ")
                );
                match graph::closest(value, names.into_iter()) {
                    Some(c) => format!("did you mean `{c}`? {known}"),
                    None => known,
                }
            }
            Fault::SecretKey(_) => "write it as namespace:key (one `:`), such as prometheus:adminpass".into(),
            Fault::ZeroEstimate => "give the expected duration in whole seconds (at least 1), or leave it out".into(),
            Fault::TimeoutTooLong(_) | Fault::NotATimeout(_) => {
                "give a duration such as \"45m\", \"2h\" or \"1h 30m\"".into()
            }
            Fault::TwoStores { .. } => "keep `secrets_store = true` on one project".into(),
            Fault::NoStore { .. } => {
                "mark the project that stores them with `secrets_store = true` (e.g. `secrets`)".into()
            }
            Fault::PromptKey(_) => "write it as namespace:key (one `:`), such as aws:region".into(),
            Fault::PromptTwice { first, .. } => format!("it is first declared at {}; keep one", at(first)),
            Fault::DefaultType { .. } => {
                "give a default of the prompt's type (a `${ns:key}` string may refer to an earlier answer)".into()
            }
            Fault::ContextWithoutKubeconfig(_) => {
                "add `kubeconfig = \"ns:key\"`, the key of the prompt that names the kubeconfig file".into()
            }
            Fault::Graph { error, excluded } => graph_fix(error, *excluded, at),
        }
    }
}

/// How to put a problem of the graph right; `excluded` is where the project an unknown need
/// names was excluded, if it was.
fn graph_fix(error: &GraphError, excluded: Option<Origin>, at: impl Fn(&Origin) -> String) -> String {
    match error {
        GraphError::Duplicate { first, .. } => format!(
            "it is first declared at {}; project names are Pulumi project names and must be unique, or their stacks collide",
            at(first)
        ),
        GraphError::UnknownNeed { need, suggestion, .. } => {
            if let Some(ex) = &excluded {
                format!(
                    "`{need}` is excluded at {}; remove this need with `remove_needs` in a [rewire] table",
                    at(ex)
                )
            } else if let Some(s) = suggestion {
                format!("did you mean `{s}`?")
            } else {
                format!("declare a project named `{need}`, or remove it from the list")
            }
        }
        GraphError::SelfNeed { project, .. } => format!("remove `{project}` from its own needs"),
        GraphError::RepeatedNeed { need, .. } => format!("list `{need}` once, in `needs` or in `after`"),
        GraphError::EstimateOverflow { .. } => {
            "give `estimate` as the expected seconds of one run of each project (600 for ten minutes)".into()
        }
        GraphError::Cycle { .. } => {
            "a project cannot wait for itself: remove or reverse one of the needs along the cycle".into()
        }
    }
}

/// A prompt type as a provider file writes it.
fn type_name(kind: PromptType) -> &'static str {
    match kind {
        PromptType::String => "string",
        PromptType::Int => "int",
        PromptType::Bool => "bool",
        PromptType::List => "list",
        PromptType::Path => "path",
        PromptType::Context => "context",
        PromptType::Url => "url",
        PromptType::Cidr => "cidr",
        PromptType::Duration => "duration",
    }
}

impl Loader<'_> {
    /// Records `problem` where `value` was written in file `file`.
    pub(super) fn problem<T>(&mut self, file: usize, value: &Spanned<T>, problem: Fault) {
        self.problem_in(file, value.span(), problem);
    }

    /// Records `problem` at the bytes `span` of file `file`.
    pub(super) fn problem_in(&mut self, file: usize, span: Range<usize>, problem: Fault) {
        let d = problem.diagnostic(&self.files, file, span);
        self.problems.push(d);
    }

    /// Records a problem of the file shown as `display` as a whole: it has no text to point into.
    pub(super) fn file_problem(&mut self, display: &str, problem: Fault) {
        let d = problem.whole_file(&self.files, display);
        self.problems.push(d);
    }

    /// Records a problem of the graph at the place it names: the second declaration of a
    /// duplicate, else the need or project it is about.
    pub(super) fn graph_problem(&mut self, error: GraphError, excluded: Option<Origin>) {
        let origin = match &error {
            GraphError::Duplicate { second, .. } => *second,
            GraphError::UnknownNeed { origin, .. }
            | GraphError::SelfNeed { origin, .. }
            | GraphError::RepeatedNeed { origin, .. }
            | GraphError::EstimateOverflow { origin, .. }
            | GraphError::Cycle { origin, .. } => *origin,
        };
        self.problem_in(origin.file, origin.start..origin.end, Fault::Graph { error, excluded });
    }
}
