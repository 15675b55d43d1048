//! `status`: every project of the graph with its last operation, its result, when it ended, how
//! long it took, the resources its stack holds, and what an `up` would do with it and why. It
//! reads only what runs leave under `.runner/` (the run state, the durations, the digests): no
//! lock and no `pulumi`, so it answers at once, even while a run is going.

use std::collections::BTreeMap;
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct Status<'a> {
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::version"))]
    schema_version: u32,
    provider: &'a str,
    stack: &'a str,
    /// A run is going: some project's last operation has not ended, and the runner that holds
    /// the workspace lock runs it.
    running: bool,
    projects: Vec<Row<'a>>,
    /// The projects an up would run, in run order.
    up_would_run: Vec<&'a str>,
}

/// A project of the provider's graph.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct Row<'a> {
    name: &'a str,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::layer"))]
    layer: &'a str,
    /// The stack holds a deployment the runner made (an `up` succeeded, no destroy since).
    deployed: bool,
    /// The last operation on it, `null` when the runner never ran it with this stack.
    last: Option<Last<'a>>,
    /// Its last drift check since that operation, `null` when none.
    drift: Option<Drift<'a>>,
    /// Resources in its stack after its last successful up, refresh or destroy; null when
    /// unknown.
    resources: Option<u64>,
    /// Seconds its up takes: learned from past successful runs, else its provider file's
    /// estimate.
    #[cfg_attr(test, schemars(range(min = 0.0)))]
    estimate_s: Option<f64>,
    up: Up,
}

/// Its last operation.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct Last<'a> {
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::operation"))]
    operation: Operation,
    /// How it ended, or `running`; `cut short`: the runner that ran it ended (was killed)
    /// before it did.
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::recorded"))]
    status: Recorded,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::time_or_null"))]
    started: Option<&'a str>,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::time_or_null"))]
    ended: Option<&'a str>,
    #[cfg_attr(test, schemars(range(min = 0.0)))]
    duration_seconds: Option<f64>,
}

/// Its last drift check.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct Drift<'a> {
    /// What it found (`drifted`: the stack differs from what its program and configuration
    /// declare, its next up refreshes first; `not checked`: nothing deployed), or how the check
    /// ended otherwise.
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::checked"))]
    status: Checked,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::time_or_null"))]
    ended: Option<&'a str>,
}

/// How a drift check of a project is told: what it found, or how it ended otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
enum Checked {
    Found(Found),
    Ended(Recorded),
}

/// What an up would do with it.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct Up {
    /// An up now would run it.
    runs: bool,
    /// Why, in words: never run, not deployed, its last up failed, its inputs changed since
    /// its last up, after a project that runs, or unchanged since its last up.
    why: String,
}

/// The status document's schema, as the tests compare it with `schemas/status.schema.json`.
#[cfg(test)]
pub(crate) fn schema() -> schemars::Schema {
    crate::schemas::document::<Status<'static>>(
        "status.schema.json",
        "runner status",
        "Printed by `runner status --format json`: every project of the provider's graph, in run order, with its last operation and what an up would do with it. Read from the files runs leave in the workspace only (no pulumi). Fields may be added without changing schema_version.",
    )
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
    let checked_here = drift_run_here(s, t);
    let digests = super::operation::digests_now(s, t);
    let pending = state.pending(&plan, digests.as_ref());
    let projects: Vec<Row<'_>> = plan
        .order
        .iter()
        .zip(&pending)
        .map(|(&i, (_, p))| row(&plan, i, (&state, &checked_here), &history, p))
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
        StatusFormat::Text => {
            let columns = terminal_columns();
            let mut text = table(&doc, &s.ws.show(&t.run_dir.state()), columns);
            // A shared backend may hold what pipelines deployed: this table never saw it.
            if !t.default_backend && doc.projects.iter().all(|r| r.last.is_none()) {
                let checked = doc.projects.iter().any(|r| r.drift.is_some());
                let none_deployed = doc.projects.iter().all(|r| {
                    r.drift
                        .as_ref()
                        .is_some_and(|d| d.status == Checked::Found(Found::NotChecked))
                });
                let then = if none_deployed {
                    "The last drift check found nothing deployed there: an up from here deploys every project."
                        .to_string()
                } else if checked {
                    "The drift column is what the last drift check found deployed there; an up from here runs \
                     each project once (pulumi finds what is deployed up to date)."
                        .to_string()
                } else {
                    format!("`runner drift -s {}` checks what is deployed there.", t.stack)
                };
                let note = report::as_typed(&format!(
                    "Nothing ran from this checkout with stack {0}: status tells the runs made here ({1}). \
                         What ran elsewhere (a pipeline, another machine) is in the backend PULUMI_BACKEND_URL \
                         names. {2}",
                    t.stack,
                    s.ws.show(&t.run_dir.stack_dir()),
                    then
                ))
                .into_owned();
                let note = match columns {
                    Some(c) => crate::render::wrap(note.split(' '), c).join("\n"),
                    None => note,
                };
                let _ = write!(text, "\n{note}\n");
            }
            text
        }
        StatusFormat::Gantt | StatusFormat::GanttSvg => unreachable!("answered above"),
    };
    write_result(&text)?;
    Ok(exit::SUCCESS)
}

/// What the last run made here found, when it was a drift check: by project, what it found
/// and when. A drift check of a stack this checkout never ran (a pipeline deployed it) keeps
/// nothing in the run state, which holds only what ran here: its record still says it.
fn drift_run_here(s: &Settings, t: &StackContext) -> BTreeMap<String, (Found, Option<String>)> {
    // No record, or one that cannot be read: status has its own rows to tell.
    let Ok(run) = super::last_run::read_run(s, t, &t.run_dir.last_run()) else {
        return BTreeMap::new();
    };
    if run.operation != crate::plan::RunKind::Drift {
        return BTreeMap::new();
    }
    run.projects
        .into_iter()
        .filter_map(|p| match p.status {
            Told::Found(found) => Some((p.name, (found, p.ended))),
            Told::Ended(_) => None,
        })
        .collect()
}

fn row<'a>(
    plan: &Plan<'a>,
    i: usize,
    (state, checked_here): (&'a RunState, &'a BTreeMap<String, (Found, Option<String>)>),
    history: &History,
    pending: &Pending,
) -> Row<'a> {
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
        drift: p
            .and_then(|p| p.checked.as_ref())
            .map(|c| Drift {
                status: match c.status {
                    Recorded::Ended(Outcome::Succeeded) if c.changed => Checked::Found(Found::Drifted),
                    Recorded::Ended(Outcome::Succeeded) => Checked::Found(Found::NoDrift),
                    other => Checked::Ended(other),
                },
                ended: c.ended.as_deref(),
            })
            .or_else(|| {
                let (found, ended) = checked_here.get(name).filter(|_| p.is_none())?;
                Some(Drift {
                    status: Checked::Found(*found),
                    ended: ended.as_deref(),
                })
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

/// What the `up would` column keeps of a narrow terminal: `skip: unchanged` whole.
const WHY_COLUMN: usize = 15;

/// The shortest a cut project name gets (`--format json` has them whole).
const NAME_KEPT: usize = 16;

/// One row's cells, before they are laid out.
struct Cells {
    name: String,
    op: &'static str,
    status: &'static str,
    ended: String,
    took: String,
    resources: String,
    drift: String,
    up: String,
}

/// How the columns are laid out: the widths, and whether a narrow terminal made them compact
/// (the date of `ended` short, names cut in the middle, the reasons listed under the table).
struct Layout {
    name: usize,
    op: usize,
    status: usize,
    ended: usize,
    took: usize,
    resources: usize,
    drift: Option<usize>,
}

impl Layout {
    fn of(rows: &[Cells], checked: bool) -> Self {
        let widest = |head: &str, cell: &dyn Fn(&Cells) -> usize| {
            rows.iter().map(cell).max().unwrap_or(0).max(head.chars().count())
        };
        Self {
            name: widest("project", &|r| r.name.chars().count()),
            op: widest("last op", &|r| r.op.len()),
            status: widest("result", &|r| r.status.len()),
            ended: widest("ended (UTC)", &|r| r.ended.chars().count()),
            took: widest("took", &|r| r.took.chars().count()),
            resources: widest("resources", &|r| r.resources.chars().count()),
            drift: checked.then(|| widest("drift check", &|r| r.drift.chars().count())),
        }
    }

    /// Every column but the last (`up would`), with their separators.
    fn before_why(&self) -> usize {
        2 + self.name
            + 2
            + self.op
            + 2
            + self.status
            + 2
            + self.ended
            + 2
            + self.took
            + 2
            + self.resources
            + self.drift.map_or(0, |d| d + 2)
            + 2
    }

    fn line(&self, c: &Cells) -> String {
        let drift = self.drift.map(|w| format!("  {:<w$}", c.drift)).unwrap_or_default();
        format!(
            "  {:<name$}  {:<op$}  {:<status$}  {:<ended$}  {:>took$}  {:>res$}{drift}  {}",
            cut_middle(&c.name, self.name),
            c.op,
            c.status,
            c.ended,
            c.took,
            c.resources,
            c.up,
            name = self.name,
            op = self.op,
            status = self.status,
            ended = self.ended,
            took = self.took,
            res = self.resources,
        )
    }
}

/// `2026-11-22 14:06:03`, or `11-22 14:06` when the terminal is narrow.
fn ended_shown(t: &str, compact: bool) -> String {
    let full = shown_time(t);
    if compact {
        full.get(5..16).map_or(full.clone(), str::to_string)
    } else {
        full
    }
}

/// `name` in `width` characters: its start and its end kept around an ellipsis, so two long
/// names sharing a start (`ingress-controller-namespace`, `ingress-controller`) stay apart.
fn cut_middle(name: &str, width: usize) -> std::borrow::Cow<'_, str> {
    let n = name.chars().count();
    if n <= width || width < 3 {
        return name.into();
    }
    let tail = (width - 1) / 2;
    let head = width - 1 - tail;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(n - tail).collect();
    format!("{start}…{end}").into()
}

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
    let mut rows: Vec<Cells> = doc.projects.iter().map(|r| cells(r, false)).collect();
    let mut reasons_below = false;
    let mut layout = Layout::of(&rows, checked);
    let widest_row = rows.iter().map(|r| layout.before_why() + r.up.chars().count()).max();
    let narrow = columns.is_some_and(|c| widest_row.is_some_and(|w| w > c));
    if let (true, Some(c)) = (narrow, columns) {
        rows = doc.projects.iter().map(|r| cells(r, true)).collect();
        layout = Layout::of(&rows, checked);
        // Names give way to the reason, down to NAME_KEPT characters.
        let room = c.saturating_sub(layout.before_why() - layout.name + WHY_COLUMN);
        layout.name = room.clamp(layout.name.min(NAME_KEPT), layout.name);
        // A reason cut short says nothing: the ones that do not fit are listed whole below.
        let room = c.saturating_sub(layout.before_why());
        for (cell, row) in rows.iter_mut().zip(&doc.projects) {
            if row.up.runs && cell.up.chars().count() > room {
                cell.up = "run".into();
                reasons_below = true;
            }
        }
    }
    let head = Cells {
        name: "project".into(),
        op: "last op",
        status: "result",
        ended: "ended (UTC)".into(),
        took: "took".into(),
        resources: "resources".into(),
        drift: "drift check".into(),
        up: "up would".into(),
    };
    let _ = writeln!(out, "{}", fit(&layout.line(&head), columns));
    let mut cut = false;
    for r in &rows {
        let line = layout.line(r);
        let shown = fit(&line, columns);
        cut |= r.name.chars().count() > layout.name || shown.chars().count() != line.chars().count();
        let _ = writeln!(out, "{shown}");
    }
    if cut {
        let _ = writeln!(
            out,
            "  {}",
            report::as_typed("(rows cut to the terminal's width: `runner status --format json` has them whole)")
        );
    }
    let total = doc.projects.len();
    if doc.up_would_run.is_empty() {
        let _ = writeln!(
            out,
            "\nAn up would run nothing: every project is unchanged since its last up."
        );
    } else if reasons_below {
        // The reasons the rows could not hold, whole, word-wrapped under their names.
        let _ = writeln!(
            out,
            "\nAn up would run {} of {}:",
            doc.up_would_run.len(),
            crate::render::count(total, "project")
        );
        let width = doc.up_would_run.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        let room = columns.unwrap_or(100).saturating_sub(width + 4).max(30);
        for r in doc.projects.iter().filter(|r| r.up.runs) {
            for (i, text) in crate::render::wrap(r.up.why.split(' '), room).iter().enumerate() {
                let name = if i == 0 { r.name } else { "" };
                let _ = writeln!(out, "  {name:<width$}  {text}");
            }
        }
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

/// A row's cells as a person reads them; `compact`: for a narrow terminal.
fn cells(r: &Row<'_>, compact: bool) -> Cells {
    let (op, status, ended, took) = match &r.last {
        Some(l) => (
            l.operation.as_str(),
            recorded_word(l.status),
            l.ended.map(|e| ended_shown(e, compact)).unwrap_or_default(),
            l.duration_seconds
                .map(crate::report::plain::duration)
                .unwrap_or_default(),
        ),
        None => ("-", "never run", String::new(), String::new()),
    };
    let up = if r.up.runs {
        format!("run: {}", r.up.why)
    } else {
        // The line under the table says since when: the column stays narrow enough for 100.
        format!("skip: {}", r.up.why.trim_end_matches(" since its last up"))
    };
    let drift = match &r.drift {
        None => "-".to_string(),
        // The time of day is enough beside the full date of the last operation.
        Some(d) => {
            let at = d.ended.map(shown_time).and_then(|t| t.get(11..16).map(str::to_string));
            [Some(checked_word(d.status).to_string()), at]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    Cells {
        name: r.name.to_string(),
        op,
        status,
        ended,
        took,
        resources: r.resources.map_or_else(|| "-".to_string(), |n| n.to_string()),
        drift,
        up,
    }
}

/// A drift check's status in words.
fn checked_word(checked: Checked) -> &'static str {
    match checked {
        // The check ran and found nothing deployed: said so, not as a check left undone.
        Checked::Found(Found::NotChecked) => "not deployed",
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
    fn long_names_are_cut_in_the_middle_so_two_sharing_a_start_stay_apart() {
        assert_eq!(cut_middle("ingress-controller-namespace", 16), "ingress-…mespace");
        assert_eq!(cut_middle("ingress-controller", 16), "ingress-…troller");
        assert_eq!(cut_middle("app", 16), "app");
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
