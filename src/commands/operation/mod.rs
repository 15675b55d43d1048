//! `up`, `destroy`, `refresh`, `preview`: the conductor. It plans, takes the workspace lock,
//! prepares the configuration, runs the plan through the `pulumi` engine while every event goes
//! to the views, the logs and the run state, and ends with the closing table, the JSON summary
//! and the exit code.

mod afterwards;
mod ci_reports;
mod confirm;
mod engine;
mod only;
mod predict;
mod records;
mod selection;

use std::path::PathBuf;

use std::time::{Instant, SystemTime};

use crate::config::backend::Backend;
use crate::error::{RunnerError, exit};
use crate::exec::{self, Options, Policy, RunResult, would_change};
use crate::fs::Output;
use crate::plan::{Operation, RunKind};
use crate::pulumi::{RunFlags, Store};
use crate::report::live::Live;
use crate::report::logs::Logs;
use crate::report::plain::Plain;
use crate::report::sinks::{Sinks, StateFile};
use crate::report::{self, OutputMode};
use crate::settings::{Settings, StackContext};
use crate::workspace::WorkspaceLock;
use confirm::{destroy_needs_yes, go_ahead};
pub(crate) use engine::pulumi_for;
use engine::{engine, execute, known_stacks, passphrase_opens, prepare};
use records::{after, deployed_for_preview, learned, open_records, prediction, summary};
pub(crate) use records::{digests_now, state_error};
use selection::plan;

/// Projects run at once by default: Pulumi processes mostly wait on cloud APIs, but each holds
/// its own plugins in memory; 8 covers the widest wave of the reference graphs.
pub(crate) const DEFAULT_PARALLEL: usize = 8;

/// What the command line asked of this run, resolved once from its command's flags
/// (`cli::run`).
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub(crate) operation: Operation,
    /// Only these projects and what they need (on destroy: what needs them).
    pub(crate) targets: Vec<String>,
    /// Without these and what cannot run without them (on destroy: what they need is kept).
    pub(crate) excludes: Vec<String>,
    /// `--only X`: X alone, its needs proven done in the backend first.
    pub(crate) only: Option<String>,
    /// Run every project, even those unchanged since their last successful `up`.
    pub(crate) fresh: bool,
    /// Also write the JSON summary there.
    pub(crate) summary: Option<Output>,
    /// Write the run as a `JUnit` report there.
    pub(crate) junit: Option<Output>,
    /// `--report FILE`: the run as an HTML file.
    pub(crate) report: Option<Output>,
    pub(crate) output: OutputMode,
    /// Run without asking at the terminal (and, for destroy, allowed without one).
    pub(crate) yes: bool,
    /// What changes a preview finds mean to the exit code.
    pub(crate) changes: Changes,
    /// What every `pulumi` of the run is asked (`drift`: the previews are drift checks of what
    /// the backend holds), handed to the engine whole.
    pub(crate) pulumi: RunFlags,
    /// How the scheduler runs the plan: at most how many at once, on after a failure or not,
    /// how long a project may run and gets to stop.
    pub(crate) scheduler: Policy,
}

impl RunOptions {
    /// What the run is: its operation, or a drift check. Decided here, once; the reporters
    /// take it whole.
    pub(crate) fn kind(&self) -> RunKind {
        RunKind::of(self.operation, self.pulumi.drift.is_some())
    }
}

/// What changes a preview finds mean to the run's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changes {
    /// Shown; the run succeeds.
    Allowed,
    /// `preview --expect-no-changes`, and every drift check: [`exit::CHANGES`] when any project
    /// would change.
    Unexpected,
}

pub(crate) fn run(s: &Settings, t: &StackContext, o: &RunOptions) -> Result<i32, RunnerError> {
    let outcome = run_plan(s, t, o);
    // An error is a run refused before its first project: the CI's readers are told too.
    if let Err(e) = &outcome {
        ci_reports::refused(s, t, o.kind().word(), e);
    }
    outcome
}

fn run_plan(s: &Settings, t: &StackContext, o: &RunOptions) -> Result<i32, RunnerError> {
    ci_reports::warn_lost_backend(s, t);
    let (history, provider) = learned(s, t, o.operation)?;
    let plan = plan(&provider, o)?;
    if o.operation == Operation::Destroy && !o.yes && !s.interactive {
        return Err(destroy_needs_yes(s, t));
    }
    let _lock = WorkspaceLock::take(&s.ws, &t.run_dir)?;
    // Scratch files a killed run left (event logs may hold what was never scrubbed), and the
    // temporary files of writes it did not finish.
    let _ = std::fs::remove_dir_all(t.run_dir.scratch());
    crate::fs::remove_stale_temporaries(t.run_dir.base());
    crate::fs::remove_stale_temporaries(&t.run_dir.stack_dir());
    // From here until the first project starts, Ctrl-C ends the runner at once.
    let _interrupt = exec::signals::hub().on_interrupt(|| report::info("\ninterrupted: no project was started"));
    let store = Store::new(PathBuf::from("pulumi"), &t.stack, o.pulumi.remove_stale_locks);
    let mut ready = prepare(s, t, &plan, o.fresh, &store)?;
    let (state, digests) = open_records(s, t, &ready)?;
    // The passphrase's check runs while the run is readied: its verdict is taken before the
    // prediction and a question (nobody is told how long, or asked to go ahead with, a run
    // bound to fail).
    passphrase_opens(s, &mut ready)?;
    // What an `up` will skip, told once: said before it starts, and left out of its prediction.
    let pending = (o.operation == Operation::Up && !o.fresh).then(|| state.state.pending(&plan, Some(&digests)));
    // Said before the question: how long is part of whether to go ahead.
    let prediction = prediction(&plan, &state.state, pending.as_deref(), &history, o);
    prediction.say(&plan);
    go_ahead(s, t, &plan, o, &ready, pending.as_deref())?;
    // The run's time starts with its first project, not with the questions.
    let started = SystemTime::now();
    let clock = Instant::now();
    // `--fresh` runs everything but still records the digests, so the next `up` can skip.
    let resume = (o.operation == Operation::Up).then(|| state.state.resume(&t.provider, digests, o.fresh));
    let mut options = Options {
        policy: o.scheduler,
        deployed: deployed_for_preview(&plan, o, &state.state),
        given: std::collections::BTreeMap::new(),
    };
    let known = known_stacks(s, t, &state.state, &store);
    let engine = engine(s, t, o, ready, known, state.state.drifted());
    if plan.only {
        options.given = only::prove(s, &plan, &engine)?;
    }
    report::debug(
        s.style,
        &format!(
            "running {}, at most {} at once; backend {}",
            crate::render::count(plan.order.len(), "project"),
            options.policy.parallel,
            Backend::of(&engine.env)
        ),
    );

    let kind = o.kind();
    let lines = Plain::new(&plan, s.banner, s.style.debug)
        .grouped(s.ci)
        .sources(ci_reports::project_dirs(s, &plan))
        .fresh(o.fresh)
        .kind(kind);
    let live = (o.output == OutputMode::Auto && s.live)
        .then(|| Live::new(&plan, s.style.debug, prediction.estimates.clone(), o.scheduler.parallel).kind(kind));
    let mut sinks = Sinks::new(lines, live, Logs::new(&t.run_dir), state);
    let result = execute(&plan, engine, &options, resume.as_ref(), |ev| sinks.event(ev))?;
    let code = exit_code(o, &result);
    let log = |name: &str| s.ws.show(&t.run_dir.log(name, o.operation.as_str()));
    let total = clock.elapsed().as_secs_f64();
    let state_file = StateFile(s.ws.show(&t.run_dir.state()));
    let mut unrecorded = !sinks.finish((&plan, &result), (total, &t.stack), &log, &state_file);
    let summary = summary(&plan, t, &result, (started, code), &prediction, kind);
    unrecorded |= !after(s, t, o, (&plan, &result), (started, total), history, &summary);
    // A failure or an interrupt says more than a lost record: keep its code.
    Ok(if unrecorded && code == exit::SUCCESS {
        exit::UNRECORDED
    } else {
        code
    })
}

/// What the run's end says: interrupted, failed, changes found by a preview that expected none,
/// or success.
fn exit_code(o: &RunOptions, result: &RunResult) -> i32 {
    if result.interrupted {
        exit::INTERRUPTED
    } else if result.failed() {
        exit::FAILED
    } else if o.changes == Changes::Unexpected && result.results.iter().any(|(_, f)| would_change(&f.changes)) {
        exit::CHANGES
    } else {
        exit::SUCCESS
    }
}
