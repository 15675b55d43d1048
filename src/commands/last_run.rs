//! The last run as a picture: the HTML report (`--report FILE` on a run, `runner report` for the
//! last one) and the timeline of `runner status --format gantt|gantt-svg`, all made from the
//! run's record (`report::summary`), the plan, and the logs the run left.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::RunnerError;
use crate::fs::{NewFile, Output, write_atomic};
use crate::plan::Plan;
use crate::render;
use crate::report::summary::Summary;
use crate::report::timeline::Timeline;
use crate::report::{self, html};
use crate::settings::{Settings, StackContext};

/// The last run's record, refused (with what to do) when there is none or it is of another
/// stack than the one asked about.
pub(crate) fn last_run(s: &Settings, t: &StackContext) -> Result<Summary, RunnerError> {
    let last = read_run(s, t, &t.run_dir.last_run())?;
    if !last.ran_nothing() {
        return Ok(last);
    }
    // The last run found everything unchanged: draw the stack's last run that ran something,
    // saying so, rather than "0 projects ran".
    let ran = t.run_dir.last_ran();
    if !ran.is_file() {
        return Ok(last);
    }
    let earlier = read_run(s, t, &ran)?;
    report::info(&format!(
        "the last run ({} started {}) ran nothing: drawn is the last one that ran something ({} started {})",
        last.operation.word(),
        last.started,
        earlier.operation.word(),
        earlier.started
    ));
    Ok(earlier)
}

/// A run's record read from `path`, of stack `t`.
pub(crate) fn read_run(s: &Settings, t: &StackContext, path: &std::path::Path) -> Result<Summary, RunnerError> {
    let path = path.to_path_buf();
    let shown = s.ws.show(&path);
    let text = crate::fs::read_text(&path).map_err(|e| {
        RunnerError::usage(
            format!("no run to show: cannot read {shown}: {e}"),
            format!(
                "run `runner up -p {} -s {}` (or destroy, refresh, preview, drift) first",
                t.provider.name, t.stack
            ),
        )
    })?;
    let run = Summary::read(&text).map_err(|e| {
        RunnerError::usage(
            format!("{shown} is not a run summary the runner can read: {e}"),
            "run again to write a new one",
        )
    })?;
    if run.stack != t.stack {
        return Err(RunnerError::usage(
            format!("the last run ({shown}) was of stack `{}`, not `{}`", run.stack, t.stack),
            format!("pass -s {} to see it, or run stack {} first", run.stack, t.stack),
        ));
    }
    Ok(run)
}

/// The plan of the run's operation over the whole graph (the edges the timeline follows), of
/// `provider`.
fn plan_of<'p>(provider: &'p crate::provider::Provider, run: &Summary) -> Plan<'p> {
    Plan::new(provider, run.operation.operation(), &[]).expect("the whole graph has no unknown target")
}

/// The provider weighed as the run knew it: what each project took when it ran, else the
/// estimate the run had for it (learned, or the provider's): the report's plan then shows what
/// runs have taught, not the provider file's first guesses.
fn as_the_run_knew(t: &StackContext, run: &Summary) -> crate::provider::Provider {
    let known: BTreeMap<String, f64> = run
        .projects
        .iter()
        .filter_map(|p| Some((p.name.clone(), p.duration_seconds.or(p.estimate_s)?)))
        .collect();
    let mut provider = t.provider.clone();
    provider.learn_estimates(&known);
    provider
}

/// The HTML report of the run recorded in `summary`, to `out`; a warning when it cannot be.
pub(crate) fn write_html(s: &Settings, t: &StackContext, plan: &Plan<'_>, summary: &Summary, out: &Output) {
    let written = out.write(html_of(t, plan, summary).as_bytes());
    let to = out.shown(|p| s.ws.show(p));
    match written {
        Ok(()) => report::info(&format!("Report: {to}")),
        Err(e) => report::warning(&format!("cannot write the report to {to}: {e}")),
    }
}

fn html_of(t: &StackContext, plan: &Plan<'_>, run: &Summary) -> String {
    // Each box marked with how its project ended, in the colours of the timeline and the counts.
    let marks: BTreeMap<&str, render::Mark> = run
        .projects
        .iter()
        .map(|p| {
            let mark = render::Mark {
                colour: report::timeline::status_fill(p.status),
                said: report::status::word(p.status).to_string(),
            };
            (p.name.as_str(), mark)
        })
        .collect();
    let svg = render::svg_of(plan, &render::EdgeLabels::default(), run.operation.word(), &marks);
    // The log of each failure, as the run wrote it (scrubbed of secrets when written).
    let logs: BTreeMap<String, String> = run
        .projects
        .iter()
        .filter(|p| p.error.is_some())
        .filter_map(|p| {
            // A drift check's logs are its previews'.
            let operation = run.operation.operation().as_str();
            let text = crate::fs::read_text(t.run_dir.log(&p.name, operation)).ok()?;
            Some((p.name.clone(), text))
        })
        .collect();
    html::render(
        run,
        &html::Parts {
            plan_svg: Some(&svg),
            plan,
            logs: &logs,
        },
    )
}

/// `runner report [-o FILE]`: the last run's HTML report.
pub(crate) fn run(s: &Settings, t: &StackContext, output: Option<&Path>) -> Result<i32, RunnerError> {
    let run = last_run(s, t)?;
    let provider = as_the_run_knew(t, &run);
    let plan = plan_of(&provider, &run);
    let text = html_of(t, &plan, &run);
    let Some(path) = output else {
        let path = t.run_dir.last_report();
        write_atomic(&path, text.as_bytes(), NewFile::Default).map_err(|e| {
            RunnerError::failed(
                format!("cannot write the report to {}: {e}", s.ws.show(&path)),
                "write it elsewhere: `runner report -o FILE` (a directory you can write), or `-o -` for standard output",
            )
        })?;
        report::info(&format!(
            "Report of the last run ({} of stack {}, started {}): {} — open it in a browser",
            run.operation.word(),
            run.stack,
            run.started,
            s.ws.show(&path)
        ));
        return Ok(crate::error::exit::SUCCESS);
    };
    let out = super::named_output("-o", path)?;
    out.write(text.as_bytes()).map_err(|e| {
        RunnerError::usage(
            format!("cannot write the report to {}: {e}", out.shown(|p| s.ws.show(p))),
            e.fix(),
        )
    })?;
    if out != Output::Stdout {
        report::info(&format!(
            "Report of the last run ({} of stack {}, started {}): {} — open it in a browser",
            run.operation.word(),
            run.stack,
            run.started,
            out.shown(|p| s.ws.show(p))
        ));
    }
    Ok(crate::error::exit::SUCCESS)
}

/// `runner status --format gantt` (Mermaid) or `gantt-svg`: the last run's timeline.
pub(crate) fn timeline(s: &Settings, t: &StackContext, svg: bool) -> Result<String, RunnerError> {
    let run = last_run(s, t)?;
    let plan = plan_of(&t.provider, &run);
    let t = Timeline::of(&run, &plan);
    Ok(if svg { t.svg() } else { t.mermaid() })
}
