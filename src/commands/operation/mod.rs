//! `up`, `destroy`, `refresh`, `preview`: the conductor. It plans, takes the workspace lock,
//! prepares the configuration, runs the plan through the `pulumi` engine while every event goes
//! to the views, the logs and the run state, and ends with the closing table, the JSON summary
//! and the exit code.

mod ci;
mod only;
mod predict;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::config::backend::Backend;
use crate::config::env::Env;
use crate::config::prepare::{self, Mode, Ready, Request};
use crate::config::questions::Ask as _;
use crate::config::stackfile::{self, StackFile};
use crate::config::terminal::Terminal;
use crate::error::{RunnerError, exit};
use crate::exec::{self, Event, Options, Resume, RunResult, Status, would_change};
use crate::fs::{NewFile, write_atomic};
use crate::plan::{Operation, Plan};
use crate::provider::{Project, PromptType, Provider};
use crate::pulumi::{self, Drift, Pulumi, Redactor, Store};
use crate::report::live::Live;
use crate::report::logs::Logs;
use crate::report::plain::{Plain, drift_verdict, refresh_verdict};
use crate::report::summary::Predicted;
use crate::report::{self, OutputMode};
use crate::runstate::{Digests, History, Outside, Pending, Recorder, RunState};
use crate::settings::{Settings, Target};
use crate::workspace::WorkspaceLock;
use predict::{Prediction, Settled, predict};

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
    /// Without these and what cannot run without them (on destroy: what they need is kept).
    pub(crate) excludes: Vec<String>,
    /// `--only X`: X alone, its needs proven done in the backend first.
    pub(crate) only: Option<String>,
    pub(crate) parallel: usize,
    pub(crate) keep_going: bool,
    /// Run every project, even those unchanged since their last successful `up`.
    pub(crate) fresh: bool,
    /// Also write the JSON summary there.
    pub(crate) summary: Option<PathBuf>,
    /// Write the run as a `JUnit` report there.
    pub(crate) junit: Option<PathBuf>,
    /// `--report FILE`: the run as an HTML file.
    pub(crate) report: Option<PathBuf>,
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
    /// `drift`: the previews are drift checks of what the backend holds (this implies
    /// `expect_no_changes`).
    pub(crate) drift: Option<Drift>,
}

pub(crate) fn run(s: &Settings, t: &Target, o: &RunOptions) -> Result<i32, RunnerError> {
    ci::warn_lost_backend(s, t);
    let (history, provider) = learned(s, t, o.operation)?;
    let plan = plan(&provider, o)?;
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
    let store = Store::new(PathBuf::from("pulumi"), &t.stack, o.remove_stale_locks);
    let mut ready = prepare(s, t, &plan, o.fresh, &store)?;
    let (mut state, digests) = open_records(s, t, &ready)?;
    // The passphrase's check runs while the run is readied: its verdict is taken before a
    // question (nobody is asked to go ahead with a run bound to fail) or the first project.
    let asks = s.interactive && !o.yes;
    if asks {
        passphrase_opens(s, &mut ready)?;
    }
    // What an `up` will skip, told once: said before it starts, and left out of its prediction.
    let pending = (o.operation == Operation::Up && !o.fresh).then(|| state.state.pending(&plan, Some(&digests)));
    go_ahead(s, t, &plan, o, &ready, pending.as_deref())?;
    // The run's time starts with its first project, not with the questions.
    let started = SystemTime::now();
    let clock = Instant::now();
    let prediction = prediction(&plan, &state.state, pending.as_deref(), &history, o);
    // `--fresh` runs everything but still records the digests, so the next `up` can skip.
    let resume = (o.operation == Operation::Up).then(|| state.state.resume(&t.provider, digests, o.fresh));
    let mut options = Options {
        parallel: o.parallel,
        keep_going: o.keep_going,
        deployed: deployed_for_preview(&plan, o, &state.state),
        given: std::collections::BTreeMap::new(),
        grace: o.grace,
        timeout: o.timeout,
    };
    let known = known_stacks(s, t, &state.state, &store);
    if !asks {
        passphrase_opens(s, &mut ready)?;
    }
    let engine = engine(s, t, o, ready, known);
    if plan.only {
        options.given = only::prove(s, &plan, &engine)?;
    }
    report::debug(
        s.style,
        &format!(
            "running {} projects, at most {} at once; backend {}",
            plan.order.len(),
            options.parallel,
            Backend::of(&engine.env)
        ),
    );

    prediction.say(&plan);
    let drift = o.drift.is_some();
    let mut view = Plain::new(&plan, s.banner, s.style.debug)
        .grouped(s.ci)
        .fresh(o.fresh)
        .drift(drift);
    let mut live = (o.output == OutputMode::Auto && s.live)
        .then(|| Live::new(&plan, s.style.debug, prediction.estimates.clone(), o.parallel).drift(drift));
    let mut logs = Logs::new(&t.run_dir);
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
    let log = |name: &str| s.ws.show(&t.run_dir.log(name, o.operation.as_str()));
    let total = clock.elapsed().as_secs_f64();
    view.finish(&plan, &result, total, &t.stack, &log);
    let summary = summary(&plan, t, &result, (started, code), &prediction, drift);
    unrecorded |= !after(s, t, o, (&plan, &result), (started, total), history, &summary);
    // A failure or an interrupt says more than a lost record: keep its code.
    Ok(if unrecorded && code == exit::SUCCESS {
        exit::UNRECORDED
    } else {
        code
    })
}

/// A wrong passphrase as one error, before any project starts (waits for its check).
fn passphrase_opens(s: &Settings, ready: &mut Ready) -> Result<(), RunnerError> {
    match ready.passphrase_problem(&|f| s.ws.show(f)) {
        Some(p) => Err(RunnerError::Problems(vec![p])),
        None => Ok(()),
    }
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
        drift: o.drift,
    }
}

/// The `pulumi` engine of the target's stack with this environment, as a run has it, for a
/// command that reads one project's stack or hands it to `pulumi` (`output`, `pulumi`).
pub(super) fn pulumi_for(s: &Settings, t: &Target, env: Env) -> Pulumi {
    Pulumi {
        program: PathBuf::from("pulumi"),
        root: s.ws.root.clone(),
        provider: t.provider.name.clone(),
        stack: t.stack.clone(),
        config_file: stackfile::path(&s.ws.root, &t.stack),
        env,
        run_dir: t.run_dir.clone(),
        redactor: Redactor::default(),
        prune_kubeconfig: false,
        remove_stale_locks: false,
        known_stacks: BTreeSet::new(),
        drift: None,
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
    digests_now(s, t).is_some_and(|d| state.up_to_date(plan, &d))
}

/// The digests as an `up` would take them now, when past runs made a digest key (nothing is
/// written).
pub(super) fn digests_now(s: &Settings, t: &Target) -> Option<Digests> {
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

/// The plan the options ask for; what `--exclude` leaves out is said in one line.
fn plan<'p>(provider: &'p Provider, o: &RunOptions) -> Result<Plan<'p>, RunnerError> {
    let unknown = |e: crate::plan::UnknownTarget| {
        let help = match &e.suggestion {
            Some(x) => format!("did you mean `{x}`?"),
            None => format!("see the projects with `runner show-plan -p {}`", e.provider),
        };
        RunnerError::usage(e.to_string(), help)
    };
    let plan = match &o.only {
        Some(x) => Plan::only(provider, o.operation, x),
        None => Plan::new(provider, o.operation, &o.targets),
    }
    .map_err(unknown)?;
    let (plan, left_out) = plan.excluding(&o.excludes).map_err(unknown)?;
    if !left_out.is_empty() {
        report::info(&excluded_line(&plan, &o.excludes, &left_out));
    }
    if plan.order.is_empty() {
        return Err(RunnerError::usage(
            format!(
                "nothing left to {}: --exclude leaves out every project of the plan",
                o.operation.as_str()
            ),
            "exclude fewer projects, or see what each one takes along with `runner show-plan -p PROVIDER --exclude …`",
        ));
    }
    Ok(plan)
}

/// `excluded: vpc, and what needs it or runs after it: eks, kubeconfig` (on destroy: `kept: …,
/// and what it needs: …`).
fn excluded_line(plan: &Plan<'_>, excludes: &[String], left_out: &[usize]) -> String {
    let named: Vec<&str> = left_out
        .iter()
        .map(|&i| plan.name(i))
        .filter(|n| excludes.iter().any(|x| x == n))
        .collect();
    let taken: Vec<&str> = left_out
        .iter()
        .map(|&i| plan.name(i))
        .filter(|n| !excludes.iter().any(|x| x == n))
        .collect();
    let (verb, along) = match (plan.operation, named.len()) {
        (Operation::Destroy, 1) => ("kept", "what it needs"),
        (Operation::Destroy, _) => ("kept", "what they need"),
        (_, 1) => ("excluded", "what needs it or runs after it"),
        (_, _) => ("excluded", "what needs them or runs after them"),
    };
    if taken.is_empty() {
        format!("{verb}: {}", named.join(", "))
    } else {
        format!("{verb}: {}, and {along}: {}", named.join(", "), taken.join(", "))
    }
}

/// How long the run should take: each project's estimate, and nothing for what the run will
/// settle without running (what an `up` finds unchanged, unless `--fresh`).
fn prediction(
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
    let deployed = if o.drift.is_some() {
        plan.order.iter().map(|&i| plan.name(i).to_string()).collect()
    } else {
        state.deployed()
    };
    let settled = Settled::new(plan, &skipped_by_up, &deployed);
    predict(plan, history, &settled, o.parallel)
}

/// Remembers how long each project that succeeded took, for the next run's estimates.
fn learn(t: &Target, mut history: History, operation: Operation, result: &RunResult) {
    history.record(operation, result);
    if let Err(e) = history.save(&t.run_dir) {
        report::warning(&format!("cannot write what this run took: {e}"));
    }
}

/// What a preview may look at: only projects whose upstream stacks are deployed; a drift check
/// asks the backend instead, not what this workspace's runs recorded (a CI job has none).
fn deployed_for_preview(plan: &Plan<'_>, o: &RunOptions, state: &RunState) -> Option<BTreeSet<String>> {
    (o.operation == Operation::Preview && !plan.only && o.drift.is_none()).then(|| state.deployed())
}

/// Past runs weigh the plan: the provider with each project's learned duration as its estimate
/// (the critical path, the order of ready projects), and what was learned.
fn learned(s: &Settings, t: &Target, operation: Operation) -> Result<(History, Provider), RunnerError> {
    let history = History::load(&t.run_dir).map_err(|m| state_error(s, t, m))?;
    let mut provider = t.provider.clone();
    provider.learn_estimates(&history.estimates(operation));
    Ok((history, provider))
}

/// A file of the run state that cannot be read (exit 2): the message names it and the fix.
pub(super) fn state_error(s: &Settings, t: &Target, message: String) -> RunnerError {
    RunnerError::usage(
        message,
        format!("the run state lives under {}", s.ws.show(&t.run_dir.stack_dir())),
    )
}

/// The JSON summary of the run, with what was predicted.
fn summary(
    plan: &Plan<'_>,
    t: &Target,
    result: &RunResult,
    (started, code): (SystemTime, i32),
    prediction: &Prediction,
    drift: bool,
) -> String {
    let predicted = Predicted {
        estimates: &prediction.estimates,
        makespan: prediction.makespan,
    };
    report::summary::render(plan, &t.stack, result, started, code, predicted, drift)
}

/// After the run, for whoever reads it: at a terminal after a destroy, the offer to prune the
/// kubeconfig; a drift check's verdict, what the CI shows (`JUnit`,
/// GitHub's summary and annotations), the durations the next runs learn from, and the run's
/// records ([`write_records`]: `false` when a summary could not be written).
fn after(
    s: &Settings,
    t: &Target,
    o: &RunOptions,
    (plan, result): (&Plan<'_>, &RunResult),
    (started, total): (SystemTime, f64),
    history: History,
    summary: &str,
) -> bool {
    if o.operation == Operation::Destroy && !o.prune_kubeconfig && s.interactive {
        offer_kubeconfig_prune(t, result);
    }
    let verdict = (o.drift.is_some() && !result.interrupted).then(|| drift_verdict(result));
    if let Some(v) = &verdict {
        report::info(&format!("\n{v}"));
    }
    if o.operation == Operation::Refresh
        && !result.interrupted
        && let Some(v) = refresh_verdict(result)
    {
        report::info(&format!("\n{v}"));
    }
    let asked = ci::Asked {
        junit: o.junit.as_deref(),
        drift: o.drift.is_some(),
        verdict: verdict.as_deref(),
    };
    ci::reports(s, t, asked, (plan, result), (started, total), summary);
    learn(t, history, o.operation, result);
    write_records(s, t, o, plan, summary)
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
/// The run state (a crashed run's journal folded in, its notes said) and the digests as this
/// run takes them.
fn open_records(s: &Settings, t: &Target, ready: &Ready) -> Result<(Recorder, Digests), RunnerError> {
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

/// Says what will run and why; at a terminal, asks first (unless `--yes`).
fn go_ahead(
    s: &Settings,
    t: &Target,
    plan: &Plan<'_>,
    o: &RunOptions,
    ready: &Ready,
    pending: Option<&[(String, Pending)]>,
) -> Result<(), RunnerError> {
    let runs = pending.and_then(|p| what_runs(plan, p));
    if s.interactive && !o.yes {
        return confirm(t, plan, ready, runs.as_deref());
    }
    if let Some(line) = &runs {
        report::info(line);
    }
    Ok(())
}

/// What an `up` will run, and why, in one line, told before it starts (and before the
/// confirmation), as "up: 1 of 11 projects will run: logstore (stack file key
/// ‘logstore:retention’ changed since its last up); 2 more after it when its outputs change:
/// logagent, app; 8 unchanged". `None` for other operations, `--fresh` (everything runs) and
/// when nothing will (the summary says so).
fn what_runs(plan: &Plan<'_>, pending: &[(String, Pending)]) -> Option<String> {
    let (after, own): (Vec<_>, Vec<_>) = pending
        .iter()
        .filter(|(_, p)| p.runs)
        .partition(|(_, p)| p.why.starts_with("after "));
    let unchanged = pending.len() - own.len() - after.len();
    if own.is_empty() && after.is_empty() {
        return None; // the summary says it, in one line
    }
    let mut line = format!("up: {} of {} projects will run", own.len(), plan.order.len());
    // A first run: every project for the same reason, said once.
    if own.len() == pending.len() && own.iter().all(|(_, p)| p.why == own[0].1.why) {
        let _ = write!(line, " ({})", own[0].1.why);
    } else if !own.is_empty() {
        let listed: Vec<String> = own.iter().map(|(n, p)| format!("{n} ({})", p.why)).collect();
        let _ = write!(line, ": {}", listed.join(", "));
    }
    if !after.is_empty() {
        let names: Vec<&str> = after.iter().map(|(n, _)| n.as_str()).collect();
        let (them, their) = if own.len() == 1 {
            ("it", "its")
        } else {
            ("them", "their")
        };
        let _ = write!(
            line,
            "; {} more after {them} when {their} outputs change: {}",
            names.len(),
            names.join(", ")
        );
    }
    if unchanged > 0 {
        let _ = write!(line, "; {unchanged} unchanged");
    }
    Some(line)
}

fn confirm(t: &Target, plan: &Plan<'_>, ready: &Ready, runs: Option<&str>) -> Result<(), RunnerError> {
    let backend = Backend::of(&ready.env);
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
            if let Some(line) = runs {
                report::info(line);
            }
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

/// The JSON summary to `.runner/last-run.json`, and to `--summary FILE` when given; the HTML
/// report to `--report FILE` when given. `true` when every summary was written.
fn write_records(s: &Settings, t: &Target, o: &RunOptions, plan: &Plan<'_>, summary: &str) -> bool {
    if let Some(path) = &o.report {
        super::last_run::write_html(s, t, plan, summary, path);
    }
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
