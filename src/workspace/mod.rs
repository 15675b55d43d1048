//! The workspace: the directory holding `providers/`, `projects/` and `config/pulumi/`, and the
//! runner's own files under `.runner/` ([`RunDir`]).

mod lock;
mod rundir;

use std::path::{Path, PathBuf};

use crate::error::RunnerError;

pub(crate) use lock::{Going, WorkspaceLock, alive, going, this_host};
pub(crate) use rundir::{RunDir, SharedDir};

/// Directory of provider files, relative to the workspace root.
pub(crate) const PROVIDERS_DIR: &str = "providers";

#[derive(Debug, Clone)]
pub(crate) struct Workspace {
    pub root: PathBuf,
    cwd: PathBuf,
}

impl Workspace {
    /// The explicit `--workspace DIR`, or the nearest ancestor of `cwd` holding `providers/`.
    pub(crate) fn locate(explicit: Option<&Path>, cwd: &Path) -> Result<Self, RunnerError> {
        let root = match explicit {
            Some(dir) => {
                let dir = if dir.is_absolute() {
                    dir.to_path_buf()
                } else {
                    cwd.join(dir)
                };
                if !dir.join(PROVIDERS_DIR).is_dir() {
                    return Err(RunnerError::usage(
                        format!(
                            "{} is not a runner workspace: it has no {PROVIDERS_DIR}/ directory",
                            dir.display()
                        ),
                        "pass the directory that holds providers/, projects/ and config/pulumi/",
                    ));
                }
                dir
            }
            None => cwd
                .ancestors()
                .find(|d| d.join(PROVIDERS_DIR).is_dir())
                .map(Path::to_path_buf)
                .ok_or_else(|| {
                    RunnerError::usage(
                        format!(
                            "no runner workspace here: neither {} nor any parent holds a {PROVIDERS_DIR}/ directory",
                            cwd.display()
                        ),
                        "run the runner inside a workspace, or pass --workspace DIR",
                    )
                })?,
        };
        Ok(Workspace {
            root,
            cwd: cwd.to_path_buf(),
        })
    }

    pub(crate) fn run_dir(&self, stack: &str) -> RunDir {
        RunDir::new(&self.root, stack)
    }

    /// The runner's files for the whole workspace (no stack needed).
    pub(crate) fn shared_dir(&self) -> SharedDir {
        SharedDir::new(&self.root)
    }

    /// A path as shown to the user: relative to the current directory when inside it.
    pub(crate) fn show(&self, path: &Path) -> String {
        path.strip_prefix(&self.cwd)
            .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
    }
}
