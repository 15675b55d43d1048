//! In a CI that folds each project's output into one group printed when the project ends
//! (`super::plain`), a project that runs for twenty minutes shows nothing for twenty minutes,
//! and a job log that says nothing looks hung. Every so often, one line per project still
//! running says how long it has run and how many lines wait for its group.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use console::style;

use super::duration;
use crate::plan::Operation;

/// How often, by default (`MARA_CI_HEARTBEAT` sets it, in seconds; 0 turns it off).
pub(crate) const EVERY: Duration = Duration::from_secs(300);

pub(crate) struct Heartbeat {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    running: BTreeMap<String, Running>,
    stopped: bool,
}

struct Running {
    operation: Operation,
    since: Instant,
    lines: usize,
}

impl Heartbeat {
    /// A line for each project running at least `every`, every `every`.
    pub(crate) fn start(every: Duration) -> Self {
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || beat(&shared, every))
        };
        Heartbeat {
            shared,
            thread: Some(thread),
        }
    }

    pub(crate) fn started(&self, project: &str, operation: Operation) {
        self.with(|s| {
            s.running.insert(
                project.to_string(),
                Running {
                    operation,
                    since: Instant::now(),
                    lines: 0,
                },
            );
        });
    }

    pub(crate) fn line(&self, project: &str) {
        self.with(|s| {
            if let Some(r) = s.running.get_mut(project) {
                r.lines += 1;
            }
        });
    }

    pub(crate) fn finished(&self, project: &str) {
        self.with(|s| {
            s.running.remove(project);
        });
    }

    fn with(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut s) = self.shared.state.lock() {
            f(&mut s);
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.with(|s| s.stopped = true);
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn beat(shared: &Shared, every: Duration) {
    let Ok(mut state) = shared.state.lock() else { return };
    loop {
        let next = Instant::now() + every;
        // Woken early only to stop; a spurious wake-up waits out the rest.
        while !state.stopped {
            let left = next.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = match shared.wake.wait_timeout(state, left) {
                Ok((s, _)) => s,
                Err(_) => return,
            };
        }
        if state.stopped {
            return;
        }
        for line in lines(&state.running, every) {
            say!("{}", style(line).for_stderr().dim());
        }
    }
}

/// The lines of one beat: the projects that have run at least `every`.
fn lines(running: &BTreeMap<String, Running>, every: Duration) -> Vec<String> {
    running
        .iter()
        .filter(|(_, r)| r.since.elapsed() >= every)
        .map(|(project, r)| {
            format!(
                "… [{project}] {} still running after {} ({} {} so far, shown when it ends)",
                r.operation.as_str(),
                duration(r.since.elapsed().as_secs_f64()),
                r.lines,
                if r.lines == 1 { "line" } else { "lines" }
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_beat_names_each_project_running_long_enough_with_its_kept_lines() {
        let mut running = BTreeMap::new();
        let old = Instant::now().checked_sub(Duration::from_secs(330)).unwrap();
        running.insert(
            "eks".to_string(),
            Running {
                operation: Operation::Up,
                since: old,
                lines: 42,
            },
        );
        running.insert(
            "vpc".to_string(),
            Running {
                operation: Operation::Up,
                since: Instant::now(),
                lines: 1,
            },
        );
        let got = lines(&running, Duration::from_secs(300));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with("… [eks] up still running after 5m 3")
                && got[0].ends_with("(42 lines so far, shown when it ends)"),
            "{got:?}"
        );
    }
}
