//! What a run leaves for the CI around it: first, the warning about a state backend the job
//! loses when it ends; at the end, the `JUnit` report (`--junit FILE`), and in GitHub Actions the
//! job summary and an annotation per drifted project.

use std::fmt::Write as _;
use std::path::Path;

use crate::exec::{RunResult, Status, would_change};
use crate::fs::Output;
use crate::plan::{Plan, RunKind};
use crate::report;
use crate::report::ci::{self, CiSystem};
use crate::report::junit::{self, Suite};
use crate::report::summary::Summary;
use crate::report::timeline::Timeline;
use crate::settings::{Settings, StackContext};

/// In CI, the file backend inside the workspace goes when the job's checkout does: said once,
/// before anything runs, with the fix.
pub(super) fn warn_lost_backend(s: &Settings, t: &StackContext) {
    if s.ci.is_some() && t.default_backend {
        report::warning(&crate::config::backend::lost_with_the_job());
    }
}

/// What the run asked for its CI.
#[derive(Debug, Clone, Copy)]
pub(super) struct Asked<'a> {
    /// `--junit FILE`.
    pub(super) junit: Option<&'a Output>,
    /// What the run is: in a drift check a project whose preview has changes drifted.
    pub(super) kind: RunKind,
    /// A drift check's one line.
    pub(super) verdict: Option<&'a str>,
}

/// What the run was, for the CI: the `JUnit` report when asked, GitHub's job summary and
/// annotations.
pub(super) fn reports(
    s: &Settings,
    t: &StackContext,
    asked: Asked<'_>,
    (plan, result): (&Plan<'_>, &RunResult),
    (started, total): (std::time::SystemTime, f64),
    summary: &Summary,
) {
    let log = |name: &str| s.ws.show(&t.run_dir.log(name, plan.operation.as_str()));
    if let Some(out) = asked.junit {
        let suite = Suite {
            stack: &t.stack,
            started,
            total,
            kind: asked.kind,
            log: &log,
        };
        if let Err(e) = out.write(junit::render(plan, result, &suite).as_bytes()) {
            let to = out.shown(|p| s.ws.show(p));
            report::warning(&format!("cannot write the JUnit report to {to}: {e}"));
        }
    }
    if s.ci != Some(CiSystem::GitHub) {
        return;
    }
    if asked.kind.is_drift() {
        for (name, f) in &result.results {
            if f.status == Status::Succeeded
                && would_change(&f.changes)
                && let Some(a) = CiSystem::GitHub.annotation(
                    "warning",
                    &format!("{name} drifted"),
                    &format!("{name} differs from its program and configuration; see `runner logs {name} --operation preview`"),
                    None,
                )
            {
                ci::print(&a);
            }
        }
    }
    if let Some(file) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|f| !f.is_empty()) {
        let mut text = ci::step_summary(plan, &t.stack, result, total, asked.verdict, asked.kind);
        // The state goes with the job: said where the job's readers look, not only in its log.
        if t.default_backend {
            let warning = crate::config::backend::lost_with_the_job().replace("\n  fix:", "\n>\n> Fix:");
            let _ = writeln!(text, "> [!WARNING]\n> {warning}\n");
        }
        // The run's timeline, which GitHub draws from a Mermaid block.
        let chart = Timeline::of(summary, plan).mermaid();
        let _ = write!(text, "\n```mermaid\n{chart}```\n");
        if let Err(e) = append(Path::new(&file), &text) {
            report::warning(&format!("cannot append the run to GITHUB_STEP_SUMMARY: {e}"));
        }
    }
}

/// In GitHub Actions, a run refused before any project started (validation, a busy workspace)
/// is said in the job summary too.
pub(crate) fn refused(s: &Settings, t: &StackContext, command: &str, err: &crate::error::RunnerError) {
    if s.ci != Some(CiSystem::GitHub) || matches!(err, crate::error::RunnerError::Declined) {
        return;
    }
    // Each problem on the run's page, at its file's line when it has one.
    let checkout = checkout(s);
    for item in err.items() {
        let at = item.at.and_then(|place| {
            let path = std::fs::canonicalize(&place.file).ok()?;
            let rel = path.strip_prefix(checkout.as_deref()?).ok()?;
            Some((rel.to_string_lossy().into_owned(), place.line?))
        });
        let what = item.what;
        let message = item
            .fix
            .map_or_else(|| what.clone(), |fix| format!("{what}\nfix: {fix}"));
        let title = format!("runner {command}: nothing ran");
        if let Some(a) =
            CiSystem::GitHub.annotation("error", &title, &message, at.as_ref().map(|(f, l)| (f.as_str(), *l)))
        {
            ci::print(&a);
        }
    }
    if let Some(file) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|f| !f.is_empty()) {
        let mut text = ci::refused_summary(command, &t.provider.name, &t.stack, err);
        if t.default_backend {
            let warning = crate::config::backend::lost_with_the_job().replace("\n  fix:", "\n>\n> Fix:");
            let _ = writeln!(text, "\n> [!WARNING]\n> {warning}\n");
        }
        if let Err(e) = append(Path::new(&file), &text) {
            report::warning(&format!("cannot append the run to GITHUB_STEP_SUMMARY: {e}"));
        }
    }
}

/// The checkout GitHub names, else the git repository the workspace is in (a job that checked
/// out elsewhere, or a try by hand with CI set).
fn checkout(s: &Settings) -> Option<std::path::PathBuf> {
    std::env::var_os("GITHUB_WORKSPACE")
        .filter(|w| !w.is_empty())
        .and_then(|w| std::fs::canonicalize(w).ok())
        .or_else(|| crate::commands::export::repo::top(&s.ws.root).and_then(|t| std::fs::canonicalize(t).ok()))
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// Each project's directory as GitHub names files in annotations: relative to its checkout
/// (`GITHUB_WORKSPACE`) when the workspace lies in it, else relative to the workspace.
pub(super) fn project_dirs(s: &Settings, plan: &Plan<'_>) -> std::collections::HashMap<String, String> {
    // Only GitHub places annotations at a line: elsewhere no path is looked at.
    if s.ci != Some(CiSystem::GitHub) {
        return std::collections::HashMap::new();
    }
    let checkout = checkout(s);
    let root = std::fs::canonicalize(&s.ws.root).unwrap_or_else(|_| s.ws.root.clone());
    plan.order
        .iter()
        .map(|&i| {
            let p = plan.project(i);
            let dir = root.join(&p.path);
            let shown = checkout
                .as_deref()
                .and_then(|c| dir.strip_prefix(c).ok())
                .map_or_else(|| p.path.clone(), |rel| rel.to_string_lossy().into_owned());
            (p.name.clone(), shown)
        })
        .collect()
}
