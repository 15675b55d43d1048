//! Merging: a provider's own projects, tools, prompts and checks with those of the layers it
//! includes, then its `exclude` list and `[rewire]` tables applied to the projects.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use toml::Spanned;

use super::Loader;
use super::file::{RawFile, RawProject, RawPrompt, RawRewire, RawSecret};
use super::read::{is_file_of_providers, origin};
use crate::graph::{self, EdgeKind, NeedSpec, Origin};
use crate::provider::{Check, FileKind};
use crate::workspace::PROVIDERS_DIR;

/// A project being merged: its fields with where each came from.
pub(super) struct Draft {
    pub(super) file: usize,
    pub(super) name: Spanned<String>,
    pub(super) description: Option<String>,
    pub(super) path: Spanned<String>,
    /// The file `path` was written in (a provider's rewire may replace a layer's path).
    pub(super) path_file: usize,
    pub(super) layer: Spanned<String>,
    pub(super) needs: Vec<NeedSpec>,
    pub(super) on_success: Vec<Spanned<String>>,
    pub(super) estimate: Option<Spanned<u64>>,
    pub(super) timeout: Option<Spanned<String>>,
    pub(super) secrets: Vec<RawSecret>,
    pub(super) secrets_store: Option<Spanned<bool>>,
}

/// Projects, tools, prompts and checks gathered from a provider and its layers.
#[derive(Default)]
pub(super) struct Merged {
    pub(super) drafts: Vec<Draft>,
    pub(super) tools: Vec<String>,
    pub(super) credentials: Vec<String>,
    pub(super) prompts: Vec<(usize, Spanned<RawPrompt>)>,
    pub(super) checks: Vec<Check>,
}

impl Merged {
    /// Appends the projects, tools, prompts and checks `raw`, read from `file`, declares.
    pub(super) fn add(&mut self, file: usize, raw: RawFile) {
        self.drafts.extend(raw.projects.into_iter().map(|p| draft(file, p)));
        self.tools.extend(raw.required_tools);
        self.credentials.extend(raw.credentials);
        self.prompts.extend(raw.prompts.into_iter().map(|p| (file, p)));
        self.checks.extend(raw.checks);
    }
}

impl Loader<'_> {
    /// Adds the layers the provider `file` includes to `merged`, each once; false when one of
    /// them could not be added.
    pub(super) fn include_layers(&mut self, file: usize, include: Vec<Spanned<String>>, merged: &mut Merged) -> bool {
        let mut seen = BTreeSet::new();
        for inc in include {
            if seen.insert(inc.get_ref().clone()) {
                let before = self.problems.len();
                self.include_layer(file, &inc, merged);
                if self.problems.len() > before {
                    return false;
                }
            } else {
                let message = format!("layer `{}` is included twice", inc.get_ref());
                self.problem(file, &inc, message, "repeated", "include each layer once".to_string());
            }
        }
        true
    }

    /// Adds the projects, tools and prompts of the layer `inc` names to `merged`.
    fn include_layer(&mut self, file: usize, inc: &Spanned<String>, merged: &mut Merged) {
        let layer_name = inc.get_ref();
        if !is_file_of_providers(&self.ws.root, layer_name) {
            let known: Vec<String> = super::file_names(&self.ws.root).unwrap_or_default();
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
        merged.add(lfile, lraw);
    }

    /// Removes the projects of included layers this provider does without; returns where each
    /// was excluded, for the hint when something still needs one.
    pub(super) fn exclude(
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

    /// Applies the provider `file`'s `[rewire]` tables: another path, and needs replaced,
    /// added or removed.
    pub(super) fn rewire(&mut self, file: usize, rewire: BTreeMap<String, Spanned<RawRewire>>, drafts: &mut [Draft]) {
        for (target, rw) in rewire {
            let Some(i) = drafts.iter().position(|d| d.name.get_ref() == &target) else {
                let hint = suggest_project(&target, drafts);
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
            let d = &mut drafts[i];
            if let Some(path) = rw.path {
                d.path = path;
                d.path_file = file;
            }
            self.rewire_needs(file, d, EdgeKind::Data, rw.needs, &rw.add_needs, rw.remove_needs);
            self.rewire_needs(file, d, EdgeKind::Order, rw.after, &rw.add_after, rw.remove_after);
        }
    }

    /// Applies one `[rewire.X]` table's replace / add / remove lists for one kind of need.
    fn rewire_needs(
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
}

fn suggest_project(name: &str, drafts: &[Draft]) -> String {
    match graph::closest(name, drafts.iter().map(|d| d.name.get_ref().as_str())) {
        Some(c) => format!("did you mean `{c}`?"),
        None => "name a project declared in this provider or one of its layers".into(),
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

/// The names in their first order, each once.
pub(super) fn unique(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}
