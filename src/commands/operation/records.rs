//! What the run reads and leaves: the run state and digests, learned durations, the prediction,
//! the JSON summary and the reports after it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};
use std::time::SystemTime;

use super::RunOptions;
use super::ci_reports;
use super::predict::{Prediction, Settled, predict};
use crate::config::env::Env;
use crate::config::request::Ready;
use crate::config::stackfile::{self, StackFile};
use crate::error::RunnerError;
use crate::exec::RunResult;
use crate::fs::{NewFile, write_atomic};
use crate::plan::{Operation, Plan, RunKind};
use crate::provider::{PromptType, Provider};
use crate::report;
use crate::report::summary::{self, Predicted, Summary};
use crate::runstate::{Digests, History, Outside, Pending, Recorder, RunState};
use crate::settings::{Settings, StackContext};

/// What projects depend on beyond their directories and the stack file: the files `path`
/// questions named, and the environment every `pulumi` gets.
pub(super) fn outside(t: &StackContext, env: &Env, config: &Map<String, Value>) -> Outside {
    let files = t
        .provider
        .prompts
        .iter()
        .filter(|p| p.kind == PromptType::Path)
        .filter_map(|p| Some((p.key.clone(), PathBuf::from(config.get(&p.key)?.as_str()?))))
        .collect();
    // The backend the stacks live in, wherever it is set: the runner's own file backend in
    // the overlay, or one set in the shell (a move from one to the other is a change, not a
    // variable removed).
    let mut vars = env.overlay().clone();
    if let Some(backend) = env.get(crate::config::backend::BACKEND_VAR) {
        vars.insert(crate::config::backend::BACKEND_VAR.to_string(), backend);
    }
    Outside { files, env: vars }
}

/// Whether an `up` would find every project unchanged, told from what the last runs left
/// (nothing is written: a workspace without digests is not up to date).
pub(super) fn up_to_date(s: &Settings, t: &StackContext, plan: &Plan<'_>) -> bool {
    let Ok(state) = RunState::load(&t.run_dir, &|p| s.ws.show(p)) else {
        return false;
    };
    digests_now(s, t).is_some_and(|d| state.up_to_date(plan, &d))
}

/// The digests as an `up` would take them now, when past runs made a digest key (nothing is
/// written).
pub(crate) fn digests_now(s: &Settings, t: &StackContext) -> Option<Digests> {
    let config_file = stackfile::path(&s.ws.root, &t.stack);
    let file = StackFile::load(&config_file, &s.ws.show(&config_file)).ok()?;
    if !t.run_dir.digest_key().is_file() {
        return None;
    }
    let digests = Digests::open(&s.ws.root, &t.run_dir, &config_file).ok()?;
    Some(
        digests
            .with_outside(outside(t, &t.env, &file.config))
            .with_projects(t.provider.projects.iter().map(|p| p.name.as_str())),
    )
}

/// How long the run should take: each project's estimate, and nothing for what the run will
/// settle without running (what an `up` finds unchanged, unless `--fresh`).
pub(super) fn prediction(
    plan: &Plan<'_>,
    state: &RunState,
    pending: Option<&[(String, Pending)]>,
    history: &History,
    o: &RunOptions,
) -> Prediction {
    let skipped_by_up: BTreeSet<String> = pending
        .unwrap_or_default()
        .iter()
        .filter(|(_, p)| !p.runs)
        .map(|(name, _)| name.clone())
        .collect();
    // A drift check previews whatever the backend holds.
    let deployed = if o.kind().is_drift() {
        plan.order.iter().map(|&i| plan.name(i).to_string()).collect()
    } else {
        state.deployed()
    };
    let recorded: BTreeSet<String> = state.projects.keys().cloned().collect();
    let maybe: BTreeSet<String> = pending
        .unwrap_or_default()
        .iter()
        .filter(|(_, p)| p.runs && matches!(p.why, crate::runstate::Why::After(_)))
        .map(|(name, _)| name.clone())
        .collect();
    let settled = Settled::new(plan, (&skipped_by_up, maybe), (&deployed, &recorded));
    predict(plan, history, &settled, o.scheduler.parallel)
}

/// Remembers how long each project that succeeded took, for the next run's estimates.
pub(super) fn learn(t: &StackContext, mut history: History, operation: Operation, result: &RunResult) {
    history.record(&t.provider.name, operation, result);
    if let Err(e) = history.save(&t.run_dir) {
        report::warning(&format!("cannot write what this run took: {e}"));
    }
}

/// What a preview may look at: only projects whose upstream stacks are deployed; a drift check
/// asks the backend instead, not what this workspace's runs recorded (a CI job has none).
pub(super) fn deployed_for_preview(plan: &Plan<'_>, o: &RunOptions, state: &RunState) -> Option<BTreeSet<String>> {
    (o.kind() == RunKind::Preview && !plan.only).then(|| state.deployed())
}

/// Past runs weigh the plan: the provider with each project's learned duration as its estimate
/// (the critical path, the order of ready projects), and what was learned.
pub(super) fn learned(
    s: &Settings,
    t: &StackContext,
    operation: Operation,
) -> Result<(History, Provider), RunnerError> {
    let mut history = History::load(&t.run_dir, &|p| s.ws.show(p)).map_err(|m| state_error(s, t, m))?;
    if history.estimates(&t.provider.name, operation).is_empty()
        && let Some((other, theirs)) = sibling_history(s, t, operation)
    {
        history = history.falling_back_to(&other, theirs, &t.provider.name);
    }
    let mut provider = t.provider.clone();
    provider.learn_estimates(&history.estimates(&t.provider.name, operation));
    Ok((history, provider))
}

/// What a stack with no runs of its own learns from: the workspace's other stack of the same
/// provider whose runs of `operation` were the last (a second stack's projects take about what
/// the first's took, far closer than the provider file's guesses).
fn sibling_history(s: &Settings, t: &StackContext, operation: Operation) -> Option<(String, History)> {
    s.stacks_besides(&t.stack)
        .into_iter()
        .filter_map(|other| {
            let run_dir = s.ws.run_dir(&other);
            let when = std::fs::metadata(run_dir.durations()).and_then(|m| m.modified()).ok()?;
            let history = History::load(&run_dir, &|p| s.ws.show(p)).ok()?;
            (!history.estimates(&t.provider.name, operation).is_empty()).then_some((when, other, history))
        })
        .max_by_key(|(when, _, _)| *when)
        .map(|(_, other, history)| (other, history))
}

/// A file of the run state that cannot be read (exit 3, as a broken stack file): the message names it and the fix.
pub(crate) fn state_error(s: &Settings, t: &StackContext, message: impl std::fmt::Display) -> RunnerError {
    // Not how the command was typed (a usage error) but a file of the workspace that is not
    // right: as a broken stack file, exit 3.
    RunnerError::Problems(vec![crate::diagnostic::Problem::new(
        message.to_string(),
        format!("the run state lives under {}", s.ws.show(&t.run_dir.stack_dir())),
    )])
}

/// The record of the run that just ended, with what was predicted.
pub(super) fn summary(
    plan: &Plan<'_>,
    t: &StackContext,
    result: &RunResult,
    (started, code): (SystemTime, i32),
    prediction: &Prediction,
    kind: crate::plan::RunKind,
) -> Summary {
    let run = summary::Run {
        plan,
        stack: &t.stack,
        started,
        ended: SystemTime::now(),
        exit_code: code,
        predicted: Predicted {
            estimates: &prediction.estimates,
            makespan: prediction.makespan,
        },
        kind,
    };
    Summary::of(&run, result)
}

/// After the run, for whoever reads it: what the run says when it is over
/// ([`super::afterwards::say`]), what the CI shows (`JUnit`, GitHub's summary and annotations),
/// the durations the next runs learn from, and the run's records ([`write_records`]: `false`
/// when a summary could not be written).
pub(super) fn after(
    s: &Settings,
    t: &StackContext,
    o: &RunOptions,
    (plan, result): (&Plan<'_>, &RunResult),
    (started, total): (SystemTime, f64),
    history: History,
    summary: &Summary,
) -> bool {
    let verdict = super::afterwards::say(s, t, o, (plan, result));
    let asked = ci_reports::Asked {
        junit: o.junit.as_ref(),
        kind: o.kind(),
        verdict: verdict.as_deref(),
    };
    ci_reports::reports(s, t, asked, (plan, result), (started, total), summary);
    learn(t, history, o.operation, result);
    write_records(s, t, o, plan, summary)
}

/// The run state (a crashed run's journal folded in, its notes said) and the digests as this
/// run takes them.
pub(super) fn open_records(s: &Settings, t: &StackContext, ready: &Ready) -> Result<(Recorder, Digests), RunnerError> {
    let (state, notes) =
        Recorder::open(&t.run_dir, &t.provider, &|p| s.ws.show(p)).map_err(|m| state_error(s, t, m))?;
    for note in &notes {
        report::warning(note);
    }
    let digests = Digests::open(&s.ws.root, &t.run_dir, &ready.config_file)
        .map_err(|source| match source.kind() {
            // Not a key file (a pipe, a device): named with the fix.
            std::io::ErrorKind::InvalidInput => state_error(s, t, format!("cannot read the digest key {source}")),
            _ => RunnerError::Io {
                context: format!("cannot write under {}", s.ws.show(t.run_dir.base())),
                source,
            },
        })?
        .with_outside(outside(t, &ready.env, &ready.config))
        .with_projects(t.provider.projects.iter().map(|p| p.name.as_str()));
    Ok((state, digests))
}

/// The run's record to `.runner/last-run.json`, and to `--summary FILE` when given (made into
/// text once); the HTML report to `--report FILE` when given. `true` when every summary was
/// written.
pub(super) fn write_records(
    s: &Settings,
    t: &StackContext,
    o: &RunOptions,
    plan: &Plan<'_>,
    summary: &Summary,
) -> bool {
    if let Some(out) = &o.report {
        crate::commands::last_run::write_html(s, t, plan, summary, out);
    }
    let text = summary.to_json();
    let mut written = true;
    let last = t.run_dir.last_run();
    if let Err(e) = write_atomic(&last, text.as_bytes(), NewFile::Default) {
        written = false;
        report::warning(&format!("cannot write the summary to {}: {e}", s.ws.show(&last)));
    }
    // The last run of the stack that ran something, kept apart: a run that finds everything
    // unchanged must not take away the timeline, durations and outputs `report` draws.
    if !summary.ran_nothing() {
        let ran = t.run_dir.last_ran();
        if let Err(e) = write_atomic(&ran, text.as_bytes(), NewFile::Default) {
            written = false;
            report::warning(&format!("cannot write the summary to {}: {e}", s.ws.show(&ran)));
        }
    }
    if let Some(out) = &o.summary
        && let Err(e) = out.write(text.as_bytes())
    {
        written = false;
        let to = out.shown(|p| s.ws.show(p));
        report::warning(&format!("cannot write the summary to {to}: {e}"));
    }
    written
}
