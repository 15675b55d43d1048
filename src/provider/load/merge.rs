//! Merging: a provider's own projects, tools, prompts and checks with those of the layers it
//! includes, then its `exclude` list and `[rewire]` tables applied to the projects.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use toml::Spanned;

use super::Loader;
use super::file::{RawFile, RawProject, RawPrompt, RawRewire, RawSecret};
use super::problem::Fault;
use super::read::{is_file_of_providers, origin};
use crate::graph::{self, EdgeKind, NeedSpec, Origin};
use crate::provider::{Check, FileKind};

/// A project being merged: its fields with where each came from.
pub(super) struct Draft {
    pub(super) file: usize,
    pub(super) name: Spanned<String>,
    pub(super) description: Option<Spanned<String>>,
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
pub(super) struct Gathered {
    pub(super) drafts: Vec<Draft>,
    pub(super) tools: Vec<String>,
    /// How to get each tool; the provider's word over a layer's (the provider is added first).
    pub(super) install: std::collections::BTreeMap<String, String>,
    pub(super) credentials: Vec<String>,
    pub(super) prompts: Vec<(usize, Spanned<RawPrompt>)>,
    pub(super) checks: Vec<Check>,
}

impl Gathered {
    /// Appends the projects, tools, prompts and checks `raw`, read from `file`, declares.
    pub(super) fn add(&mut self, file: usize, raw: RawFile) {
        self.drafts.extend(raw.projects.into_iter().map(|p| draft(file, p)));
        self.tools.extend(raw.required_tools);
        for (tool, how) in raw.install {
            self.install.entry(tool).or_insert(how);
        }
        self.credentials.extend(raw.credentials);
        self.prompts.extend(raw.prompts.into_iter().map(|p| (file, p)));
        self.checks.extend(raw.checks);
    }
}

impl Loader<'_> {
    /// Adds the layers the provider `file` includes to `merged`, each once; false when one of
    /// them could not be added.
    pub(super) fn include_layers(&mut self, file: usize, include: Vec<Spanned<String>>, merged: &mut Gathered) -> bool {
        let mut seen = BTreeSet::new();
        for inc in include {
            if seen.insert(inc.get_ref().clone()) {
                let before = self.problems.len();
                self.include_layer(file, &inc, merged);
                if self.problems.len() > before {
                    return false;
                }
            } else {
                self.problem(file, &inc, Fault::IncludedTwice(inc.get_ref().clone()));
            }
        }
        true
    }

    /// Adds the projects, tools and prompts of the layer `inc` names to `merged`.
    fn include_layer(&mut self, file: usize, inc: &Spanned<String>, merged: &mut Gathered) {
        let layer_name = inc.get_ref();
        if !is_file_of_providers(&self.ws.root, layer_name) {
            let known: Vec<String> = super::file_names(&self.ws.root).unwrap_or_default();
            let closest = graph::closest(layer_name, known.iter().map(String::as_str));
            let layer = layer_name.clone();
            self.problem(file, inc, Fault::NoSuchLayer { layer, closest });
            return;
        }
        let Some((lfile, lraw)) = self.read(layer_name) else {
            return;
        };
        if lraw.kind != FileKind::Layer {
            self.problem(file, inc, Fault::NotALayer(layer_name.clone()));
            return;
        }
        self.check_name(layer_name, &lraw);
        if let Some(first) = lraw.include.first() {
            self.problem(lfile, first, Fault::LayerIncludes);
        }
        if let Some(first) = lraw.exclude.first() {
            self.problem(lfile, first, Fault::LayerExcludes);
        }
        if let Some((_, first)) = lraw.rewire.iter().next() {
            self.problem(lfile, first, Fault::LayerRewires);
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
                    self.problem(file, &ex, Fault::ExcludesOwn(n.clone()));
                }
                Some(i) => {
                    drafts.remove(i);
                    excluded.insert(n.clone(), origin(file, &ex));
                }
                None => {
                    let closest = closest_project(n, drafts);
                    self.problem(
                        file,
                        &ex,
                        Fault::ExcludesUnknown {
                            name: n.clone(),
                            closest,
                        },
                    );
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
                let closest = closest_project(&target, drafts);
                self.problem(file, &rw, Fault::RewiresUnknown { name: target, closest });
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
                let problem = Fault::NothingToRemove {
                    project: d.name.get_ref().clone(),
                    need: r.get_ref().clone(),
                    field: if kind == EdgeKind::Data { "needs" } else { "after" },
                };
                self.problem(file, &r, problem);
            }
        }
    }
}

/// The project of `drafts` whose name is closest to `name`, if one is close.
fn closest_project(name: &str, drafts: &[Draft]) -> Option<String> {
    graph::closest(name, drafts.iter().map(|d| d.name.get_ref().as_str()))
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
