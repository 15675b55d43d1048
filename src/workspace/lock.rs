//! One runner at a time per workspace: Pulumi locks each stack, this keeps two runners from
//! interleaving whole plans and the run state.

use std::fs::File;

use super::{RunDir, Workspace};
use crate::error::RunnerError;

/// Held while the run lasts; the operating system releases it when the process ends, however it
/// ends.
#[derive(Debug)]
pub(crate) struct WorkspaceLock {
    _file: File,
}

impl WorkspaceLock {
    pub(crate) fn take(ws: &Workspace, run_dir: &RunDir) -> Result<Self, RunnerError> {
        let path = run_dir.lock();
        let io = |source| RunnerError::Io {
            context: format!("cannot open {}", ws.show(&path)),
            source,
        };
        run_dir.create().map_err(io)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .read(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(WorkspaceLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(RunnerError::Busy {
                message: format!(
                    "another runner is already running in this workspace (lock: {})",
                    ws.show(&path)
                ),
                help: "wait for it to finish; the lock is released when it ends".into(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        }
    }
}
