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

use console::{StyledObject, style};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::exec::{Event, Finished, Status};
use crate::plan::{Operation, Plan, RunKind};
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
    /// What the run is: in a drift check previews are told as drift (`drifted`, `no drift`).
    kind: RunKind,
    /// The width drawn into; `None`: standard error's terminal, asked at each draw (it may be
    /// resized), whose spinners and clocks move on their own (a test's draws each frame).
    columns: Option<usize>,
    /// Room for a running project's last output line, as of the last replan (asking the
    /// terminal's size at every line of output would be an ioctl per line).
    line_room: usize,
}

/// A running line's columns before its last output line, but the name's: the spinner, the
/// clock (7), the longest ETA (` ETA any moment`) and the spaces between them.
const RUNNING_LINE: usize = 1 + 1 + 1 + 7 + 15 + 2;

impl<'p> Live<'p> {
    pub(crate) fn new(plan: &'p Plan<'p>, debug: bool, estimates: BTreeMap<String, f64>, parallel: usize) -> Self {
        Self::drawn_on(
            ProgressDrawTarget::stderr_with_hz(10),
            None,
            plan,
            debug,
            estimates,
            parallel,
        )
    }

    /// `columns`: `None` for standard error's terminal, whose spinners and clocks move on their
    /// own; a width for a test's terminal, which draws each frame itself.
    fn drawn_on(
        target: ProgressDrawTarget,
        columns: Option<usize>,
        plan: &'p Plan<'p>,
        debug: bool,
        estimates: BTreeMap<String, f64>,
        parallel: usize,
    ) -> Self {
        let multi = MultiProgress::with_draw_target(target);
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
        if columns.is_none() {
            overall.enable_steady_tick(Duration::from_millis(200));
        }
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
            // How long it has run, in the units of its ETA and of the finished lines.
            spinner: ProgressStyle::with_template(&format!(
                "{{spinner:.cyan}} {{prefix:<{width}.bold}} {{ran:>7}}{{left}}  {{wide_msg:.dim}}"
            ))
            .expect("a valid template")
            .with_key("ran", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}", crate::duration::clock(state.elapsed()));
            }),
            width,
            debug,
            estimates,
            parallel,
            eta,
            kind: RunKind::of(plan.operation, false),
            columns,
            line_room: 0,
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
        // The bar's room: the terminal's width less its two spaces of indent.
        let columns = self.columns();
        self.line_room = columns.saturating_sub(RUNNING_LINE + self.width);
        let room = columns.saturating_sub(2);
        self.waiting.set_message(waiting_line(
            plan,
            (&self.done, &self.started),
            self.running.len() >= self.parallel,
            room,
        ));
    }

    /// The width drawn into, now.
    fn columns(&self) -> usize {
        self.columns
            .unwrap_or_else(|| usize::from(console::Term::stderr().size().1))
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
                if self.columns.is_none() {
                    bar.enable_steady_tick(Duration::from_millis(120));
                }
                self.running.insert(project.clone(), bar);
                self.started.insert(project.clone(), *at);
                self.replan();
            }
            Event::Line { project, text, .. } => {
                if let Some(bar) = self.running.get(project) {
                    let t = text.trim();
                    if !t.is_empty() && !closing(t) && !crate::pulumi::messages::sdk_log(t) {
                        // Cut here, with an ellipsis: the bar's own cut says nothing was cut.
                        bar.set_message(crate::render::fit(t, Some(self.line_room)).into_owned());
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
                if let Some(line) = finished_line(
                    project,
                    *operation,
                    result,
                    &took,
                    self.width,
                    (self.kind.is_drift(), self.debug),
                ) {
                    let _ = self.multi.println(line.to_string());
                }
                self.overall.inc(1);
            }
        }
    }

    /// What the run is: in a drift check each preview is told as what it found.
    pub(crate) fn kind(mut self, kind: RunKind) -> Self {
        self.kind = kind;
        if kind.is_drift() {
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

/// The line of the projects not started yet, each with what it still waits for (a preview
/// waits for no project; when every slot of `--parallel` is taken, one that waits for no
/// project waits for a free slot), as many whole as `room` characters hold, then how many more.
fn waiting_line(
    plan: &Plan<'_>,
    (done, started): (&HashSet<String>, &HashMap<String, SystemTime>),
    full: bool,
    room: usize,
) -> String {
    let waiting: Vec<String> = plan
        .order
        .iter()
        .filter(|&&i| !done.contains(plan.name(i)) && !started.contains_key(plan.name(i)))
        .map(|&i| {
            let on: Vec<&str> = if plan.operation == Operation::Preview {
                Vec::new()
            } else {
                plan.waits_for(i)
                    .iter()
                    .map(|n| plan.name(n.node))
                    .filter(|n| !done.contains(*n))
                    .collect()
            };
            if on.is_empty() && full {
                format!("{} waits for a free slot", plan.name(i))
            } else if on.is_empty() {
                plan.name(i).to_string()
            } else {
                format!("{} waits for {}", plan.name(i), on.join(", "))
            }
        })
        .collect();
    if waiting.is_empty() {
        String::new()
    } else {
        whole_items("waiting: ", &waiting, room)
    }
}

/// `prefix` and `items` joined by ` · `, in at most `room` characters: an item that does not fit
/// is left out whole, never cut mid-word, and the line ends with how many were (`· … 3 more`).
fn whole_items(prefix: &str, items: &[String], room: usize) -> String {
    let width = |s: &str| s.chars().count();
    let all = format!("{prefix}{}", items.join(" · "));
    if width(&all) <= room {
        return all;
    }
    let mut line = prefix.to_string();
    for (k, item) in items.iter().enumerate() {
        let sep = if k == 0 { "" } else { " · " };
        // This item fits only if the count of those after it still fits behind it.
        let after = items.len() - k - 1;
        let tail = if after == 0 {
            String::new()
        } else {
            format!(" · … {after} more")
        };
        if width(&line) + width(sep) + width(item) + width(&tail) > room {
            line.push_str(sep);
            let _ = std::fmt::Write::write_fmt(&mut line, format_args!("… {} more", items.len() - k));
            return line;
        }
        line.push_str(sep);
        line.push_str(item);
    }
    line
}

/// The line a finished project leaves above the bars, `took` its duration; `None` for an
/// unchanged project unless `-d` (`debug`).
fn finished_line(
    project: &str,
    operation: Operation,
    result: &Finished,
    took: &str,
    w: usize,
    (drift, debug): (bool, bool),
) -> Option<StyledObject<String>> {
    let op = operation.as_str();
    Some(match &result.status {
        Status::Succeeded if drift && crate::exec::would_change(&result.changes) => style(format!(
            "≠ {project:<w$} {took:>7}  drifted: {}",
            super::marks::spelled(&result.changes)
        ))
        .yellow()
        .bold(),
        Status::Succeeded if drift => style(format!("✔ {project:<w$} {took:>7}  no drift")).green(),
        Status::Succeeded => style(format!("✔ {project:<w$} {took:>7}  {op} succeeded")).green(),
        Status::Failed => style(format!("✘ {project:<w$} {took:>7}  {op} failed")).red().bold(),
        Status::Interrupted => style(format!("⏹ {project:<w$} {took:>7}  {op} interrupted"))
            .for_stderr()
            .yellow(),
        Status::TimedOut => style(format!("✘ {project:<w$} {took:>7}  {op} timed out")).red().bold(),
        Status::Unchanged(_) if !debug => return None,
        other => style(format!(
            "• {project:<w$} {:>7}  {}: {}",
            "",
            super::status::outcome_word(other.outcome()),
            super::reason::of(other).unwrap_or_default()
        ))
        .dim(),
    })
}

/// What is left, for an ETA: `12s`, `3m 05s`, `any moment`.
fn left(d: Duration) -> String {
    if d.as_secs() == 0 {
        "any moment".into()
    } else {
        crate::duration::clock(d)
    }
}

/// Pulumi's closing lines (`Duration: 1s`, `Resources:`) say how it ended, not what it does:
/// beside the spinner's own time they read as a second clock.
fn closing(line: &str) -> bool {
    ["Duration:", "Resources:", "Outputs:"]
        .iter()
        .any(|p| line.starts_with(p))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap, HashSet};
    use std::time::{Duration, SystemTime};

    use indicatif::{InMemoryTerm, ProgressDrawTarget};

    use super::{Live, finished_line, left, waiting_line, whole_items};
    use crate::exec::{Because, Event, Finished, Outcome, Status};
    use crate::plan::{Operation, Plan};
    use crate::provider::for_tests;

    #[test]
    fn the_waiting_line_holds_whole_items_and_says_how_many_more() {
        let items: Vec<String> = ["app waits for network", "secrets waits for kubeconfig", "smoke"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        assert_eq!(
            whole_items("waiting: ", &items, 200),
            "waiting: app waits for network · secrets waits for kubeconfig · smoke"
        );
        let cut = whole_items("waiting: ", &items, 50);
        assert_eq!(cut, "waiting: app waits for network · … 2 more");
        assert!(cut.chars().count() <= 50);
        assert_eq!(whole_items("waiting: ", &items, 20), "waiting: … 3 more");
    }

    fn graph() -> crate::provider::Provider {
        for_tests([
            ("vpc".to_string(), vec![]),
            ("eks".to_string(), vec!["vpc".to_string()]),
            ("ingress-controller".to_string(), vec!["eks".to_string()]),
            ("logstore".to_string(), vec!["eks".to_string()]),
        ])
    }

    #[test]
    fn a_project_that_waits_for_no_project_waits_for_a_free_slot_when_every_slot_is_taken() {
        let provider = graph();
        let plan = Plan::new(&provider, Operation::Up, &[]).unwrap();
        let done: HashSet<String> = ["vpc", "eks"].iter().map(|s| (*s).to_string()).collect();
        let started = HashMap::new();
        assert_eq!(
            waiting_line(&plan, (&done, &started), true, 200),
            "waiting: ingress-controller waits for a free slot · logstore waits for a free slot"
        );
        assert_eq!(
            waiting_line(&plan, (&done, &started), false, 200),
            "waiting: ingress-controller · logstore"
        );
    }

    fn ended(status: Status, took: u64) -> Finished {
        let mut f = Finished::settled(status, None);
        f.started = f.ended.checked_sub(Duration::from_secs(took));
        f
    }

    /// The screen as a person sees it, the ETA of the whole run left out (` · ETA 3m 05s ·` →
    /// ` · ETA [left] ·`: it is counted from the clock; `left` is tested on its own). Each
    /// project's clock is set before its frame; the estimates end in .9 s, so a frame drawn
    /// late by less than that shows the same.
    fn screen(term: &InMemoryTerm) -> String {
        term.contents()
            .lines()
            .map(|l| match (l.find("projects · "), l.find(" · ETA ")) {
                (Some(_), Some(at)) => {
                    let rest = &l[at + 7..];
                    let end = rest.find(" · ").unwrap_or(rest.len());
                    format!("{} · ETA [left]{}", &l[..at], &rest[end..])
                }
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_live_view_draws_running_projects_what_waits_and_what_finished() {
        let provider = graph();
        let plan = Plan::new(&provider, Operation::Up, &[]).unwrap();
        let term = InMemoryTerm::new(12, 100);
        let estimates = BTreeMap::from([
            ("vpc".to_string(), 90.9),
            ("eks".to_string(), 600.9),
            ("ingress-controller".to_string(), 120.9),
            ("logstore".to_string(), 60.9),
        ]);
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(term.clone()), 100);
        let mut live = Live::drawn_on(target, Some(100), &plan, false, estimates, 8);
        let mut frames = Vec::new();
        let mut frame = |live: &Live<'_>, run: u64, elapsed: &[(&str, u64)]| {
            live.overall.set_elapsed(Duration::from_secs(run));
            for (project, secs) in elapsed {
                live.running[*project].set_elapsed(Duration::from_secs(*secs));
                live.running[*project].tick();
            }
            live.overall.tick();
            frames.push(screen(&term));
        };
        frame(&live, 0, &[]);

        let now = SystemTime::now();
        live.event(&Event::Started {
            project: "vpc".into(),
            operation: Operation::Up,
            at: now - Duration::from_secs(75),
        });
        live.event(&Event::Line {
            project: "vpc".into(),
            stream: crate::exec::Stream::Stdout,
            text: "  +  aws:ec2:Vpc main creating (12s)".into(),
        });
        frame(&live, 12, &[("vpc", 12)]);

        live.event(&Event::Finished {
            project: "vpc".into(),
            operation: Operation::Up,
            result: Box::new(ended(Status::Succeeded, 75)),
        });
        live.event(&Event::Started {
            project: "eks".into(),
            operation: Operation::Up,
            at: now,
        });
        live.event(&Event::Line {
            project: "eks".into(),
            stream: crate::exec::Stream::Stdout,
            text: "Resources:".into(),
        });
        // Too long for the line: cut with an ellipsis, not silently.
        live.event(&Event::Line {
            project: "eks".into(),
            stream: crate::exec::Stream::Stdout,
            text: "  ~  kubernetes:helm.sh/v3:Release ingress-controller updating (200s) [diff: ~values,version]"
                .into(),
        });
        frame(&live, 275, &[("eks", 200)]);
        live.finish();
        insta::assert_snapshot!(frames.join("\n────────\n"));
    }

    #[test]
    fn a_finished_project_leaves_one_line_that_says_how_it_ended() {
        let took = "1m 15s";
        let cases = [
            (Status::Succeeded, (false, false)),
            (Status::Failed, (false, false)),
            (Status::Interrupted, (false, false)),
            (Status::TimedOut, (false, false)),
            (
                Status::Skipped(Because::Upstream {
                    name: "vpc".into(),
                    outcome: Outcome::Failed,
                }),
                (false, false),
            ),
            (
                Status::NotStarted(Because::StoppedAfter { failed: "vpc".into() }),
                (false, false),
            ),
            (Status::Unchanged(Because::NothingChanged), (false, false)),
            (Status::Unchanged(Because::NothingChanged), (false, true)),
            (Status::Succeeded, (true, false)),
        ];
        let mut lines: Vec<String> = cases
            .into_iter()
            .map(|(status, flags)| {
                let result = ended(status, 75);
                finished_line("eks", Operation::Up, &result, took, 18, flags)
                    .map_or("(no line)".to_string(), |l| l.force_styling(false).to_string())
            })
            .collect();
        let mut drifted = ended(Status::Succeeded, 75);
        drifted.changes = BTreeMap::from([("update".to_string(), 2), ("same".to_string(), 9)]);
        lines.push(
            finished_line("eks", Operation::Preview, &drifted, took, 18, (true, false))
                .map(|l| l.force_styling(false).to_string())
                .unwrap(),
        );
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn what_is_left_reads_in_the_largest_units_that_matter() {
        let secs = |s| left(Duration::from_secs(s));
        assert_eq!(
            [secs(0), secs(9), secs(185), secs(3 * 3600 + 125)],
            ["any moment".to_string(), "9s".into(), "3m 05s".into(), "3h 02m".into()]
        );
    }
}
