//! Loading a provider: its file and the layers it includes, merged, rewired, checked, and turned
//! into a [`ProjectGraph`](crate::graph::ProjectGraph). Every problem found is reported at once, each pointing at its file,
//! line and column, with the fix.
//!
//! By stage: [`read`] finds and parses the files ([`file`] is their format), [`merge`] brings in
//! the layers and applies `exclude` and `rewire`, [`check`] holds the rules, and [`problem`]
//! words what they find. This module holds the entry points and the flow between the stages.

mod check;
mod file;
mod merge;
mod problem;
mod read;
#[cfg(test)]
mod tests;

use crate::diagnostic::{FileDiagnostic, SourceFile};
use crate::workspace::Workspace;

use super::{Entry, FileKind, Provider};
use file::RawFile;
use merge::{Gathered, unique};

pub use check::valid_project_name;
pub use read::file_names;

/// Reads every file of `providers/` far enough to list it. Files that do not parse are
/// returned as diagnostics beside the entries that do.
pub(crate) fn entries(ws: &Workspace) -> std::io::Result<(Vec<Entry>, Vec<FileDiagnostic>)> {
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    for name in file_names(&ws.root)? {
        let mut loader = Loader::new(ws, &crate::programs::NoStats);
        if let Some((_, raw)) = loader.read(&name)
            && loader.check_name(&name, &raw)
        {
            entries.push(Entry {
                name,
                kind: raw.kind,
                description: raw.description.get_ref().clone(),
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
    load_seeing(ws, name, &crate::programs::NoStats)
}

/// [`load`], with the `stat`s of project programs that were taken ahead.
pub(crate) fn load_seeing(
    ws: &Workspace,
    name: &str,
    stats: &dyn crate::programs::ProgramStats,
) -> Result<Provider, LoadError> {
    let mut loader = Loader::new(ws, stats);
    if !read::is_file_of_providers(&ws.root, name) {
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

/// What every stage shares: where the files are, the files read so far (indexed by
/// `Origin::file`), and the problems found so far.
struct Loader<'a> {
    /// Where the files are, and how their paths are shown.
    ws: &'a Workspace,
    stats: &'a dyn crate::programs::ProgramStats,
    files: Vec<SourceFile>,
    problems: Vec<FileDiagnostic>,
}

impl<'a> Loader<'a> {
    fn new(ws: &'a Workspace, stats: &'a dyn crate::programs::ProgramStats) -> Self {
        Loader {
            ws,
            stats,
            files: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// The provider `name`, read as `raw` from `file`, with its layers merged in, rewired and
    /// checked; `None` when anything was found wrong.
    fn resolve(&mut self, name: &str, file: usize, mut raw: RawFile) -> Option<Provider> {
        self.check_name(name, &raw);
        // What only a provider file holds; the rest is merged with its layers'.
        let include = std::mem::take(&mut raw.include);
        let exclude = std::mem::take(&mut raw.exclude);
        let rewire = std::mem::take(&mut raw.rewire);
        let description = raw.description.get_ref().clone();
        let infra_type = raw.infra_type.take();

        // The provider's own projects come first: they are the identity, infra and cluster
        // layers the shared layers build on, so the plan reads top-down.
        let mut merged = Gathered::default();
        merged.add(file, raw);
        if !self.include_layers(file, include, &mut merged) {
            // Without the layer's projects every rewire and need into it would be reported
            // too, burying the one real problem.
            return None;
        }
        let excluded = self.exclude(file, exclude, &mut merged.drafts);
        self.rewire(file, rewire, &mut merged.drafts);

        let prompts = self.prompts(merged.prompts);
        self.secrets_store(&merged.drafts);
        let (nodes, projects) = self.projects(merged.drafts);
        let graph = self.graph(nodes, &excluded)?;
        if !self.problems.is_empty() {
            return None;
        }
        Some(Provider {
            name: name.to_string(),
            description,
            infra_type,
            file: self.files[file].display.clone(),
            required_tools: unique(merged.tools),
            install: merged.install,
            credentials: unique(merged.credentials),
            projects,
            prompts,
            checks: merged.checks,
            graph,
            sources: self.files.clone(),
        })
    }
}
