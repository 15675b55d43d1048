//! The scheduler: a ready queue over the plan, a concurrency limit, fail-fast or keep-going,
//! resume of unchanged projects, and cancellation by signals (injected, so tests drive it).

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::stopping::{Escalation, Stop};
use super::{Because, Control, Engine, Event, Finished, Inputs, Job, JobEnd, Outputs, Runs, Status};
use crate::graph::Direction;
use crate::plan::{Operation, Plan};

#[derive(Debug, Clone)]
pub struct Options {
    /// What the command line asks.
    pub policy: Policy,
    /// Preview: the projects deployed before this run (the others cannot be previewed yet).
    pub deployed: Option<BTreeSet<String>>,
    /// Outputs of projects outside the plan that its projects read, by name (`up --only`: read
    /// from the backend beforehand), passed to hooks as if they had run in this run.
    pub given: BTreeMap<String, Outputs>,
}

/// How the scheduler runs a plan, as the command line asks (`cli::run`, with the run's other
/// options): how many projects at once, whether to go on after a failure, how long a project
/// may run and how long it gets to stop.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// At most this many projects at once (at least 1).
    pub parallel: usize,
    /// After a failure, go on with everything that does not depend on it.
    pub keep_going: bool,
    /// How long a project is given to stop after SIGINT before SIGTERM, and after SIGTERM
    /// before SIGKILL.
    pub grace: Duration,
    /// How long any one project may run (`--timeout`); else its own `timeout`, if any.
    pub timeout: Option<Duration>,
}

/// How often a long project is said to be still running.
const STILL_RUNNING_EVERY: Duration = Duration::from_secs(5 * 60);

/// Project name and its upstream projects' output digests → its inputs, each with its digest.
pub type InputsDigest = Arc<dyn Fn(&str, &BTreeMap<String, String>) -> Inputs + Send + Sync>;

/// What a finished job hands back to the loop: project, start, end, and its inputs when it
/// succeeded and a resume asks for them.
type Joined = (usize, Option<SystemTime>, JobEnd, Option<Inputs>);

/// What the last runs left, to skip projects whose inputs did not change (`up` only).
pub struct Resume {
    /// Per project: the inputs of its last successful `up`, and the digest of the outputs it
    /// produced then.
    pub previous: HashMap<String, (Inputs, String)>,
    /// The inputs of a project now, given its upstream projects' output digests.
    pub inputs: InputsDigest,
    /// The digest of a project's outputs (keyed, so secrets cannot be guessed from it).
    pub outputs: Box<dyn Fn(&Outputs) -> String + Send + Sync>,
}

/// How the run went, project by project, in plan order.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub results: Vec<(String, Finished)>,
    pub interrupted: bool,
}

impl RunResult {
    pub fn failed(&self) -> bool {
        self.results.iter().any(|(_, f)| f.status.is_failure())
    }

    /// The projects whose status passes `keep`, in plan order.
    pub fn named(&self, keep: impl Fn(&Status) -> bool) -> Vec<&str> {
        self.results
            .iter()
            .filter(|(_, f)| keep(&f.status))
            .map(|(name, _)| name.as_str())
            .collect()
    }
}

struct Run<'p> {
    plan: &'p Plan<'p>,
    events: UnboundedSender<Event>,
    /// What each project waits for, and what waits for it, within the plan.
    waits: HashMap<usize, Vec<usize>>,
    blocks: HashMap<usize, Vec<usize>>,
    missing: HashMap<usize, usize>,
    done: HashMap<usize, Finished>,
    outputs: HashMap<usize, Outputs>,
    output_digests: HashMap<usize, String>,
    /// Output digests of the needs outside the plan (`--only`, `--exclude`): what the backend
    /// gave, else what their last recorded up produced. A project's inputs digest counts every
    /// need, so a selection does not make it differ from a full run's.
    outside_digests: HashMap<String, String>,
    /// Why nothing more starts, once the run stops.
    stop: Option<Because>,
}

impl Run<'_> {
    fn name(&self, i: usize) -> &str {
        self.plan.name(i)
    }

    fn finish(&mut self, i: usize, result: Finished) {
        let _ = self.events.send(Event::Finished {
            project: self.name(i).to_string(),
            operation: self.plan.operation,
            result: Box::new(result.clone()),
        });
        self.done.insert(i, result);
    }

    /// Records `i`'s end and returns what became ready; what can no longer run is skipped.
    fn settle(&mut self, i: usize, result: Finished) -> Vec<usize> {
        let unblocks = result.status.unblocks();
        let why = Because::Upstream {
            name: self.name(i).to_string(),
            outcome: result.status.outcome(),
        };
        self.finish(i, result);
        let mut ready = Vec::new();
        for d in self.blocks.get(&i).cloned().unwrap_or_default() {
            if self.done.contains_key(&d) {
                continue;
            }
            if unblocks {
                let m = self.missing.get_mut(&d).expect("every project has a count");
                *m -= 1;
                if *m == 0 {
                    ready.push(d);
                }
            } else {
                // Once interrupted, nothing more was going to start anyway.
                let status = if self.stop == Some(Because::Interrupted) {
                    Status::NotStarted(Because::Interrupted)
                } else {
                    Status::Skipped(why.clone())
                };
                let skipped = Finished::settled(status, None);
                ready.extend(self.settle(d, skipped));
            }
        }
        ready
    }
}

/// Runs `plan` with `engine`. Each message on `signals` is one Ctrl-C: the first stops new work
/// and interrupts running projects, the second kills them.
pub async fn execute<E: Engine>(
    plan: &Plan<'_>,
    engine: Arc<E>,
    options: &Options,
    resume: Option<&Resume>,
    events: UnboundedSender<Event>,
    mut signals: UnboundedReceiver<()>,
) -> RunResult {
    let remaining = plan.provider.graph.remaining(&plan.subset, plan.operation.direction());
    let position: HashMap<usize, usize> = plan.order.iter().enumerate().map(|(p, &i)| (i, p)).collect();
    let preview = plan.operation == Operation::Preview;

    let mut run = Run {
        plan,
        events: events.clone(),
        waits: HashMap::new(),
        blocks: HashMap::new(),
        missing: HashMap::new(),
        done: HashMap::new(),
        outputs: HashMap::new(),
        output_digests: HashMap::new(),
        outside_digests: resume
            .map(|r| {
                let mut digests: HashMap<String, String> = r
                    .previous
                    .iter()
                    .map(|(name, (_, out))| (name.clone(), out.clone()))
                    .collect();
                digests.extend(options.given.iter().map(|(name, o)| (name.clone(), (r.outputs)(o))));
                digests
            })
            .unwrap_or_default(),
        stop: None,
    };
    for &i in &plan.order {
        // A preview deploys nothing, so previews do not wait for each other.
        let waits: Vec<usize> = if preview {
            Vec::new()
        } else {
            plan.waits_for(i).iter().map(|n| n.node).collect()
        };
        for &w in &waits {
            run.blocks.entry(w).or_default().push(i);
        }
        run.missing.insert(i, waits.len());
        run.waits.insert(i, waits);
    }

    // Ready projects: the one with the longest chain still behind it first, then plan order.
    let mut ready: BinaryHeap<(u64, std::cmp::Reverse<usize>, usize)> = BinaryHeap::new();
    let push = |ready: &mut BinaryHeap<_>, i: usize| ready.push((remaining[i], std::cmp::Reverse(position[&i]), i));
    for &i in &plan.order {
        if run.missing[&i] == 0 {
            push(&mut ready, i);
        }
    }

    let mut stopping = Stopping::new(options.policy.grace);
    let mut signals_open = true;
    let mut running: JoinSet<Joined> = JoinSet::new();
    let parallel = options.policy.parallel.max(1);

    loop {
        while run.stop.is_none() && running.len() < parallel {
            let Some((_, _, i)) = ready.pop() else { break };
            if let Some(result) = decide_without_running(&mut run, i, options, resume) {
                for r in run.settle(i, result) {
                    push(&mut ready, r);
                }
                continue;
            }
            let control = stopping.control(&events);
            spawn_job(&run, i, options, resume, engine.clone(), control, &mut running);
        }
        if running.is_empty() {
            break;
        }
        tokio::select! {
            joined = running.join_next() => {
                let Some(joined) = joined else { continue };
                let joined = joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
                for r in record_end(&mut run, joined, resume, options, stopping.signals > 0) {
                    push(&mut ready, r);
                }
            }
            () = sleep_until_some(stopping.escalation.next()) => {
                stopping.escalation.step();
            }
            signal = signals.recv(), if signals_open => {
                if signal.is_none() {
                    // No more signals can come; keep waiting for the running jobs only.
                    signals_open = false;
                    continue;
                }
                if stopping.signal() {
                    run.stop = Some(Because::Interrupted);
                    let _ = events.send(Event::Stopping { grace: options.policy.grace });
                }
            }
        }
    }

    finish_rest(run, stopping.signals > 0)
}

/// How the run stops on signals ([`Escalation`]): the first reaches every running project;
/// each further one, or the grace period running out, takes the next, harder step.
struct Stopping {
    escalation: Escalation,
    /// Signals received so far.
    signals: usize,
}

impl Stopping {
    fn new(grace: Duration) -> Self {
        let tokens = (
            CancellationToken::new(),
            CancellationToken::new(),
            CancellationToken::new(),
        );
        Stopping {
            escalation: Escalation::new(tokens, grace),
            signals: 0,
        }
    }

    /// A job's own tokens: its timeout stops it alone; a signal stops them all.
    fn control(&self, events: &UnboundedSender<Event>) -> Control {
        Control {
            events: events.clone(),
            interrupt: self.escalation.interrupt().child_token(),
            terminate: self.escalation.terminate().child_token(),
            kill: self.escalation.kill().child_token(),
        }
    }

    /// One more signal; `true` for the first.
    fn signal(&mut self) -> bool {
        self.signals += 1;
        self.escalation.step();
        self.signals == 1
    }
}

/// Starts project `i`: announces it and runs it on the engine in its own task.
fn spawn_job<E: Engine>(
    run: &Run<'_>,
    i: usize,
    options: &Options,
    resume: Option<&Resume>,
    engine: Arc<E>,
    control: Control,
    running: &mut JoinSet<Joined>,
) {
    let given = &options.given;
    let plan = run.plan;
    let mut upstream: BTreeMap<String, Outputs> = run.waits[&i]
        .iter()
        .filter_map(|w| run.outputs.get(w).map(|o| (run.name(*w).to_string(), o.clone())))
        .collect();
    for need in plan.provider.graph.needs(i) {
        let name = plan.name(need.node);
        if let Some(o) = given.get(name) {
            upstream.entry(name.to_string()).or_insert_with(|| o.clone());
        }
    }
    let job = Job {
        project: plan.project(i).clone(),
        operation: plan.operation,
        upstream,
    };
    let started = SystemTime::now();
    let _ = control.events.send(Event::Started {
        project: run.name(i).to_string(),
        operation: plan.operation,
        at: started,
    });
    let timeout = options.policy.timeout.or(job.project.timeout);
    let grace = options.policy.grace;
    let name = job.project.name.clone();
    // The inputs digest is taken once the project ran: its run may itself write files the
    // digest covers (a new stack's encryption salt), which must not look like a change next
    // time. Taken here, in the job's own task (a walk and a hash of its directory), so the
    // loop starts what waited for it at once; the upstream digests are known already.
    let digest = resume.map(|r| (r.inputs.clone(), upstream_digests(run, i)));
    running.spawn(async move {
        let end = watched(engine.run(job, control.clone()), &name, &control, (timeout, grace)).await;
        let digest = match (digest, &end.status) {
            (Some((inputs, upstream)), Status::Succeeded) => Some(inputs(&name, &upstream)),
            _ => None,
        };
        (i, Some(started), end, digest)
    });
}

/// Waits for a job, saying every few minutes that it is still running; past its `timeout` it
/// is stopped as a signal would stop it (SIGINT, after `grace` SIGTERM, after `grace` SIGKILL)
/// and ends as timed out.
async fn watched(
    job: impl std::future::Future<Output = JobEnd>,
    project: &str,
    control: &Control,
    (timeout, grace): (Option<Duration>, Duration),
) -> JobEnd {
    let begun = tokio::time::Instant::now();
    let mut still = tokio::time::interval_at(begun + STILL_RUNNING_EVERY, STILL_RUNNING_EVERY);
    let tokens = (
        control.interrupt.clone(),
        control.terminate.clone(),
        control.kill.clone(),
    );
    let mut escalation = Escalation::new(tokens, grace);
    let deadline = timeout.and_then(|t| crate::duration::after(begun, t));
    // The timeout stopped it (not an interrupt of the whole run that came first).
    let mut timed_out = false;
    tokio::pin!(job);
    let end = loop {
        let next = if timed_out || control.interrupt.is_cancelled() {
            escalation.next()
        } else {
            deadline
        };
        tokio::select! {
            end = &mut job => break end,
            _ = still.tick() => {
                let _ = control.events.send(Event::StillRunning {
                    project: project.to_string(),
                    minutes: begun.elapsed().as_secs() / 60,
                });
            }
            () = sleep_until_some(next) => {
                if escalation.step() == Stop::Interrupt {
                    timed_out = true;
                    let _ = control.events.send(Event::TimedOut {
                        project: project.to_string(),
                        // The limit as given (`30m`), not the instant measured past it.
                        after: timeout.unwrap_or_else(|| begun.elapsed()),
                    });
                }
            }
        }
    };
    match (timed_out, timeout) {
        (true, Some(t)) => JobEnd {
            status: Status::TimedOut,
            error: Some(super::Failure::timed_out(t, end.error.clone())),
            ..end
        },
        _ => end,
    }
}

/// Waits until `at`, or forever when there is nothing to wait for.
async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Everything that has not finished did not start; the results in plan order.
fn finish_rest(mut run: Run<'_>, interrupted: bool) -> RunResult {
    let plan = run.plan;
    let reason = run.stop.clone().unwrap_or(Because::Stopped);
    for &i in &plan.order {
        if !run.done.contains_key(&i) {
            let result = Finished::settled(Status::NotStarted(reason.clone()), None);
            run.finish(i, result);
        }
    }
    RunResult {
        results: plan
            .order
            .iter()
            .map(|&i| {
                (
                    plan.name(i).to_string(),
                    run.done.remove(&i).expect("every project finished"),
                )
            })
            .collect(),
        interrupted,
    }
}

/// Records how a job ended; returns what became ready. A failure stops new work unless
/// `--keep-going` (an interrupted project's failure is the interrupt, not a new stop).
fn record_end(
    run: &mut Run<'_>,
    joined: Joined,
    resume: Option<&Resume>,
    options: &Options,
    interrupted: bool,
) -> Vec<usize> {
    let (i, started, end, digest) = joined;
    let failed = end.status.is_failure();
    if let Some(o) = &end.outputs {
        if let Some(r) = resume {
            run.output_digests.insert(i, (r.outputs)(o));
        }
        run.outputs.insert(i, o.clone());
    }
    let result = Finished {
        status: end.status,
        started,
        ended: SystemTime::now(),
        outputs: end.outputs,
        changes: end.changes,
        diffs: end.diffs,
        error: end.error,
        inputs: digest,
        outputs_digest: run.output_digests.get(&i).cloned(),
    };
    let ready = run.settle(i, result);
    if failed && !options.policy.keep_going && run.stop.is_none() && !interrupted {
        run.stop = Some(Because::StoppedAfter {
            failed: run.name(i).to_string(),
        });
    }
    ready
}

/// The output digests of everything `i` needs: those of the plan from this run, the others
/// from outside it.
fn upstream_digests(run: &Run<'_>, i: usize) -> BTreeMap<String, String> {
    run.plan.need_digests(
        i,
        |j| run.output_digests.get(&j).map(String::as_str),
        |name| run.outside_digests.get(name).map(String::as_str),
    )
}

/// Preview of a project whose upstream is not deployed, or `up` of a project whose inputs did not
/// change since it last succeeded: settled without running.
fn decide_without_running(run: &mut Run<'_>, i: usize, options: &Options, resume: Option<&Resume>) -> Option<Finished> {
    let plan = run.plan;
    let settled = Finished::settled;
    if let Some(deployed) = &options.deployed {
        let missing: Vec<String> = plan
            .provider
            .graph
            .needs(i)
            .iter()
            .map(|n| plan.name(n.node))
            .filter(|n| !deployed.contains(*n))
            .map(str::to_string)
            .collect();
        if !missing.is_empty() {
            return Some(settled(
                Status::Waits(Because::NotDeployed { waits_for: missing }),
                None,
            ));
        }
    }
    let resume = resume?;
    if plan.operation != Operation::Up || plan.operation.direction() != Direction::Forward {
        return None;
    }
    let why_it_runs = |why: Runs| {
        let _ = run.events.send(Event::Runs {
            project: plan.name(i).to_string(),
            why,
        });
    };
    let Some((previous_inputs, previous_outputs)) = resume.previous.get(plan.name(i)) else {
        why_it_runs(Runs::NoRecord);
        return None;
    };
    let now = (resume.inputs)(plan.name(i), &upstream_digests(run, i));
    if &now != previous_inputs {
        let ran_before: Vec<String> = run.waits[&i]
            .iter()
            .filter(|w| !matches!(run.done.get(w).map(|f| &f.status), Some(Status::Unchanged(_))))
            .map(|w| plan.name(*w).to_string())
            .collect();
        why_it_runs(Runs::InputsChanged { ran_before });
        return None;
    }
    run.output_digests.insert(i, previous_outputs.clone());
    Some(settled(Status::Unchanged(Because::NothingChanged), Some(now)))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::exec::Outcome;
    use crate::provider::Provider;

    /// A fake engine: records start/end order, fails the projects it is told to.
    struct Fake {
        log: Mutex<Vec<String>>,
        fail: Vec<&'static str>,
        delay_ms: u64,
        hang: Vec<&'static str>,
    }

    impl Engine for Fake {
        async fn run(&self, job: Job, control: Control) -> JobEnd {
            let name = job.project.name.clone();
            self.log.lock().unwrap().push(format!("start {name}"));
            if self.hang.contains(&name.as_str()) {
                control.interrupt.cancelled().await;
                self.log.lock().unwrap().push(format!("interrupted {name}"));
                return JobEnd::failed("interrupted");
            }
            tokio::time::sleep(Duration::from_millis(self.delay_ms)).await;
            self.log.lock().unwrap().push(format!("end {name}"));
            if self.fail.contains(&name.as_str()) {
                return JobEnd::failed("boom");
            }
            let mut outputs = Outputs::default();
            outputs.values.insert("name".into(), name.clone().into());
            JobEnd {
                outputs: Some(outputs),
                ..JobEnd::ended(Status::Succeeded)
            }
        }
    }

    fn provider(spec: &[(&str, &[&str])]) -> Provider {
        crate::provider::for_tests(
            spec.iter()
                .map(|(n, needs)| ((*n).to_string(), needs.iter().map(|x| (*x).to_string()).collect())),
        )
    }

    const CHAIN: &[(&str, &[&str])] = &[("net", &[]), ("db", &["net"]), ("app", &["db"]), ("other", &[])];

    fn fake(fail: Vec<&'static str>) -> Arc<Fake> {
        Arc::new(Fake {
            log: Mutex::new(vec![]),
            fail,
            delay_ms: 5,
            hang: vec![],
        })
    }

    async fn go(p: &Provider, op: Operation, engine: Arc<Fake>, options: Options) -> (RunResult, Vec<String>) {
        let plan = Plan::new(p, op, &[]).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (_sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel();
        let result = execute(&plan, engine.clone(), &options, None, tx, sig_rx).await;
        while rx.try_recv().is_ok() {}
        let log = engine.log.lock().unwrap().clone();
        (result, log)
    }

    fn opts(parallel: usize, keep_going: bool) -> Options {
        Options {
            policy: Policy {
                parallel,
                keep_going,
                grace: Duration::from_secs(30),
                timeout: None,
            },
            deployed: None,
            given: BTreeMap::new(),
        }
    }

    fn status<'a>(r: &'a RunResult, name: &str) -> &'a Status {
        &r.results.iter().find(|(n, _)| n == name).unwrap().1.status
    }

    /// A long project says every five minutes that it still runs: in CI, where its lines wait
    /// for its group until it ends, this is what the job log shows meanwhile.
    #[tokio::test(start_paused = true)]
    async fn a_long_project_says_every_five_minutes_that_it_still_runs() {
        let p = provider(&[("eks", &[])]);
        let engine = Arc::new(Fake {
            log: Mutex::new(vec![]),
            fail: vec![],
            delay_ms: 11 * 60 * 1000,
            hang: vec![],
        });
        let plan = Plan::new(&p, Operation::Up, &[]).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let (_sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel();
        let r = execute(&plan, engine, &opts(2, false), None, tx, sig_rx).await;
        assert_eq!(status(&r, "eks"), &Status::Succeeded);
        let mut notes = Vec::new();
        while let Ok(ev) = rx.try_recv() {
            if let Event::StillRunning { project, minutes } = ev {
                notes.push(format!("{project}: {minutes} min"));
            }
        }
        assert_eq!(notes, ["eks: 5 min", "eks: 10 min"]);
    }

    /// The library takes any `Duration`: one past what a clock holds is a deadline never
    /// reached, never a panic, whether it is the timeout, the grace after it or after a signal.
    #[tokio::test(start_paused = true)]
    async fn durations_past_any_clock_never_panic() {
        let p = provider(&[("eks", &[]), ("vpc", &[])]);
        let engine = Arc::new(Fake {
            log: Mutex::new(vec![]),
            fail: vec![],
            delay_ms: 5,
            hang: vec!["eks"],
        });
        let plan = Plan::new(&p, Operation::Up, &[]).unwrap();
        let mut options = opts(2, false);
        options.policy.grace = Duration::MAX;
        options.policy.timeout = Some(Duration::from_secs(1));
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let (_sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel();
        let r = execute(&plan, engine.clone(), &options, None, tx, sig_rx).await;
        assert_eq!(status(&r, "eks"), &Status::TimedOut);

        options.policy.timeout = Some(Duration::MAX);
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let (sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel();
        sig_tx.send(()).unwrap();
        let r = execute(&plan, engine, &options, None, tx, sig_rx).await;
        assert!(r.interrupted);
    }

    #[tokio::test]
    async fn needs_finish_before_dependents_start_and_parallel_1_never_overlaps() {
        let p = provider(CHAIN);
        let (r, log) = go(&p, Operation::Up, fake(vec![]), opts(1, false)).await;
        assert!(r.results.iter().all(|(_, f)| f.status == Status::Succeeded));
        for w in log.chunks(2) {
            assert_eq!(w[0].replace("start", ""), w[1].replace("end", ""), "overlap in {log:?}");
        }
        let pos = |s: &str| log.iter().position(|l| l == s).unwrap();
        assert!(pos("end net") < pos("start db") && pos("end db") < pos("start app"));
        // The longest chain goes first.
        assert_eq!(log[0], "start net");
    }

    #[tokio::test]
    async fn destroy_runs_dependents_first() {
        let p = provider(CHAIN);
        let (_, log) = go(&p, Operation::Destroy, fake(vec![]), opts(4, false)).await;
        let pos = |s: &str| log.iter().position(|l| l == s).unwrap();
        assert!(pos("end app") < pos("start db") && pos("end db") < pos("start net"));
    }

    #[tokio::test]
    async fn a_failure_stops_new_work_by_default() {
        let p = provider(CHAIN);
        let (r, log) = go(&p, Operation::Up, fake(vec!["net"]), opts(1, false)).await;
        assert_eq!(status(&r, "net"), &Status::Failed);
        let upstream = |name: &str, outcome| {
            Status::Skipped(Because::Upstream {
                name: name.into(),
                outcome,
            })
        };
        assert_eq!(status(&r, "db"), &upstream("net", Outcome::Failed));
        assert_eq!(status(&r, "app"), &upstream("db", Outcome::Skipped));
        assert_eq!(
            status(&r, "other"),
            &Status::NotStarted(Because::StoppedAfter { failed: "net".into() })
        );
        assert!(!log.contains(&"start other".to_string()));
        assert!(r.failed());
    }

    #[tokio::test]
    async fn keep_going_finishes_independent_branches() {
        let p = provider(CHAIN);
        let (r, _) = go(&p, Operation::Up, fake(vec!["net"]), opts(1, true)).await;
        assert_eq!(status(&r, "other"), &Status::Succeeded);
        assert_eq!(
            status(&r, "app"),
            &Status::Skipped(Because::Upstream {
                name: "db".into(),
                outcome: Outcome::Skipped
            })
        );
    }

    #[tokio::test]
    async fn preview_reports_what_waits_for_an_undeployed_upstream() {
        let p = provider(CHAIN);
        let options = Options {
            deployed: Some(["net".to_string()].into()),
            ..opts(4, false)
        };
        let (r, _) = go(&p, Operation::Preview, fake(vec![]), options).await;
        assert_eq!(status(&r, "net"), &Status::Succeeded);
        assert_eq!(status(&r, "db"), &Status::Succeeded);
        assert_eq!(
            status(&r, "app"),
            &Status::Waits(Because::NotDeployed {
                waits_for: vec!["db".into()]
            })
        );
    }

    #[tokio::test]
    async fn the_first_signal_interrupts_running_projects_and_starts_nothing_more() {
        let p = provider(CHAIN);
        let engine = Arc::new(Fake {
            log: Mutex::new(vec![]),
            fail: vec![],
            delay_ms: 5,
            hang: vec!["net", "other"],
        });
        let plan = Plan::new(&p, Operation::Up, &[]).unwrap();
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let (sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel();
        let options = opts(4, false);
        let run = execute(&plan, engine.clone(), &options, None, tx, sig_rx);
        let signal = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            sig_tx.send(()).unwrap();
        };
        let (r, ()) = tokio::join!(run, signal);
        assert!(r.interrupted);
        let log = engine.log.lock().unwrap().clone();
        assert!(log.contains(&"interrupted net".to_string()) && log.contains(&"interrupted other".to_string()));
        assert_eq!(status(&r, "db"), &Status::NotStarted(Because::Interrupted));
    }

    #[tokio::test]
    async fn resume_skips_projects_whose_inputs_did_not_change() {
        let p = provider(CHAIN);
        let plan = Plan::new(&p, Operation::Up, &[]).unwrap();
        let resume = Resume {
            previous: [
                (
                    "net".to_string(),
                    (Inputs::Whole("in:net:".into()), "out-net".to_string()),
                ),
                (
                    "db".to_string(),
                    (Inputs::Whole("in:db:net=out-net".into()), "out-db".to_string()),
                ),
            ]
            .into(),
            inputs: Arc::new(|name, up| {
                let ups: Vec<String> = up.iter().map(|(k, v)| format!("{k}={v}")).collect();
                Inputs::Whole(format!("in:{name}:{}", ups.join(",")))
            }),
            outputs: Box::new(|o| format!("out-{}", o.values["name"].as_str().unwrap())),
        };
        let engine = fake(vec![]);
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let (_s, sig_rx) = tokio::sync::mpsc::unbounded_channel();
        let r = execute(&plan, engine.clone(), &opts(2, false), Some(&resume), tx, sig_rx).await;
        let log = engine.log.lock().unwrap().clone();
        assert!(matches!(status(&r, "net"), Status::Unchanged(_)));
        assert!(matches!(status(&r, "db"), Status::Unchanged(_)));
        assert_eq!(status(&r, "app"), &Status::Succeeded);
        assert!(!log.iter().any(|l| l.contains("net") || l.contains(" db")), "{log:?}");
    }
}
