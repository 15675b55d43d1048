//! `up`, `destroy`, `refresh`, `preview`: the conductor. It plans, takes the workspace lock,
//! prepares the configuration, runs the plan through the `pulumi` engine while every event goes
//! to the views, the logs and the run state, and ends with the closing table, the JSON summary
//! and the exit code.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config::env::Env;
use crate::config::prepare::{self, Mode, Ready, Request};
use crate::config::questions::Ask as _;
use crate::config::stackfile::{self, StackFile};
use crate::config::terminal::Terminal;
use crate::error::{RunnerError, exit};
use crate::exec::{self, Event, Options, Resume, RunResult, Status};
use crate::fs::{NewFile, write_atomic};
use crate::plan::{Operation, Plan};
use crate::provider::{Project, PromptType};
use crate::pulumi::{self, Pulumi, Redactor, Store};
use crate::report::live::Live;
use crate::report::logs::Logs;
use crate::report::plain::{Plain, would_change};
use crate::report::{self, OutputMode};
use crate::runstate::{Digests, Outside, Recorder, RunState};
use crate::settings::{Settings, Target};
use crate::workspace::WorkspaceLock;

/// Projects run at once by default: Pulumi processes mostly wait on cloud APIs, but each holds
/// its own plugins in memory; 8 covers the widest wave of the reference graphs.
pub(crate) const DEFAULT_PARALLEL: usize = 8;

/// What the command line asked of this run.
// Independent switches, each a flag of its own on the command line.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub(crate) operation: Operation,
    /// Only these projects and what they need (on destroy: what needs them).
    pub(crate) targets: Vec<String>,
    /// `--only X`: X alone, its needs proven done in the backend first.
    pub(crate) only: Option<String>,
    pub(crate) parallel: usize,
    pub(crate) keep_going: bool,
    /// Run every project, even those unchanged since their last successful `up`.
    pub(crate) fresh: bool,
    /// Also write the JSON summary there.
    pub(crate) summary: Option<PathBuf>,
    pub(crate) prune_kubeconfig: bool,
    pub(crate) output: OutputMode,
    /// Run without asking at the terminal (and, for destroy, allowed without one).
    pub(crate) yes: bool,
    /// Preview: exit with [`exit::CHANGES`] when any project would change.
    pub(crate) expect_no_changes: bool,
    /// How long any project may run.
    pub(crate) timeout: Option<Duration>,
    /// A stack lock left by a process of this host that no longer runs is removed.
    pub(crate) remove_stale_locks: bool,
    /// How long a project gets to stop before the next, harder signal.
    pub(crate) grace: Duration,
}

pub(crate) fn run(s: &Settings, t: &Target, o: &RunOptions) -> Result<i32, RunnerError> {
    let plan = plan(t, o)?;
    if o.operation == Operation::Destroy && !o.yes && !s.interactive {
        return Err(destroy_needs_yes(t));
    }
    let _lock = WorkspaceLock::take(&s.ws, &t.run_dir)?;
    // Scratch files a killed run left (event logs may hold what was never scrubbed), and the
    // temporary files of writes it did not finish.
    let _ = std::fs::remove_dir_all(t.run_dir.scratch());
    crate::fs::remove_stale_temporaries(t.run_dir.base());
    crate::fs::remove_stale_temporaries(&t.run_dir.stack_dir());
    // From here until the first project starts, Ctrl-C ends the runner at once.
    let _interrupt = exec::signals::hub().on_interrupt(|| report::info("\ninterrupted: no project was started"));
    let store = Store::new(PathBuf::from("pulumi"), &t.stack);
    let ready = prepare(s, t, &plan, o.fresh, &store)?;
    if s.interactive && !o.yes {
        confirm(t, &plan, &ready)?;
    }
    // The run's time starts with its first project, not with the questions.
    let started = SystemTime::now();
    let clock = Instant::now();

    let (mut state, notes) = Recorder::open(&t.run_dir, &|p| s.ws.show(p)).map_err(|m| {
        RunnerError::usage(
            m,
            format!("the run state lives under {}", s.ws.show(&t.run_dir.stack_dir())),
        )
    })?;
    for note in &notes {
        report::warning(note);
    }
    let digests = Digests::open(&s.ws.root, &t.run_dir, &ready.config_file)
        .map_err(|source| RunnerError::Io {
            context: format!("cannot write under {}", s.ws.show(t.run_dir.base())),
            source,
        })?
        .with_outside(outside(t, &ready.env, &ready.config));
    // `--fresh` runs everything but still records the digests, so the next `up` can skip.
    let resume = (o.operation == Operation::Up).then(|| state.state.resume(&t.provider, digests, o.fresh));
    let mut options = Options {
        parallel: o.parallel,
        keep_going: o.keep_going,
        // A preview can only look at projects whose upstream stacks are deployed.
        deployed: (o.operation == Operation::Preview && !plan.only).then(|| state.state.deployed()),
        given: std::collections::BTreeMap::new(),
        grace: o.grace,
        timeout: o.timeout,
    };
    let known = known_stacks(s, t, &state.state, &store);
    let engine = engine(s, t, o, ready, known);
    if plan.only {
        options.given = super::only::prove(s, &plan, &engine)?;
    }
    report::debug(
        s.style,
        &format!(
            "running {} projects, at most {} at once; backend {}",
            plan.order.len(),
            options.parallel,
            engine
                .env
                .get("PULUMI_BACKEND_URL")
                .unwrap_or_else(|| "Pulumi Cloud (pulumi login)".into())
        ),
    );

    let mut view = Plain::new(&plan, s.banner, s.style.debug);
    let mut live = (o.output == OutputMode::Auto && s.live).then(|| Live::new(&plan, s.style.debug));
    let mut logs = Logs::new(&t.run_dir.logs());
    let mut unrecorded = false;
    let result = execute(&plan, engine, &options, resume.as_ref(), |ev| {
        match &mut live {
            Some(l) => l.event(ev),
            None => view.event(ev),
        }
        logs.event(ev);
        if let Err(e) = state.record(ev)
            && !unrecorded
        {
            unrecorded = true;
            report::warning(&format!("cannot write the run state: {e}"));
        }
    })?;
    if let Err(e) = state.close() {
        unrecorded = true;
        report::warning(&format!(
            "cannot write the run state {}: {e}",
            s.ws.show(&t.run_dir.state())
        ));
    }

    let code = exit_code(o, &result);
    if let Some(l) = &live {
        l.finish();
    }
    let log = |name: &str| s.ws.show(&t.run_dir.log(name));
    view.finish(&plan, &result, clock.elapsed().as_secs_f64(), &t.stack, &log);
    if o.operation == Operation::Destroy && !o.prune_kubeconfig && s.interactive {
        offer_kubeconfig_prune(t, &result);
    }
    let summary = report::summary::render(&plan, &t.stack, &result, started, code);
    unrecorded |= !write_summaries(s, t, o, &summary);
    // A failure or an interrupt says more than a lost record: keep its code.
    Ok(if unrecorded && code == exit::SUCCESS {
        exit::UNRECORDED
    } else {
        code
    })
}

/// The `pulumi` engine for this run.
fn engine(s: &Settings, t: &Target, o: &RunOptions, ready: Ready, known_stacks: BTreeSet<String>) -> Pulumi {
    Pulumi {
        program: PathBuf::from("pulumi"),
        root: s.ws.root.clone(),
        provider: t.provider.name.clone(),
        stack: t.stack.clone(),
        config_file: ready.config_file,
        env: ready.env,
        run_dir: t.run_dir.clone(),
        redactor: {
            let r = Redactor::default();
            r.add(ready.secrets);
            r
        },
        prune_kubeconfig: o.prune_kubeconfig,
        remove_stale_locks: o.remove_stale_locks,
        known_stacks,
    }
}

/// What projects depend on beyond their directories and the stack file: the files `path`
/// questions named, and the environment every `pulumi` gets.
fn outside(t: &Target, env: &Env, config: &Map<String, Value>) -> Outside {
    let files = t
        .provider
        .prompts
        .iter()
        .filter(|p| p.kind == PromptType::Path)
        .filter_map(|p| Some((p.key.clone(), PathBuf::from(config.get(&p.key)?.as_str()?))))
        .collect();
    Outside {
        files,
        env: env.overlay().clone(),
    }
}

/// Whether an `up` would find every project unchanged, told from what the last runs left
/// (nothing is written: a workspace without digests is not up to date).
fn up_to_date(s: &Settings, t: &Target, plan: &Plan<'_>) -> bool {
    let Ok(state) = RunState::load(&t.run_dir) else {
        return false;
    };
    let config_file = stackfile::path(&s.ws.root, &t.stack);
    let Ok(file) = StackFile::load(&config_file, &s.ws.show(&config_file)) else {
        return false;
    };
    if !t.run_dir.digest_key().is_file() {
        return false;
    }
    let Ok(digests) = Digests::open(&s.ws.root, &t.run_dir, &config_file) else {
        return false;
    };
    state.up_to_date(plan, &digests.with_outside(outside(t, &t.env, &file.config)))
}

/// What the run's end says: interrupted, failed, changes found by a preview that expected none,
/// or success.
fn exit_code(o: &RunOptions, result: &RunResult) -> i32 {
    if result.interrupted {
        exit::INTERRUPTED
    } else if result.failed() {
        exit::FAILED
    } else if o.expect_no_changes && result.results.iter().any(|(_, f)| would_change(&f.changes)) {
        exit::CHANGES
    } else {
        exit::SUCCESS
    }
}

/// The projects this run touches: `--only`'s one, or the targets with what they need (on
/// destroy: with what needs them), or the whole graph.
fn plan<'p>(t: &'p Target, o: &RunOptions) -> Result<Plan<'p>, RunnerError> {
    match &o.only {
        Some(x) => Plan::only(&t.provider, o.operation, x),
        None => Plan::new(&t.provider, o.operation, &o.targets),
    }
    .map_err(|e| {
        let help = match &e.suggestion {
            Some(x) => format!("did you mean `{x}`?"),
            None => format!("see the projects with `runner show-plan -p {}`", e.provider),
        };
        RunnerError::usage(e.to_string(), help)
    })
}

/// Without a terminal nobody can confirm a destroy: the command line must.
fn destroy_needs_yes(t: &Target) -> RunnerError {
    RunnerError::usage(
        "`destroy` needs --yes when nobody can confirm it at a terminal",
        format!(
            "run it at a terminal to confirm by typing the stack name, or add --yes: `runner destroy -p {} -s {} --yes`",
            t.provider.name, t.stack
        ),
    )
}

/// The configuration, questions, secrets and checks before anything runs.
fn prepare(s: &Settings, t: &Target, plan: &Plan<'_>, fresh: bool, store: &Store) -> Result<Ready, RunnerError> {
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
        mode: Mode::Run,
        idle: plan.operation == Operation::Up && !fresh && up_to_date(s, t, plan),
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

/// At a terminal, what the run will do, and the question: the stack name typed for destroy,
/// yes or no for up and refresh. Preview changes nothing and asks nothing.
fn confirm(t: &Target, plan: &Plan<'_>, ready: &Ready) -> Result<(), RunnerError> {
    let backend = ready
        .env
        .get("PULUMI_BACKEND_URL")
        .unwrap_or_else(|| "Pulumi Cloud".into());
    let io = |source| RunnerError::Io {
        context: "cannot read the answer from the terminal".into(),
        source,
    };
    let mut terminal = Terminal::new();
    let confirmed = match plan.operation {
        Operation::Preview => true,
        Operation::Destroy => {
            let names: Vec<&str> = plan.order.iter().map(|&i| plan.name(i)).collect();
            report::info(&format!(
                "destroy: every resource of {} projects of provider {}, stack {}, backend {backend}, in this order:\n  {}",
                names.len(),
                t.provider.name,
                t.stack,
                names.join(", ")
            ));
            let question = format!("Type the stack name `{}` to destroy it", t.stack);
            let answer = terminal.text(&question, None, &|_| Ok(())).map_err(io)?;
            answer.trim() == t.stack
        }
        Operation::Up | Operation::Refresh => {
            report::info(&format!(
                "{}: {} projects of provider {}, stack {}, backend {backend}",
                plan.operation.as_str(),
                plan.order.len(),
                t.provider.name,
                t.stack
            ));
            terminal.confirm("Go ahead?").map_err(io)?
        }
    };
    if confirmed { Ok(()) } else { Err(RunnerError::Declined) }
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
    let runtime = super::runtime(super::Threads::Many)?;
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
/// `true` when every one was written.
fn write_summaries(s: &Settings, t: &Target, o: &RunOptions, summary: &str) -> bool {
    let mut targets = vec![t.run_dir.last_run()];
    targets.extend(o.summary.clone());
    let mut written = true;
    for path in targets {
        if let Err(e) = write_atomic(&path, summary.as_bytes(), NewFile::Default) {
            written = false;
            report::warning(&format!("cannot write the summary to {}: {e}", s.ws.show(&path)));
        }
    }
    written
}
