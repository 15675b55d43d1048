//! `up`, `destroy`, `refresh`, `preview`: resolve the settings (stack, environment, backend),
//! plan, run the plan through the `pulumi` engine, and feed its events to the reporters and the
//! run-state file; finally the closing table, the JSON summary and the exit code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use crate::cli::{BannerType, OutputMode, RunArgs};
use crate::config::environment::{ENVIRONMENT_FILE, EnvironmentFile};
use crate::error::{RunnerError, exit};
use crate::exec::{self, Event, Options, Resume, Status};
use crate::plan::{Operation, Plan};
use crate::provider::{Project, Provider};
use crate::pulumi::{Pulumi, Redactor};
use crate::report::live::Live;
use crate::report::logs::Logs;
use crate::report::plain::Plain;
use crate::report::{self, Style};
use crate::runstate::{Digests, RUNNER_DIR, RunState, timestamp, write_atomic};
use crate::workspace::Workspace;

/// Projects run at once by default: Pulumi processes mostly wait on cloud APIs, but each holds
/// its own plugins in memory; 8 covers the widest wave of the reference graphs.
pub const DEFAULT_PARALLEL: usize = 8;

pub struct Settings<'a> {
    pub ws: &'a Workspace,
    pub provider: &'a Provider,
    pub stack: String,
    pub operation: Operation,
    pub args: &'a RunArgs,
    pub banner: BannerType,
    pub style: Style,
    pub non_interactive: bool,
}

/// The variables every `pulumi` run gets on top of the process environment: the environment
/// file's, `PULUMI_SKIP_UPDATE_CHECK=true` unless set, and the embedded file backend unless a
/// backend is chosen.
pub fn overlay(ws: &Workspace) -> Result<BTreeMap<String, String>, RunnerError> {
    let path = ws.root.join(ENVIRONMENT_FILE);
    let file = EnvironmentFile::load(&path, &ws.show(&path)).map_err(RunnerError::Validation)?;
    let mut vars = file.vars;
    let set = |vars: &BTreeMap<String, String>, k: &str| vars.contains_key(k) || std::env::var_os(k).is_some();
    if !set(&vars, "PULUMI_SKIP_UPDATE_CHECK") {
        vars.insert("PULUMI_SKIP_UPDATE_CHECK".into(), "true".into());
    }
    if !set(&vars, "PULUMI_BACKEND_URL") {
        let state = ws.root.join(".pulumi-state");
        std::fs::create_dir_all(&state).map_err(|source| RunnerError::Io {
            context: format!("cannot create the state directory {}", ws.show(&state)),
            source,
        })?;
        vars.insert("PULUMI_BACKEND_URL".into(), format!("file://{}", state.display()));
    }
    Ok(vars)
}

pub fn run(s: &Settings<'_>) -> Result<i32, RunnerError> {
    let started = SystemTime::now();
    let clock = Instant::now();
    let ws = s.ws;
    let plan = Plan::new(s.provider, s.operation, &s.args.targets).map_err(|e| {
        let help = match &e.suggestion {
            Some(x) => format!("did you mean `{x}`?"),
            None => format!("see the projects with `runner show-plan -p {}`", e.provider),
        };
        RunnerError::usage(e.to_string(), help)
    })?;
    let _lock = lock_workspace(ws)?;
    let (env, config_file) = prepare(s, &plan)?;
    let mut state =
        RunState::load(&ws.root, &s.stack).map_err(|m| RunnerError::usage(m, "the run state lives under .runner/"))?;
    let digests = Digests::open(&ws.root, &config_file).map_err(|source| RunnerError::Io {
        context: format!("cannot write under {}", ws.show(&ws.root.join(RUNNER_DIR))),
        source,
    })?;

    let resume = (s.operation == Operation::Up && !s.args.fresh).then(|| resume_from(&state, s.provider, digests));
    let deployed: Option<BTreeSet<String>> = (s.operation == Operation::Preview).then(|| {
        state
            .projects
            .iter()
            .filter(|(_, p)| p.deployed)
            .map(|(n, _)| n.clone())
            .collect()
    });
    let options = Options {
        parallel: s.args.parallel.map_or(DEFAULT_PARALLEL, usize::from),
        keep_going: s.args.keep_going,
        deployed,
    };
    let engine = Arc::new(engine(s, env, config_file));
    report::debug(
        s.style,
        &format!(
            "running {} projects, at most {} at once",
            plan.order.len(),
            options.parallel
        ),
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| RunnerError::Io {
            context: "cannot start the async runtime".into(),
            source,
        })?;
    let mut view = Plain::new(&plan, s.banner);
    let mut live = use_live_view(s.args.output).then(|| Live::new(&plan));
    let mut logs = Logs::new(&ws.root.join(RUNNER_DIR).join(&s.stack).join("logs"));
    let result = runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        let (sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let signals = tokio::spawn(forward_signals(sig_tx));
        let execution = exec::execute(&plan, engine, &options, resume.as_ref(), tx, sig_rx);
        let consume = async {
            while let Some(ev) = rx.recv().await {
                match &mut live {
                    Some(l) => l.event(&ev),
                    None => view.event(&ev),
                }
                logs.event(&ev);
                record(&mut state, &ev);
                if matches!(ev, Event::Started { .. } | Event::Finished { .. })
                    && let Err(e) = state.save(&ws.root)
                {
                    report::warning(&format!("cannot write the run state: {e}"));
                }
            }
        };
        let (result, ()) = tokio::join!(execution, consume);
        signals.abort();
        result
    });

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
    view.finish(&plan, &result, clock.elapsed().as_secs_f64(), &s.stack);
    if s.operation == Operation::Destroy && !s.args.prune_kubeconfig && interactive(s.non_interactive) {
        offer_kubeconfig_prune(s, &result);
    }
    write_summaries(s, &report::summary::render(&plan, &s.stack, &result, started, code));
    Ok(code)
}

/// The configuration, questions, secrets and checks before anything runs: the environment for
/// `pulumi` and the shared stack file.
fn prepare(s: &Settings<'_>, plan: &Plan<'_>) -> Result<(BTreeMap<String, String>, PathBuf), RunnerError> {
    // Secrets are asked only by runs that deploy or read the projects that use them; the store
    // itself loads every secret of the graph into the cluster, so running it needs them all.
    let planned: Vec<&Project> = plan.order.iter().map(|&i| plan.project(i)).collect();
    let secrets_for = if s.operation == Operation::Destroy {
        Vec::new()
    } else if planned.iter().any(|p| p.secrets_store) {
        s.provider.projects.iter().collect()
    } else {
        planned
    };
    let ready = crate::setup::prepare(
        &crate::setup::Request {
            ws: s.ws,
            provider: s.provider,
            stack: &s.stack,
            secrets_for,
            interactive: interactive(s.non_interactive),
        },
        &mut crate::config::terminal::Terminal::new(),
    )?;
    Ok((ready.env, ready.config_file))
}

/// The `pulumi` engine for this run.
fn engine(s: &Settings<'_>, env: BTreeMap<String, String>, config_file: PathBuf) -> Pulumi {
    Pulumi {
        program: PathBuf::from("pulumi"),
        root: s.ws.root.clone(),
        provider: s.provider.name.clone(),
        stack: s.stack.clone(),
        config_file,
        env,
        scratch: s.ws.root.join(RUNNER_DIR).join(&s.stack).join("tmp"),
        redactor: Redactor::default(),
        prune_kubeconfig: s.args.prune_kubeconfig,
    }
}

/// `CI` set to anything but empty, `false` or `0`.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// A person at a terminal, not a CI job, and no `--non-interactive`.
pub fn interactive(non_interactive: bool) -> bool {
    use std::io::IsTerminal as _;
    !non_interactive && !in_ci() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// After an interactive destroy: offer to remove the kubeconfig entries `kubeconfig-merge` added
/// for each cluster project destroyed (with `--prune-kubeconfig` this happens without asking).
fn offer_kubeconfig_prune(s: &Settings<'_>, result: &exec::RunResult) {
    let state_dir = s.ws.root.join(RUNNER_DIR).join(&s.stack);
    for (name, f) in &result.results {
        let merges = s
            .provider
            .projects
            .iter()
            .any(|p| &p.name == name && p.merges_kubeconfig());
        if f.status != Status::Succeeded || !merges || !crate::hooks::merge_record(&state_dir, name).exists() {
            continue;
        }
        let question = format!("{name} is destroyed: remove its cluster, user and context from your kubeconfig?");
        if report::confirm(&question) {
            match crate::hooks::prune_kubeconfig(&state_dir, name) {
                Ok(Some(message)) => report::info(&message),
                Ok(None) => {}
                Err(e) => report::warning(&format!("cannot prune the kubeconfig: {e}")),
            }
        }
    }
}

/// The JSON summary to `.runner/last-run.json`, and to `--summary FILE` when given.
fn write_summaries(s: &Settings<'_>, summary: &str) {
    let mut targets = vec![s.ws.root.join(RUNNER_DIR).join("last-run.json")];
    targets.extend(s.args.summary.clone());
    for t in targets {
        if let Err(e) = write_atomic(&t, summary.as_bytes()) {
            report::warning(&format!("cannot write the summary to {}: {e}", s.ws.show(&t)));
        }
    }
}

/// The live view needs a terminal and no CI: `--output plain`, `CI` set (to anything but
/// `false`/`0`) or standard error not a terminal give the plain, line-prefixed view.
fn use_live_view(mode: OutputMode) -> bool {
    use std::io::IsTerminal as _;
    mode == OutputMode::Auto && !in_ci() && std::io::stderr().is_terminal()
}

/// What a successful `up` left, for skipping unchanged projects.
fn resume_from(state: &RunState, provider: &Provider, digests: Digests) -> Resume {
    let previous = state
        .projects
        .iter()
        .filter(|(_, p)| p.deployed && p.operation == "up" && p.status != "failed")
        .filter_map(|(n, p)| Some((n.clone(), (p.inputs_digest.clone()?, p.outputs_digest.clone()?))))
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
        inputs: Box::new(move |name, upstream| digests.inputs(&paths[name], upstream)),
        outputs: Box::new(move |o| for_outputs.outputs(o)),
    }
}

/// Keeps the run state in step with the events.
fn record(state: &mut RunState, ev: &Event) {
    match ev {
        Event::Started { project, operation, at } => {
            let p = state.projects.entry(project.clone()).or_default();
            p.status = "running".into();
            p.operation = operation.as_str().into();
            p.started = Some(timestamp(*at));
            p.ended = None;
        }
        Event::Finished {
            project,
            operation,
            result,
        } => {
            let p = state.projects.entry(project.clone()).or_default();
            let ran = result.started.is_some();
            match (&result.status, operation) {
                // Settled without running: keep what the last real run recorded.
                (
                    Status::Unchanged { .. }
                    | Status::Skipped { .. }
                    | Status::NotStarted { .. }
                    | Status::Waits { .. },
                    _,
                ) if !ran => {
                    if p.status == "running" {
                        p.status = result.status.name().into();
                    }
                    return;
                }
                (Status::Succeeded, Operation::Up) => {
                    p.deployed = true;
                    p.inputs_digest.clone_from(&result.inputs_digest);
                    p.outputs_digest.clone_from(&result.outputs_digest);
                    p.outputs = result.outputs.as_ref().map(exec::Outputs::redacted);
                }
                (Status::Succeeded | Status::Unchanged { .. }, Operation::Destroy) => {
                    p.deployed = false;
                    p.inputs_digest = None;
                    p.outputs_digest = None;
                    p.outputs = None;
                }
                (Status::Failed, Operation::Up) => {
                    // A failed up may have changed some resources: it must run again.
                    p.inputs_digest = None;
                }
                _ => {}
            }
            p.status = result.status.name().into();
            p.operation = operation.as_str().into();
            p.started = result.started.map(timestamp);
            p.ended = Some(timestamp(result.ended));
        }
        Event::Line { .. } | Event::Note { .. } => {}
    }
}

/// Each SIGINT (Ctrl-C) or SIGTERM becomes one message for the scheduler.
async fn forward_signals(tx: tokio::sync::mpsc::UnboundedSender<()>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) else {
            return;
        };
        loop {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            if tx.send(()).is_err() {
                return;
            }
        }
    }
    #[cfg(not(unix))]
    loop {
        if tokio::signal::ctrl_c().await.is_err() || tx.send(()).is_err() {
            return;
        }
    }
}

/// One runner at a time per workspace (Pulumi locks each stack; this keeps two runners from
/// interleaving whole plans and the run state).
fn lock_workspace(ws: &Workspace) -> Result<std::fs::File, RunnerError> {
    let path = ws.root.join(RUNNER_DIR).join("lock");
    let io = |source| RunnerError::Io {
        context: format!("cannot open {}", ws.show(&path)),
        source,
    };
    std::fs::create_dir_all(path.parent().expect("parent")).map_err(io)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .read(true)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(RunnerError::usage(
            format!(
                "another runner is already running in this workspace (lock: {})",
                ws.show(&path)
            ),
            "wait for it to finish; the lock is released when it ends",
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
}

/// The stack every project uses, and MARA's rules for `PULUMI_STACK` in the environment file:
/// `--stack`, else `PULUMI_STACK` from the file, else from the process environment. A stack in
/// the file or the process environment that differs from `--stack` is refused (exit 2, naming
/// both); the file is created with `PULUMI_STACK=<stack>` when missing, and the line appended
/// (on a line of its own) when the file lacks it. A malformed file is left untouched (exit 3).
pub fn stack(ws: &Workspace, given: Option<&str>, command: &str) -> Result<String, RunnerError> {
    let path = ws.root.join(ENVIRONMENT_FILE);
    let display = ws.show(&path);
    let file = EnvironmentFile::load(&path, &display).map_err(RunnerError::Validation)?;
    let from_file = file.vars.get("PULUMI_STACK").filter(|s| !s.is_empty()).cloned();
    let from_process = std::env::var("PULUMI_STACK").ok().filter(|s| !s.is_empty());
    let stack = match (given, &from_file, &from_process) {
        (Some(s), _, _) => s.to_string(),
        (None, Some(f), _) => f.to_lowercase(),
        (None, None, Some(p)) => p.to_lowercase(),
        (None, None, None) => {
            return Err(RunnerError::usage(
                format!("`{command}` needs a stack: pass -s/--stack NAME"),
                format!("or set PULUMI_STACK in {display}"),
            ));
        }
    };
    for (other, source) in [
        (&from_file, display.as_str()),
        (&from_process, "the process environment"),
    ] {
        if let Some(o) = other
            && !o.eq_ignore_ascii_case(&stack)
        {
            return Err(RunnerError::usage(
                format!("the stack `{stack}` differs from PULUMI_STACK=`{o}` in {source}"),
                format!("use -s {o}, or change PULUMI_STACK in {source} to {stack} (every project shares one stack)"),
            ));
        }
    }
    if from_file.is_none() {
        crate::config::environment::add_stack(&path, &stack).map_err(|source| RunnerError::Io {
            context: format!("cannot write PULUMI_STACK to {display}"),
            source,
        })?;
    }
    Ok(stack)
}
