//! The provider files against the programs: each project's `StackReference`s must be exactly its
//! data needs (ordering-only needs, `after`, read nothing), and every output it reads from
//! another project must be one that project's program declares. A mismatch means a run in the
//! wrong order or a stack reference that fails at deploy time; each names both files, the line
//! and the fix.

use std::collections::{BTreeMap, HashMap};

use super::Programs;
use crate::diagnostic::{Place, Problem};
use crate::graph::{self, EdgeKind};
use crate::provider::{Project, Provider};
use crate::workspace::Workspace;

pub(crate) fn check(ws: &Workspace, provider: &Provider, programs: &Programs) -> Vec<Problem> {
    let g = &provider.graph;
    let mut problems = Vec::new();
    let mut suggest = Suggestions::new(provider);
    for (i, project) in provider.projects.iter().enumerate() {
        let Some(program) = programs.get(i) else {
            continue; // `validate` reports a missing or broken Pulumi.yaml
        };
        let file = FileOf(ws, project);
        // Locations are worked out only for a problem: a line count per lookup adds up on big graphs.
        let at = || provider.locate(g.node(i).origin);
        let mut data = BTreeMap::new();
        let mut order = BTreeMap::new();
        for spec in &g.node(i).needs {
            let name = spec.name.as_str();
            match spec.kind {
                EdgeKind::Data => data.insert(name, spec.origin),
                EdgeKind::Order => order.insert(name, spec.origin),
            };
        }
        let name = &project.name;
        for r in &program.refs {
            let (referenced, line) = (&r.project, r.line);
            if data.contains_key(referenced.as_str()) {
                continue;
            }
            let (what, fix) = if let Some(&after) = order.get(referenced.as_str()) {
                let after = provider.locate(after);
                (
                    format!(
                        "{file}:{line}: `{name}` reads the stack of `{referenced}`, but {after} makes it an ordering-only need"
                    ),
                    format!("move `{referenced}` from `after` to `needs` (it reads outputs)"),
                )
            } else if g.find(referenced).is_none() {
                let found = suggest.closest(referenced);
                let hint = found.map(|c| format!(" (did you mean `{c}`?)")).unwrap_or_default();
                (
                    format!(
                        "{file}:{line}: `{name}` references the stack of `{referenced}`, which is not a project of the {} graph{hint}",
                        provider.name
                    ),
                    format!(
                        "reference a project of the graph, or give `{name}` a variant program for this provider (`path` in a [rewire.{name}] table)"
                    ),
                )
            } else {
                let at = at();
                (
                    format!(
                        "{file}:{line}: `{name}` references the stack of `{referenced}`, but `{name}` ({at}) does not need it"
                    ),
                    format!("add \"{referenced}\" to the `needs` of `{name}` at {at}, or remove the StackReference"),
                )
            };
            problems.push(Problem::new(what, fix));
        }
        for (needed, &origin) in &data {
            if program.reference(needed).is_none() {
                let where_ = provider.locate(origin);
                problems.push(Problem::new(
                    format!("{where_}: `{name}` needs `{needed}`, but {file} has no StackReference to it"),
                    format!(
                        "add a `pulumi:pulumi:StackReference` named ${{pulumi.organization}}/{needed}/${{pulumi.stack}} to {file}, \
                         or make it ordering-only: move it from `needs` to `after`"
                    ),
                ));
            }
        }
        for r in &program.refs {
            let upstream = &r.project;
            let Some((up, up_program)) = g.find(upstream).and_then(|u| Some((u, programs.get(u)?))) else {
                continue;
            };
            let up_file = FileOf(ws, &provider.projects[up]);
            for (output, line) in &r.reads {
                if up_program.declares(output) {
                    continue;
                }
                let declared: Vec<&str> = up_program.outputs.iter().map(String::as_str).collect();
                let suggestion = graph::closest(output, declared.iter().copied())
                    .map(|c| format!("did you mean `{c}`? "))
                    .unwrap_or_default();
                problems.push(Problem::at(
                    Place {
                        file: file.to_string(),
                        line: u32::try_from(*line).ok(),
                    },
                    format!("`{name}` reads the output `{output}` of `{upstream}`, which {up_file} does not declare"),
                    format!(
                        "{suggestion}read one of {}, or add `{output}` under `outputs:` in {up_file}",
                        declared.join(", ")
                    ),
                ));
            }
        }
    }
    problems
}

/// Each `${name}` a program reads that it does not declare and the stack configuration does not
/// hold (`config` is the shared stack file's; a project's own stack files count too): Pulumi YAML
/// stops on it (`resource, variable, or config value "name" not found`) before deploying anything.
pub(crate) fn undeclared(
    ws: &Workspace,
    provider: &Provider,
    programs: &Programs,
    config: &serde_json::Map<String, serde_json::Value>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (i, project) in provider.projects.iter().enumerate() {
        let Some(program) = programs.get(i) else { continue };
        // The CLI gives a key of the project's namespace to the program without it.
        let namespace = program.name.as_deref().unwrap_or(&project.name);
        for u in &program.undeclared {
            let key = format!("{namespace}:{}", u.name);
            if config.contains_key(&key)
                || config.contains_key(&u.name)
                || own_stack_files_hold(&ws.root.join(&project.path), &key)
            {
                continue;
            }
            let file = FileOf(ws, project);
            let fix = match &u.closest {
                Some(c) => format!("did you mean `{c}`? (read it as `${{{c}}}`)"),
                None => format!(
                    "declare `{}` under `resources`, `variables` or `config` in {file}, or set `{key}` in the stack configuration",
                    u.name
                ),
            };
            problems.push(Problem::at(
                Place {
                    file: file.to_string(),
                    line: u32::try_from(u.line).ok(),
                },
                format!(
                    "`{}` is read, but no resource, variable or config key of `{}` declares it: Pulumi YAML would stop with `resource, variable, or config value \"{}\" not found`",
                    u.name, project.name, u.name
                ),
                fix,
            ));
        }
    }
    problems
}

/// Whether one of the project's own `Pulumi.<stack>.yaml` files sets `key` (looked at only when
/// a name is undeclared, so rarely).
fn own_stack_files_hold(dir: &std::path::Path, key: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.starts_with("Pulumi.")
            && name.ends_with(".yaml")
            && name != "Pulumi.yaml"
            && crate::fs::read_text(e.path()).is_ok_and(|t| {
                t.lines().any(|l| {
                    let l = l.trim_start().trim_start_matches(['"', '\'']);
                    l.strip_prefix(key)
                        .is_some_and(|r| r.trim_start_matches(['"', '\'']).starts_with(':'))
                })
            })
    })
}

/// A project's `Pulumi.yaml` as shown, worked out only when a problem is written.
#[derive(Clone, Copy)]
struct FileOf<'a>(&'a Workspace, &'a Project);

impl std::fmt::Display for FileOf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&super::file(self.0, self.1))
    }
}

/// Closest project names for unknown references. The names are indexed once, and only when a
/// program references an unknown one; each unknown name is looked up once: comparing every
/// unknown name with every project would make many mismatches cost N².
struct Suggestions<'a> {
    provider: &'a Provider,
    index: Option<graph::NameIndex>,
    found: HashMap<String, Option<String>>,
}

impl<'a> Suggestions<'a> {
    fn new(provider: &'a Provider) -> Self {
        Suggestions {
            provider,
            index: None,
            found: HashMap::new(),
        }
    }

    fn closest(&mut self, name: &str) -> Option<String> {
        if let Some(found) = self.found.get(name) {
            return found.clone();
        }
        let projects = &self.provider.projects;
        let index = self
            .index
            .get_or_insert_with(|| graph::NameIndex::new(projects.iter().map(|p| p.name.as_str())));
        let found = index.closest(name);
        self.found.insert(name.to_string(), found.clone());
        found
    }
}
