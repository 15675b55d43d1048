//! `status`: every project of the graph with its last operation, its result, when it ended, how
//! long it took, the resources its stack holds, and what an `up` would do with it and why. It
//! reads only what runs leave under `.runner/` (the run state, the durations, the digests): no
//! lock and no `pulumi`, so it answers at once, even while a run is going.

use std::fmt::Write as _;

use serde::Serialize;

use super::write_result;
use crate::error::{RunnerError, exit};
use crate::exec::Outcome;
use crate::plan::{Operation, Plan};
use crate::render::fit;
use crate::report;
use crate::report::status::{self, Found, Told, recorded_word};
use crate::runstate::{History, Pending, Recorded, RunState};
use crate::settings::{Settings, StackContext};

/// How `status` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusFormat {
    /// A table for people.
    Text,
    /// JSON (schema: `schemas/status.schema.json`).
    Json,
    /// The last run's timeline as a Mermaid `gantt` chart.
    Gantt,
    /// The last run's timeline as SVG.
    GanttSvg,
}

pub(crate) const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Status<'a> {
    schema_version: u32,
    provider: &'a str,
    stack: &'a str,
    /// A run is going: some project's last operation has not ended.
    running: bool,
    projects: Vec<Row<'a>>,
    /// What an `up` would run, in run order.
    up_would_run: Vec<&'a str>,
}

#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    layer: &'a str,
    /// The stack holds a deployment the runner made (an `up` succeeded, no destroy since).
    deployed: bool,
    /// The last operation on it, `null` when the runner never ran it with this stack.
    last: Option<Last<'a>>,
    /// Its last drift check since that operation, `null` when none.
    drift: Option<Drift<'a>>,
    /// Resources in its stack after its last successful operation, when known.
    resources: Option<u64>,
    /// What its `up` takes, in seconds: learned from past runs, else declared.
    estimate_s: Option<f64>,
    up: Up,
}

#[derive(Serialize)]
struct Last<'a> {
    operation: Operation,
    /// `running`, `cut short`, `succeeded`, `failed`, `timed out`, `skipped`, `unchanged`,
    /// `not started`, `waits`.
    status: Recorded,
    started: Option<&'a str>,
    ended: Option<&'a str>,
    duration_seconds: Option<f64>,
}

#[derive(Serialize)]
struct Drift<'a> {
    /// `drifted`, `no drift`, or how the check ended otherwise (`failed`, `running`…).
    status: Checked,
    ended: Option<&'a str>,
}

/// How a drift check of a project is told: what it found, or how it ended otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
enum Checked {
    Found(Found),
    Ended(Recorded),
}

#[derive(Serialize)]
struct Up {
    runs: bool,
    why: String,
}

pub(crate) fn run(s: &Settings, t: &StackContext, format: StatusFormat) -> Result<i32, RunnerError> {
    if matches!(format, StatusFormat::Gantt | StatusFormat::GanttSvg) {
        write_result(&super::last_run::timeline(s, t, format == StatusFormat::GanttSvg)?)?;
        return Ok(exit::SUCCESS);
    }
    // What an `up` would run depends on the stack file: one that cannot be read is said, with
    // its file and line, as `up` says it, never taken for a change of every input.
    let config_file = crate::config::stackfile::path(&s.ws.root, &t.stack);
    let file = crate::config::stackfile::StackFile::load(&config_file, &s.ws.show(&config_file))
        .map_err(|d| RunnerError::in_configuration(vec![*d]))?;
    let unreadable = file.key_problems();
    if !unreadable.is_empty() {
        return Err(RunnerError::Problems(unreadable));
    }
    let plan = Plan::new(&t.provider, Operation::Up, &[]).expect("the whole graph has no unknown target");
    let (state, notes) = RunState::current(&t.run_dir, &t.provider, &|p| s.ws.show(p))
        .map_err(|m| super::operation::state_error(s, t, m))?;
    for note in &notes {
        report::warning(note);
    }
    // A run the journal says is going, whose runner ended (killed): cut short.
    let mut state = state;
    if crate::workspace::going(&t.run_dir) == crate::workspace::Going::No {
        state.cut_short();
    }
    let history = History::load(&t.run_dir, &|p| s.ws.show(p)).map_err(|m| super::operation::state_error(s, t, m))?;
    let digests = super::operation::digests_now(s, t);
    let pending = state.pending(&plan, digests.as_ref());
    let projects: Vec<Row<'_>> = plan
        .order
        .iter()
        .zip(&pending)
        .map(|(&i, (_, p))| row(&plan, i, &state, &history, p))
        .collect();
    let doc = Status {
        schema_version: SCHEMA_VERSION,
        provider: &t.provider.name,
        stack: &t.stack,
        running: projects.iter().any(|r| {
            r.last.as_ref().is_some_and(|l| l.status == Recorded::Running)
                || r.drift
                    .as_ref()
                    .is_some_and(|d| d.status == Checked::Ended(Recorded::Running))
        }),
        up_would_run: projects.iter().filter(|r| r.up.runs).map(|r| r.name).collect(),
        projects,
    };
    let text = match format {
        StatusFormat::Json => serde_json::to_string_pretty(&doc).expect("status serializes") + "\n",
        StatusFormat::Text => table(&doc, &s.ws.show(&t.run_dir.state()), terminal_columns()),
        StatusFormat::Gantt | StatusFormat::GanttSvg => unreachable!("answered above"),
    };
    write_result(&text)?;
    Ok(exit::SUCCESS)
}

fn row<'a>(plan: &Plan<'a>, i: usize, state: &'a RunState, history: &History, pending: &Pending) -> Row<'a> {
    let name = plan.name(i);
    let p = state.projects.get(name);
    #[allow(clippy::cast_precision_loss)]
    let declared = plan.project(i).estimate.map(|e| e as f64);
    Row {
        name,
        layer: plan.project(i).layer.as_str(),
        deployed: p.is_some_and(|p| p.deployed),
        last: p.map(|p| Last {
            operation: p.operation,
            status: p.status,
            started: p.started.as_deref(),
            ended: p.ended.as_deref(),
            duration_seconds: p
                .started
                .as_deref()
                .zip(p.ended.as_deref())
                .and_then(|(a, b)| Some((seconds_of(b)? - seconds_of(a)?).max(0.0)))
                .map(|d| (d * 1000.0).round() / 1000.0),
        }),
        drift: p.and_then(|p| p.checked.as_ref()).map(|c| Drift {
            status: match c.status {
                Recorded::Ended(Outcome::Succeeded) if c.changed => Checked::Found(Found::Drifted),
                Recorded::Ended(Outcome::Succeeded) => Checked::Found(Found::NoDrift),
                other => Checked::Ended(other),
            },
            ended: c.ended.as_deref(),
        }),
        resources: history.resources(name),
        estimate_s: history.estimate(name, Operation::Up).or(declared),
        up: Up {
            runs: pending.runs,
            why: report::reason::pending(&pending.why),
        },
    }
}

/// Seconds since the epoch of a timestamp the runner wrote (`2026-11-22T14:06:03.881Z`).
fn seconds_of(text: &str) -> Option<f64> {
    let since = crate::runstate::time_of(text)?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(since.as_secs_f64())
}

/// The table for people, and what an `up` would run.
/// The width of the terminal standard output is, when it is one (a pipe or a file gets whole
/// lines).
fn terminal_columns() -> Option<usize> {
    let term = console::Term::stdout();
    if !term.is_term() {
        return None;
    }
    term.size_checked()
        .map(|(_, cols)| usize::from(cols))
        .filter(|&c| c >= 40)
}

/// The project column's width: the longest name, unless that leaves the `up would` column, the
/// one that says why, less than [`WHY_COLUMN`] characters of the terminal; then long names are cut
/// (to no less than 16: `--format json` has them whole).
fn name_width(longest: usize, checked: bool, columns: Option<usize>) -> usize {
    // Everything but the name and the reason: the other columns and their separators.
    let others = 2 + 2 + 8 + 2 + 11 + 2 + 20 + 2 + 7 + 2 + 9 + if checked { 22 } else { 0 } + 2;
    match columns {
        Some(c) => c.saturating_sub(others + WHY_COLUMN).clamp(longest.min(16), longest),
        None => longest,
    }
}

/// What the `up would` column keeps of a narrow terminal.
const WHY_COLUMN: usize = 24;

fn table(doc: &Status<'_>, state_file: &str, columns: Option<usize>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Status: provider {} · stack {}{} (from {state_file})",
        doc.provider,
        doc.stack,
        if doc.running { " · a run is going" } else { "" }
    );
    // The drift column only when a check was made: most stacks never had one.
    let checked = doc.projects.iter().any(|r| r.drift.is_some());
    let longest = doc
        .projects
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let width = name_width(longest, checked, columns);
    let drift_head = if checked {
        format!("  {:<20}", "drift check")
    } else {
        String::new()
    };
    let head = format!(
        "  {:<width$}  {:<8}  {:<11}  {:<20}  {:>7}  {:>9}{drift_head}  up would",
        "project", "last op", "result", "ended (UTC)", "took", "resources"
    );
    let _ = writeln!(out, "{}", fit(&head, columns));
    let mut cut = false;
    for r in &doc.projects {
        let (op, status, ended, took) = match &r.last {
            Some(l) => (
                l.operation.as_str(),
                recorded_word(l.status),
                l.ended.map(shown_time).unwrap_or_default(),
                l.duration_seconds
                    .map(crate::report::plain::duration)
                    .unwrap_or_default(),
            ),
            None => ("-", "never run", String::new(), String::new()),
        };
        let resources = r.resources.map_or_else(|| "-".to_string(), |n| n.to_string());
        let up = if r.up.runs {
            format!("run: {}", r.up.why)
        } else {
            // The line under the table says since when: the column stays narrow enough for 100.
            format!("skip: {}", r.up.why.trim_end_matches(" since its last up"))
        };
        let drift = match (&r.drift, checked) {
            (_, false) => String::new(),
            (None, true) => format!("  {:<20}", "-"),
            // The time of day is enough beside the full date of the last operation.
            (Some(d), true) => {
                let at = d.ended.map(shown_time).and_then(|t| t.get(11..16).map(str::to_string));
                format!(
                    "  {:<20}",
                    [Some(checked_word(d.status).to_string()), at]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
        };
        let line = format!(
            "  {:<width$}  {op:<8}  {status:<11}  {ended:<20}  {took:>7}  {resources:>9}{drift}  {up}",
            fit(r.name, Some(width))
        );
        let shown = fit(&line, columns);
        cut |= shown.len() != line.len() || r.name.chars().count() > width;
        let _ = writeln!(out, "{shown}");
    }
    if cut {
        let _ = writeln!(
            out,
            "  (rows cut to the terminal's width: `runner status --format json` has them whole)"
        );
    }
    let total = doc.projects.len();
    if doc.up_would_run.is_empty() {
        let _ = writeln!(
            out,
            "\nAn up would run nothing: every project is unchanged since its last up."
        );
    } else {
        let _ = writeln!(
            out,
            "\nAn up would run {} of {}: {}",
            doc.up_would_run.len(),
            crate::render::count(total, "project"),
            doc.up_would_run.join(", ")
        );
    }
    out
}

/// A drift check's status in words.
fn checked_word(checked: Checked) -> &'static str {
    match checked {
        Checked::Found(found) => status::word(Told::Found(found)),
        Checked::Ended(recorded) => recorded_word(recorded),
    }
}

/// `2026-11-22 14:06:03` from `2026-11-22T14:06:03.881Z`.
fn shown_time(t: &str) -> String {
    t.get(..19).unwrap_or(t).replace('T', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_leave_the_reason_room_at_a_narrow_terminal() {
        // 69 columns are the others': at 100, a name of 24 is cut to 16, leaving 15 to the reason.
        assert_eq!(name_width(24, false, Some(100)), 16);
        assert_eq!(name_width(24, false, Some(120)), 24);
        assert_eq!(name_width(30, false, Some(110)), 17);
        assert_eq!(name_width(10, false, Some(100)), 10);
        assert_eq!(name_width(40, true, Some(200)), 40);
        assert_eq!(name_width(40, false, None), 40);
    }

    #[test]
    fn timestamps_read_back_to_the_seconds_they_were_written_from() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_787_339_880_123);
        let written = crate::runstate::timestamp(t);
        assert!((seconds_of(&written).unwrap() - 1_787_339_880.123).abs() < 1e-6);
        assert_eq!(seconds_of("2000-03-01T00:00:00.000Z"), Some(951_868_800.0));
        assert_eq!(seconds_of("yesterday"), None);
        assert_eq!(shown_time(&written), "2026-08-21 19:18:00");
    }
}
