//! `up`, `destroy`, `refresh`, `preview`: the conductor. It plans, takes the workspace lock,
//! prepares the configuration, runs the plan through the `pulumi` engine while every event goes
//! to the views, the logs and the run state, and ends with the closing table, the JSON summary
//! and the exit code.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use crate::config::prepare::{self, Ready, Request};
use crate::config::terminal::Terminal;
use crate::error::{RunnerError, exit};
use crate::exec::{self, Event, Options, Resume, RunResult, Status};
use crate::fs::{NewFile, write_atomic};
use crate::plan::{Operation, Plan};
use crate::provider::Project;
use crate::pulumi::{self, Pulumi, Redactor, Store};
use crate::report::live::Live;
use crate::report::logs::Logs;
use crate::report::plain::Plain;
use crate::report::{self, OutputMode};
use crate::runstate::{Digests, Recorder, RunState};
use crate::settings::{Settings, Target};
use crate::workspace::WorkspaceLock;

/// Projects run at once by default: Pulumi processes mostly wait on cloud APIs, but each holds
/// its own plugins in memory; 8 covers the widest wave of the reference graphs.
pub(crate) const DEFAULT_PARALLEL: usize = 8;

/// What the command line asked of this run.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub(crate) operation: Operation,
    /// Only these projects and what they need (on destroy: what needs them).
    pub(crate) targets: Vec<String>,
    pub(crate) parallel: usize,
    pub(crate) keep_going: bool,
    /// Run every project, even those unchanged since their last successful `up`.
    pub(crate) fresh: bool,
    /// Also write the JSON summary there.
    pub(crate) summary: Option<PathBuf>,
    pub(crate) prune_kubeconfig: bool,
    pub(crate) output: OutputMode,
}

pub(crate) fn run(s: &Settings, t: &Target, o: &RunOptions) -> Result<i32, RunnerError> {
    let started = SystemTime::now();
    let clock = Instant::now();
    let plan = Plan::new(&t.provider, o.operation, &o.targets).map_err(|e| {
        let help = match &e.suggestion {
            Some(x) => format!("did you mean `{x}`?"),
            None => format!("see the projects with `runner show-plan -p {}`", e.provider),
        };
        RunnerError::usage(e.to_string(), help)
    })?;
    let _lock = WorkspaceLock::take(&s.ws, &t.run_dir)?;
    let store = Store::new(PathBuf::from("pulumi"), &t.stack);
    let ready = prepare(s, t, &plan, &store)?;

    let (mut state, notes) = Recorder::open(&t.run_dir, &|p| s.ws.show(p)).map_err(|m| {
        RunnerError::usage(
            m,
            format!("the run state lives under {}", s.ws.show(&t.run_dir.stack_dir())),
        )
    })?;
    for note in &notes {
        report::warning(note);
    }
    let digests = Digests::open(&s.ws.root, &t.run_dir, &ready.config_file).map_err(|source| RunnerError::Io {
        context: format!("cannot write under {}", s.ws.show(t.run_dir.base())),
        source,
    })?;
    let resume = (o.operation == Operation::Up && !o.fresh).then(|| state.state.resume(&t.provider, digests));
    let options = Options {
        parallel: o.parallel,
        keep_going: o.keep_going,
        // A preview can only look at projects whose upstream stacks are deployed.
        deployed: (o.operation == Operation::Preview).then(|| state.state.deployed()),
    };
    let engine = Pulumi {
        program: PathBuf::from("pulumi"),
        root: s.ws.root.clone(),
        provider: t.provider.name.clone(),
        stack: t.stack.clone(),
        config_file: ready.config_file,
        env: ready.env,
        run_dir: t.run_dir.clone(),
        redactor: Redactor::default(),
        prune_kubeconfig: o.prune_kubeconfig,
        known_stacks: known_stacks(s, t, &state.state, &store),
    };
    report::debug(
        s.style,
        &format!(
            "running {} projects, at most {} at once",
            plan.order.len(),
            options.parallel
        ),
    );

    let mut view = Plain::new(&plan, s.banner);
    let mut live = (o.output == OutputMode::Auto && s.live).then(|| Live::new(&plan));
    let mut logs = Logs::new(&t.run_dir.logs());
    let result = execute(&plan, engine, &options, resume.as_ref(), |ev| {
        match &mut live {
            Some(l) => l.event(ev),
            None => view.event(ev),
        }
        logs.event(ev);
        if let Err(e) = state.record(ev) {
            report::warning(&format!("cannot write the run state: {e}"));
        }
    })?;
    if let Err(e) = state.close() {
        report::warning(&format!("cannot write the run state: {e}"));
    }

    let code = if result.interrupted {
        exit::INTERRUPTED
    } else if result.failed() {
        exit::FAILED
    } else {
        exit::SUCCESS
    };
    if let Some(l) = &live {
        l.finish();
    }
    let log = |name: &str| s.ws.show(&t.run_dir.log(name));
    view.finish(&plan, &result, clock.elapsed().as_secs_f64(), &t.stack, &log);
    if o.operation == Operation::Destroy && !o.prune_kubeconfig && s.interactive {
        offer_kubeconfig_prune(t, &result);
    }
    let summary = report::summary::render(&plan, &t.stack, &result, started, code);
    write_summaries(s, t, o, &summary);
    Ok(code)
}

/// The configuration, questions, secrets and checks before anything runs.
fn prepare(s: &Settings, t: &Target, plan: &Plan<'_>, store: &Store) -> Result<Ready, RunnerError> {
    // Secrets are asked only by runs that deploy or read the projects that use them; the store
    // itself loads every secret of the graph into the cluster, so running it needs them all.
    let planned: Vec<&Project> = plan.order.iter().map(|&i| plan.project(i)).collect();
    let secrets_for = if plan.operation == Operation::Destroy {
        Vec::new()
    } else if planned.iter().any(|p| p.secrets_store) {
        t.provider.projects.iter().collect()
    } else {
        planned
    };
    let request = Request {
        ws: &s.ws,
        provider: &t.provider,
        stack: &t.stack,
        env: t.env.clone(),
        secrets_for,
        interactive: s.interactive,
    };
    prepare::prepare(&request, &mut Terminal::new(), store)
}

/// The projects whose stack exists: those the run state knows, and those the preparation
/// created (the secrets store's, whose `stack select --create` is then its own).
fn known_stacks(s: &Settings, t: &Target, state: &RunState, store: &Store) -> BTreeSet<String> {
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
fn execute(
    plan: &Plan<'_>,
    engine: Pulumi,
    options: &Options,
    resume: Option<&Resume>,
    mut consume: impl FnMut(&Event),
) -> Result<RunResult, RunnerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| RunnerError::Io {
            context: "cannot start the async runtime".into(),
            source,
        })?;
    Ok(runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        let (sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let signals = tokio::spawn(exec::signals::forward(sig_tx));
        let execution = exec::execute(plan, Arc::new(engine), options, resume, tx, sig_rx);
        let events = async {
            while let Some(ev) = rx.recv().await {
                consume(&ev);
            }
        };
        let (result, ()) = tokio::join!(execution, events);
        signals.abort();
        result
    }))
}

/// After an interactive destroy: offer to remove the kubeconfig entries `kubeconfig-merge` added
/// for each cluster project destroyed (with `--prune-kubeconfig` this happens without asking).
fn offer_kubeconfig_prune(t: &Target, result: &RunResult) {
    let merges: BTreeSet<&str> = t
        .provider
        .projects
        .iter()
        .filter(|p| p.merges_kubeconfig())
        .map(|p| p.name.as_str())
        .collect();
    for (name, f) in &result.results {
        if f.status != Status::Succeeded || !merges.contains(name.as_str()) || !t.run_dir.merge_record(name).exists() {
            continue;
        }
        let question = format!("{name} is destroyed: remove its cluster, user and context from your kubeconfig?");
        if report::confirm(&question) {
            match pulumi::prune_kubeconfig(&t.run_dir, name) {
                Ok(Some(message)) => report::info(&message),
                Ok(None) => {}
                Err(e) => report::warning(&format!("cannot prune the kubeconfig: {e}")),
            }
        }
    }
}

/// The JSON summary to `.runner/last-run.json`, and to `--summary FILE` when given.
fn write_summaries(s: &Settings, t: &Target, o: &RunOptions, summary: &str) {
    let mut targets = vec![t.run_dir.last_run()];
    targets.extend(o.summary.clone());
    for path in targets {
        if let Err(e) = write_atomic(&path, summary.as_bytes(), NewFile::Default) {
            report::warning(&format!("cannot write the summary to {}: {e}", s.ws.show(&path)));
        }
    }
}
