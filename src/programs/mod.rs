//! The Pulumi programs of a provider's projects, read far enough to know what flows between
//! them (the `StackReference`s and the outputs read through them), and checked against the
//! provider files' needs.

mod cache;
mod crosscheck;
pub(crate) mod declared;
mod program;
mod stats;

use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use crate::provider::{Project, Provider};
use crate::workspace::Workspace;
use cache::{Cache, FileKey};
pub(crate) use stats::{NoStats, ProgramStats, Taken, on_all_cores};

pub(crate) use crosscheck::{check, undeclared};
pub(crate) use program::Program;

/// Each project's program, by the project's index in its provider; `None` where it cannot be
/// read (`validate` reports those).
pub(crate) struct Programs(Vec<Option<Program>>);

impl Programs {
    pub(crate) fn get(&self, project: usize) -> Option<&Program> {
        self.0.get(project).and_then(Option::as_ref)
    }
}

/// A project's `Pulumi.yaml` as shown to the user.
pub(crate) fn file(ws: &Workspace, p: &Project) -> String {
    ws.show(&ws.root.join(&p.path).join("Pulumi.yaml"))
}

/// The program cache, read on a thread of its own from the moment it is asked for, which then
/// looks at the programs it knows (see [`ProgramStats`]): a big graph's cache takes
/// about as long to read as its provider file to parse, and neither needs the other.
pub(crate) struct CacheRead {
    thread: Mutex<Option<std::thread::JoinHandle<Ahead>>>,
    done: OnceLock<Ahead>,
}

/// What the cache thread read and looked at.
#[derive(Default)]
struct Ahead {
    cache: Cache,
    stats: foldhash::HashMap<String, Option<std::fs::Metadata>>,
}

impl CacheRead {
    pub(crate) fn start(ws: &Workspace) -> Self {
        let path = ws.shared_dir().program_cache();
        let root = ws.root.clone();
        let thread = std::thread::spawn(move || {
            let cache = Cache::load(&path);
            let stats = cache
                .dirs()
                .map(|d| (d.to_string(), std::fs::metadata(root.join(d).join("Pulumi.yaml")).ok()))
                .collect();
            Ahead { cache, stats }
        });
        CacheRead {
            thread: Mutex::new(Some(thread)),
            done: OnceLock::new(),
        }
    }

    fn ahead(&self) -> &Ahead {
        self.done.get_or_init(|| {
            let thread = self.thread.lock().ok().and_then(|mut t| t.take());
            thread.and_then(|t| t.join().ok()).unwrap_or_default()
        })
    }

    fn finish(self) -> Cache {
        self.ahead();
        self.done.into_inner().unwrap_or_default().cache
    }
}

impl ProgramStats for CacheRead {
    fn taken(&self, dir: &str) -> Taken {
        match self.ahead().stats.get(dir) {
            None => Taken::Not,
            Some(None) => Taken::Absent,
            Some(Some(stat)) => Taken::Stat(stat.clone()),
        }
    }
}

/// What may be done with the programs cache under `.runner/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Learn {
    /// Keep what was read for the next run.
    Keep,
    /// Write nothing (`validate --check` changes no file).
    ReadOnly,
}

/// Reads every project's program: from the cache under `.runner/` when its file is unchanged,
/// otherwise from the file, on all cores (big graphs have thousands); with [`Learn::Keep`] the
/// cache then learns what was read (a failure to write it only costs the next run the same
/// reading).
pub(crate) fn read_all(ws: &Workspace, provider: &Provider, learn: Learn) -> Programs {
    read_with(ws, provider, CacheRead::start(ws), learn)
}

/// [`read_all`] with the cache already being read. A file's key is the `stat` the provider's
/// loader took of it (one look per file).
pub(crate) fn read_with(ws: &Workspace, provider: &Provider, cache: CacheRead, learn: Learn) -> Programs {
    let projects = &provider.projects;
    let now = SystemTime::now();
    let keys: Vec<Option<(FileKey, bool)>> = projects
        .iter()
        .map(|p| p.program_stat.as_ref().and_then(|m| FileKey::from_stat(m, now)))
        .collect();
    let mut cache = cache.finish();
    let mut found: Vec<Option<Program>> = projects
        .iter()
        .zip(&keys)
        .map(|(p, k)| k.as_ref().and_then(|(key, _)| cache.take(&p.path, key)))
        .collect();
    let missing: Vec<usize> = (0..projects.len()).filter(|&i| found[i].is_none()).collect();
    let read = on_all_cores(&missing, |&i| Program::load(&ws.root.join(&projects[i].path)));
    let mut learnt = false;
    for (&i, program) in missing.iter().zip(read) {
        learnt |= program.is_some() && keys[i].as_ref().is_some_and(|(_, settled)| *settled);
        found[i] = program;
    }
    if learnt && learn == Learn::Keep {
        let fresh = projects
            .iter()
            .zip(&keys)
            .zip(&found)
            .filter_map(|((p, key), program)| match (key, program) {
                (Some((key, true)), Some(program)) => Some((p.path.as_str(), key, program)),
                _ => None,
            });
        let shared = ws.shared_dir();
        let _ = shared
            .create_cache()
            .and_then(|()| cache.save(&shared.program_cache(), fresh));
    }
    Programs(found)
}
