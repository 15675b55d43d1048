//! Loading a provider: its file and the layers it includes, merged, rewired, checked, and turned
//! into a [`ProjectGraph`]. Every problem found is reported at once, each pointing at its file,
//! line and column, with the fix.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use toml::Spanned;

use super::file::{FileKind, RawFile, RawProject, RawPrompt, RawSecret};
use super::{
    Builtin, Check, Entry, Hook, Project, Prompt, PromptDefault, PromptType, Provider, Secret, valid_project_name,
};
use crate::diagnostic::{FileDiagnostic, SourceFile};
use crate::graph::{self, EdgeKind, GraphError, Layer, NeedSpec, NodeSpec, Origin, ProjectGraph};
use crate::workspace::{PROVIDERS_DIR, Workspace};

/// Names of the `*.toml` files in `providers/`, sorted.
pub fn file_names(root: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root.join(PROVIDERS_DIR))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// Reads every file of `providers/` far enough to list it. Files that do not parse are
/// returned as diagnostics beside the entries that do.
pub(crate) fn entries(ws: &Workspace) -> std::io::Result<(Vec<Entry>, Vec<FileDiagnostic>)> {
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    for name in file_names(&ws.root)? {
        let mut loader = Loader::new(ws, &crate::fs::NoStats);
        if let Some((_, raw)) = loader.read(&name)
            && loader.check_name(&name, &raw)
        {
            entries.push(Entry {
                name,
                kind: raw.kind,
                description: raw.description,
                infra_type: raw.infra_type,
            });
        }
        problems.append(&mut loader.problems);
    }
    Ok((entries, problems))
}

/// Why a provider could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// No `providers/<name>.toml`, or it is a layer: a usage error.
    NotAProvider { name: String, is_layer: bool },
    /// The files have problems, each pointing into its file.
    Invalid(Vec<FileDiagnostic>),
}

/// Loads provider `name` with its layers and checks everything: the result is ready to plan.
pub(crate) fn load(ws: &Workspace, name: &str) -> Result<Provider, LoadError> {
    load_seeing(ws, name, &crate::fs::NoStats)
}

/// [`load`], with the `stat`s of project programs that were taken ahead.
pub(crate) fn load_seeing(
    ws: &Workspace,
    name: &str,
    stats: &dyn crate::fs::ProgramStats,
) -> Result<Provider, LoadError> {
    let mut loader = Loader::new(ws, stats);
    let root = &ws.root;
    if !file_name_ok(name) || !inside(root, &root.join(PROVIDERS_DIR).join(format!("{name}.toml"))) {
        return Err(LoadError::NotAProvider {
            name: name.to_string(),
            is_layer: false,
        });
    }
    let Some((file, raw)) = loader.read(name) else {
        return Err(LoadError::Invalid(loader.problems));
    };
    if raw.kind == FileKind::Layer {
        return Err(LoadError::NotAProvider {
            name: name.to_string(),
            is_layer: true,
        });
    }
    let provider = loader.resolve(name, file, raw);
    match provider {
        Some(p) if loader.problems.is_empty() => Ok(p),
        _ => Err(LoadError::Invalid(loader.problems)),
    }
}

/// A project being merged: its fields with where each came from.
struct Draft {
    file: usize,
    name: Spanned<String>,
    description: Option<String>,
    path: Spanned<String>,
    /// The file `path` was written in (a provider's rewire may replace a layer's path).
    path_file: usize,
    layer: Spanned<String>,
    needs: Vec<NeedSpec>,
    on_success: Vec<Spanned<String>>,
    estimate: Option<Spanned<u64>>,
    timeout: Option<Spanned<String>>,
    secrets: Vec<RawSecret>,
    secrets_store: Option<Spanned<bool>>,
}

/// Projects, tools, prompts and checks gathered from a provider and its layers.
struct Merged {
    drafts: Vec<Draft>,
    tools: Vec<String>,
    credentials: Vec<String>,
    prompts: Vec<(usize, Spanned<RawPrompt>)>,
    checks: Vec<Check>,
}

struct Loader<'a> {
    /// Where the files are, and how their paths are shown.
    ws: &'a Workspace,
    stats: &'a dyn crate::fs::ProgramStats,
    files: Vec<SourceFile>,
    problems: Vec<FileDiagnostic>,
}

impl<'a> Loader<'a> {
    fn new(ws: &'a Workspace, stats: &'a dyn crate::fs::ProgramStats) -> Self {
        Loader {
            ws,
            stats,
            files: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn problem<T>(
        &mut self,
        file: usize,
        span: &Spanned<T>,
        message: impl Into<String>,
        label: &str,
        help: impl Into<Option<String>>,
    ) {
        let d = FileDiagnostic::new(&self.files[file], span.span(), message, label, help.into());
        self.problems.push(d);
    }

    fn at(&self, origin: Origin) -> String {
        self.files[origin.file].location(origin.start)
    }

    /// Reads and parses `providers/<name>.toml`; a syntax or shape error is recorded.
    fn read(&mut self, name: &str) -> Option<(usize, RawFile)> {
        let path = self.ws.root.join(PROVIDERS_DIR).join(format!("{name}.toml"));
        let display = self.ws.show(&path);
        let text = match crate::fs::read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                self.problems.push(FileDiagnostic::whole_file(
                    &display,
                    format!("cannot read the file: {e}"),
                    Some("check that it exists and is readable UTF-8 text".into()),
                ));
                return None;
            }
        };
        self.files.push(SourceFile::new(display, text));
        let file = self.files.len() - 1;
        match toml::from_str::<RawFile>(&self.files[file].text) {
            Ok(raw) => Some((file, raw)),
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                let d = FileDiagnostic::new(
                    &self.files[file],
                    span,
                    e.message().trim().to_string(),
                    "here",
                    Some("see the provider file format in README.md (section \"Provider files\")".into()),
                );
                self.problems.push(d);
                None
            }
        }
    }

    /// The optional `name` must match the file name, which is what `-p` selects.
    fn check_name(&mut self, stem: &str, raw: &RawFile) -> bool {
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

    fn resolve(&mut self, name: &str, file: usize, raw: RawFile) -> Option<Provider> {
        self.check_name(name, &raw);
        let RawFile {
            include,
            exclude,
            required_tools,
            credentials,
            projects,
            rewire,
            prompts,
            description,
            infra_type,
            checks,
            ..
        } = raw;

        // The provider's own projects come first: they are the identity, infra and cluster
        // layers the shared layers build on, so the plan reads top-down.
        let mut merged = Merged {
            drafts: projects.into_iter().map(|p| draft(file, p)).collect(),
            tools: required_tools,
            credentials,
            prompts: prompts.into_iter().map(|p| (file, p)).collect(),
            checks,
        };
        let mut seen = BTreeSet::new();
        for inc in include {
            if seen.insert(inc.get_ref().clone()) {
                let before = self.problems.len();
                self.include_layer(file, &inc, &mut merged);
                if self.problems.len() > before {
                    // Without the layer's projects every rewire and need into it would be
                    // reported too, burying the one real problem.
                    return None;
                }
            } else {
                let message = format!("layer `{}` is included twice", inc.get_ref());
                self.problem(file, &inc, message, "repeated", "include each layer once".to_string());
            }
        }
        let excluded = self.exclude(file, exclude, &mut merged.drafts);
        for (target, rw) in rewire {
            let Some(i) = merged.drafts.iter().position(|d| d.name.get_ref() == &target) else {
                let hint = suggest_project(&target, &merged.drafts);
                self.problem(
                    file,
                    &rw,
                    format!("cannot rewire `{target}`: no such project"),
                    "unknown project",
                    hint,
                );
                continue;
            };
            let rw = rw.into_inner();
            let d = &mut merged.drafts[i];
            if let Some(path) = rw.path {
                d.path = path;
                d.path_file = file;
            }
            self.rewire(file, d, EdgeKind::Data, rw.needs, &rw.add_needs, rw.remove_needs);
            self.rewire(file, d, EdgeKind::Order, rw.after, &rw.add_after, rw.remove_after);
        }

        let tools = unique(merged.tools);
        let credentials = unique(merged.credentials);
        let prompts = self.prompts(merged.prompts);
        self.secrets_store(&merged.drafts);
        let mut nodes = Vec::with_capacity(merged.drafts.len());
        let mut projects = Vec::with_capacity(merged.drafts.len());
        // Looked at on all cores: a big graph has thousands of project directories.
        let root = &self.ws.root;
        let stats = self.stats;
        let programs = crate::fs::on_all_cores(&merged.drafts, |d| program_stat(root, d.path.get_ref(), stats));
        for (d, program_stat) in merged.drafts.into_iter().zip(programs) {
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
        let graph = ProjectGraph::build(nodes);
        if let Err(errors) = &graph {
            for e in errors {
                self.graph_problem(e, &excluded);
            }
        }
        let Ok(graph) = graph else { return None };
        if !self.problems.is_empty() {
            return None;
        }
        Some(Provider {
            name: name.to_string(),
            description,
            infra_type,
            file: self.files[file].display.clone(),
            required_tools: tools,
            credentials,
            projects,
            prompts,
            checks: merged.checks,
            graph,
            sources: self.files.clone(),
        })
    }

    /// Secrets live in one project's own stack configuration: a graph that declares secrets
    /// needs exactly one `secrets_store` project.
    fn secrets_store(&mut self, drafts: &[Draft]) {
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

    /// Adds the projects, tools and prompts of the layer `inc` names to `merged`.
    fn include_layer(&mut self, file: usize, inc: &Spanned<String>, merged: &mut Merged) {
        let layer_name = inc.get_ref();
        let layer_file = self.ws.root.join(PROVIDERS_DIR).join(format!("{layer_name}.toml"));
        if !file_name_ok(layer_name) || !inside(&self.ws.root, &layer_file) {
            let known: Vec<String> = file_names(&self.ws.root).unwrap_or_default();
            let hint = match graph::closest(layer_name, known.iter().map(String::as_str)) {
                Some(c) => format!("did you mean `{c}`? Layers are files in {PROVIDERS_DIR}/ with `kind = \"layer\"`"),
                None => format!(
                    "create {PROVIDERS_DIR}/{layer_name}.toml with `kind = \"layer\"`, or remove it from `include`"
                ),
            };
            let message = format!("included layer `{layer_name}` does not exist");
            self.problem(file, inc, message, "no such layer", hint);
            return;
        }
        let Some((lfile, lraw)) = self.read(layer_name) else {
            return;
        };
        if lraw.kind != FileKind::Layer {
            self.problem(
                file,
                inc,
                format!("`{layer_name}` is a provider, not a layer"),
                "not a layer",
                format!(
                    "only files with `kind = \"layer\"` can be included; move the shared projects of \
                     {PROVIDERS_DIR}/{layer_name}.toml into a layer"
                ),
            );
            return;
        }
        self.check_name(layer_name, &lraw);
        let misplaced = "move it to the provider file that needs it".to_string();
        if let Some(first) = lraw.include.first() {
            let hint = "include every layer from the provider file instead".to_string();
            self.problem(lfile, first, "a layer cannot include other layers", "include", hint);
        }
        if let Some(first) = lraw.exclude.first() {
            self.problem(
                lfile,
                first,
                "`exclude` belongs in provider files",
                "exclude",
                misplaced.clone(),
            );
        }
        if let Some((_, first)) = lraw.rewire.iter().next() {
            self.problem(lfile, first, "`rewire` belongs in provider files", "rewire", misplaced);
        }
        merged.drafts.extend(lraw.projects.into_iter().map(|p| draft(lfile, p)));
        merged.tools.extend(lraw.required_tools);
        merged.credentials.extend(lraw.credentials);
        merged.prompts.extend(lraw.prompts.into_iter().map(|p| (lfile, p)));
        merged.checks.extend(lraw.checks);
    }

    /// Removes the projects of included layers this provider does without; returns where each
    /// was excluded, for the hint when something still needs one.
    fn exclude(
        &mut self,
        file: usize,
        exclude: Vec<Spanned<String>>,
        drafts: &mut Vec<Draft>,
    ) -> HashMap<String, Origin> {
        let mut excluded = HashMap::new();
        for ex in exclude {
            let n = ex.get_ref();
            match drafts.iter().position(|d| d.name.get_ref() == n) {
                Some(i) if drafts[i].file == file => {
                    let message = format!("`{n}` is declared in this file; exclude only works on included layers");
                    self.problem(
                        file,
                        &ex,
                        message,
                        "own project",
                        "delete its [[project]] table instead".to_string(),
                    );
                }
                Some(i) => {
                    drafts.remove(i);
                    excluded.insert(n.clone(), origin(file, &ex));
                }
                None => {
                    let hint = suggest_project(n, drafts);
                    let message = format!("cannot exclude `{n}`: no included layer declares it");
                    self.problem(file, &ex, message, "unknown project", hint);
                }
            }
        }
        excluded
    }

    /// Applies one `[rewire.X]` table's replace / add / remove lists for one kind of need.
    fn rewire(
        &mut self,
        file: usize,
        d: &mut Draft,
        kind: EdgeKind,
        replace: Option<Vec<Spanned<String>>>,
        add: &[Spanned<String>],
        remove: Vec<Spanned<String>>,
    ) {
        if let Some(replace) = replace {
            d.needs.retain(|n| n.kind != kind);
            d.needs.extend(replace.iter().map(|n| need(file, n, kind)));
        }
        d.needs.extend(add.iter().map(|n| need(file, n, kind)));
        for r in remove {
            let before = d.needs.len();
            d.needs.retain(|n| !(n.kind == kind && &n.name == r.get_ref()));
            if d.needs.len() == before {
                let field = if kind == EdgeKind::Data { "needs" } else { "after" };
                self.problem(
                    file,
                    &r,
                    format!(
                        "`{}` does not list `{}` in its `{field}`",
                        d.name.get_ref(),
                        r.get_ref()
                    ),
                    "nothing to remove",
                    format!("remove it from `remove_{field}`"),
                );
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

    fn prompts(&mut self, raw: Vec<(usize, Spanned<RawPrompt>)>) -> Vec<Prompt> {
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

    fn graph_problem(&mut self, e: &GraphError, excluded: &HashMap<String, Origin>) {
        let (origin, label, help) = match e {
            GraphError::Duplicate { first, second, .. } => (
                *second,
                "declared again here",
                format!(
                    "it is first declared at {}; project names are Pulumi project names and must be unique, or their stacks collide",
                    self.at(*first)
                ),
            ),
            GraphError::UnknownNeed {
                need,
                origin,
                suggestion,
                ..
            } => {
                let help = if let Some(ex) = excluded.get(need) {
                    format!(
                        "`{need}` is excluded at {}; remove this need with `remove_needs` in a [rewire] table",
                        self.at(*ex)
                    )
                } else if let Some(s) = suggestion {
                    format!("did you mean `{s}`?")
                } else {
                    format!("declare a project named `{need}`, or remove it from the list")
                };
                (*origin, "unknown project", help)
            }
            GraphError::SelfNeed { project, origin } => {
                (*origin, "itself", format!("remove `{project}` from its own needs"))
            }
            GraphError::RepeatedNeed { need, origin, .. } => (
                *origin,
                "repeated",
                format!("list `{need}` once, in `needs` or in `after`"),
            ),
            GraphError::EstimateOverflow { origin, .. } => (
                *origin,
                "the chain ends here",
                "give `estimate` as the expected seconds of one run of each project (600 for ten minutes)".to_string(),
            ),
            GraphError::Cycle { origin, .. } => (
                *origin,
                "this need starts the cycle",
                "a project cannot wait for itself: remove or reverse one of the needs along the cycle".to_string(),
            ),
        };
        let d = FileDiagnostic::new(
            &self.files[origin.file],
            origin.start..origin.end,
            e.to_string(),
            label,
            Some(help),
        );
        self.problems.push(d);
    }
}

fn suggest_project(name: &str, drafts: &[Draft]) -> String {
    match graph::closest(name, drafts.iter().map(|d| d.name.get_ref().as_str())) {
        Some(c) => format!("did you mean `{c}`?"),
        None => "name a project declared in this provider or one of its layers".into(),
    }
}

fn origin<T>(file: usize, s: &Spanned<T>) -> Origin {
    let span = s.span();
    Origin {
        file,
        start: span.start,
        end: span.end,
    }
}

fn need(file: usize, s: &Spanned<String>, kind: EdgeKind) -> NeedSpec {
    NeedSpec {
        name: s.get_ref().clone(),
        kind,
        origin: origin(file, s),
    }
}

fn draft(file: usize, p: RawProject) -> Draft {
    let mut needs: Vec<NeedSpec> = p.needs.iter().map(|n| need(file, n, EdgeKind::Data)).collect();
    needs.extend(p.after.iter().map(|n| need(file, n, EdgeKind::Order)));
    Draft {
        file,
        name: p.name,
        description: p.description,
        path: p.path,
        path_file: file,
        layer: p.layer,
        needs,
        on_success: p.on_success,
        estimate: p.estimate,
        timeout: p.timeout,
        secrets: p.secrets,
        secrets_store: p.secrets_store,
    }
}

/// A provider or layer is named by its file in `providers/`: a plain name, no path.
fn file_name_ok(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

/// `path` is a regular file in `providers/` once symlinks are followed (a link out of the
/// directory is refused).
fn inside(root: &Path, path: &Path) -> bool {
    let (Ok(dir), Ok(real)) = (root.join(PROVIDERS_DIR).canonicalize(), path.canonicalize()) else {
        return false;
    };
    real.starts_with(dir) && real.is_file()
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

/// The names in their first order, each once.
fn unique(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Provider files by name and their text.
    type Files<'a> = &'a [(&'a str, &'a str)];
    /// Projects in order, each with what it needs.
    type Graph<'a> = &'a [(&'a str, &'a [&'a str])];
    /// What the case is about, its provider files by name, and the problems expected.
    type Broken = (&'static str, Vec<(&'static str, String)>, Vec<&'static str>);

    /// A layer of two projects the cases include, rewire and exclude.
    const LAYER: &str = r#"kind = "layer"
description = "Shared"

[[project]]
name = "logstore"
path = "projects/logstore"
layer = "services"
needs = ["cluster"]

[[project]]
name = "logagent"
path = "projects/logagent"
layer = "services"
needs = ["logstore"]
"#;

    /// A provider of one cluster project, `extra` appended (more projects, tables, or keys that
    /// must come before the first table go in `head`).
    fn provider(head: &str, extra: &str) -> String {
        format!(
            "description = \"Test\"\n{head}\n[[project]]\nname = \"cluster\"\npath = \"projects/cluster\"\nlayer = \"cluster\"\n{extra}"
        )
    }

    /// Loads `p` from a workspace holding `files` and a `Pulumi.yaml` in every project directory.
    fn load_in(files: &[(&str, &str)]) -> Result<Provider, LoadError> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(PROVIDERS_DIR).join(format!("{name}.toml"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        for p in ["cluster", "logstore", "logagent", "extra"] {
            let d = dir.path().join("projects").join(p);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("Pulumi.yaml"), format!("name: {p}\nruntime: yaml\n")).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/notify.sh"), "#!/bin/sh\n").unwrap();
        // Paths shown relative to the workspace, as when the runner runs at its root.
        let ws = Workspace::locate(Some(dir.path()), dir.path()).unwrap();
        load(&ws, "p")
    }

    /// `file:line:column: message` of every problem.
    fn problems(r: Result<Provider, LoadError>) -> Vec<String> {
        match r {
            Ok(p) => panic!("{} loaded", p.name),
            Err(LoadError::NotAProvider { name, is_layer }) => vec![format!("not a provider: {name} {is_layer}")],
            Err(LoadError::Invalid(ds)) => ds.iter().map(|d| format!("{}: {}", d.location, d.message)).collect(),
        }
    }

    #[test]
    fn valid_files_load_merged_and_rewired() {
        let cases: &[(&str, Files<'_>, Graph<'_>)] = &[
            ("own projects only", &[("p", &provider("", ""))], &[("cluster", &[])]),
            (
                "a layer's projects follow the provider's",
                &[("p", &provider("include = [\"shared\"]", "")), ("shared", LAYER)],
                &[
                    ("cluster", &[]),
                    ("logstore", &["cluster"]),
                    ("logagent", &["logstore"]),
                ],
            ),
            (
                "a rewire replaces needs",
                &[
                    (
                        "p",
                        &provider(
                            "include = [\"shared\"]",
                            "\n[rewire]\nlogagent = { needs = [\"cluster\"], add_after = [\"logstore\"] }\n",
                        ),
                    ),
                    ("shared", LAYER),
                ],
                &[
                    ("cluster", &[]),
                    ("logstore", &["cluster"]),
                    ("logagent", &["cluster", "logstore"]),
                ],
            ),
            (
                "an excluded project is gone",
                &[
                    ("p", &provider("include = [\"shared\"]\nexclude = [\"logagent\"]", "")),
                    ("shared", LAYER),
                ],
                &[("cluster", &[]), ("logstore", &["cluster"])],
            ),
        ];
        for (what, files, want) in cases {
            let p = load_in(files).unwrap_or_else(|e| panic!("{what}: {:?}", problems(Err(e))));
            let got: Vec<(String, Vec<String>)> = p
                .projects
                .iter()
                .enumerate()
                .map(|(i, pr)| {
                    let needs = p
                        .graph
                        .needs(i)
                        .iter()
                        .map(|n| p.graph.name(n.node).to_string())
                        .collect();
                    (pr.name.clone(), needs)
                })
                .collect();
            let want: Vec<(String, Vec<String>)> = want
                .iter()
                .map(|(n, needs)| (n.to_string(), needs.iter().map(ToString::to_string).collect()))
                .collect();
            assert_eq!(got, want, "{what}");
        }
    }

    /// Each problem's `file:line:column: message` starts with the expected text, in order.
    #[test]
    fn problems_point_at_file_line_and_column() {
        for (what, files, want) in broken() {
            let got = problems(load_in(
                &files.iter().map(|(n, t)| (*n, t.as_str())).collect::<Vec<_>>(),
            ));
            assert_eq!(got.len(), want.len(), "{what}: {got:#?}");
            for (g, w) in got.iter().zip(want) {
                assert!(g.starts_with(w), "{what}:\n got  {g}\n want {w}…");
            }
        }
    }

    /// The broken files of `problems_point_at_file_line_and_column`.
    fn broken() -> Vec<Broken> {
        let one = |text: String| vec![("p", text)];
        let two_projects = "\n[[project]]\nname = \"a\"\npath = \"projects/none\"\nlayer = \"apps\"\n\n\
                            [[project]]\nname = \"b\"\npath = \"../b\"\nlayer = \"apps\"\n";
        let two_stores = "secrets_store = true\n\n[[project]]\nname = \"extra\"\npath = \"projects/extra\"\n\
                          layer = \"services\"\nsecrets_store = true\n";
        let prompts = "\n[[prompt]]\nkey = \"region\"\nquestion = \"?\"\n\n[[prompt]]\nkey = \"eks:min\"\n\
                       question = \"?\"\ntype = \"int\"\ndefault = \"three\"\n\n[[prompt]]\nkey = \"eks:node:size\"\n\
                       question = \"?\"\n";
        vec![
            (
                "a syntax error",
                one("description = \"x\"\n[[project]\n".into()),
                vec!["providers/p.toml:2:11: unclosed array table"],
            ),
            (
                "an unknown key",
                one(provider("colour = \"red\"", "")),
                vec!["providers/p.toml:2:1: unknown field `colour`"],
            ),
            (
                "a name that is not the file's",
                one(provider("name = \"q\"", "")),
                vec!["providers/p.toml:2:8: the name `q` differs from the file name `p`"],
            ),
            (
                "an unknown layer",
                one(provider("", "").replace("layer = \"cluster\"", "layer = \"clustr\"")),
                vec!["providers/p.toml:6:9: unknown layer `clustr`"],
            ),
            (
                "a missing included layer",
                one(provider("include = [\"shraed\"]", "")),
                vec!["providers/p.toml:2:12: included layer `shraed` does not exist"],
            ),
            (
                "a provider included as a layer",
                vec![("p", provider("include = [\"q\"]", "")), ("q", provider("", ""))],
                vec!["providers/p.toml:2:12: `q` is a provider, not a layer"],
            ),
            (
                "a rewire of an unknown project",
                one(provider("", "\n[rewire]\nlogagnt = { needs = [\"cluster\"] }\n")),
                vec!["providers/p.toml:9:11: cannot rewire `logagnt`: no such project"],
            ),
            (
                "an unknown hook",
                one(provider("", "on_success = [\"kubeconfig-merg\"]\n")),
                vec!["providers/p.toml:7:15: unknown hook `kubeconfig-merg`"],
            ),
            (
                "a hook script outside scripts/",
                one(provider("", "on_success = [\"tools/notify.sh\"]\n")),
                vec!["providers/p.toml:7:15: hook script `tools/notify.sh` does not exist under scripts/"],
            ),
            (
                "a path without Pulumi.yaml and a path leaving the workspace",
                one(provider("", two_projects)),
                vec![
                    "providers/p.toml:10:8: project `a` has no Pulumi.yaml at `projects/none`",
                    "providers/p.toml:15:8: project path `../b` leaves the workspace",
                ],
            ),
            (
                "two secrets stores",
                one(provider("", two_stores)),
                vec!["providers/p.toml:13:17: `extra` and `cluster` are both the secrets store"],
            ),
            (
                "a prompt without a namespace, one with two, and a default of the wrong type",
                one(provider("", prompts)),
                vec![
                    "providers/p.toml:9:7: prompt key `region` is not of the form namespace:key",
                    "providers/p.toml:16:11: the default of `eks:min` does not fit its type `int`",
                    "providers/p.toml:19:7: prompt key `eks:node:size` is not of the form namespace:key",
                ],
            ),
            (
                "a layer asked for as a provider",
                one(LAYER.into()),
                vec!["not a provider: p true"],
            ),
        ]
    }
}
