//! The run's engine and what it needs before it starts: the configuration prepared (questions,
//! secrets, checks), the passphrase's verdict, the `pulumi` engine built once, and the plan run on
//! its own runtime with the run's signals.

use std::collections::BTreeSet;
use std::path::PathBuf;

use std::sync::Arc;

use super::RunOptions;
use super::records::up_to_date;
use crate::config::env::Env;
use crate::config::prepare;
use crate::config::request::{Mode, Ready, Request};
use crate::config::stackfile;
use crate::config::terminal::Terminal;
use crate::error::RunnerError;
use crate::exec::{self, Event, Options, Resume, RunResult};
use crate::plan::{Operation, Plan};
use crate::provider::Project;
use crate::pulumi::{Pulumi, Redactor, RunFlags, Store};
use crate::runstate::RunState;
use crate::settings::{Settings, StackContext};

/// A wrong passphrase as one error, before any project starts (waits for its check).
pub(super) fn passphrase_opens(s: &Settings, ready: &mut Ready) -> Result<(), RunnerError> {
    match ready.passphrase_problem(&|f| s.ws.show(f)) {
        Some(p) => Err(RunnerError::Problems(vec![p])),
        None => Ok(()),
    }
}

/// The `pulumi` engine for this run.
pub(super) fn engine(
    s: &Settings,
    t: &StackContext,
    o: &RunOptions,
    ready: Ready,
    known_stacks: BTreeSet<String>,
    refresh_first: BTreeSet<String>,
) -> Pulumi {
    let redactor = Redactor::default();
    redactor.add(ready.secrets);
    Pulumi {
        config_file: ready.config_file,
        redactor,
        flags: o.pulumi,
        known_stacks,
        refresh_first,
        ..pulumi_for(s, t, ready.env)
    }
}

/// The `pulumi` engine of the target's stack with this environment, built here alone: as a run
/// has it (the run adds its own, [`engine`]), for a command that reads one project's stack or
/// hands it to `pulumi` (`output`, `pulumi`).
pub(crate) fn pulumi_for(s: &Settings, t: &StackContext, env: Env) -> Pulumi {
    Pulumi {
        program: PathBuf::from("pulumi"),
        root: s.ws.root.clone(),
        provider: t.provider.name.clone(),
        stack: t.stack.clone(),
        config_file: stackfile::path(&s.ws.root, &t.stack),
        env,
        run_dir: t.run_dir.clone(),
        redactor: Redactor::default(),
        flags: RunFlags::default(),
        known_stacks: BTreeSet::new(),
        refresh_first: BTreeSet::new(),
    }
}

/// The configuration, questions, secrets and checks before anything runs.
pub(super) fn prepare(
    s: &Settings,
    t: &StackContext,
    plan: &Plan<'_>,
    fresh: bool,
    store: &Store,
) -> Result<Ready, RunnerError> {
    // Secrets are asked only by runs that deploy or read the projects that use them; the store
    // itself loads every secret of the graph into the cluster, so running it needs them all.
    let planned: Vec<&Project> = plan.order.iter().map(|&i| plan.project(i)).collect();
    let secrets_for = if plan.operation == Operation::Destroy {
        Vec::new()
    } else if planned.iter().any(|p| p.secrets_store) {
        t.provider.projects.iter().collect()
    } else {
        planned.clone()
    };
    let request = Request {
        ws: &s.ws,
        provider: &t.provider,
        stack: &t.stack,
        env: t.env.clone(),
        secrets_for,
        // `destroy` and `refresh` do not run the programs: the CLI checks no configuration then.
        runs: if matches!(plan.operation, Operation::Up | Operation::Preview) {
            planned
        } else {
            Vec::new()
        },
        interactive: s.interactive,
        mode: Mode::Run,
        idle: plan.operation == Operation::Up && !fresh && up_to_date(s, t, plan),
        switched: t.switched(),
    };
    prepare::prepare(&request, &mut Terminal::new(s.console), store)
}

/// The projects whose stack exists: those the run state knows, and those the preparation
/// created (the secrets store's, whose `stack select --create` is then its own).
pub(super) fn known_stacks(s: &Settings, t: &StackContext, state: &RunState, store: &Store) -> BTreeSet<String> {
    let made = store.stacks_made();
    let mut known = state.known_stacks();
    known.extend(
        t.provider
            .projects
            .iter()
            .filter(|p| made.contains(&s.ws.root.join(&p.path)))
            .map(|p| p.name.clone()),
    );
    known
}

/// Runs the plan on its own runtime; every event goes to `consume` as it happens, and the
/// run's signals (Ctrl-C, SIGTERM) to the scheduler.
pub(super) fn execute(
    plan: &Plan<'_>,
    engine: Pulumi,
    options: &Options,
    resume: Option<&Resume>,
    mut consume: impl FnMut(&Event),
) -> Result<RunResult, RunnerError> {
    let runtime = crate::commands::runtime(crate::commands::Threads::Many)?;
    Ok(runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        let (sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let _forwarding = exec::signals::hub().forward_to(sig_tx);
        let execution = exec::execute(plan, Arc::new(engine), options, resume, tx, sig_rx);
        let events = async {
            while let Some(ev) = rx.recv().await {
                consume(&ev);
            }
        };
        let (result, ()) = tokio::join!(execution, events);
        result
    }))
}
