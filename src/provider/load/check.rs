//! Checking: the rules a merged provider must keep, each broken one recorded where it was
//! written: names, layers, paths and their programs, hooks, secrets, estimates, timeouts,
//! prompts, and the graph the projects make.

use std::collections::HashMap;
use std::path::Path;

use toml::Spanned;

use super::Loader;
use super::file::{RawFile, RawPrompt};
use super::merge::Draft;
use super::problem::Fault;
use super::read::origin;
use crate::duration::DurationError;
use crate::graph::{GraphError, Layer, NodeSpec, Origin, ProjectGraph};
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
        let file = self.files.len() - 1;
        self.one_line(file, &raw.description);
        match &raw.name {
            Some(n) if n.get_ref() != stem => {
                let problem = Fault::NameDiffers {
                    name: n.get_ref().clone(),
                    stem: stem.to_string(),
                };
                self.problem(file, n, problem);
                false
            }
            _ => true,
        }
    }

    /// A description is one line of text: it is printed in banners, tables and CI logs, where a
    /// line break or a control character would act (a new line GitHub reads as a command, an
    /// escape a terminal obeys).
    fn one_line(&mut self, file: usize, text: &Spanned<String>) {
        if text.get_ref().chars().any(char::is_control) {
            self.problem(file, text, Fault::NotOneLine(text.get_ref().clone()));
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
            let flag = extra.secrets_store.as_ref().expect("a store");
            let problem = Fault::TwoStores {
                first: stores[0].name.get_ref().clone(),
                second: extra.name.get_ref().clone(),
            };
            self.problem(extra.file, flag, problem);
        }
        if stores.is_empty()
            && let Some((d, s)) = drafts.iter().find_map(|d| d.secrets.first().map(|s| (d, s)))
        {
            let problem = Fault::NoStore {
                project: d.name.get_ref().clone(),
                key: s.key.get_ref().clone(),
            };
            self.problem(d.file, &s.key, problem);
        }
    }

    /// Checks every project, and turns each into the graph's node and the model's project.
    pub(super) fn projects(&mut self, drafts: Vec<Draft>) -> (Vec<NodeSpec>, Vec<Project>) {
        let mut nodes = Vec::with_capacity(drafts.len());
        let mut projects = Vec::with_capacity(drafts.len());
        // Looked at on all cores: a big graph has thousands of project directories.
        let root = &self.ws.root;
        let stats = self.stats;
        let programs = crate::programs::on_all_cores(&drafts, |d| program_stat(root, d.path.get_ref(), stats));
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
                for e in errors {
                    let excluded = match &e {
                        GraphError::UnknownNeed { need, .. } => excluded.get(need).copied(),
                        _ => None,
                    };
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
            self.problem(d.file, &d.name, Fault::ProjectName(name.clone()));
        } else if name.starts_with('-') {
            self.problem(d.file, &d.name, Fault::ProjectNameIsAFlag(name.clone()));
        }
        let layer = d.layer.get_ref().parse::<Layer>();
        if layer.is_err() {
            self.problem(d.file, &d.layer, Fault::UnknownLayer(d.layer.get_ref().clone()));
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
                    generate: s.generate,
                });
            } else {
                self.problem(d.file, &s.key, Fault::SecretKey(s.key.get_ref().clone()));
            }
        }
        if let Some(text) = &d.description {
            self.one_line(d.file, text);
        }
        if let Some(e) = &d.estimate
            && *e.get_ref() == 0
        {
            self.problem(d.file, e, Fault::ZeroEstimate);
        }
        let timeout = d
            .timeout
            .as_ref()
            .and_then(|t| match crate::duration::parse(t.get_ref()) {
                Ok(d) => Some(d),
                Err(e) => {
                    let value = t.get_ref().clone();
                    let problem = match e {
                        DurationError::TooLong => Fault::TimeoutTooLong(value),
                        _ => Fault::NotATimeout(value),
                    };
                    self.problem(d.file, t, problem);
                    None
                }
            });
        Project {
            name: name.clone(),
            description: d.description.as_ref().map(|s| s.get_ref().clone()),
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
        if !inside_workspace(path) {
            self.problem(d.path_file, &d.path, Fault::PathLeaves(path.clone()));
        } else if !has_program {
            let problem = Fault::NoProgram {
                project: d.name.get_ref().clone(),
                path: path.clone(),
                dir_exists: self.ws.root.join(path).is_dir(),
            };
            self.problem(d.path_file, &d.path, problem);
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
                    self.problem(d.file, h, Fault::NoScript(value.clone()));
                }
            } else {
                self.problem(d.file, h, Fault::UnknownHook(value.clone()));
            }
        }
        hooks
    }

    /// The prompts of the provider and its layers, in order, each kept when its key is
    /// namespaced and declared once, its default fits its type, and a context names its kubeconfig.
    pub(super) fn prompts(&mut self, raw: Vec<(usize, Spanned<RawPrompt>)>) -> Vec<Prompt> {
        let mut seen: HashMap<String, Origin> = HashMap::new();
        let mut out = Vec::new();
        for (file, p) in raw {
            let p = p.into_inner();
            let key = p.key.get_ref().clone();
            if !config_key_ok(&key) {
                self.problem(file, &p.key, Fault::PromptKey(key));
                continue;
            }
            if let Some(first) = seen.get(&key) {
                let first = *first;
                self.problem(file, &p.key, Fault::PromptTwice { key, first });
                continue;
            }
            seen.insert(key.clone(), origin(file, &p.key));
            if let Some(def) = &p.default
                && !default_fits(p.kind, def.get_ref())
            {
                self.problem(file, def, Fault::DefaultType { key, kind: p.kind });
                continue;
            }
            if p.kind == PromptType::Context && p.kubeconfig.is_none() {
                self.problem(file, &p.key, Fault::ContextWithoutKubeconfig(key));
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
                only_if_in_example: p.only_if_in_example,
            });
        }
        out
    }
}

/// The `stat` of the project's `Pulumi.yaml` when there is one (a regular file, links followed)
/// and the path stays in the workspace.
fn program_stat(root: &Path, path: &str, stats: &dyn crate::programs::ProgramStats) -> Option<std::fs::Metadata> {
    use crate::programs::Taken;
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
        | (
            PromptType::Path
            | PromptType::String
            | PromptType::Context
            | PromptType::Url
            | PromptType::Cidr
            | PromptType::Duration,
            PromptDefault::Text(_),
        ) => true,
        _ => refers,
    }
}
