//! A run as a picture over time, from its record (`report::summary`): each project's start and
//! end, the chain that set the run's length (the critical path of what really ran, longest by
//! measured time, each project linked to what held it: what it waited for, or the project that
//! freed its slot, as the graph finds it), the moments nothing ran. Drawn
//! as a Mermaid `gantt` (GitHub renders it in a job summary; `runner status --format gantt`) and
//! as SVG (`runner status --format gantt-svg`, the HTML report).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::status::{Found, Told, word};
use super::summary::Summary;
use crate::exec::Outcome;
use crate::graph::Span;
use crate::plan::Plan;
use crate::render::xml_text;

/// One bar: a project that ran.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    pub(crate) name: String,
    pub(crate) status: Told,
    pub(crate) ran: Stretch,
    pub(crate) critical: bool,
}

/// A stretch of the run, in milliseconds from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Stretch {
    pub(crate) start: i64,
    pub(crate) end: i64,
}

impl Stretch {
    /// How long it is (ms).
    pub(crate) fn ms(self) -> i64 {
        self.end - self.start
    }
}

/// The run laid out in time.
#[derive(Debug, Clone)]
pub(crate) struct Timeline {
    pub(crate) title: String,
    /// In order of start.
    pub(crate) bars: Vec<Bar>,
    pub(crate) length_ms: i64,
    /// Stretches of the run when no project ran.
    pub(crate) idle: Vec<Stretch>,
    /// Summed length of the critical path (ms).
    pub(crate) critical_ms: i64,
}

impl Timeline {
    /// `plan`: the run's, whose edges (needs and ordering-only) the critical path follows.
    pub(crate) fn of(run: &Summary, plan: &Plan<'_>) -> Self {
        // How late after what held it a project may start: the scheduler's own latency.
        const SLACK_MS: i64 = 500;
        let origin = millis(&run.started).unwrap_or(0);
        let mut bars: Vec<Bar> = run
            .projects
            .iter()
            .filter_map(|p| {
                let start = millis(p.started.as_deref()?)? - origin;
                let end = millis(p.ended.as_deref()?)? - origin;
                Some(Bar {
                    name: p.name.clone(),
                    status: p.status,
                    ran: Stretch {
                        start: start.max(0),
                        end: end.max(start).max(0),
                    },
                    critical: false,
                })
            })
            .collect();
        bars.sort_by(|a, b| (a.ran.start, &a.name).cmp(&(b.ran.start, &b.name)));
        let length_ms =
            (millis(&run.ended).unwrap_or(origin) - origin).max(bars.iter().map(|b| b.ran.end).max().unwrap_or(0));
        let ran: Vec<Span<'_>> = bars
            .iter()
            .map(|b| Span {
                name: &b.name,
                start: b.ran.start,
                end: b.ran.end,
            })
            .collect();
        let path = plan
            .provider
            .graph
            .measured_critical_path(&ran, &plan.subset, plan.operation.direction(), SLACK_MS);
        let critical_ms = path.length;
        // Owned: the bars it marks are borrowed to find it.
        let critical: BTreeSet<String> = path.names.iter().map(|n| (*n).to_string()).collect();
        for b in &mut bars {
            b.critical = critical.contains(&b.name);
        }
        let idle = idle_stretches(&bars, length_ms);
        let title = format!(
            "{} · provider {} · stack {} · {} of {} ran in {}",
            run.operation.word(),
            run.provider,
            run.stack,
            bars.len(),
            crate::render::count(run.projects.len(), "project"),
            seconds(length_ms)
        );
        Timeline {
            title,
            bars,
            length_ms,
            idle,
            critical_ms,
        }
    }

    /// A Mermaid `gantt` chart: a section per project in order of start, the critical path
    /// `crit`, what failed `crit` too with a mark in its name.
    pub(crate) fn mermaid(&self) -> String {
        let mut out = String::from("gantt\n");
        let _ = writeln!(out, "    title {}", mermaid_text(&self.title));
        out.push_str("    dateFormat x\n    axisFormat %M:%S\n");
        for (k, b) in self.bars.iter().enumerate() {
            let mut tags = Vec::new();
            let fine = b.status.fine();
            let unchanged = matches!(
                b.status,
                Told::Ended(Outcome::Unchanged) | Told::Found(Found::NotChecked)
            );
            if b.critical || !(fine || unchanged) {
                tags.push("crit");
            }
            if fine {
                tags.push("done");
            }
            let label = match b.status {
                Told::Ended(Outcome::Succeeded) => mermaid_text(&b.name),
                other => format!("{} ({})", mermaid_text(&b.name), word(other)),
            };
            let tags = if tags.is_empty() {
                String::new()
            } else {
                format!("{}, ", tags.join(", "))
            };
            // A zero-length bar is not drawn: a millisecond at least.
            let end = b.ran.end.max(b.ran.start + 1);
            let _ = writeln!(out, "    {label} :{tags}p{k}, {}, {end}", b.ran.start);
        }
        out
    }

    /// The same as an SVG document: a row per project, a time axis in seconds, the critical
    /// path outlined in red, idle stretches shaded.
    pub(crate) fn svg(&self) -> String {
        const LEFT: i64 = 150;
        const WIDTH: i64 = 900;
        const ROW: i64 = 24;
        const TOP: i64 = 50;
        let rows = i64::try_from(self.bars.len()).unwrap_or(0);
        let height = TOP + rows.max(1) * ROW + 60;
        let total = LEFT + WIDTH + 30;
        let span = self.length_ms.max(1);
        let x = |ms: i64| LEFT + ms * WIDTH / span;
        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{height}" viewBox="0 0 {total} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12" role="img">"#
        );
        let _ = writeln!(out, "  <title>{}</title>", xml_text(&self.title));
        let _ = writeln!(
            out,
            r#"  <text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#,
            xml_text(&self.title)
        );
        let bottom = TOP + rows * ROW;
        for s in &self.idle {
            let _ = writeln!(
                out,
                r##"  <rect class="idle" x="{}" y="{}" width="{}" height="{}" fill="#f0f0f0"><title>nothing ran for {}</title></rect>"##,
                x(s.start),
                TOP - 6,
                (x(s.end) - x(s.start)).max(1),
                bottom - TOP + 6,
                seconds(s.ms())
            );
        }
        // Ticks: about ten, on whole seconds.
        let step = tick(span);
        let mut t = 0;
        while t <= span {
            let _ = writeln!(
                out,
                r##"  <line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ddd"/><text x="{0}" y="{3}" fill="#777" text-anchor="middle">{4}</text>"##,
                x(t),
                TOP - 8,
                bottom,
                bottom + 16,
                seconds(t)
            );
            t += step;
        }
        for (k, b) in self.bars.iter().enumerate() {
            let y = TOP + i64::try_from(k).unwrap_or(0) * ROW;
            let (stroke, width) = if b.critical { ("#c0392b", 2) } else { ("none", 0) };
            let _ = writeln!(
                out,
                r#"  <g class="bar" data-name="{name}" data-status="{status}"><title>{name}: {status}, {from} to {to} ({took})</title><text x="{lx}" y="{ty}" text-anchor="end">{name}</text><rect x="{bx}" y="{y}" width="{bw}" height="{bh}" rx="3" fill="{fill}" stroke="{stroke}" stroke-width="{width}"/></g>"#,
                name = xml_text(&b.name),
                status = xml_text(word(b.status)),
                from = seconds(b.ran.start),
                to = seconds(b.ran.end),
                took = seconds(b.ran.ms()),
                lx = LEFT - 8,
                ty = y + 14,
                bx = x(b.ran.start),
                bw = (x(b.ran.end) - x(b.ran.start)).max(2),
                bh = ROW - 6,
                fill = status_fill(b.status),
            );
        }
        let ly = bottom + 40;
        let _ = writeln!(
            out,
            r##"  <text x="10" y="{ly}" fill="#555">critical path (red outline): {} of {}; grey: nothing ran ({})</text>"##,
            seconds(self.critical_ms),
            seconds(self.length_ms),
            seconds(self.idle.iter().map(|s| s.ms()).sum())
        );
        out.push_str("</svg>\n");
        out
    }
}

/// The colour of a bar by the project's result.
pub(crate) fn status_fill(status: Told) -> &'static str {
    match status {
        Told::Ended(Outcome::Succeeded) | Told::Found(Found::NoDrift) => "#7cb87e",
        Told::Ended(Outcome::Failed | Outcome::TimedOut) => "#e06666",
        Told::Ended(Outcome::Interrupted) => "#f1a340",
        Told::Found(Found::Drifted) => "#e0b000",
        _ => "#b0b0b0",
    }
}

/// Stretches of `[0, length)` covered by no bar.
fn idle_stretches(bars: &[Bar], length: i64) -> Vec<Stretch> {
    let mut ran: Vec<Stretch> = bars.iter().map(|b| b.ran).collect();
    ran.sort_unstable();
    let mut idle = Vec::new();
    let mut covered = 0;
    for s in ran {
        if s.start > covered {
            idle.push(Stretch {
                start: covered,
                end: s.start,
            });
        }
        covered = covered.max(s.end);
    }
    if length > covered {
        idle.push(Stretch {
            start: covered,
            end: length,
        });
    }
    // A few milliseconds between one project's end and the next one's start are the runner's
    // own bookkeeping, not an idle machine.
    idle.retain(|s| s.ms() >= 50);
    idle
}

/// A tick step giving about ten ticks (tenths of a second for the shortest runs).
fn tick(span_ms: i64) -> i64 {
    let raw = (span_ms / 10).max(1);
    for step in [
        100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
    ] {
        if step >= raw {
            return step;
        }
    }
    (raw + 599_999) / 600_000 * 600_000
}

/// `1.2s`, `2m 05s`.
pub(crate) fn seconds(ms: i64) -> String {
    if ms < 60_000 {
        #[allow(clippy::cast_precision_loss)]
        let s = ms as f64 / 1000.0;
        format!("{s:.1}s")
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// Text Mermaid's gantt takes in a title or a task name: no `:`, `#` or `;`, one line.
fn mermaid_text(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            ':' | ';' | '#' | '\n' | '\r' => ' ',
            c => c,
        })
        .collect()
}

/// Milliseconds since the epoch of a timestamp the runner wrote (`2026-11-26T06:28:33.858Z`).
fn millis(ts: &str) -> Option<i64> {
    let since = crate::runstate::time_of(ts)?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    i64::try_from(since.as_millis()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Operation;
    use crate::plan::RunKind;
    use crate::provider::Provider;
    use crate::report::summary::ProjectSummary;

    fn run() -> Summary {
        let p = |name: &str, status: Outcome, from: &str, to: &str| ProjectSummary {
            started: Some(format!("2026-11-26T10:00:{from}Z")),
            ended: Some(format!("2026-11-26T10:00:{to}Z")),
            ..ProjectSummary::up(name, status)
        };
        Summary::failed_up(
            "2026-11-26T10:00:09.000Z",
            9.0,
            vec![
                p("a", Outcome::Succeeded, "00.000", "02.000"),
                p("b", Outcome::Succeeded, "00.000", "01.000"),
                p("c", Outcome::Succeeded, "02.000", "05.000"),
                p("d", Outcome::Failed, "06.000", "07.500"),
                ProjectSummary::up("e", Outcome::Skipped),
            ],
        )
    }

    /// The plan's edges: c needs a and b, d needs b, e needs d.
    fn provider() -> Provider {
        crate::provider::for_tests(
            [
                ("a", vec![]),
                ("b", vec![]),
                ("c", vec!["a", "b"]),
                ("d", vec!["b"]),
                ("e", vec!["d"]),
            ]
            .into_iter()
            .map(|(k, v): (&str, Vec<&str>)| (k.to_string(), v.into_iter().map(str::to_string).collect())),
        )
    }

    fn timeline(run: &Summary) -> Timeline {
        let provider = provider();
        Timeline::of(run, &Plan::new(&provider, Operation::Up, &[]).unwrap())
    }

    #[test]
    fn the_critical_path_is_the_longest_chain_by_measured_time_and_idle_time_is_found() {
        let t = timeline(&run());
        let critical: Vec<&str> = t.bars.iter().filter(|b| b.critical).map(|b| b.name.as_str()).collect();
        assert_eq!(critical, ["a", "c"], "a (2 s) then c (3 s) beats b then d (2.5 s)");
        assert_eq!(t.critical_ms, 5_000);
        assert_eq!(t.length_ms, 9_000);
        let idle: Vec<(i64, i64)> = t.idle.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(idle, [(5_000, 6_000), (7_500, 9_000)]);
        assert_eq!(t.bars.len(), 4, "what did not run has no bar");
    }

    #[test]
    fn a_wait_that_did_not_happen_is_no_part_of_the_critical_path() {
        // Drift checks wait for nothing: c and d overlap what the plan says they wait for.
        let mut run = run();
        run.operation = RunKind::Drift;
        run.projects[2].started = Some("2026-11-26T10:00:01.000Z".into());
        run.projects[3].started = Some("2026-11-26T10:00:00.500Z".into());
        let t = timeline(&run);
        let critical: Vec<&str> = t.bars.iter().filter(|b| b.critical).map(|b| b.name.as_str()).collect();
        assert_eq!(critical, ["d"], "the longest single check: d (7 s)");
        assert!(t.critical_ms <= t.length_ms, "a path no longer than the run");
    }

    #[test]
    fn mermaid_marks_the_critical_path_and_failures() {
        let m = timeline(&run()).mermaid();
        assert!(m.starts_with("gantt\n    title up · provider local · stack dev · 4 of 5 projects ran in 9.0s\n"));
        assert!(m.contains("    a :crit, done, p0, 0, 2000\n"), "{m}");
        assert!(m.contains("    b :done, p1, 0, 1000\n"), "{m}");
        assert!(m.contains("    d (failed) :crit, p3, 6000, 7500\n"), "{m}");
        assert!(!m.contains("idle"), "Mermaid would draw an idle stretch as a task: {m}");
    }

    #[test]
    fn the_svg_is_well_formed_and_names_each_bar() {
        let s = timeline(&run()).svg();
        assert!(s.starts_with("<svg ") && s.ends_with("</svg>\n"));
        for name in ["a", "b", "c", "d"] {
            assert!(s.contains(&format!("data-name=\"{name}\"")), "{name}");
        }
        assert!(s.contains("critical path (red outline): 5.0s of 9.0s"), "{s}");
    }

    #[test]
    fn runner_timestamps_read_back_to_milliseconds() {
        assert_eq!(millis("1970-01-01T00:00:01.5Z"), Some(1_500));
        assert_eq!(millis("2026-08-21T19:18:00.123Z"), Some(1_787_339_880_123));
        assert_eq!(millis("not a time"), None);
    }
}
