//! A run as one self-contained HTML file (`--report FILE`, `runner report`): the plan's graph
//! and the run's timeline as inline SVG, each project's result, changes and duration, the cause
//! of each failure with its log folded underneath, all from the run's record (`report::summary`).
//! No script, no style sheet or font from the network: it opens anywhere, offline. Nothing
//! secret is in it: outputs are the record's (secrets `[secret]`) and logs are written scrubbed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::status::{Found, Told, outcome_word, word};
use super::summary::Summary;
use super::timeline::{Timeline, seconds, status_fill};
use crate::exec::Outcome;
use crate::plan::Plan;
use crate::plan::RunKind;

/// What a report shows beside the run's record.
pub(crate) struct Parts<'a> {
    /// The plan as SVG (`render::svg`), when the plan could be made.
    pub(crate) plan_svg: Option<&'a str>,
    /// The run's plan, whose edges the run's critical path follows.
    pub(crate) plan: &'a Plan<'a>,
    /// A project's log of this run (its file), by name: shown under its failure.
    pub(crate) logs: &'a BTreeMap<String, String>,
}

/// Lines of a log shown under a failure (the end of it: the cause is near the end).
const LOG_LINES: usize = 400;

pub(crate) fn render(run: &Summary, parts: &Parts<'_>) -> String {
    let timeline = Timeline::of(run, parts.plan);
    // A drift check that found a difference succeeded as a check, but is no good news.
    let drifted =
        run.operation == RunKind::Drift && run.projects.iter().any(|p| p.status == Told::Found(Found::Drifted));
    let result = if drifted && run.result == Outcome::Succeeded {
        "drift found"
    } else {
        outcome_word(run.result)
    };
    let title = format!(
        "runner {} · provider {} · stack {}: {result}",
        run.operation.word(),
        run.provider,
        run.stack
    );
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        e(&title)
    );
    let _ = writeln!(
        out,
        "<header><h1>{} · provider {} · stack {}</h1>\n<p class=\"result {}\" id=\"result\">{} (exit {}) · {} · started {} UTC</p></header>",
        e(run.operation.word()),
        e(&run.provider),
        e(&run.stack),
        e(&class(result)),
        e(result),
        run.exit_code,
        seconds(ms(run.duration_seconds)),
        e(run.started.replace('T', " ").trim_end_matches('Z')),
    );
    // Counts by result.
    // By word: the counts are listed in its order.
    let mut counts: BTreeMap<&str, (Told, usize)> = BTreeMap::new();
    for p in &run.projects {
        counts.entry(word(p.status)).or_insert((p.status, 0)).1 += 1;
    }
    out.push_str("<ul class=\"counts\" id=\"counts\">");
    for (said, (status, n)) in &counts {
        let _ = write!(
            out,
            "<li><span class=\"dot\" style=\"background:{}\"></span>{n} {}</li>",
            status_fill(*status),
            e(said)
        );
    }
    out.push_str("</ul>\n");

    if let Some(svg) = parts.plan_svg {
        let _ = writeln!(
            out,
            "<section id=\"plan\"><h2>Plan</h2>\n<div class=\"figure\">{svg}</div></section>"
        );
    }
    let _ = writeln!(
        out,
        "<section id=\"timeline\"><h2>Timeline</h2>\n<div class=\"figure\">{}</div></section>",
        timeline.svg()
    );

    projects_table(&mut out, run);
    drift_section(&mut out, run);
    failures_section(&mut out, run, parts.logs);
    let _ = writeln!(
        out,
        "<footer>Made by runner {} from the run's summary; it opens with no network.</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// A row per project: result, time, resource changes, outputs (secrets `[secret]`), cause.
fn projects_table(out: &mut String, run: &Summary) {
    out.push_str("<section id=\"projects\"><h2>Projects</h2>\n<table>\n<thead><tr><th>project</th><th>result</th><th>took</th><th>resources</th><th>outputs</th><th>cause</th></tr></thead>\n<tbody>\n");
    for p in &run.projects {
        let took = p.duration_seconds.map(|s| seconds(ms(s))).unwrap_or_default();
        let why = p
            .error
            .as_ref()
            .map(|err| err.headline.clone())
            .or_else(|| p.reason.clone())
            .unwrap_or_default();
        let cause = if p.error.is_some() {
            format!("<a href=\"#failure-{0}\">{1}</a>", e(&p.name), e(&why))
        } else {
            e(&why)
        };
        let outputs = p.outputs.as_ref().map_or_else(String::new, |o| {
            o.iter()
                .map(|(k, v)| {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    format!("<code>{}</code> {}", e(k), e(&v))
                })
                .collect::<Vec<_>>()
                .join("<br>")
        });
        let _ = writeln!(
            out,
            "<tr id=\"project-{name}\" class=\"{cls}\"><td>{name}</td><td class=\"result\"><span class=\"dot\" style=\"background:{fill}\"></span>{status}</td><td>{took}</td><td>{changes}</td><td class=\"outputs\">{outputs}</td><td>{cause}</td></tr>",
            name = e(&p.name),
            cls = e(&class(word(p.status))),
            fill = status_fill(p.status),
            status = e(word(p.status)),
            changes = e(&super::marks::changes(&p.changes)),
        );
    }
    let _ = writeln!(
        out,
        "</tbody>\n</table>\n<p class=\"legend\">resources: {}</p></section>",
        e(&super::marks::marks_legend())
    );
}

/// What each drifted project's check found, input by input: deployed, and declared (what an
/// `up` would apply).
fn drift_section(out: &mut String, run: &Summary) {
    let drifted: Vec<_> = run.projects.iter().filter(|p| !p.drift.is_empty()).collect();
    if drifted.is_empty() {
        return;
    }
    out.push_str("<section id=\"drift\"><h2>Drift</h2>\n<p class=\"legend\">deployed: the stack's state; declared: the program with the stack configuration, which an <code>up</code> would apply</p>\n");
    for p in drifted {
        out.push_str(&super::drift::html(&p.name, &p.drift));
    }
    out.push_str("</section>\n");
}

/// Each failure's cause in full, with the end of its log folded underneath.
fn failures_section(out: &mut String, run: &Summary, logs: &BTreeMap<String, String>) {
    let failed: Vec<_> = run.projects.iter().filter(|p| p.error.is_some()).collect();
    if !failed.is_empty() {
        out.push_str("<section id=\"failures\"><h2>Failures</h2>\n");
        for p in failed {
            let _ = writeln!(
                out,
                "<article class=\"failure\" id=\"failure-{0}\"><h3>{0} ({1})</h3>\n<pre class=\"cause\">{2}</pre>",
                e(&p.name),
                e(word(p.status)),
                e(p.error.as_ref().map_or("", |err| err.text.as_str()))
            );
            if let Some(log) = logs.get(&p.name) {
                let lines: Vec<&str> = log.lines().collect();
                let from = lines.len().saturating_sub(LOG_LINES);
                let shown = if from > 0 {
                    format!("… {from} earlier lines not shown\n{}", lines[from..].join("\n"))
                } else {
                    lines.join("\n")
                };
                let _ = writeln!(
                    out,
                    "<details class=\"log\"><summary>log of {} ({} lines)</summary>\n<pre>{}</pre></details>",
                    e(&p.name),
                    lines.len(),
                    e(&shown)
                );
            }
            out.push_str("</article>\n");
        }
        out.push_str("</section>\n");
    }
}

fn e(s: &str) -> String {
    crate::render::xml_text(s)
}

/// A CSS class from a status (`not started` → `not-started`).
fn class(s: &str) -> String {
    s.replace(' ', "-")
}

#[allow(clippy::cast_possible_truncation)]
fn ms(seconds: f64) -> i64 {
    (seconds * 1000.0).round() as i64
}

const STYLE: &str = "body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}\
.result{font-size:15px;margin:0}.result.failed,.result.interrupted{color:#b03a2e}.result.succeeded{color:#2e7d32}.result.drift-found{color:#9a6700}\
.counts{list-style:none;padding:0;display:flex;gap:18px}.dot{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:6px}\
.figure{overflow-x:auto;border:1px solid #eee;padding:8px}.figure svg{max-width:100%;height:auto}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eee;vertical-align:top}\
td.outputs{font-size:12px;color:#444}td.result{white-space:nowrap}tr.failed td,tr.timed-out td{background:#fdecea}\
pre{background:#f7f7f7;padding:10px;overflow-x:auto;font-size:12px}pre.cause{background:#fdecea}\
.legend,footer{color:#777;font-size:12px}footer{margin-top:32px}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Operation;
    use crate::report::summary::ProjectSummary;

    #[test]
    fn a_failure_is_shown_with_its_cause_and_log_and_text_is_escaped() {
        let project = |name: &str, status: Outcome, error: Option<&str>| ProjectSummary {
            started: Some("2026-11-26T10:00:01.000Z".into()),
            ended: Some("2026-11-26T10:00:02.000Z".into()),
            duration_seconds: Some(1.0),
            outputs: Some(serde_json::from_str(r#"{"url":"http://x/<a>","pw":"[secret]"}"#).unwrap()),
            changes: BTreeMap::from([("create".to_string(), 2)]),
            error: error.map(|e| serde_json::from_value(e.into()).unwrap()),
            ..ProjectSummary::up(name, status)
        };
        let run = Summary::failed_up(
            "2026-11-26T10:00:03.000Z",
            3.0,
            vec![
                project("net", Outcome::Succeeded, None),
                project(
                    "logs",
                    Outcome::Failed,
                    Some("pulumi up exited with code 1: Error: <bad>\n  on Pulumi.yaml line 3:"),
                ),
            ],
        );
        let logs = BTreeMap::from([("logs".to_string(), "Updating (dev):\nError: <bad>\n".to_string())]);
        let provider = crate::provider::for_tests([("net".to_string(), vec![]), ("logs".to_string(), vec![])]);
        let plan = Plan::new(&provider, Operation::Up, &[]).unwrap();
        let html = render(
            &run,
            &Parts {
                plan_svg: Some("<svg id=\"plan-svg\"></svg>"),
                plan: &plan,
                logs: &logs,
            },
        );
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<svg id=\"plan-svg\"></svg>"));
        assert!(html.contains("id=\"failure-logs\""));
        assert!(html.contains("<a href=\"#failure-logs\">pulumi up exited with code 1: Error: &lt;bad&gt;</a>"));
        assert!(html.contains("<summary>log of logs (2 lines)</summary>"));
        assert!(html.contains("http://x/&lt;a&gt;") && !html.contains("<a>"));
        assert!(
            !html.contains("http") || !html.contains("src=\"http"),
            "nothing fetched"
        );
        assert!(html.contains("<td>+2</td>"));
    }
}
