//! The run state under `.runner/<stack>/state.json`: per project, how its last operation ended,
//! when, and the digests that let `up` skip what has not changed. While a run lasts, every
//! change is appended to a journal ([`journal`]) and flushed to disk; the journal is folded into
//! `state.json` (written atomically) at the end of the run, or when the next run starts after a
//! crash, so an interrupted run always leaves what it needs to resume. Holds no secret values:
//! outputs are redacted and digests are keyed.

mod digests;
mod error;
mod history;
mod journal;
mod legacy;
mod pending;
mod recorder;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::exec::{Inputs, Outcome, Resume};
use crate::fs::{NewFile, write_atomic};
use crate::plan::{Operation, Plan};
use crate::provider::Provider;
use crate::workspace::RunDir;

pub(crate) use digests::{Digests, Outside};
pub(crate) use error::StateError;
pub(crate) use history::History;
use journal::{Record, Word};
pub(crate) use pending::{Pending, Why};
pub(crate) use recorder::Recorder;
#[doc(hidden)]
pub(crate) use recorder::fuzz_journal;

/// The shape of `state.json` this runner writes. It reads version 1 too, whose inputs were
/// text ([`legacy`]); a state it reads is written back as this version.
const SCHEMA_VERSION: u32 = 2;
const READS: [u32; 2] = [1, SCHEMA_VERSION];

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct RunState {
    pub schema_version: u32,
    pub stack: String,
    pub projects: BTreeMap<String, ProjectState>,
}

/// What the run state says of a project's last operation: how it ended, or that it is running,
/// or was cut short (its runner ended before it did).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Spelled", into = "Spelled")]
pub(crate) enum Recorded {
    #[default]
    Running,
    CutShort,
    Ended(Outcome),
}

/// [`Recorded`] as `state.json` spells it: an outcome's own word, or one of the two a run in
/// progress leaves.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(untagged)]
enum Spelled {
    Ended(Outcome),
    Going(Going),
}

#[derive(Clone, Copy, Serialize, Deserialize)]
enum Going {
    #[serde(rename = "running")]
    Running,
    #[serde(rename = "cut short")]
    CutShort,
}

impl From<Spelled> for Recorded {
    fn from(s: Spelled) -> Self {
        match s {
            Spelled::Ended(o) => Recorded::Ended(o),
            Spelled::Going(Going::Running) => Recorded::Running,
            Spelled::Going(Going::CutShort) => Recorded::CutShort,
        }
    }
}

impl From<Recorded> for Spelled {
    fn from(r: Recorded) -> Self {
        match r {
            Recorded::Ended(o) => Spelled::Ended(o),
            Recorded::Running => Spelled::Going(Going::Running),
            Recorded::CutShort => Spelled::Going(Going::CutShort),
        }
    }
}

impl Recorded {
    /// It did not run (settled without running: unchanged, skipped, not started, waits).
    fn settled(self) -> bool {
        matches!(self, Recorded::Ended(o) if o.settled())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ProjectState {
    pub status: Recorded,
    pub operation: Operation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// The stack holds a deployment made by the runner (`up` succeeded and no destroy since).
    #[serde(default)]
    pub deployed: bool,
    /// Inputs of the last successful `up` (`inputs_digest` up to schema version 1).
    #[serde(
        default,
        alias = "inputs_digest",
        deserialize_with = "legacy::inputs",
        skip_serializing_if = "Option::is_none"
    )]
    pub inputs: Option<Inputs>,
    /// Outputs digest of the last successful `up`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs_digest: Option<String>,
    /// Outputs of the last successful `up`, secrets redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Map<String, Value>>,
    /// The command that changed its stack outside a run since its last `up` (`runner pulumi P
    /// -- destroy`): its next `up` runs, saying so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_by: Option<String>,
    /// The last drift check (a preview) since the operation above, kept beside it: a look at
    /// the stack is not what deployed it (`pulumi stack history` keeps previews out too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<Checked>,
}

/// A drift check (preview) of a project the runner ran before.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Checked {
    pub status: Recorded,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// It found the stack other than the program and configuration declare.
    #[serde(default)]
    pub changed: bool,
}

impl Checked {
    /// It found a difference.
    pub(crate) fn drifted(&self) -> bool {
        self.status == Recorded::Ended(Outcome::Succeeded) && self.changed
    }
}

impl ProjectState {
    /// A project first seen running `operation`.
    fn new(operation: Operation) -> Self {
        ProjectState {
            status: Recorded::Running,
            operation,
            started: None,
            ended: None,
            deployed: false,
            inputs: None,
            outputs_digest: None,
            outputs: None,
            changed_by: None,
            checked: None,
        }
    }

    /// The digests (inputs, outputs) of its last successful `up`, while that `up` still tells
    /// what the stack holds: nothing changed the stack since (a failed `up`, `refresh` or
    /// `destroy`, or a refresh that found changes made outside Pulumi, forgets them), and
    /// nothing is running there but a preview, nor was cut short (a runner that died leaves
    /// `running`, read as `cut short` once that is known). The one rule for skipping a project,
    /// in the scheduler, `status` and the prediction alike.
    pub(crate) fn last_up(&self) -> Option<(&Inputs, &str)> {
        if !self.deployed
            || (matches!(self.status, Recorded::Running | Recorded::CutShort) && self.operation != Operation::Preview)
            || self.checked.as_ref().is_some_and(Checked::drifted)
        {
            return None;
        }
        Some((self.inputs.as_ref()?, self.outputs_digest.as_deref()?))
    }
}

impl RunState {
    /// Every project still `running` is `cut short`: no runner runs it any more (the caller
    /// holds the workspace lock, or knows its holder ended). Whether any was.
    pub(crate) fn cut_short(&mut self) -> bool {
        let mut any = false;
        for p in self.projects.values_mut() {
            if p.status == Recorded::Running {
                p.status = Recorded::CutShort;
                any = true;
            }
            if let Some(c) = p.checked.as_mut().filter(|c| c.status == Recorded::Running) {
                c.status = Recorded::CutShort;
                any = true;
            }
        }
        any
    }

    /// The state of `run_dir`'s stack; a fresh one when none was written yet. `show` words a
    /// path for a person (relative to where the runner was started).
    pub(crate) fn load(run_dir: &RunDir, show: &dyn Fn(&Path) -> String) -> Result<Self, StateError> {
        let path = run_dir.state();
        match crate::fs::read_text(&path) {
            Ok(text) => {
                let mut state: RunState = serde_json::from_str(&text).map_err(|source| StateError::NotAState {
                    shown: show(&path),
                    source,
                })?;
                if !READS.contains(&state.schema_version) {
                    return Err(StateError::UnknownSchema {
                        shown: show(&path),
                        found: state.schema_version,
                        writes: SCHEMA_VERSION,
                    });
                }
                if state.stack != run_dir.stack() {
                    return Err(StateError::OtherStack {
                        shown: show(&path),
                        found: state.stack,
                        expected: run_dir.stack().to_string(),
                    });
                }
                state.schema_version = SCHEMA_VERSION;
                Ok(state)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RunState {
                schema_version: SCHEMA_VERSION,
                stack: run_dir.stack().to_string(),
                projects: BTreeMap::new(),
            }),
            Err(source) => Err(StateError::Unreadable {
                shown: show(&path),
                source,
            }),
        }
    }

    /// Writes `state.json`; never one larger than [`crate::fs::READ_LIMIT`], which the next
    /// command would refuse to read (outputs are kept small for that: [`Outputs::kept`]).
    pub(crate) fn save(&self, run_dir: &RunDir) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).expect("state serializes") + "\n";
        if text.len() as u64 > crate::fs::READ_LIMIT {
            return Err(std::io::Error::other(format!(
                "the run state would be {} MiB, more than the {} MiB it may be read back at",
                text.len() / 1024 / 1024,
                crate::fs::READ_LIMIT / 1024 / 1024
            )));
        }
        write_atomic(&run_dir.state(), text.as_bytes(), NewFile::Default)
    }

    /// The projects whose stacks hold a deployment made by the runner.
    pub(crate) fn deployed(&self) -> BTreeSet<String> {
        self.names_where(|p| p.deployed)
    }

    /// The projects whose stack the backend holds, as far as the runner knows: one of its
    /// operations ran to an end there (a failure too: the stack was selected or created first).
    /// Only a hint: the engine falls back to `stack select` when the backend has none.
    pub(crate) fn known_stacks(&self) -> BTreeSet<String> {
        self.names_where(|p| {
            p.deployed
                || (p.started.is_some() && matches!(p.status, Recorded::Ended(Outcome::Succeeded | Outcome::Failed)))
        })
    }

    /// The projects a drift check last found other than their last up left them (and no `up`
    /// since): their next `up` refreshes first, so what changed outside Pulumi is set back
    /// rather than left as the state already records it.
    pub(crate) fn drifted(&self) -> BTreeSet<String> {
        self.names_where(|p| {
            p.deployed
                && (p.checked.as_ref().is_some_and(Checked::drifted)
                    || (p.inputs.is_none()
                        && p.operation == Operation::Preview
                        && p.status == Recorded::Ended(Outcome::Succeeded)))
        })
    }

    /// The names of the projects whose record passes `keep`.
    fn names_where(&self, keep: impl Fn(&ProjectState) -> bool) -> BTreeSet<String> {
        self.projects
            .iter()
            .filter(|(_, p)| keep(p))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// What the last successful `up` of each project left, for skipping unchanged projects
    /// (`fresh`: nothing is skipped, but the digests are still taken for the next run).
    pub(crate) fn resume(&self, provider: &Provider, digests: Digests, fresh: bool) -> Resume {
        let previous = self
            .projects
            .iter()
            .filter(|_| !fresh)
            .filter_map(|(n, p)| {
                let (inputs, outputs) = p.last_up()?;
                Some((n.clone(), (inputs.clone(), outputs.to_string())))
            })
            .collect();
        let paths: BTreeMap<String, String> = provider
            .projects
            .iter()
            .map(|p| (p.name.clone(), p.path.clone()))
            .collect();
        let digests = Arc::new(digests);
        let for_outputs = digests.clone();
        Resume {
            previous,
            inputs: Arc::new(move |name, upstream| digests.inputs(&paths[name], upstream)),
            outputs: Box::new(move |o| for_outputs.outputs(o)),
        }
    }

    /// Whether an `up` of `plan` would find every project unchanged since its last successful
    /// `up` (the scheduler's own test, made before anything runs).
    pub(crate) fn up_to_date(&self, plan: &Plan<'_>, digests: &Digests) -> bool {
        let mut outputs: BTreeMap<&str, &str> = BTreeMap::new();
        for &i in &plan.order {
            let name = plan.name(i);
            let Some((inputs, out)) = self.projects.get(name).and_then(ProjectState::last_up) else {
                return false;
            };
            let upstream = plan
                .waits_for(i)
                .iter()
                .map(|n| {
                    let up = plan.name(n.node);
                    (up.to_string(), outputs.get(up).copied().unwrap_or_default().to_string())
                })
                .collect();
            if digests.inputs(&plan.project(i).path, &upstream) != *inputs {
                return false;
            }
            outputs.insert(name, out);
        }
        true
    }

    /// Keeps the state in step with one journal record (checked: its operation and status are
    /// ones the runner writes; a record that names others changes nothing).
    fn apply(&mut self, record: &Record) {
        if self.apply_check(record) {
            return;
        }
        match record {
            Record::Started { project, operation, at } => {
                let Word::Known(operation) = *operation else {
                    return;
                };
                let p = self
                    .projects
                    .entry(project.clone())
                    .or_insert_with(|| ProjectState::new(operation));
                // While it runs (or if the runner dies meanwhile) `last_up` trusts nothing, and
                // a check before it no longer tells what is deployed.
                p.status = Recorded::Running;
                // A difference a check found is settled by an up alone: what else runs first
                // (a refresh) leaves the next up to run.
                if p.checked.take().is_some_and(|c| c.drifted()) && operation != Operation::Up {
                    p.inputs = None;
                }
                p.operation = operation;
                p.started = Some(at.clone());
                p.ended = None;
            }
            Record::Finished(end) => {
                let (Word::Known(outcome), Word::Known(operation)) = (end.status.clone(), end.operation.clone()) else {
                    return;
                };
                let status = Recorded::Ended(outcome);
                if let Some(by) = &end.by {
                    // Changed outside a run: whatever it did, the last up no longer tells what is
                    // deployed; a destroy that succeeded left nothing.
                    let Some(p) = self.projects.get_mut(&end.project) else {
                        return;
                    };
                    p.inputs = None;
                    if status == Recorded::Ended(Outcome::Succeeded) && operation == Operation::Destroy {
                        p.deployed = false;
                        p.outputs_digest = None;
                        p.outputs = None;
                    }
                    p.changed_by = Some(by.clone());
                    return;
                }
                if status.settled() && end.started.is_none() {
                    // Settled without running: keep what the last real run recorded (a project
                    // that never ran gets no entry).
                    if let Some(p) = self.projects.get_mut(&end.project)
                        && p.status == Recorded::Running
                    {
                        p.status = status;
                    }
                    return;
                }
                let p = self
                    .projects
                    .entry(end.project.clone())
                    .or_insert_with(|| ProjectState::new(operation));
                p.changed_by = None;
                // What ran since says more than the check before it (as for a start, above).
                if p.checked.take().is_some_and(|c| c.drifted()) && operation != Operation::Up {
                    p.inputs = None;
                }
                match (status, operation) {
                    (Recorded::Ended(Outcome::Succeeded), Operation::Up) => {
                        p.deployed = true;
                        p.inputs.clone_from(&end.inputs);
                        p.outputs_digest.clone_from(&end.outputs_digest);
                        p.outputs.clone_from(&end.outputs);
                    }
                    (Recorded::Ended(Outcome::Succeeded | Outcome::Unchanged), Operation::Destroy) => {
                        p.deployed = false;
                        p.inputs = None;
                        p.outputs_digest = None;
                        p.outputs = None;
                    }
                    // A refresh that found changes made outside Pulumi took them into the
                    // state, and a preview (`drift`) that would change something found the stack
                    // other than its last up left it: `up` must run to set what the program says.
                    (Recorded::Ended(Outcome::Succeeded), Operation::Refresh | Operation::Preview) if end.changed => {
                        p.inputs = None;
                    }
                    (Recorded::Ended(Outcome::Succeeded), _) | (_, Operation::Preview) => {}
                    // A failed or cut-short up, refresh or destroy may have changed some
                    // resources: `up` must run again.
                    _ => p.inputs = None,
                }
                p.status = status;
                p.operation = operation;
                p.started.clone_from(&end.started);
                p.ended = Some(end.ended.clone());
            }
        }
    }
}

impl RunState {
    /// A drift check (preview) of a project the runner ran: kept beside its last operation,
    /// which it leaves as it was; one that found a difference makes the next `up` run. A look
    /// at a project never run leaves it never run. Whether `record` was one.
    fn apply_check(&mut self, record: &Record) -> bool {
        let (project, operation) = match record {
            Record::Started { project, operation, .. } => (project, operation),
            Record::Finished(end) if end.by.is_none() => (&end.project, &end.operation),
            Record::Finished(_) => return false,
        };
        if *operation != Word::Known(Operation::Preview) {
            return false;
        }
        let Some(p) = self.projects.get_mut(project) else {
            return true;
        };
        if p.operation == Operation::Preview {
            return false; // a state written before checks were kept apart
        }
        match record {
            Record::Started { at, .. } => {
                p.checked = Some(Checked {
                    status: Recorded::Running,
                    started: Some(at.clone()),
                    ended: None,
                    changed: false,
                });
            }
            Record::Finished(end) => {
                let Word::Known(outcome) = end.status.clone() else {
                    return true;
                };
                let status = Recorded::Ended(outcome);
                if status.settled() && end.started.is_none() {
                    if let Some(c) = p.checked.as_mut().filter(|c| c.status == Recorded::Running) {
                        c.status = status;
                    }
                    return true;
                }
                p.checked = Some(Checked {
                    status,
                    started: end.started.clone(),
                    ended: Some(end.ended.clone()),
                    changed: end.changed,
                });
                // A check that found a difference keeps the inputs of the last up (what changed
                // since is still told), and `last_up` no longer offers them: the next up runs.
            }
        }
        true
    }
}

/// The names of `provider`'s projects, which journal lines may name.
fn known(provider: &Provider) -> std::collections::HashSet<&str> {
    provider.projects.iter().map(|p| p.name.as_str()).collect()
}

/// `2026-11-22T14:06:03.881Z`, for the state and the summary: RFC 3339 in UTC, to the
/// millisecond.
pub(crate) fn timestamp(t: std::time::SystemTime) -> String {
    use std::time::{Duration, UNIX_EPOCH};
    // humantime writes no time before the epoch, nor after the year 9999.
    let t = t.clamp(UNIX_EPOCH, UNIX_EPOCH + Duration::from_secs(253_402_300_799));
    humantime::format_rfc3339_millis(t).to_string()
}

/// The time a [`timestamp`] tells; `None` when `text` is none.
pub(crate) fn time_of(text: &str) -> Option<std::time::SystemTime> {
    humantime::parse_rfc3339(text).ok()
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;
    use journal::Finish;

    /// What keeps a successful `up` standing for skipping, and what makes the next `up` run.
    #[test]
    fn only_what_may_have_changed_the_stack_forgets_its_last_up() {
        let started = |operation: Operation| Record::Started {
            project: "p".into(),
            operation: operation.into(),
            at: "t1".into(),
        };
        let ended = |operation: Operation, status: Outcome, changed: bool| {
            let up = operation == Operation::Up && status == Outcome::Succeeded;
            Record::Finished(Box::new(Finish {
                project: "p".into(),
                operation: operation.into(),
                status: status.into(),
                started: Some("t1".into()),
                ended: "t2".into(),
                inputs: up.then(|| Inputs::Whole("in".into())),
                outputs_digest: up.then(|| "out".into()),
                outputs: None,
                changed,
                by: None,
            }))
        };
        let after = |then: &[Record]| {
            let mut state = RunState::default();
            for r in [started(Operation::Up), ended(Operation::Up, Outcome::Succeeded, true)]
                .iter()
                .chain(then)
            {
                state.apply(r);
            }
            state.projects["p"].last_up().is_some()
        };
        assert!(after(&[]));
        // Whether the up still stands after an operation that ran to its end.
        for (operation, status, changed, stands) in [
            (Operation::Preview, Outcome::Succeeded, false, true),
            // A preview (drift) that would change the stack: up must run.
            (Operation::Preview, Outcome::Succeeded, true, false),
            (Operation::Preview, Outcome::Failed, false, true),
            (Operation::Refresh, Outcome::Succeeded, false, true),
            (Operation::Refresh, Outcome::Succeeded, true, false),
            (Operation::Refresh, Outcome::Failed, false, false),
            (Operation::Up, Outcome::Failed, false, false),
            (Operation::Destroy, Outcome::Failed, false, false),
            (Operation::Destroy, Outcome::Succeeded, true, false),
        ] {
            assert_eq!(
                after(&[started(operation), ended(operation, status, changed)]),
                stands,
                "{operation:?} {status:?}, changed: {changed}"
            );
        }
        assert!(
            after(&[started(Operation::Preview)]),
            "a preview cut short changed nothing"
        );
        assert!(!after(&[started(Operation::Up)]), "an up cut short by a crash");

        // A check is kept beside the up it looked at, until an operation runs again.
        let mut state = RunState::default();
        for r in [
            started(Operation::Up),
            ended(Operation::Up, Outcome::Succeeded, true),
            started(Operation::Preview),
            ended(Operation::Preview, Outcome::Succeeded, true),
        ] {
            state.apply(&r);
        }
        let p = &state.projects["p"];
        assert_eq!(
            (p.operation, p.status),
            (Operation::Up, Recorded::Ended(Outcome::Succeeded))
        );
        assert!(p.checked.as_ref().is_some_and(Checked::drifted));
        assert!(state.drifted().contains("p"));
        state.apply(&started(Operation::Up));
        state.apply(&ended(Operation::Up, Outcome::Succeeded, true));
        assert!(state.projects["p"].checked.is_none() && state.drifted().is_empty());
        // A look at a project never run leaves no entry.
        let mut state = RunState::default();
        state.apply(&started(Operation::Preview));
        state.apply(&ended(Operation::Preview, Outcome::Succeeded, true));
        assert!(state.projects.is_empty());
    }

    #[test]
    fn folding_a_journal_again_changes_nothing() {
        // A crash after state.json was written and before the journal was removed folds the
        // same lines twice.
        let end = |project: &str, status: Outcome, started: Option<&str>| {
            Record::Finished(Box::new(Finish {
                project: project.into(),
                operation: Operation::Up.into(),
                status: status.into(),
                started: started.map(str::to_string),
                ended: "t2".into(),
                inputs: Some(Inputs::Whole(format!("in-{project}"))),
                outputs_digest: Some(format!("out-{project}")),
                outputs: None,
                changed: false,
                by: None,
            }))
        };
        let start = |project: &str| Record::Started {
            project: project.into(),
            operation: Operation::Up.into(),
            at: "t1".into(),
        };
        let records = [
            start("a"),
            end("a", Outcome::Succeeded, Some("t1")),
            start("b"),
            end("b", Outcome::Failed, Some("t1")),
            end("c", Outcome::Skipped, None),
            start("d"),
        ];
        let mut before = RunState::default();
        before.projects.insert(
            "b".into(),
            ProjectState {
                status: Recorded::Ended(Outcome::Succeeded),
                deployed: true,
                inputs: Some(Inputs::Whole("old".into())),
                ..ProjectState::new(Operation::Up)
            },
        );
        let mut once = before.clone();
        for r in &records {
            once.apply(r);
        }
        let mut twice = once.clone();
        for r in &records {
            twice.apply(r);
        }
        assert_eq!(once, twice);
        assert_eq!(once.projects["a"].inputs, Some(Inputs::Whole("in-a".into())));
        assert!(once.projects["b"].deployed && once.projects["b"].inputs.is_none());
        assert_eq!(once.projects["d"].status, Recorded::Running);
        assert!(!once.projects.contains_key("c"), "settled without running: no entry");
    }

    #[test]
    fn the_journal_fuzz_target_holds_of_what_runs_write_and_of_junk() {
        let d = "0".repeat(64);
        fuzz_journal(
            format!(
                "{{\"started\":{{\"project\":\"a\",\"operation\":\"up\",\"at\":\"2026-01-01T00:00:00.000Z\"}}}}\n\
                 {{\"finished\":{{\"project\":\"a\",\"operation\":\"up\",\"status\":\"succeeded\",\
                 \"started\":\"2026-01-01T00:00:00.000Z\",\"ended\":\"2026-01-01T00:00:01.000Z\",\
                 \"inputs_digest\":\"{d}\",\"outputs_digest\":\"{d}\"}}}}\n\
                 {{\"finished\":{{\"project\":\"z\",\"operation\":\"up\",\"status\":\"failed\",\
                 \"ended\":\"2026-01-01T00:00:01.000Z\"}}}}\n \n\u{0}\n{{\"started\":"
            )
            .as_bytes(),
        );
        fuzz_journal(b"\xff\xfe\n\n\n{}");
    }

    /// A runner upgraded between two runs: a state of schema version 1 and a journal of its
    /// time keep inputs as text; read, they equal what this runner takes (nothing reruns), say
    /// which input changed, and are written back as version 2.
    #[test]
    fn a_state_and_journal_of_schema_version_1_read_as_this_runner_takes_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = digests::one_project(dir.path(), "config:\n  p:size: 3\n");
        let run_dir = RunDir::new(dir.path(), "dev");
        let digests = Digests::open(dir.path(), &run_dir, &cfg).unwrap();
        let upstream = BTreeMap::from([("net".to_string(), "d".repeat(64))]);
        let now = digests.inputs("p", &upstream);
        // The text manifest as runners of schema version 1 wrote it.
        let Inputs::Each(each) = &now else { panic!("{now:?}") };
        let lines: Vec<String> = each
            .iter()
            .map(|i| {
                let kind = serde_json::to_value(i.kind).unwrap();
                let name = serde_json::to_string(&i.name).unwrap();
                format!("{} {name} {}\n", kind.as_str().unwrap(), i.digest)
            })
            .collect();
        let text = lines.concat();
        assert!(text.starts_with("file \"Pulumi.yaml\" ") && text.contains("\nupstream \"net\" "));
        let out = "e".repeat(64);
        let old = |inputs: &str| {
            serde_json::json!({
                "schema_version": 1,
                "stack": "dev",
                "projects": { "p": {
                    "status": "succeeded", "operation": "up", "deployed": true,
                    "started": "2026-01-01T00:00:00.000Z", "ended": "2026-01-01T00:00:01.000Z",
                    "inputs_digest": inputs, "outputs_digest": out,
                }},
            })
            .to_string()
        };
        std::fs::create_dir_all(run_dir.state().parent().unwrap()).unwrap();
        std::fs::write(run_dir.state(), old(&text)).unwrap();
        let state = RunState::load(&run_dir, &|p| p.display().to_string()).unwrap();
        assert_eq!(
            state.projects["p"].last_up(),
            Some((&now, out.as_str())),
            "unchanged: skipped"
        );
        state.save(&run_dir).unwrap();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(run_dir.state()).unwrap()).unwrap();
        assert_eq!(saved["schema_version"], 2);
        assert_eq!(saved["projects"]["p"]["inputs"][0]["kind"], "file");
        assert_eq!(RunState::load(&run_dir, &|p| p.display().to_string()).unwrap(), state);
        // A changed key is named, as before.
        std::fs::write(&cfg, "config:\n  p:size: 4\n").unwrap();
        let changed = Digests::open(dir.path(), &run_dir, &cfg)
            .unwrap()
            .inputs("p", &upstream);
        assert_eq!(
            digests::changed_input(state.projects["p"].last_up().unwrap().0, &changed)
                .map(|c| crate::report::reason::input(&c))
                .as_deref(),
            Some("stack file key `p:size` changed")
        );
        // The single digest of older runners still: the project runs once more.
        std::fs::write(run_dir.state(), old(&"f".repeat(64))).unwrap();
        let state = RunState::load(&run_dir, &|p| p.display().to_string()).unwrap();
        assert_eq!(state.projects["p"].inputs, Some(Inputs::Whole("f".repeat(64))));
        // A journal line of that time.
        let line = serde_json::json!({ "finished": {
            "project": "p", "operation": "up", "status": "succeeded",
            "started": "2026-01-01T00:00:00.000Z", "ended": "2026-01-01T00:00:01.000Z",
            "inputs_digest": text, "outputs_digest": out,
        }})
        .to_string()
            + "\n";
        let (records, warnings) = journal::parse(line.as_bytes(), "journal", &|p| p == "p");
        assert!(warnings.is_empty(), "{warnings:?}");
        let Record::Finished(end) = &records[0] else {
            panic!("{records:?}")
        };
        assert_eq!(end.inputs.as_ref(), Some(&now));
    }

    /// A `state.json` and a journal as runners before the one status vocabulary wrote them read
    /// the same, and are written back byte for byte.
    #[test]
    fn state_files_and_journals_written_before_read_the_same() {
        let t = "2026-01-01T00:00:00.000Z";
        let state = format!(
            r#"{{
  "schema_version": 1,
  "stack": "dev",
  "projects": {{
    "a": {{
      "status": "succeeded",
      "operation": "up",
      "started": "{t}",
      "ended": "{t}",
      "deployed": true,
      "checked": {{
        "status": "succeeded",
        "ended": "{t}",
        "changed": true
      }}
    }},
    "b": {{
      "status": "cut short",
      "operation": "destroy",
      "deployed": false
    }},
    "c": {{
      "status": "running",
      "operation": "refresh",
      "deployed": false
    }},
    "d": {{
      "status": "timed out",
      "operation": "preview",
      "deployed": false,
      "checked": {{
        "status": "not started",
        "changed": false
      }}
    }}
  }}
}}"#
        );
        let read: RunState = serde_json::from_str(&state).unwrap();
        let status = |p: &str| read.projects[p].status;
        assert_eq!(status("a"), Recorded::Ended(Outcome::Succeeded));
        assert_eq!(status("b"), Recorded::CutShort);
        assert_eq!(status("c"), Recorded::Running);
        assert_eq!(status("d"), Recorded::Ended(Outcome::TimedOut));
        assert!(read.projects["a"].checked.as_ref().is_some_and(Checked::drifted));
        assert_eq!(serde_json::to_string_pretty(&read).unwrap(), state);
        assert!(serde_json::from_str::<RunState>(&state.replace("cut short", "cut")).is_err());

        let journal = format!(
            "{{\"started\":{{\"project\":\"a\",\"operation\":\"destroy\",\"at\":\"{t}\"}}}}\n\
             {{\"finished\":{{\"project\":\"a\",\"operation\":\"destroy\",\"status\":\"not started\",\"ended\":\"{t}\"}}}}\n\
             {{\"finished\":{{\"project\":\"b\",\"operation\":\"refresh\",\"status\":\"waits\",\"started\":\"{t}\",\"ended\":\"{t}\",\"changed\":true}}}}\n"
        );
        let (records, warnings) = journal::parse(journal.as_bytes(), "journal", &|_| true);
        assert!(warnings.is_empty(), "{warnings:?}");
        let Record::Finished(end) = &records[2] else {
            panic!("{records:?}")
        };
        assert_eq!(
            (&end.operation, &end.status),
            (&Word::Known(Operation::Refresh), &Word::Known(Outcome::Waits))
        );
        let written: String = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        assert_eq!(written, journal);
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_787_339_880_123);
        assert_eq!(timestamp(t), "2026-08-21T19:18:00.123Z");
        assert_eq!(time_of(&timestamp(t)), Some(t));
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(951_868_800_000_999_999);
        assert_eq!(timestamp(t), "2000-03-01T00:00:00.000Z", "cut to the millisecond");
        assert_eq!(timestamp(std::time::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let before = std::time::UNIX_EPOCH - std::time::Duration::from_secs(1);
        assert_eq!(timestamp(before), "1970-01-01T00:00:00.000Z");
        assert_eq!(time_of("yesterday"), None);
    }
}
