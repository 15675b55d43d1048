//! Property tests of the scheduler through its API ([`execute`]) and of resume through the run
//! state ([`RunState::apply`], [`RunState::resume`]): random graphs, random failures, delays
//! and interruptions, in virtual time. The order of events on the one event channel is the
//! order things happened in the scheduler.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use proptest::prelude::*;

use super::{Digests, RunState};
use crate::exec::{Control, Engine, Event, Job, JobEnd, Options, Outputs, Policy, Resume, RunResult, Status, execute};
use crate::plan::{Operation, Plan};
use crate::provider::Provider;
use crate::workspace::RunDir;

/// A random graph: each project needs some of those declared before it.
#[derive(Debug, Clone)]
struct Case {
    needs: Vec<Vec<usize>>,
    /// Per project: fails, and how long it takes (ms).
    behaviour: Vec<(bool, u64)>,
    parallel: usize,
    keep_going: bool,
    /// A Ctrl-C after this many ms, and a second one after as many more.
    interrupt: Option<(u64, bool)>,
}

fn case() -> impl Strategy<Value = Case> {
    (1..10usize)
        .prop_flat_map(|n| {
            (
                (0..n)
                    .map(|i| prop::collection::vec(0..i.max(1), 0..=i.min(3)))
                    .collect::<Vec<_>>(),
                prop::collection::vec((prop::bool::weighted(0.2), 0..6u64), n),
                1..5usize,
                any::<bool>(),
                prop::option::weighted(0.3, (0..12u64, any::<bool>())),
            )
        })
        .prop_map(|(needs, behaviour, parallel, keep_going, interrupt)| Case {
            needs: needs
                .into_iter()
                .enumerate()
                .map(|(i, n)| {
                    n.into_iter()
                        .filter(|&j| j < i)
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect()
                })
                .collect(),
            behaviour,
            parallel,
            keep_going,
            interrupt,
        })
}

fn name(i: usize) -> String {
    format!("p{i}")
}

fn provider(needs: &[Vec<usize>]) -> Provider {
    crate::provider::for_tests(
        needs
            .iter()
            .enumerate()
            .map(|(i, n)| (name(i), n.iter().map(|&j| name(j)).collect())),
    )
}

/// Runs each project for its delay, fails those it is told to, and stops at an interrupt;
/// counts how many run at once.
struct Fake {
    behaviour: HashMap<String, (bool, u64)>,
    running: AtomicUsize,
    most: AtomicUsize,
}

impl Engine for Fake {
    async fn run(&self, job: Job, control: Control) -> JobEnd {
        let (fail, ms) = self.behaviour[&job.project.name];
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let interrupted = tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => false,
            () = control.interrupt.cancelled() => true,
        };
        self.running.fetch_sub(1, Ordering::SeqCst);
        if interrupted || fail {
            return JobEnd::failed(if interrupted { "interrupted" } else { "boom" });
        }
        let mut outputs = Outputs::default();
        outputs.values.insert("name".into(), job.project.name.clone().into());
        JobEnd {
            outputs: Some(outputs),
            ..JobEnd::ended(Status::Succeeded)
        }
    }
}

/// One run in virtual time: the result, every event in order, and the most projects that
/// ran at once.
fn run(
    p: &Provider,
    op: Operation,
    c: &Case,
    behaviour: &[(bool, u64)],
    resume: Option<&Resume>,
) -> (RunResult, Vec<Event>, usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let plan = Plan::new(p, op, &[]).expect("a plan");
    let engine = Arc::new(Fake {
        behaviour: behaviour.iter().enumerate().map(|(i, b)| (name(i), *b)).collect(),
        running: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    });
    let options = Options {
        policy: Policy {
            parallel: c.parallel,
            keep_going: c.keep_going,
            grace: Duration::from_secs(30),
            timeout: None,
        },
        deployed: None,
        given: BTreeMap::new(),
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (sig_tx, sig_rx) = tokio::sync::mpsc::unbounded_channel();
    let interrupt = c.interrupt;
    let result = rt.block_on(async {
        let signals = async move {
            if let Some((at, twice)) = interrupt {
                tokio::time::sleep(Duration::from_millis(at)).await;
                let _ = sig_tx.send(());
                if twice {
                    tokio::time::sleep(Duration::from_millis(at)).await;
                    let _ = sig_tx.send(());
                }
            }
            // Kept open to the end, as the signal listener is.
            std::future::pending::<()>().await;
        };
        tokio::select! {
            r = execute(&plan, engine.clone(), &options, resume, tx, sig_rx) => r,
            () = signals => unreachable!(),
        }
    });
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (result, events, engine.most.load(Ordering::SeqCst))
}

/// What a project waits for in `op`: its needs going up, what needs it going down.
fn waits(p: &Provider, op: Operation, i: usize) -> Vec<usize> {
    let edges = if op == Operation::Destroy {
        p.graph.dependents(i)
    } else {
        p.graph.needs(i)
    };
    edges.iter().map(|n| n.node).collect()
}

/// Everything that (transitively) waits for `i` in `op`.
fn behind(p: &Provider, op: Operation, i: usize) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![i];
    while let Some(j) = todo.pop() {
        for k in 0..p.projects.len() {
            if waits(p, op, k).contains(&j) && seen.insert(k) {
                todo.push(k);
            }
        }
    }
    seen
}

fn index(project: &str) -> usize {
    project[1..].parse().expect("p<N>")
}

/// The scheduling invariants of one run, read off its events.
fn check(
    p: &Provider,
    op: Operation,
    c: &Case,
    result: &RunResult,
    events: &[Event],
    most: usize,
) -> Result<(), TestCaseError> {
    let n = p.projects.len();
    let mut ended: HashMap<usize, Status> = HashMap::new();
    let mut started: BTreeSet<usize> = BTreeSet::new();
    let mut running = 0usize;
    let mut stopped_by: Option<String> = None;
    let mut failed: BTreeSet<usize> = BTreeSet::new();
    for e in events {
        match e {
            Event::Started { project, .. } => {
                let i = index(project);
                prop_assert!(stopped_by.is_none(), "{project} started after {stopped_by:?}");
                prop_assert!(started.insert(i), "{project} started twice");
                for w in waits(p, op, i) {
                    prop_assert!(
                        ended.get(&w).is_some_and(Status::unblocks),
                        "{project} started before p{w}, which it waits for, succeeded ({:?})",
                        ended.get(&w)
                    );
                }
                running += 1;
                prop_assert!(
                    running <= c.parallel,
                    "{running} running at once, at most {}",
                    c.parallel
                );
            }
            Event::Finished { project, result, .. } => {
                let i = index(project);
                prop_assert!(
                    ended.insert(i, result.status.clone()).is_none(),
                    "{project} finished twice"
                );
                prop_assert_eq!(
                    result.started.is_some(),
                    started.contains(&i),
                    "{}: {:?}",
                    project,
                    result
                );
                if result.started.is_some() {
                    running -= 1;
                    prop_assert!(
                        matches!(result.status, Status::Succeeded | Status::Failed),
                        "{:?}",
                        result.status
                    );
                    if result.status == Status::Failed {
                        failed.insert(i);
                        if !c.keep_going {
                            stopped_by.get_or_insert_with(|| format!("{project} failed"));
                        }
                    }
                }
            }
            Event::Stopping { .. } => {
                stopped_by.get_or_insert_with(|| "the interrupt".into());
            }
            Event::Note { .. }
            | Event::Runs { .. }
            | Event::Line { .. }
            | Event::StillRunning { .. }
            | Event::TimedOut { .. } => {}
        }
    }
    prop_assert!(
        most <= c.parallel,
        "the engine ran {most} at once, at most {}",
        c.parallel
    );
    prop_assert_eq!(ended.len(), n, "every project finishes once");
    prop_assert_eq!(result.results.len(), n);
    for &f in &failed {
        let after = behind(p, op, f);
        prop_assert!(
            after.is_disjoint(&started),
            "p{f} failed, yet {:?} of what waits for it started",
            after.intersection(&started).collect::<Vec<_>>()
        );
    }
    // Nothing is left out that could have run: what did not start waits for something that
    // did not succeed, was unchanged since it last succeeded (resume), or the run stopped.
    if stopped_by.is_none() {
        let settled = |i: &usize| matches!(ended[i], Status::Unchanged(_));
        for i in (0..n).filter(|i| !started.contains(i) && !settled(i)) {
            prop_assert!(
                waits(p, op, i).iter().any(|w| !ended[w].unblocks()),
                "p{i} never started though everything it waits for succeeded"
            );
        }
    }
    prop_assert_eq!(
        result.interrupted,
        c.interrupt.is_some() && events.iter().any(|e| matches!(e, Event::Stopping { .. }))
    );
    Ok(())
}

proptest! {
    #![proptest_config(crate::proptest_config(256))]

    /// Up and destroy of random graphs with random failures, delays and interruptions:
    /// nothing starts before what it waits for succeeded (needs going up, dependents going
    /// down), never more than `--parallel` at once, nothing behind a failure starts, nothing
    /// starts once the run stops, and nothing that could run is left out.
    #[test]
    fn the_scheduler_keeps_order_limits_and_failures(c in case(), destroy in any::<bool>()) {
        let p = provider(&c.needs);
        let op = if destroy { Operation::Destroy } else { Operation::Up };
        let (result, events, most) = run(&p, op, &c, &c.behaviour, None);
        check(&p, op, &c, &result, &events, most)?;
    }

    /// Resume runs exactly what had not succeeded: a run with random failures and
    /// interruptions is recorded with `RunState::apply`; the next `up` with
    /// `RunState::resume` starts exactly the projects the first did not bring to success, and
    /// the one after that starts none.
    #[test]
    fn resume_runs_exactly_what_had_not_succeeded(c in case()) {
        let p = provider(&c.needs);
        let dir = tempfile::tempdir().expect("a workspace");
        let run_dir = RunDir::new(dir.path(), "dev");
        let config = dir.path().join("config/pulumi/Pulumi.dev.yaml");
        let mut state = RunState { schema_version: 1, stack: "dev".into(), projects: BTreeMap::new() };
        let resume = |state: &RunState| {
            let digests = Digests::open(dir.path(), &run_dir, &config).expect("a digest key");
            state.resume(&p, digests, false)
        };

        let (first, events, most) = run(&p, Operation::Up, &c, &c.behaviour, Some(&resume(&state)));
        check(&p, Operation::Up, &c, &first, &events, most)?;
        for r in events.iter().filter_map(super::recorder::record_of) {
            state.apply(&r);
        }
        let succeeded: BTreeSet<String> = first
            .results
            .iter()
            .filter(|(_, f)| f.status == Status::Succeeded)
            .map(|(n, _)| n.clone())
            .collect();

        let calm = Case { interrupt: None, keep_going: false, ..c.clone() };
        let all_pass: Vec<(bool, u64)> = c.behaviour.iter().map(|&(_, ms)| (false, ms)).collect();
        let (second, events, most) = run(&p, Operation::Up, &calm, &all_pass, Some(&resume(&state)));
        check(&p, Operation::Up, &calm, &second, &events, most)?;
        let ran: BTreeSet<String> = events
            .iter()
            .filter_map(|e| match e { Event::Started { project, .. } => Some(project.clone()), _ => None })
            .collect();
        let not_succeeded: BTreeSet<String> = (0..c.needs.len()).map(name).filter(|n| !succeeded.contains(n)).collect();
        prop_assert_eq!(&ran, &not_succeeded, "the second run started other projects than the first did not finish");
        for r in events.iter().filter_map(super::recorder::record_of) {
            state.apply(&r);
        }

        let (third, events, _) = run(&p, Operation::Up, &calm, &all_pass, Some(&resume(&state)));
        prop_assert!(!events.iter().any(|e| matches!(e, Event::Started { .. })), "a third run started something");
        let unchanged = third.results.iter().all(|(_, f)| matches!(f.status, Status::Unchanged(_)));
        prop_assert!(unchanged, "a third run found something changed: {:?}", third.results);
    }
}
