//! Checking: the rules a merged provider must keep, each broken one recorded where it was
//! written: names, layers, paths and their programs, hooks, secrets, estimates, timeouts,
//! prompts, and the graph the projects make.

use std::collections::HashMap;
use std::path::Path;

use toml::Spanned;

use super::Loader;
use super::file::{RawFile, RawPrompt};
use super::merge::Draft;
use super::read::origin;
use crate::graph::{self, Layer, NodeSpec, Origin, ProjectGraph};
use crate::provider::{Builtin, Hook, Project, Prompt, PromptDefault, PromptType, Secret};

/// Pulumi's project name rule: `[A-Za-z0-9_.-]`, at most 100 characters.
pub fn valid_project_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

impl Loader<'_> {
    /// The optional `name` must match the file name, which is what `-p` selects.
    pub(super) fn check_name(&mut self, stem: &str, raw: &RawFile) -> bool {
        match &raw.name {
            Some(n) if n.get_ref() != stem => {
                let file = self.files.len() - 1;
                self.problem(
                    file,
                    n,
                    format!("the name `{}` differs from the file name `{stem}`", n.get_ref()),
                    "name",
                    format!("set `name = \"{stem}\"` or rename the file to `{}.toml`", n.get_ref()),
                );
                false
            }
            _ => true,
        }
    }

    /// Secrets live in one project's own stack configuration: a graph that declares secrets
    /// needs exactly one `secrets_store` project.
    pub(super) fn secrets_store(&mut self, drafts: &[Draft]) {
        let stores: Vec<&Draft> = drafts
            .iter()
            .filter(|d| d.secrets_store.as_ref().is_some_and(|s| *s.get_ref()))
            .collect();
        if let Some(extra) = stores.get(1) {
            let first = stores[0].name.get_ref().clone();
            let flag = extra.secrets_store.as_ref().expect("a store");
            let message = format!("`{}` and `{first}` are both the secrets store", extra.name.get_ref());
            let hint = "keep `secrets_store = true` on one project".to_string();
            self.problem(extra.file, flag, message, "second store", hint);
        }
        if stores.is_empty()
            && let Some((d, s)) = drafts.iter().find_map(|d| d.secrets.first().map(|s| (d, s)))
        {
            let message = format!(
                "`{}` declares the secret `{}`, but no project keeps secrets",
                d.name.get_ref(),
                s.key.get_ref()
            );
            let hint = "mark the project that stores them with `secrets_store = true` (e.g. `secrets`)".to_string();
            self.problem(d.file, &s.key, message, "secret without a store", hint);
        }
    }

    /// Checks every project, and turns each into the graph's node and the model's project.
    pub(super) fn projects(&mut self, drafts: Vec<Draft>) -> (Vec<NodeSpec>, Vec<Project>) {
        let mut nodes = Vec::with_capacity(drafts.len());
        let mut projects = Vec::with_capacity(drafts.len());
        // Looked at on all cores: a big graph has thousands of project directories.
        let root = &self.ws.root;
        let stats = self.stats;
        let programs = crate::fs::on_all_cores(&drafts, |d| program_stat(root, d.path.get_ref(), stats));
        for (d, program_stat) in drafts.into_iter().zip(programs) {
            // A project with a bad field still takes part in the graph checks, so one run
            // reports every problem (and no misleading "unknown project" for it).
            let p = self.project(&d, program_stat);
            nodes.push(NodeSpec {
                name: p.name.clone(),
                origin: origin(d.file, &d.name),
                layer: p.layer,
                needs: d.needs,
                estimate: p.estimate,
            });
            projects.push(p);
        }
        (nodes, projects)
    }

    /// The graph of `nodes`, or `None` with each of its problems recorded; `excluded` says
    /// where a project something still needs was excluded.
    pub(super) fn graph(&mut self, nodes: Vec<NodeSpec>, excluded: &HashMap<String, Origin>) -> Option<ProjectGraph> {
        match ProjectGraph::build(nodes) {
            Ok(graph) => Some(graph),
            Err(errors) => {
                for e in &errors {
                    self.graph_problem(e, excluded);
                }
                None
            }
        }
    }

    /// Checks one project's own fields, recording each problem.
    /// `program_stat`: its directory holds a `Pulumi.yaml`, of this `stat`.
    fn project(&mut self, d: &Draft, program_stat: Option<std::fs::Metadata>) -> Project {
        let name = d.name.get_ref();
        if !valid_project_name(name) {
            self.problem(
                d.file,
                &d.name,
                format!("`{name}` is not a valid Pulumi project name"),
                "project name",
                "use 1 to 100 characters from A-Z, a-z, 0-9, `_`, `.` and `-`".to_string(),
            );
        } else if name.starts_with('-') {
            self.problem(
                d.file,
                &d.name,
                format!(
                    "`{name}` starts with `-`: the command line would read it as a flag, so no command could name it"
                ),
                "project name",
                format!("start it with a letter or a digit (`{}`)", name.trim_start_matches('-')),
            );
        }
        let layer = d.layer.get_ref().parse::<Layer>();
        if layer.is_err() {
            let names: Vec<&str> = Layer::ALL.iter().map(|l| l.as_str()).collect();
            let hint = match graph::closest(d.layer.get_ref(), names.iter().copied()) {
                Some(c) => format!("did you mean `{c}`? Layers are {}", names.join(", ")),
                None => format!("use one of {}", names.join(", ")),
            };
            let message = format!("unknown layer `{}`", d.layer.get_ref());
            self.problem(d.file, &d.layer, message, "unknown layer", hint);
        }
        self.check_path(d, program_stat.is_some());
        let on_success = self.hooks(d);
        let mut secrets = Vec::new();
        for s in &d.secrets {
            if config_key_ok(s.key.get_ref()) {
                secrets.push(Secret {
                    key: s.key.get_ref().clone(),
                    question: s.question.clone(),
                    default: s.default.clone(),
                    hidden: s.hidden,
                });
            } else {
                let message = format!("secret key `{}` is not of the form namespace:key", s.key.get_ref());
                let hint = "write it as namespace:key (one `:`), such as prometheus:adminpass".to_string();
                self.problem(d.file, &s.key, message, "key", hint);
            }
        }
        if let Some(e) = &d.estimate
            && *e.get_ref() == 0
        {
            let hint = "give the expected duration in whole seconds (at least 1), or leave it out".to_string();
            self.problem(d.file, e, "an estimate of 0 seconds", "estimate", hint);
        }
        let timeout = d
            .timeout
            .as_ref()
            .and_then(|t| match crate::duration::parse(t.get_ref()) {
                Ok(d) => Some(d),
                Err(e) => {
                    let message = match e {
                        crate::duration::DurationError::TooLong => format!("`{}` is a timeout {e}", t.get_ref()),
                        _ => format!("`{}` is not a timeout", t.get_ref()),
                    };
                    let hint = "give a duration such as \"45m\", \"2h\" or \"1h 30m\"".to_string();
                    self.problem(d.file, t, message, "timeout", hint);
                    None
                }
            });
        Project {
            name: name.clone(),
            description: d.description.clone(),
            path: d.path.get_ref().clone(),
            layer: layer.unwrap_or(Layer::Services),
            on_success,
            secrets,
            secrets_store: d.secrets_store.as_ref().is_some_and(|s| *s.get_ref()),
            estimate: d.estimate.as_ref().map(|e| *e.get_ref()),
            timeout,
            declared_in: self.files[d.file].display.clone(),
            program_stat,
        }
    }

    /// The project directory must be inside the workspace and hold a `Pulumi.yaml`.
    fn check_path(&mut self, d: &Draft, has_program: bool) {
        let path = d.path.get_ref();
        let rel = Path::new(path);
        if !inside_workspace(path) {
            let hint = "give a path relative to the workspace root, such as projects/services/x".to_string();
            self.problem(
                d.path_file,
                &d.path,
                format!("project path `{path}` leaves the workspace"),
                "path",
                hint,
            );
        } else if !has_program {
            let hint = if self.ws.root.join(rel).is_dir() {
                format!("add {path}/Pulumi.yaml (name: {}, runtime: yaml)", d.name.get_ref())
            } else {
                format!("create the directory {path} with a Pulumi.yaml, or fix the path")
            };
            let message = format!("project `{}` has no Pulumi.yaml at `{path}`", d.name.get_ref());
            self.problem(d.path_file, &d.path, message, "no Pulumi.yaml here", hint);
        }
    }

    /// `on_success` entries: built-in hook names, or scripts under `scripts/` that exist.
    fn hooks(&mut self, d: &Draft) -> Vec<Hook> {
        let mut hooks = Vec::new();
        for h in &d.on_success {
            let value = h.get_ref();
            if let Some(b) = Builtin::from_name(value) {
                hooks.push(Hook::Builtin(b));
            } else if value.contains('/') {
                if value.starts_with("scripts/") && script_inside(&self.ws.root, value) {
                    hooks.push(Hook::Script(value.clone()));
                } else {
                    let hint = "put hook scripts in scripts/ and give their path, such as scripts/notify.sh";
                    let message = format!("hook script `{value}` does not exist under scripts/");
                    self.problem(d.file, h, message, "no such script", hint.to_string());
                }
            } else {
                let names = Builtin::ALL.map(Builtin::name);
                let known = format!(
                    "built-in hooks: {}; a script is given by its path under scripts/",
                    names.join(", ")
                );
                let hint = match graph::closest(value, names.into_iter()) {
                    Some(c) => format!("did you mean `{c}`? {known}"),
                    None => known,
                };
                self.problem(d.file, h, format!("unknown hook `{value}`"), "unknown hook", hint);
            }
        }
        hooks
    }

    pub(super) fn prompts(&mut self, raw: Vec<(usize, Spanned<RawPrompt>)>) -> Vec<Prompt> {
        let mut seen: HashMap<String, Origin> = HashMap::new();
        let mut out = Vec::new();
        for (file, p) in raw {
            let p = p.into_inner();
            let key = p.key.get_ref().clone();
            if !config_key_ok(&key) {
                self.problem(
                    file,
                    &p.key,
                    format!("prompt key `{key}` is not of the form namespace:key"),
                    "key",
                    "write it as namespace:key (one `:`), such as aws:region".to_string(),
                );
                continue;
            }
            if let Some(first) = seen.get(&key) {
                let first = self.at(*first);
                self.problem(
                    file,
                    &p.key,
                    format!("prompt `{key}` is declared twice"),
                    "again here",
                    format!("it is first declared at {first}; keep one"),
                );
                continue;
            }
            seen.insert(key.clone(), origin(file, &p.key));
            if let Some(def) = &p.default
                && !default_fits(p.kind, def.get_ref())
            {
                self.problem(
                    file,
                    def,
                    format!("the default of `{key}` does not fit its type `{}`", type_name(p.kind)),
                    "default",
                    "give a default of the prompt's type (a `${ns:key}` string may refer to an earlier answer)"
                        .to_string(),
                );
                continue;
            }
            if p.kind == PromptType::Context && p.kubeconfig.is_none() {
                self.problem(
                    file,
                    &p.key,
                    format!("the context prompt `{key}` does not say which kubeconfig it is a context of"),
                    "context",
                    "add `kubeconfig = \"ns:key\"`, the key of the prompt that names the kubeconfig file".to_string(),
                );
                continue;
            }
            out.push(Prompt {
                key,
                question: p.question,
                kind: p.kind,
                default: p.default.map(Spanned::into_inner),
                default_env: p.default_env,
                secret: p.secret,
                skip_if_env: p.skip_if_env,
                none_value: p.none_value,
                kubeconfig: p.kubeconfig,
            });
        }
        out
    }
}

/// The `stat` of the project's `Pulumi.yaml` when there is one (a regular file, links followed)
/// and the path stays in the workspace.
fn program_stat(root: &Path, path: &str, stats: &dyn crate::fs::ProgramStats) -> Option<std::fs::Metadata> {
    use crate::fs::Taken;
    if !inside_workspace(path) {
        return None;
    }
    let stat = match stats.taken(path) {
        Taken::Stat(stat) => stat,
        Taken::Absent => return None,
        Taken::Not => std::fs::metadata(root.join(path).join("Pulumi.yaml")).ok()?,
    };
    stat.is_file().then_some(stat)
}

/// A project path stays in the workspace: relative, with no `..`.
fn inside_workspace(path: &str) -> bool {
    let rel = Path::new(path);
    !rel.is_absolute() && !rel.components().any(|c| c == std::path::Component::ParentDir)
}

/// A hook script is a regular file under `scripts/` once `..` and symlinks are resolved.
fn script_inside(root: &Path, value: &str) -> bool {
    let (Ok(dir), Ok(real)) = (root.join("scripts").canonicalize(), root.join(value).canonicalize()) else {
        return false;
    };
    real.starts_with(dir) && real.is_file()
}

/// Shared stack configuration keys must carry their namespace (`ns:key`): one file serves every
/// project, so a bare key would land in whichever project reads it. One `:` only: Pulumi refuses
/// a stack file holding any other (`config.ParseKey`; its old `ns:config:name` form is `ns:name`).
fn config_key_ok(key: &str) -> bool {
    key.split_once(':')
        .is_some_and(|(ns, k)| !ns.is_empty() && !k.is_empty() && !k.contains(':'))
}

fn default_fits(kind: PromptType, d: &PromptDefault) -> bool {
    let refers = matches!(d, PromptDefault::Text(t) if t.contains("${"));
    match (kind, d) {
        (PromptType::Int, PromptDefault::Int(_))
        | (PromptType::Bool, PromptDefault::Bool(_))
        | (PromptType::List, PromptDefault::List(_) | PromptDefault::Text(_))
        | (PromptType::Path | PromptType::String | PromptType::Context, PromptDefault::Text(_)) => true,
        _ => refers,
    }
}

fn type_name(kind: PromptType) -> &'static str {
    match kind {
        PromptType::String => "string",
        PromptType::Int => "int",
        PromptType::Bool => "bool",
        PromptType::List => "list",
        PromptType::Path => "path",
        PromptType::Context => "context",
    }
}
