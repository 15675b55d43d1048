//! A preview as a drift check (`runner drift`): only of stacks the backend holds with resources
//! (none is created, and a stack never deployed is not drift), with `--expect-no-changes`, whose
//! refusal (`NoChangesExpectedError`: exit 7, 255 before v3.226) is the answer, not a failure.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Pulumi;
use super::messages::{self, Message};
use super::process::Ended;
use crate::exec::{Because, Control, Job, JobEnd, Status};

#[derive(Debug, Clone, Copy)]
pub(crate) struct Drift {
    /// `preview --refresh`: the state is read from the cloud first, so changes made outside
    /// Pulumi show too.
    pub(crate) refresh: bool,
}

/// The flags a drift check adds to `pulumi preview`.
pub(super) fn flags(drift: Option<Drift>) -> Vec<&'static str> {
    match drift {
        Some(Drift { refresh: true }) => vec!["--expect-no-changes", "--refresh"],
        Some(Drift { refresh: false }) => vec!["--expect-no-changes"],
        None => Vec::new(),
    }
}

/// Whether a preview that exited non-zero was a drift check that found changes: then it
/// succeeded, and its changes are the answer.
pub(super) fn found(drift: Option<Drift>, end: &Ended, changes: &BTreeMap<String, u64>) -> bool {
    drift.is_some() && messages::says(&end.stderr, Message::NoChangesExpected) && !changes.is_empty()
}

/// Whether a drift check's preview failed on server-side apply conflicts (a field the program
/// sets, changed with kubectl, say): those are drift the check found, each an update the next
/// `up` would make (counted in `changes` when the preview counted none), and `tell` is given
/// them. `said` is what the engine said: standard error and its event log's errors.
pub(super) fn conflicts_found(
    drift: Option<Drift>,
    end: &Ended,
    said: &str,
    changes: &mut BTreeMap<String, u64>,
    tell: impl FnOnce(&[messages::FieldConflict]),
) -> bool {
    if drift.is_none() || end.code == Some(0) || end.interrupted || !messages::says(said, Message::FieldConflict) {
        return false;
    }
    let conflicts = messages::field_conflicts(said);
    if !crate::exec::would_change(changes) {
        changes.insert("update".into(), conflicts.len().max(1) as u64);
    }
    tell(&conflicts);
    true
}

/// A project with nothing deployed to compare: settled without a preview.
fn not_deployed(why: Because) -> JobEnd {
    JobEnd::ended(Status::Unchanged(why))
}

impl Pulumi {
    /// For a drift check (else `None`): selects the project's stack without creating it;
    /// `Some` end (or failure) when there is nothing deployed to check: no such stack, or one
    /// without resources (made to store secrets, say, but never deployed).
    pub(super) async fn select_deployed(&self, job: &Job, control: &Control) -> Option<JobEnd> {
        self.flags.drift?;
        match self.select(job, control, false).await {
            Ok(true) => self.undeployed(job, control).await,
            Ok(false) => Some(not_deployed(Because::NoStack {
                stack: self.stack.clone(),
            })),
            Err(e) => Some(e),
        }
    }

    /// `Some` end when the stack holds no resources: `pulumi stack ls --json` gives no
    /// `resourceCount`, or 0, for it.
    async fn undeployed(&self, job: &Job, control: &Control) -> Option<JobEnd> {
        let cmd = self.command(job, &["stack", "ls", "--json", "--non-interactive"]);
        super::say(job, control, &cmd);
        let end = self.step(job, control).run(cmd, true, None).await.ok()?;
        let stacks: Vec<Value> = serde_json::from_str(&end.captured).ok()?;
        let count = stacks
            .iter()
            .find(|s| {
                s["name"]
                    .as_str()
                    .is_some_and(|n| n == self.stack || n.ends_with(&format!("/{}", self.stack)))
            })
            .and_then(|s| s["resourceCount"].as_u64())
            .unwrap_or(0);
        (count == 0).then(|| {
            not_deployed(Because::NoResources {
                stack: self.stack.clone(),
            })
        })
    }
}
