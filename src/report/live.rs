//! The live view on a terminal: one line per running project (spinner, elapsed time, what is
//! left of its estimate, the last line of its output), finished projects above with their
//! duration and result, an overall bar with the ETA of the whole run, and a line of the projects
//! still waiting and on what. Bars are drawn on standard error; everything else is printed
//! through the bars so nothing is torn. The ETA replays the scheduler's rules over what is left:
//! the estimates of the projects waiting, what remains of the running ones' (see
//! `ProjectGraph::simulate`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use console::style;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::exec::{Event, Status};
use crate::plan::{Operation, Plan};
use crate::report::plain::duration;

pub(crate) struct Live<'p> {
    plan: &'p Plan<'p>,
    multi: MultiProgress,
    overall: ProgressBar,
    /// The projects not started yet, and what each waits for.
    waiting: ProgressBar,
    running: HashMap<String, ProgressBar>,
    started: HashMap<String, SystemTime>,
    done: HashSet<String>,
    spinner: ProgressStyle,
    width: usize,
    /// `-d`: unchanged projects get their line too.
    debug: bool,
    /// Each project's estimate in seconds (learned, else declared), when known.
    estimates: BTreeMap<String, f64>,
    parallel: usize,
    /// When the run should end, as last predicted.
    eta: Arc<Mutex<Option<Instant>>>,
    /// A drift check: previews are told as drift (`drifted`, `no drift`).
    drift: bool,
}

impl<'p> Live<'p> {
    pub(crate) fn new(plan: &'p Plan<'p>, debug: bool, estimates: BTreeMap<String, f64>, parallel: usize) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10));
        let overall = multi.add(ProgressBar::new(plan.order.len() as u64));
        let eta: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
        let shown = eta.clone();
        overall.set_style(
            ProgressStyle::with_template(
                // Fits 80 columns; what does not fit is cut at the terminal's edge, not wrapped.
                "{bar:20.cyan/blue} {pos}/{len} projects · {elapsed_precise}{eta_left} · {wide_msg}",
            )
            .expect("a valid template")
            .with_key("eta_left", move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                if let Some(end) = *shown.lock().expect("not poisoned") {
                    let _ = write!(w, " · ETA {}", left(end.saturating_duration_since(Instant::now())));
                }
            })
            .progress_chars("█▉▊▋▌▍▎▏ "),
        );
        overall.set_message(format!("{} · provider {}", plan.operation.as_str(), plan.provider.name));
        overall.enable_steady_tick(Duration::from_millis(200));
        let waiting = multi.add(ProgressBar::new_spinner());
        waiting.set_style(ProgressStyle::with_template("  {wide_msg:.dim}").expect("a valid template"));
        let width = plan.order.iter().map(|&i| plan.name(i).len()).max().unwrap_or(0);
        let mut live = Live {
            plan,
            multi,
            overall,
            waiting,
            running: HashMap::new(),
            started: HashMap::new(),
            done: HashSet::new(),
            spinner: ProgressStyle::with_template(&format!(
                "{{spinner:.cyan}} {{prefix:<{width}.bold}} {{elapsed:>4}}{{left}}  {{wide_msg:.dim}}"
            ))
            .expect("a valid template"),
            width,
            debug,
            estimates,
            parallel,
            eta,
            drift: false,
        };
        live.replan();
        live
    }

    /// The ETA of the whole run and the line of waiting projects, from where the run is now.
    fn replan(&mut self) {
        let plan = self.plan;
        let mut unknown = false;
        let now = SystemTime::now();
        let mut left_of: HashMap<usize, f64> = HashMap::new();
        for &i in &plan.order {
            let name = plan.name(i);
            let secs = if self.done.contains(name) {
                0.0
            } else {
                let Some(&estimate) = self.estimates.get(name) else {
                    unknown = true;
                    continue;
                };
                let ran = self
                    .started
                    .get(name)
                    .and_then(|s| now.duration_since(*s).ok())
                    .map_or(0.0, |d| d.as_secs_f64());
                (estimate - ran).max(0.0)
            };
            left_of.insert(i, secs);
        }
        *self.eta.lock().expect("not poisoned") = (!unknown)
            .then(|| {
                let p = plan.provider.graph.simulate(
                    &plan.subset,
                    plan.operation.direction(),
                    self.parallel,
                    plan.operation != Operation::Preview,
                    &|i| left_of.get(&i).copied().unwrap_or(0.0),
                );
                Instant::now().checked_add(crate::duration::of_seconds(p.makespan))
            })
            .flatten();
        let waiting: Vec<String> = plan
            .order
            .iter()
            .filter(|&&i| !self.done.contains(plan.name(i)) && !self.started.contains_key(plan.name(i)))
            .map(|&i| {
                let on: Vec<&str> = if plan.operation == Operation::Preview {
                    Vec::new()
                } else {
                    plan.waits_for(i)
                        .iter()
                        .map(|n| plan.name(n.node))
                        .filter(|n| !self.done.contains(*n))
                        .collect()
                };
                if on.is_empty() {
                    plan.name(i).to_string()
                } else {
                    format!("{} waits for {}", plan.name(i), on.join(", "))
                }
            })
            .collect();
        self.waiting.set_message(if waiting.is_empty() {
            String::new()
        } else {
            format!("waiting: {}", waiting.join(" · "))
        });
    }

    pub(crate) fn event(&mut self, ev: &Event) {
        match ev {
            Event::Started { project, at, .. } => {
                let bar = self.multi.insert_before(&self.overall, ProgressBar::new_spinner());
                let mut spinner = self.spinner.clone();
                if let Some(&estimate) = self.estimates.get(project) {
                    spinner = spinner.with_key("left", move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let rest = estimate - state.elapsed().as_secs_f64();
                        let _ = write!(w, " ETA {}", left(crate::duration::of_seconds(rest)));
                    });
                }
                bar.set_style(spinner);
                bar.set_prefix(project.clone());
                bar.enable_steady_tick(Duration::from_millis(120));
                self.running.insert(project.clone(), bar);
                self.started.insert(project.clone(), *at);
                self.replan();
            }
            Event::Line { project, text, .. } => {
                if let Some(bar) = self.running.get(project) {
                    let t = text.trim();
                    if !t.is_empty() && !closing(t) {
                        bar.set_message(t.to_string());
                    }
                }
            }
            Event::Note { .. } => {
                if let Some(line) = super::note_shown(ev, self.debug) {
                    let _ = self.multi.println(line);
                }
            }
            Event::Runs { project, why } => {
                if self.debug {
                    let _ = self.multi.println(super::runs_line(project, why));
                }
            }
            Event::Stopping { .. } | Event::StillRunning { .. } | Event::TimedOut { .. } => {
                let _ = self.multi.println(super::stopping_line(ev).unwrap_or_default());
            }
            Event::Finished {
                project,
                operation,
                result,
            } => {
                if let Some(bar) = self.running.remove(project) {
                    bar.finish_and_clear();
                    self.multi.remove(&bar);
                }
                self.done.insert(project.clone());
                self.replan();
                let took = self
                    .started
                    .get(project)
                    .and_then(|s| result.ended.duration_since(*s).ok())
                    .map(|d| duration(d.as_secs_f64()))
                    .unwrap_or_default();
                let w = self.width;
                let line = match &result.status {
                    Status::Succeeded if self.drift && crate::exec::would_change(&result.changes) => style(format!(
                        "≠ {project:<w$} {took:>7}  drifted: {}",
                        super::plain::spelled(&result.changes)
                    ))
                    .yellow()
                    .bold(),
                    Status::Succeeded if self.drift => style(format!("✔ {project:<w$} {took:>7}  no drift")).green(),
                    Status::Succeeded => {
                        style(format!("✔ {project:<w$} {took:>7}  {} succeeded", operation.as_str())).green()
                    }
                    Status::Failed => style(format!("✘ {project:<w$} {took:>7}  {} failed", operation.as_str()))
                        .red()
                        .bold(),
                    Status::Interrupted => {
                        style(format!("⏹ {project:<w$} {took:>7}  {} interrupted", operation.as_str()))
                            .for_stderr()
                            .yellow()
                    }
                    Status::TimedOut => style(format!("✘ {project:<w$} {took:>7}  {} timed out", operation.as_str()))
                        .red()
                        .bold(),
                    Status::Unchanged(_) if !self.debug => {
                        self.overall.inc(1);
                        return;
                    }
                    other => style(format!(
                        "• {project:<w$} {:>7}  {}: {}",
                        "",
                        super::status::outcome_word(other.outcome()),
                        super::reason::of(other).unwrap_or_default()
                    ))
                    .dim(),
                };
                let _ = self.multi.println(line.to_string());
                self.overall.inc(1);
            }
        }
    }

    /// The run is a drift check: each preview is told as what it found.
    pub(crate) fn drift(mut self, drift: bool) -> Self {
        self.drift = drift;
        if drift {
            self.overall
                .set_message(format!("drift · provider {}", self.plan.provider.name));
        }
        self
    }

    /// Clears the bars; the closing table is printed after.
    pub(crate) fn finish(&self) {
        for bar in self.running.values() {
            bar.finish_and_clear();
        }
        self.overall.finish_and_clear();
        self.waiting.finish_and_clear();
        let _ = self.multi.clear();
    }
}

/// What is left, for an ETA: `12s`, `3m 05s`, `any moment`.
fn left(d: Duration) -> String {
    match d.as_secs() {
        0 => "any moment".into(),
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// Pulumi's closing lines (`Duration: 1s`, `Resources:`) say how it ended, not what it does:
/// beside the spinner's own time they read as a second clock.
fn closing(line: &str) -> bool {
    ["Duration:", "Resources:", "Outputs:"]
        .iter()
        .any(|p| line.starts_with(p))
}
