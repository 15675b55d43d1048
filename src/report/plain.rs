//! The plain view (CI, no terminal, `--output plain`): every line of every project's output
//! prefixed with `[project]` on standard output, the runner's own lines (starts, ends,
//! warnings, the closing table) on standard error, no escape codes unless colour is on. In a CI
//! that folds output (`super::ci`), each project's lines are kept until it ends and printed as
//! one group, and a failure is annotated.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::time::SystemTime;

use console::style;

use super::Banner;
use super::ci::{self, CiSystem};
pub(crate) use super::duration;
use super::marks::{changes, marks_legend, spelled};
use super::status::{Told, outcome_word};
use crate::exec::{Because, Event, RunResult, Status, Stream, would_change};
use crate::plan::{Operation, Plan, RunKind};

pub(crate) struct Plain {
    banner: Banner,
    /// `-d`: every project's line, unchanged ones too, with its reason.
    debug: bool,
    started: HashMap<String, SystemTime>,
    descriptions: HashMap<String, String>,
    width: usize,
    /// The terminal's width, when standard error is one (rows that would not fit are made to).
    columns: Option<usize>,
    /// The CI whose groups each project's output goes in.
    ci: Option<CiSystem>,
    /// Each running project's lines, until it ends (in a CI that groups them).
    kept: HashMap<String, Vec<String>>,
    /// How to go on after an interrupt (the same command, or without `--fresh`).
    resume: &'static str,
    /// After a failure: what to run again (the same command, or without `--fresh`).
    fix_then: &'static str,
    /// What the run is: in a drift check the previews are told as drift (`drifted`, `no drift`).
    kind: RunKind,
    /// Each project's directory as the CI names files (relative to its checkout), for
    /// annotations placed at a line of a program.
    dirs: HashMap<String, String>,
}

impl Plain {
    pub(crate) fn new(plan: &Plan<'_>, banner: Banner, debug: bool) -> Self {
        let descriptions = plan
            .order
            .iter()
            .map(|&i| {
                let p = plan.project(i);
                (p.name.clone(), p.description.clone().unwrap_or_else(|| p.name.clone()))
            })
            .collect();
        Plain {
            banner,
            debug,
            started: HashMap::new(),
            descriptions,
            width: plan.order.iter().map(|&i| plan.name(i).len()).max().unwrap_or(0),
            columns: console::Term::stderr()
                .size_checked()
                .map(|(_, columns)| usize::from(columns)),
            ci: None,
            kept: HashMap::new(),
            resume: "Run the same command again to resume.",
            fix_then: "Fix the cause and run the same command again: what succeeded is not redone.",
            kind: RunKind::of(plan.operation, false),
            dirs: HashMap::new(),
        }
    }

    /// The file (as the CI names it) and line a failure of `project` is at, when known.
    fn at(&self, project: &str, error: Option<&crate::exec::Failure>) -> Option<(String, u32)> {
        let at = error?.at.as_ref()?;
        let file = match self.dirs.get(project).map(String::as_str) {
            None | Some("") => at.file.clone(),
            Some(dir) => format!("{dir}/{}", at.file),
        };
        Some((file, at.line))
    }

    /// Where each project's files are, as the CI names them (relative to its checkout).
    pub(crate) fn sources(mut self, dirs: HashMap<String, String>) -> Self {
        self.dirs = dirs;
        self
    }

    /// What the run is: in a drift check (`runner drift`) each preview is told as what it found.
    pub(crate) fn kind(mut self, kind: RunKind) -> Self {
        self.kind = kind;
        self
    }

    /// The run was `up --fresh`: the same command would run everything again, so the advice
    /// after an interrupt is to leave `--fresh` out.
    pub(crate) fn fresh(mut self, fresh: bool) -> Self {
        if fresh {
            self.resume = "Run it again without --fresh to resume: what succeeded is not redone.";
            self.fix_then = "Fix the cause and run it again without --fresh: what succeeded is not redone.";
        }
        self
    }

    /// Each project's output in one group of `ci`'s, printed when the project ends (in a CI
    /// that folds output).
    pub(crate) fn grouped(mut self, ci: Option<CiSystem>) -> Self {
        self.ci = ci.filter(|c| c.groups());
        self
    }

    /// The operation as the user named it: a drift check runs previews.
    fn word(&self, operation: Operation) -> &'static str {
        if self.kind.is_drift() {
            "drift check"
        } else {
            operation.as_str()
        }
    }

    pub(crate) fn event(&mut self, ev: &Event) {
        match ev {
            Event::Started { project, operation, at } => {
                let operation = self.word(*operation);
                self.started.insert(project.clone(), *at);
                let description = self.descriptions.get(project).cloned().unwrap_or_default();
                let line = match self.banner {
                    Banner::Boring => format!("* {description}"),
                    Banner::Log => format!("[{description}] started"),
                    Banner::Fabulous => format!("▶ [{project}] {operation} started ({description})"),
                };
                say!("{}", style(line).for_stderr().bold());
            }
            // In its group, a line needs no `[project]`: the group's title names it.
            Event::Line { project, text, .. } if self.ci.is_some() => {
                self.kept.entry(project.clone()).or_default().push(text.clone());
            }
            Event::Line { project, stream, text } => {
                let prefix = style(format!("[{project}]")).for_stdout().cyan();
                let mut out = std::io::stdout().lock();
                let _ = match stream {
                    Stream::Stdout | Stream::Stderr => writeln!(out, "{prefix} {text}"),
                };
            }
            Event::Note { .. } => {
                if let Some(line) = super::note_shown(ev, self.debug) {
                    if self.ci == Some(CiSystem::GitHub) {
                        say!("{}", super::text::inert_on_github(&line));
                    } else {
                        say!("{line}");
                    }
                }
            }
            Event::Runs { project, why } => {
                if self.debug {
                    say!("{}", super::runs_line(project, why));
                }
            }
            Event::Stopping { .. } | Event::StillRunning { .. } | Event::TimedOut { .. } => {
                say!("{}", super::stopping_line(ev).unwrap_or_default());
            }
            Event::Finished {
                project,
                operation,
                result,
            } => self.finished(project, *operation, result),
        }
    }

    /// A project's end: its group and annotation in a CI that folds output, and its line.
    fn finished(&mut self, project: &str, operation: Operation, result: &crate::exec::Finished) {
        let operation = self.word(operation);
        let took = self
            .started
            .get(project)
            .and_then(|s| result.ended.duration_since(*s).ok())
            .map(|d| format!(" in {}", duration(d.as_secs_f64())))
            .unwrap_or_default();
        if let Some(ci) = self.ci {
            let lines = self.kept.remove(project).unwrap_or_default();
            let title = format!("{project}: {operation} {}{took}", outcome_word(result.status.outcome()));
            if !lines.is_empty() {
                let span = (self.started.get(project).copied(), result.ended);
                ci::print(&ci.group(project, &title, &lines, span));
            }
            if result.status.is_failure()
                && let Some(a) = ci.annotation(
                    "error",
                    &format!("{project}: {operation} {}", outcome_word(result.status.outcome())),
                    &super::failure::text_or(result.error.as_ref(), "failed"),
                    self.at(project, result.error.as_ref())
                        .as_ref()
                        .map(|(f, l)| (f.as_str(), *l)),
                )
            {
                ci::print(&a);
            }
        }
        // Projects that had nothing to do are counted in the closing table instead; one whose
        // start was said (a destroy that found no deployment) gets its end said too.
        if matches!(result.status, Status::Unchanged(_)) && !self.debug && !self.started.contains_key(project) {
            return;
        }
        let line = match &result.status {
            Status::Succeeded if self.kind.is_drift() && would_change(&result.changes) => {
                format!("≠ [{project}] drifted: {}{took}", spelled(&result.changes))
            }
            Status::Succeeded if self.kind.is_drift() => format!("✔ [{project}] no drift{took}"),
            Status::Succeeded => format!("✔ [{project}] {operation} succeeded{took}"),
            Status::Failed => format!("✘ [{project}] {operation} failed{took}"),
            Status::TimedOut => format!("✘ [{project}] {operation} timed out{took}"),
            Status::Interrupted => format!("⏹ [{project}] {operation} interrupted{took}"),
            other => format!(
                "• [{project}] {}: {}",
                outcome_word(other.outcome()),
                super::reason::of(other).unwrap_or_default()
            ),
        };
        let styled = match &result.status {
            Status::Succeeded if self.kind.is_drift() && would_change(&result.changes) => {
                style(line).for_stderr().yellow().bold()
            }
            Status::Succeeded => style(line).for_stderr().green(),
            Status::Failed | Status::TimedOut => style(line).for_stderr().red().bold(),
            Status::Interrupted => style(line).for_stderr().yellow(),
            _ => style(line).for_stderr().dim(),
        };
        say!("{styled}");
    }

    /// The closing table: every project's state, then what failed with its last lines.
    /// `log` gives a project's log file as the user should see it.
    pub(crate) fn finish(
        &self,
        plan: &Plan<'_>,
        result: &RunResult,
        total: f64,
        stack: &str,
        log: &dyn Fn(&str) -> String,
    ) {
        let mut err: Vec<u8> = Vec::new();
        self.closing(&mut err, plan, result, total, stack, log);
        let raw = String::from_utf8_lossy(&err);
        // Its hints and the failures' notes name commands as the person types them.
        let typed = super::as_typed(&raw);
        // In GitHub Actions, what the engine said (a failure's cause, a drifted value) must not
        // read as a workflow command.
        let text = if self.ci == Some(CiSystem::GitHub) {
            super::text::inert_on_github(&typed)
        } else {
            std::borrow::Cow::Borrowed(typed.as_ref())
        };
        let mut out = std::io::stderr().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn closing(
        &self,
        err: &mut Vec<u8>,
        plan: &Plan<'_>,
        result: &RunResult,
        total: f64,
        stack: &str,
        log: &dyn Fn(&str) -> String,
    ) {
        let _ = writeln!(
            err,
            "\n{} {} · provider {} · stack {stack}: {} in {}",
            style("Summary:").for_stderr().bold(),
            self.kind.word(),
            plan.provider.name,
            super::status::counts(result, self.kind),
            duration(total)
        );
        // Unchanged projects are one line per reason, unless `-d` asks for every row.
        // By their words, in the order of the words.
        let mut unchanged: BTreeMap<String, (&Because, Vec<&str>)> = BTreeMap::new();
        for (name, f) in &result.results {
            if let Status::Unchanged(because) = &f.status
                && !self.debug
            {
                unchanged
                    .entry(super::reason::because(because))
                    .or_insert((because, Vec::new()))
                    .1
                    .push(name);
                continue;
            }
            let took = f.took().map(|d| duration(d.as_secs_f64())).unwrap_or_default();
            let detail = match &f.status {
                // Its cause is said once, whole, under the table.
                Status::Failed | Status::TimedOut => "(below)".to_string(),
                Status::Interrupted => "cut short".to_string(),
                other => super::reason::of(other).unwrap_or_default(),
            };
            let word = super::status::word(Told::of(f, self.kind));
            let marks = changes(&f.changes);
            let mut line = format!(
                "  {name:<w$}  {word:<11}  {took:>8}  {marks:<16}  {detail}",
                w = self.width
            );
            // A row with no time and no changes (a skipped one) gives their columns to its
            // reason rather than let the terminal break it mid-word.
            if took.is_empty() && marks.is_empty() && self.columns.is_some_and(|c| line.chars().count() > c) {
                line = format!("  {name:<w$}  {word:<11}  {detail}", w = self.width);
            }
            let _ = writeln!(err, "{}", line.trim_end());
        }
        for (reason, (because, names)) in &unchanged {
            let again = match (plan.operation, names.len()) {
                (Operation::Up, 1) => "; `--fresh` to run it anyway",
                (Operation::Up, _) => "; `--fresh` to run them anyway",
                _ => "",
            };
            // The reason is worded for one project; for several, of each.
            let reason = if names.len() > 1 {
                super::reason::because_of_each(because)
            } else {
                reason.clone()
            };
            // In a drift check, a project with nothing deployed was not checked (the counts say so).
            let word = if self.kind.is_drift() {
                "not checked"
            } else {
                "unchanged"
            };
            let _ = writeln!(err, "  {} {word}: {reason}{again}", names.len());
        }
        if result.results.iter().any(|(_, f)| !f.changes.is_empty()) {
            let _ = writeln!(err, "  (resources: {})", marks_legend());
        }
        // A drift check's verdict is said after the table (`drift_verdict`), what drifted here.
        if self.kind == RunKind::Preview {
            preview_verdict(err, result);
        }
        // Input by input, from the same engine events: what drifted, or what a preview would do.
        if plan.operation == Operation::Preview {
            diffs(
                err,
                result,
                if self.kind.is_drift() { "Drifted:" } else { "In detail:" },
            );
        }
        for (name, f) in result.results.iter().filter(|(_, f)| f.status.is_failure()) {
            let _ = writeln!(
                err,
                "\n{} {name} ({}): {}\n  full output: {}",
                style("Failed:").for_stderr().red().bold(),
                self.kind.step_word(),
                super::failure::text_or(f.error.as_ref(), "failed"),
                log(name)
            );
        }
        if result.failed() && !result.interrupted {
            let _ = writeln!(err, "\n{}", self.fix_then);
            left_by_the_stop(err, result);
        }
        let cut = result.named(|s| *s == Status::Interrupted);
        if !cut.is_empty() {
            let _ = writeln!(
                err,
                "\n{} {} ({}): cut short before {} ended; {} again on the next run (logs: {})",
                style("Interrupted:").for_stderr().yellow().bold(),
                cut.join(", "),
                plan.operation.as_str(),
                if cut.len() == 1 { "it" } else { "they" },
                if cut.len() == 1 { "it runs" } else { "they run" },
                cut.iter().map(|n| log(n)).collect::<Vec<_>>().join(", ")
            );
        }
        if result.interrupted {
            let _ = writeln!(err, "\nInterrupted. {}", self.resume);
        }
    }
}

/// What the stop after a failure left undone, and the flag that would have done it.
fn left_by_the_stop(err: &mut impl std::io::Write, result: &RunResult) {
    let left = result.named(|s| matches!(s, Status::NotStarted(Because::StoppedAfter { .. })));
    if !left.is_empty() {
        let _ = writeln!(
            err,
            "Not started after the failure: {}; --keep-going finishes every branch that does not depend on it.",
            left.join(", ")
        );
    }
}

/// After a preview's table (a drift check's too): what differs in each project that would change,
/// resource by resource.
fn diffs(err: &mut impl std::io::Write, result: &RunResult, heading: &str) {
    for (name, f) in result.results.iter().filter(|(_, f)| !f.diffs.is_empty()) {
        let _ = writeln!(
            err,
            "\n{} {name} (deployed → declared):",
            style(heading).for_stderr().yellow().bold()
        );
        for line in super::drift::lines(&f.diffs, "  ") {
            let _ = writeln!(err, "{line}");
        }
    }
}

/// After a preview: which projects would change and how, or that none would.
fn preview_verdict(err: &mut impl std::io::Write, result: &RunResult) {
    let changing: Vec<String> = result
        .results
        .iter()
        .filter(|(_, f)| would_change(&f.changes))
        .map(|(name, f)| format!("{name}: {}", spelled(&f.changes)))
        .collect();
    if changing.is_empty() {
        let _ = writeln!(err, "\nNothing would change.");
    } else {
        let _ = writeln!(err, "\nWould change: {}", changing.join("; "));
    }
}

/// After a drift check: what differs from its program and configuration, or that nothing does.
/// A check that did not refresh compared the programs with the state Pulumi recorded: its "no
/// drift" names `refresh_again`, the check that reads the cloud too (a resource deleted by hand
/// is still in the state, so only that one sees it).
pub(crate) fn drift_verdict(result: &RunResult, refresh_again: Option<&str>) -> String {
    let checked: Vec<&(String, crate::exec::Finished)> = result
        .results
        .iter()
        .filter(|(_, f)| f.status == Status::Succeeded)
        .collect();
    let drifted: Vec<String> = checked
        .iter()
        .filter(|(_, f)| would_change(&f.changes))
        .map(|(name, f)| format!("{name} ({})", spelled(&f.changes)))
        .collect();
    let absent = result
        .results
        .iter()
        .filter(|(_, f)| matches!(f.status, Status::Unchanged(_)))
        .count();
    let absent = if absent == 0 {
        String::new()
    } else {
        format!(" ({absent} not deployed: not checked)")
    };
    if checked.is_empty() && !absent.is_empty() {
        return "Nothing to check: no project is deployed on this stack.".to_string();
    }
    if drifted.is_empty() {
        let unrefreshed = refresh_again
            .map(|again| {
                format!(
                    " This compared them with the state Pulumi recorded: `{again}` reads what is deployed first \
                     (the cloud, the cluster), to see changes made outside Pulumi (a resource deleted or edited by \
                     hand)."
                )
            })
            .unwrap_or_default();
        format!(
            "No drift: the {} checked {} their programs and configuration{absent}.{unrefreshed}",
            crate::render::count(checked.len(), "deployed project"),
            if checked.len() == 1 { "matches" } else { "match" }
        )
    } else {
        format!(
            "Drift: {} of {} {} from their programs and configuration{absent}: {}",
            drifted.len(),
            crate::render::count(checked.len(), "deployed project"),
            if drifted.len() == 1 { "differs" } else { "differ" },
            drifted.join(", ")
        )
    }
}

/// After a refresh: which stacks it found changed outside Pulumi (now in their state, so the
/// next `up` runs those projects again), or that none was. `None` when nothing was refreshed.
pub(crate) fn refresh_verdict(result: &RunResult) -> Option<String> {
    let refreshed = result
        .results
        .iter()
        .filter(|(_, f)| f.status == Status::Succeeded)
        .count();
    let changed: Vec<String> = result
        .results
        .iter()
        .filter(|(_, f)| f.status == Status::Succeeded && would_change(&f.changes))
        .map(|(name, f)| format!("{name} ({})", spelled(&f.changes)))
        .collect();
    if refreshed == 0 {
        None
    } else if changed.is_empty() {
        Some(if refreshed == 1 {
            "Nothing changed outside Pulumi: the refreshed stack matches its state.".to_string()
        } else {
            format!("Nothing changed outside Pulumi: the {refreshed} refreshed stacks match their state.")
        })
    } else {
        Some(format!(
            "Changed outside Pulumi, now in the state: {}. The next `up` runs these projects again and \
             sets what their programs say; to keep a change, make it in the program too.",
            changed.join(", ")
        ))
    }
}
