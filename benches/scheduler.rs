//! The runner's own overhead per project: a synthetic 2,000-project graph run through the real
//! scheduler with an engine that does nothing, so what is measured is planning, the ready
//! queue, events and bookkeeping — not Pulumi. Run with `cargo bench --bench scheduler`.
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::Instant;

use runner::exec::{self, Control, Engine, Event, Job, JobEnd, Options, Outputs, Policy, Status};
use runner::plan::{Operation, Plan};
use runner::provider::Provider;

struct Noop;

impl Engine for Noop {
    async fn run(&self, job: Job, control: Control) -> JobEnd {
        let _ = control.events.send(Event::Line {
            project: job.project.name.clone(),
            stream: exec::Stream::Stdout,
            text: "done".into(),
        });
        let mut outputs = Outputs::default();
        outputs.values.insert("name".into(), job.project.name.into());
        JobEnd {
            outputs: Some(outputs),
            ..JobEnd::ended(Status::Succeeded)
        }
    }
}

/// Each project needs up to three of the 50 declared before it (a fixed pseudo-random pattern).
fn synthetic(n: usize) -> Provider {
    let mut seed: u64 = 7;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let projects = (0..n).map(|i| {
        let mut needs: Vec<usize> = Vec::new();
        if i > 0 {
            for _ in 0..(next() % 4) {
                let lo = i.saturating_sub(50);
                let j = lo + usize::try_from(next() % u64::try_from(i - lo).unwrap()).unwrap();
                if !needs.contains(&j) {
                    needs.push(j);
                }
            }
        }
        (format!("p{i}"), needs.iter().map(|j| format!("p{j}")).collect())
    });
    runner::provider::for_tests(projects.collect::<Vec<_>>())
}

fn main() {
    let n = 2_000;
    let provider = synthetic(n);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut per_project = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let plan = Plan::new(&provider, Operation::Up, &[]).unwrap();
        let result = runtime.block_on(async {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let (_sig, sig_rx) = tokio::sync::mpsc::unbounded_channel();
            let options = Options {
                policy: Policy {
                    parallel: 8,
                    keep_going: false,
                    grace: std::time::Duration::from_secs(30),
                    timeout: None,
                },
                deployed: None,
                given: std::collections::BTreeMap::new(),
            };
            let consume = async { while rx.recv().await.is_some() {} };
            let (r, ()) = tokio::join!(
                exec::execute(&plan, Arc::new(Noop), &options, None, tx, sig_rx),
                consume
            );
            r
        });
        assert!(result.results.iter().all(|(_, f)| f.status == Status::Succeeded));
        per_project.push(start.elapsed().as_secs_f64() * 1000.0 / f64::from(u32::try_from(n).unwrap()));
    }
    per_project.sort_by(f64::total_cmp);
    println!(
        "scheduler overhead, {n} projects, --parallel 8, no-op engine: median {:.3} ms per project (min {:.3}, max {:.3}); target <= 2 ms",
        per_project[2], per_project[0], per_project[4]
    );
}
