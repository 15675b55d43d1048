//! The Pulumi programs of a provider's projects, read far enough to know what flows between
//! them (the `StackReference`s and the outputs read through them), and checked against the
//! provider files' needs.

mod crosscheck;
mod program;

use std::collections::BTreeMap;

use crate::provider::Provider;
use crate::workspace::Workspace;

pub(crate) use crosscheck::check;
pub(crate) use program::Program;

/// Each project's program (by project name) with its `Pulumi.yaml` as shown to the user; those
/// that cannot be read are left out (`validate` reports them).
pub(crate) type Programs = BTreeMap<String, (String, Program)>;

/// Reads every project's program, on all cores: big graphs have thousands.
pub(crate) fn read_all(ws: &Workspace, provider: &Provider) -> Programs {
    let projects = &provider.projects;
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(projects.len().max(1));
    let chunk = projects.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = projects
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .filter_map(|p| {
                            let dir = ws.root.join(&p.path);
                            let shown = ws.show(&dir.join("Pulumi.yaml"));
                            Program::load(&dir).map(|prog| (p.name.clone(), (shown, prog)))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("reading programs does not panic"))
            .collect()
    })
}
