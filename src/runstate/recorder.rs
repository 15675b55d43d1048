//! The run state of one run, kept in step with its events: each event that changes it becomes
//! a journal record, applied to the state and appended to the journal on disk; the whole state
//! is written when the run ends. A journal a crashed run left is folded in when the next opens.

use std::path::Path;

use super::journal::{self, Finish, Journal, Record};
use super::{Recorded, RunState, StateError, known, timestamp};
use crate::exec::{Event, Outcome, Outputs, Status};
use crate::plan::Operation;
use crate::provider::Provider;
use crate::workspace::RunDir;

/// What an event changes in the run state (lines of output change nothing).
pub(super) fn record_of(ev: &Event) -> Option<Record> {
    match ev {
        Event::Started { project, operation, at } => Some(Record::Started {
            project: project.clone(),
            operation: (*operation).into(),
            at: timestamp(*at),
        }),
        Event::Finished {
            project,
            operation,
            result,
        } => {
            let up = result.status == Status::Succeeded && *operation == Operation::Up;
            Some(Record::Finished(Box::new(Finish {
                project: project.clone(),
                operation: (*operation).into(),
                status: result.status.outcome().into(),
                started: result.started.map(timestamp),
                ended: timestamp(result.ended),
                inputs: result.inputs.clone().filter(|_| up),
                outputs_digest: result.outputs_digest.clone().filter(|_| up),
                outputs: result.outputs.as_ref().filter(|_| up).map(Outputs::kept),
                changed: crate::exec::would_change(&result.changes),
                by: None,
            })))
        }
        Event::Line { .. }
        | Event::Note { .. }
        | Event::Runs { .. }
        | Event::Stopping { .. }
        | Event::StillRunning { .. }
        | Event::TimedOut { .. } => None,
    }
}

/// The run state of one run: read with what the journal of a crashed run holds folded in, kept
/// in step with the events through the journal, and written whole when the run ends.
pub(crate) struct Recorder {
    pub(crate) state: RunState,
    run_dir: RunDir,
    journal: Journal,
}

impl Recorder {
    /// The state of `run_dir`'s stack, with a journal left by a run that did not end folded in
    /// (and written to `state.json`); also the warnings about journal lines that were ignored.
    /// `show` gives a path as the user should see it.
    /// Only lines about `provider`'s projects are trusted.
    pub(crate) fn open(
        run_dir: &RunDir,
        provider: &Provider,
        show: &dyn Fn(&Path) -> String,
    ) -> Result<(Self, Vec<String>), StateError> {
        let mut state = RunState::load(run_dir, show)?;
        let path = run_dir.journal();
        let known = known(provider);
        let (records, warnings) = journal::read(&path, &show(&path), &|p| known.contains(p)).map_err(|source| {
            StateError::UnreadableJournal {
                shown: show(&path),
                source,
            }
        })?;
        let mut journal = Journal::new(path.clone());
        let left = path.exists();
        for r in &records {
            state.apply(r);
        }
        // This run holds the workspace: what a crashed one left running runs no more.
        if state.cut_short() || left {
            state
                .save(run_dir)
                .and_then(|()| journal.remove())
                .map_err(|source| StateError::NotFolded {
                    shown: show(&path),
                    source,
                })?;
        }
        let recorder = Recorder {
            state,
            run_dir: run_dir.clone(),
            journal,
        };
        Ok((recorder, warnings))
    }

    /// Records that `by` (`runner pulumi P -- destroy`) changed `project`'s stack outside a run:
    /// `destroyed` when it destroyed it (its resources are gone).
    pub(crate) fn changed_outside(&mut self, project: &str, by: &str, destroyed: bool) -> std::io::Result<()> {
        let record = Record::Finished(Box::new(Finish {
            project: project.to_string(),
            operation: if destroyed { Operation::Destroy } else { Operation::Up }.into(),
            status: if destroyed { Outcome::Succeeded } else { Outcome::Failed }.into(),
            started: None,
            ended: timestamp(std::time::SystemTime::now()),
            inputs: None,
            outputs_digest: None,
            outputs: None,
            changed: true,
            by: Some(by.to_string()),
        }));
        self.state.apply(&record);
        self.journal.append(&record)
    }

    /// Keeps the state in step with an event, and the journal on disk.
    pub(crate) fn record(&mut self, ev: &Event) -> std::io::Result<()> {
        let Some(record) = record_of(ev) else { return Ok(()) };
        self.state.apply(&record);
        self.journal.append(&record)
    }

    /// Writes the whole state to `state.json` and removes the journal it now holds.
    pub(crate) fn close(mut self) -> std::io::Result<()> {
        self.state.save(&self.run_dir)?;
        self.journal.remove()
    }
}

/// Any bytes read as a journal of a graph of projects `a`, `b` and `c` and folded into a run
/// state (the `journal` fuzz target): every line is taken or named in a warning, and what is
/// taken is a project of the graph with a status the runner records, folded the same however
/// often.
#[doc(hidden)]
pub(crate) fn fuzz_journal(bytes: &[u8]) {
    let known = |p: &str| matches!(p, "a" | "b" | "c");
    let (records, warnings) = journal::parse(bytes, "journal", &known);
    let lines = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
    assert_eq!(records.len() + warnings.len(), lines);
    let mut once = RunState::default();
    for r in &records {
        once.apply(r);
    }
    for (name, p) in &once.projects {
        assert!(known(name), "{name}");
        assert!(
            matches!(p.status, Recorded::Running | Recorded::Ended(_)),
            "{:?}",
            p.status
        );
    }
    let mut twice = once.clone();
    for r in &records {
        twice.apply(r);
    }
    assert_eq!(once, twice);
}
