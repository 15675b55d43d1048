//! The run as a `JUnit` report (`--junit FILE`), for the test-report views of CI systems: one
//! test case per planned project, a failure's message its cause, projects that did not start
//! (skipped, not started, waiting) as skipped; in a drift check a project that drifted fails.
//! Valid against the strict Apache Ant schema: the root is one `testsuite`, which carries
//! `properties`, `system-out` and `system-err`, a `hostname`, and a `timestamp` without a time
//! zone.

use std::fmt::Write as _;
use std::time::SystemTime;

use super::status::outcome_word;
use crate::exec::{RunResult, Status, would_change};
use crate::plan::Plan;
use crate::render::xml_text;
use crate::runstate::timestamp;

/// What the report is about, beyond the plan and the result.
#[derive(Clone, Copy)]
pub(crate) struct Suite<'a> {
    pub(crate) stack: &'a str,
    pub(crate) started: SystemTime,
    pub(crate) total: f64,
    /// A drift check: a project whose preview has changes fails.
    pub(crate) kind: crate::plan::RunKind,
    /// Each project's log, as the user should see it.
    pub(crate) log: &'a dyn Fn(&str) -> String,
}

/// A drifted project's failure: its counts as the message; with its log and what differs,
/// resource by resource, as the body.
fn drifted_failure(f: &crate::exec::Finished, log: &str) -> (String, String) {
    let changes: Vec<String> = f
        .changes
        .iter()
        .filter(|(k, n)| **n > 0 && !matches!(k.as_str(), "same" | "read"))
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let message = format!("drifted: {}", changes.join(", "));
    let body = format!(
        "{message}; its preview: {log}\n{}",
        super::drift::lines(&f.diffs, "").join("\n")
    );
    (message, body)
}

pub(crate) fn render(plan: &Plan<'_>, result: &RunResult, suite: &Suite<'_>) -> String {
    let op = plan.operation.as_str();
    let classname = format!("runner.{}.{}.{op}", plan.provider.name, suite.stack);
    let mut cases = String::new();
    let (mut failures, mut errors, mut skipped) = (0, 0, 0);
    let mut out_lines = String::new();
    for (name, f) in &result.results {
        let time = f.took().map_or(0.0, |d| d.as_secs_f64());
        let _ = write!(
            cases,
            "  <testcase name=\"{}\" classname=\"{}\" time=\"{time:.3}\"",
            xml_text(name),
            xml_text(&classname)
        );
        let drifted = suite.kind.is_drift() && f.status == Status::Succeeded && would_change(&f.changes);
        match &f.status {
            Status::Failed | Status::TimedOut => {
                failures += 1;
                let error = super::failure::text_or(f.error.as_ref(), "failed");
                let cause = super::failure::headline_or(f.error.as_ref(), "failed");
                let _ = write!(
                    cases,
                    ">\n    <failure message=\"{}\" type=\"{op} {}\">{}</failure>\n  </testcase>\n",
                    xml_text(&cause),
                    outcome_word(f.status.outcome()),
                    xml_text(&error)
                );
                let _ = writeln!(
                    out_lines,
                    "{name}: {op} {}; its log: {}",
                    outcome_word(f.status.outcome()),
                    (suite.log)(name)
                );
            }
            _ if drifted => {
                failures += 1;
                let (message, body) = drifted_failure(f, &(suite.log)(name));
                let _ = write!(
                    cases,
                    ">\n    <failure message=\"{}\" type=\"drift\">{}</failure>\n  </testcase>\n",
                    xml_text(&message),
                    xml_text(&body)
                );
            }
            // Cut short, not failed: an error of the run, not a finding about the project.
            Status::Interrupted => {
                errors += 1;
                let _ = write!(
                    cases,
                    ">\n    <error message=\"interrupted: cut short before it ended; it runs again on the next {op}\" type=\"{op} interrupted\">{}</error>\n  </testcase>\n",
                    xml_text(&super::failure::text_or(f.error.as_ref(), "interrupted"))
                );
            }
            Status::Skipped(because) | Status::NotStarted(because) | Status::Waits(because) => {
                skipped += 1;
                let _ = write!(
                    cases,
                    ">\n    <skipped message=\"{}: {}\"/>\n  </testcase>\n",
                    outcome_word(f.status.outcome()),
                    xml_text(&super::reason::because(because))
                );
            }
            Status::Succeeded | Status::Unchanged(_) => cases.push_str("/>\n"),
        }
    }
    // The Ant schema's timestamp has no time zone: UTC, said in a property.
    let stamp = timestamp(suite.started);
    let stamp = stamp.get(..19).unwrap_or(&stamp);
    let mut doc = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        doc,
        "<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{:.3}\" timestamp=\"{stamp}\" hostname=\"{}\">",
        xml_text(&classname),
        result.results.len(),
        suite.total,
        xml_text(&hostname())
    );
    doc.push_str("  <properties>\n");
    for (k, v) in [
        ("runner.version", env!("CARGO_PKG_VERSION")),
        ("provider", plan.provider.name.as_str()),
        ("stack", suite.stack),
        ("operation", op),
        ("timezone", "UTC"),
        ("interrupted", if result.interrupted { "true" } else { "false" }),
    ] {
        let _ = writeln!(doc, "    <property name=\"{k}\" value=\"{}\"/>", xml_text(v));
    }
    doc.push_str("  </properties>\n");
    doc.push_str(&cases);
    let _ = writeln!(doc, "  <system-out>{}</system-out>", xml_text(&out_lines));
    doc.push_str("  <system-err></system-err>\n</testsuite>\n");
    doc
}

/// The machine's name, or `localhost` (as the schema asks) when it cannot be told.
fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
