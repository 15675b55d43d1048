//! What a run does about a stack lock that stops it: with `--remove-stale-locks`, the locks
//! left by processes of this host that no longer run removed (each said) and the operation run
//! again once; the locks a `pulumi` the runner stopped left behind, removed at once.

use super::events::EventLog;
use super::process::{self, Ended};
use super::{Pulumi, locks, say};
use crate::config::backend::Backend;
use crate::exec::{Control, Event, Failure, Job, JobEnd, Level};

impl Pulumi {
    /// With `--remove-stale-locks`, when the stack was locked only by processes of this host
    /// that no longer run: those locks removed (said) and the operation run again, once.
    pub(super) async fn after_stale_locks(
        &self,
        job: &Job,
        control: &Control,
        end: &Ended,
    ) -> Option<Result<(Ended, EventLog), JobEnd>> {
        match self.remove_stale_locks(job, control, &end.stderr).await? {
            Ok(()) => Some(self.run_operation(job, control).await),
            Err(e) => Some(Err(e)),
        }
    }

    /// With `--remove-stale-locks`, when `stderr` refused the stack for locks all left by
    /// processes of this host that no longer run: those locks removed, each said. `None` when
    /// there is nothing this may remove.
    pub(super) async fn remove_stale_locks(
        &self,
        job: &Job,
        control: &Control,
        stderr: &str,
    ) -> Option<Result<(), JobEnd>> {
        if !self.flags.remove_stale_locks {
            return None;
        }
        if !locks::says_locked(stderr) {
            return None;
        }
        let backend = Backend::of(&self.env);
        // A file backend's locks are read from its lock directory and removed there, file by
        // file; elsewhere `pulumi cancel`, safe since every lock of the stack is stale.
        let held: Vec<(Option<std::path::PathBuf>, locks::StackLock)> = if backend.dir().is_some() {
            locks::stale_in_dir(&backend, &job.project.name, &self.stack)?
                .into_iter()
                .map(|(file, lock)| (Some(file), lock))
                .collect()
        } else {
            // Each lock under the backend's own URL, or the text was forged.
            let url = self.env.get("PULUMI_BACKEND_URL").unwrap_or_default();
            let url = url.split('?').next().unwrap_or_default().trim_end_matches('/');
            let held = locks::all_stale(stderr)?;
            if url.is_empty() || !held.iter().all(|l| l.url.starts_with(&format!("{url}/"))) {
                return None;
            }
            held.into_iter().take(1).map(|lock| (None, lock)).collect()
        };
        for (file, lock) in &held {
            let removed = match file {
                Some(file) => locks::remove_file(file).map_err(|e| Failure::said(e.to_string())),
                None => self.cancel(job, control).await,
            };
            let message = match removed {
                Ok(()) => locks::removed(lock),
                Err(e) => return Some(Err(JobEnd::failed(e.noted([locks::not_removed(lock)])))),
            };
            let _ = control.events.send(Event::Note {
                project: Some(job.project.name.clone()),
                level: Level::Warning,
                message,
            });
        }
        Some(Ok(()))
    }

    /// A `pulumi` stopped by a signal (the runner's, after Ctrl-C or a timeout, or anyone's)
    /// may leave the stack's lock behind: it dies before its deferred unlock, or before it set
    /// up its cancellation (a moment after it took the lock). Its locks are stale (the runner
    /// waited for it to end) and the runner's own, so they go, each said.
    pub(super) fn clear_own_locks(&self, job: &Job, control: &Control, end: &Ended) {
        if end.code == Some(0) || !(end.interrupted || end.signal.is_some()) {
            return;
        }
        let Some(pid) = end.pid else { return };
        let backend = Backend::of(&self.env);
        for file in locks::left_by(pid, &backend, &job.project.name, &self.stack) {
            let message = match locks::remove_file(&file) {
                Ok(()) => format!(
                    "pulumi (pid {pid}) was stopped while it held the stack's lock: removed the lock it left ({})",
                    file.display()
                ),
                Err(e) => format!("pulumi (pid {pid}) was stopped while it held the stack's lock, which stays: {e}"),
            };
            let _ = control.events.send(Event::Note {
                project: Some(job.project.name.clone()),
                level: Level::Warning,
                message,
            });
        }
    }

    /// `pulumi cancel --yes --stack S` in the project's directory.
    pub(super) async fn cancel(&self, job: &Job, control: &Control) -> Result<(), Failure> {
        let cmd = self.command(job, &["cancel", "--yes", "--stack", &self.stack, "--non-interactive"]);
        say(job, control, &cmd);
        let end = self
            .step(job, control)
            .run(cmd, true, None)
            .await
            .map_err(Failure::from)?;
        if end.code == Some(0) {
            Ok(())
        } else {
            Err(process::failure("pulumi cancel", &end, &[]))
        }
    }
}
