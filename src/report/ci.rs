//! A run as a CI step, in the CI's own terms. GitHub Actions (`GITHUB_ACTIONS=true`): each
//! project's output folded in a `::group::`, a failure as an `::error title=…::` annotation with
//! its cause, a Markdown table of the run appended to `$GITHUB_STEP_SUMMARY`. GitLab CI
//! (`GITLAB_CI`): each project's output in a collapsible section. Projects run side by side, so
//! their lines are kept until the project ends and printed together, as one group.
//!
//! Formats: GitHub's workflow commands (`::group::`, `::endgroup::`, `::error title=…::`, their
//! `%25` `%0D` `%0A` escapes, and `%3A` `%2C` in properties) and job summaries; GitLab's
//! `section_start:<unix time>:<name>[collapsed=true]` / `section_end` lines.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::SystemTime;

use crate::exec::{RunResult, Status, would_change};
use crate::plan::{Plan, RunKind};

use super::markdown_cell as cell;
use super::status::Told;

/// The CI a run is a step of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CiSystem {
    GitHub,
    GitLab,
    /// Another CI (`CI` is set): plain lines.
    Other,
}

impl CiSystem {
    /// From the variables each CI sets on every job; `None` outside CI.
    pub(crate) fn detect(var: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        let set = |k: &str| var(k).is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
        if var("GITHUB_ACTIONS").as_deref() == Some("true") {
            Some(CiSystem::GitHub)
        } else if set("GITLAB_CI") {
            Some(CiSystem::GitLab)
        } else if set("CI") {
            Some(CiSystem::Other)
        } else {
            None
        }
    }

    /// It folds output into groups (and so each project's lines are kept until it ends).
    pub(crate) fn groups(self) -> bool {
        self != CiSystem::Other
    }

    /// One project's output as a group, folded under `title`; it ran from `span.0` (when known)
    /// to `span.1`, which GitLab shows as the section's duration (its lines are printed together,
    /// at the end).
    pub(crate) fn group(
        self,
        project: &str,
        title: &str,
        lines: &[String],
        span: (Option<SystemTime>, SystemTime),
    ) -> String {
        let mut out = String::new();
        match self {
            CiSystem::GitHub => {
                // The project's lines between `::stop-commands::` and its token: GitHub reads
                // none of them as a workflow command (`::add-mask::`, `::error…`, `##[…]`),
                // whatever a program or the engine printed; the text stays as it was.
                let token = stop_token();
                let _ = writeln!(out, "::group::{}", data(title));
                let _ = writeln!(out, "::stop-commands::{token}");
                for l in lines {
                    let _ = writeln!(out, "{l}");
                }
                let _ = writeln!(out, "::{token}::");
                let _ = writeln!(out, "::endgroup::");
            }
            CiSystem::GitLab | CiSystem::Other => {
                let end = unix(span.1);
                let start = span.0.map_or(end, unix);
                let id = section_id(project);
                let _ = writeln!(out, "\x1b[0Ksection_start:{start}:{id}[collapsed=true]\r\x1b[0K{title}");
                for l in lines {
                    let _ = writeln!(out, "{l}");
                }
                let _ = writeln!(out, "\x1b[0Ksection_end:{end}:{id}\r\x1b[0K");
            }
        }
        out
    }

    /// An annotation on the run's page: `::error title=…::message` (GitHub only), with
    /// `file=…,line=…` when the failure is at a line of a file (relative to the repository), so
    /// GitHub marks that line in a pull request.
    pub(crate) fn annotation(self, level: &str, title: &str, message: &str, at: Option<(&str, u32)>) -> Option<String> {
        let at = at.map_or_else(String::new, |(file, line)| {
            format!("file={},line={line},", property(file))
        });
        match self {
            CiSystem::GitHub => Some(format!("::{level} {at}title={}::{}\n", property(title), data(message))),
            CiSystem::GitLab | CiSystem::Other => None,
        }
    }
}

/// Prints to standard output, where the CI reads its commands.
pub(crate) fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// The token that ends a `::stop-commands::` region: random for each run, so no line of a
/// project's can end the region early.
fn stop_token() -> &'static str {
    static TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TOKEN.get_or_init(|| {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            // No random source: the time and the process, hashed (unknown to a program that
            // printed its lines before they were grouped).
            use sha2::Digest as _;
            let seed = format!("{:?} {}", SystemTime::now(), std::process::id());
            bytes.copy_from_slice(&sha2::Sha256::digest(seed.as_bytes())[..16]);
        }
        format!("runner-{:032x}", u128::from_be_bytes(bytes))
    })
}

/// A workflow command's message: `%`, CR and LF escaped.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value: as [`data`], and `:` and `,` too.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A GitLab section name: letters, digits, `_`, `.`, `-`.
fn section_id(project: &str) -> String {
    let name: String = project
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("runner_{name}")
}

fn unix(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A run refused before any project started, for GitHub's job summary: that nothing ran, what
/// was wrong and each fix (the log has them too, but the summary is where a job's readers look).
pub(crate) fn refused_summary(command: &str, provider: &str, stack: &str, err: &crate::error::RunnerError) -> String {
    let mut out = String::new();
    let items = err.items();
    let _ = writeln!(
        out,
        "### runner {command} · provider {provider} · stack {stack}\n\n❌ nothing ran: {}\n",
        if items.len() == 1 {
            cell(&items[0].what)
        } else {
            cell(&err.to_string())
        }
    );
    for (k, item) in items.iter().enumerate() {
        if items.len() > 1 {
            let _ = writeln!(out, "{}. {}", k + 1, cell(&item.what));
        }
        if let Some(fix) = &item.fix {
            let indent = if items.len() > 1 { "   " } else { "" };
            let _ = writeln!(out, "{indent}Fix: {}", cell(fix));
        }
    }
    out
}

/// The run as a Markdown table, for GitHub's job summary (`$GITHUB_STEP_SUMMARY`).
pub(crate) fn step_summary(
    plan: &Plan<'_>,
    stack: &str,
    result: &RunResult,
    total: f64,
    verdict: Option<&str>,
    kind: RunKind,
) -> String {
    let drift = kind.is_drift();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### runner {} · provider {} · stack {stack}\n\n{} in {}{}\n",
        kind.word(),
        plan.provider.name,
        super::status::counts(result, kind),
        super::duration(total),
        if result.interrupted { " (interrupted)" } else { "" }
    );
    if let Some(v) = verdict {
        let _ = writeln!(out, "{}\n", cell(v));
    }
    let _ = writeln!(
        out,
        "| project | result | duration | changes | detail |\n| --- | --- | --- | --- | --- |"
    );
    // Projects that had nothing to do are one row per reason, as in the log.
    let mut unchanged: std::collections::BTreeMap<String, (&crate::exec::Because, Vec<&str>)> =
        std::collections::BTreeMap::new();
    let mut marked = false;
    for (name, f) in &result.results {
        if let Status::Unchanged(because) = &f.status {
            unchanged
                .entry(super::reason::because(because))
                .or_insert((because, Vec::new()))
                .1
                .push(name);
            continue;
        }
        let mark = match f.status {
            Status::Succeeded if drift && would_change(&f.changes) => "⚠️",
            Status::Succeeded => "✅",
            Status::Failed | Status::TimedOut => "❌",
            Status::Interrupted => "⏹️",
            _ => "⏭️",
        };
        let took = f.took().map(|d| super::duration(d.as_secs_f64())).unwrap_or_default();
        // The marks of the log and the report (`~1 =2`), explained under the table.
        let changes = super::marks::changes(&f.changes);
        marked |= !changes.is_empty();
        let detail = match &f.status {
            Status::Failed | Status::TimedOut => super::failure::headline_or(f.error.as_ref(), ""),
            Status::Interrupted => "cut short by the interrupt: runs again on the next up".to_string(),
            other => super::reason::of(other).unwrap_or_default(),
        };
        let _ = writeln!(
            out,
            "| {} | {mark} {} | {took} | {} | {} |",
            cell(name),
            super::status::word(Told::of(f, kind)),
            changes,
            cell(&detail)
        );
    }
    for (reason, (because, names)) in &unchanged {
        let reason = if names.len() > 1 {
            super::reason::because_of_each(because)
        } else {
            reason.clone()
        };
        let _ = writeln!(
            out,
            "| {} | ⏭️ {} | | | {} |",
            cell(&names.join(", ")),
            if drift { "not checked" } else { "unchanged" },
            cell(&reason)
        );
    }
    out.push('\n');
    if marked {
        let _ = writeln!(out, "Resources: {}.\n", super::marks::marks_legend());
    }
    if drift {
        for (name, f) in result.results.iter().filter(|(_, f)| !f.diffs.is_empty()) {
            out.push_str(&super::drift::markdown(name, &f.diffs));
        }
    } else if result.interrupted || result.failed() {
        // What to do next. A CI job starts without the run state of the last one, so it
        // reruns every project: what is deployed already is a no-op for pulumi.
        let _ = writeln!(
            out,
            "{}: run the job again; what is deployed already changes nothing (its `pulumi up` finds it up to date).\n",
            if result.interrupted {
                "Interrupted"
            } else {
                "Fix the cause"
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn a_summary_cell_renders_no_html_of_the_engines() {
        assert_eq!(
            cell("error: <img src=x onerror=y> & a|b\nnext"),
            "error: &lt;img src=x onerror=y&gt; &amp; a\\|b<br>next"
        );
    }

    use super::*;

    #[test]
    fn each_ci_is_told_apart_and_its_escapes_are_kept() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_string())
        };
        assert_eq!(
            CiSystem::detect(&env(&[("GITHUB_ACTIONS", "true")])),
            Some(CiSystem::GitHub)
        );
        assert_eq!(CiSystem::detect(&env(&[("GITLAB_CI", "true")])), Some(CiSystem::GitLab));
        assert_eq!(CiSystem::detect(&env(&[("CI", "true")])), Some(CiSystem::Other));
        assert_eq!(CiSystem::detect(&env(&[("CI", "false")])), None);
        let a = CiSystem::GitHub
            .annotation("error", "eks: up failed, 50%", "quota\nexceeded", None)
            .unwrap();
        assert_eq!(a, "::error title=eks%3A up failed%2C 50%25::quota%0Aexceeded\n");
        let a = CiSystem::GitHub
            .annotation("error", "app: up failed", "x", Some(("projects/a,b/Pulumi.yaml", 17)))
            .unwrap();
        assert_eq!(
            a,
            "::error file=projects/a%2Cb/Pulumi.yaml,line=17,title=app%3A up failed::x\n"
        );
        let span = (
            Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000)),
            SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_042),
        );
        let g = CiSystem::GitHub.group("eks", "eks: up", &["a".into(), "  ::add-mask::x".into()], span);
        let token = stop_token();
        assert!(token.len() > 20, "{token}");
        assert_eq!(
            g,
            format!("::group::eks: up\n::stop-commands::{token}\na\n  ::add-mask::x\n::{token}::\n::endgroup::\n")
        );
        // The section lasts as long as the project ran (GitLab shows 42 s), though its lines
        // are printed together at its end.
        let g = CiSystem::GitLab.group("my app", "my app: up", &["a".into()], span);
        assert_eq!(
            g,
            "\x1b[0Ksection_start:1700000000:runner_my_app[collapsed=true]\r\x1b[0Kmy app: up\na\n\
             \x1b[0Ksection_end:1700000042:runner_my_app\r\x1b[0K\n"
        );
        assert_eq!(cell("a|b\nc"), "a\\|b<br>c");
    }
}
