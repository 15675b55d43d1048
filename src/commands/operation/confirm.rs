//! What a person is told and asked before the run and after it: what will run and why, the
//! confirmation (the stack name typed for destroy), the kubeconfig prune after a destroy; every
//! question through the `Ask` trait.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::RunOptions;
use crate::config::backend::Backend;
use crate::config::questions::Ask as _;
use crate::config::request::Ready;
use crate::config::terminal::Terminal;
use crate::error::RunnerError;
use crate::exec::{RunResult, Status};
use crate::plan::{Operation, Plan};
use crate::pulumi;
use crate::report;
use crate::report::reason;
use crate::runstate::{Pending, Why};
use crate::settings::{Settings, StackContext};

/// Without a terminal nobody can confirm a destroy: the command line must.
pub(super) fn destroy_needs_yes(s: &Settings, t: &StackContext) -> RunnerError {
    RunnerError::usage(
        "`destroy` needs --yes when nobody can confirm it at a terminal",
        format!(
            "run it at a terminal to confirm by typing the stack name, or add --yes: `runner destroy{} -s {} --yes`",
            crate::settings::provider_flag(&s.ws, &t.provider.name),
            t.stack
        ),
    )
}

/// Says what will run and why; at a terminal, asks first (unless `--yes`).
pub(super) fn go_ahead(
    s: &Settings,
    t: &StackContext,
    plan: &Plan<'_>,
    o: &RunOptions,
    ready: &Ready,
    pending: Option<&[(String, Pending)]>,
) -> Result<(), RunnerError> {
    let runs = pending.and_then(|p| what_runs(plan, p)).or_else(|| {
        (o.fresh && plan.operation == Operation::Up).then(|| {
            let n = plan.order.len();
            format!("up: {n} of {n} projects will run (--fresh: unchanged ones too)")
        })
    });
    // An `up` with nothing to do asks nothing: there is nothing to agree to.
    let nothing = pending.is_some_and(|p| !p.is_empty() && p.iter().all(|(_, p)| !p.runs));
    if s.interactive && !o.yes && !nothing {
        return confirm(s, t, plan, ready, runs.as_deref());
    }
    if let Some(line) = &runs {
        report::info(line);
    }
    Ok(())
}

/// What an `up` will run, and why, in one line, told before it starts (and before the
/// confirmation), as "up: 1 of 11 projects will run: logstore (stack file key
/// ‘logstore:retention’ changed since its last up); 2 more after it when its outputs change:
/// logagent, app; 8 unchanged". `None` for other operations, `--fresh` (everything runs) and
/// when nothing will (the summary says so).
pub(super) fn what_runs(plan: &Plan<'_>, pending: &[(String, Pending)]) -> Option<String> {
    let (after, own): (Vec<_>, Vec<_>) = pending
        .iter()
        .filter(|(_, p)| p.runs)
        .partition(|(_, p)| matches!(p.why, Why::After(_)));
    let unchanged = pending.len() - own.len() - after.len();
    if own.is_empty() && after.is_empty() {
        return None; // the summary says it, in one line
    }
    let mut line = format!(
        "up: {} of {} will run",
        own.len(),
        crate::render::count(plan.order.len(), "project")
    );
    // A first run: every project for the same reason, said once.
    if own.len() == pending.len() && own.iter().all(|(_, p)| p.why == own[0].1.why) {
        let _ = write!(line, " ({})", reason::pending(&own[0].1.why));
    } else if !own.is_empty() {
        // Projects that run for the same reason are named together, the reason said once.
        let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
        for (n, p) in &own {
            let why = reason::pending(&p.why);
            match reasons.iter_mut().find(|(said, _)| *said == why) {
                Some((_, names)) => names.push(n),
                None => reasons.push((why, vec![n])),
            }
        }
        // A reason after several names is each one's, not the last one's.
        let listed: Vec<String> = reasons
            .iter()
            .map(|(why, names)| match names.as_slice() {
                [one] => format!("{one} ({why})"),
                many => format!("{} (each: {why})", many.join(", ")),
            })
            .collect();
        let _ = write!(line, ": {}", listed.join(", "));
    }
    if !after.is_empty() {
        let names: Vec<&str> = after.iter().map(|(n, _)| n.as_str()).collect();
        let (them, their) = if own.len() == 1 {
            ("it", "its")
        } else {
            ("them", "their")
        };
        let _ = write!(
            line,
            "; {} more after {them} when {their} outputs change: {}",
            names.len(),
            names.join(", ")
        );
    }
    if unchanged > 0 {
        let _ = write!(line, "; {unchanged} unchanged");
    }
    Some(line)
}

/// At a terminal, what the run will do, and the question: the stack name typed for destroy,
/// yes or no for up and refresh. Preview changes nothing and asks nothing.
pub(super) fn confirm(
    s: &Settings,
    t: &StackContext,
    plan: &Plan<'_>,
    ready: &Ready,
    runs: Option<&str>,
) -> Result<(), RunnerError> {
    let backend = Backend::of(&ready.env);
    let io = |source| RunnerError::Io {
        context: "cannot read the answer from the terminal".into(),
        source,
    };
    let mut terminal = Terminal::before_the_run(s.console);
    let confirmed = match plan.operation {
        Operation::Preview => true,
        Operation::Destroy => {
            let names: Vec<&str> = plan.order.iter().map(|&i| plan.name(i)).collect();
            report::info(&format!(
                "destroy: every resource of {} of provider {}, stack {}, backend {backend}, in this order:\n  {}",
                crate::render::count(names.len(), "project"),
                t.provider.name,
                t.stack,
                names.join(", ")
            ));
            let question = format!("Type the stack name `{}` to destroy it", t.stack);
            let answer = terminal.text(&question, None, &|_| Ok(())).map_err(io)?;
            let typed = answer.trim() == t.stack;
            if !typed {
                report::info(&format!(
                    "`{}` is not the stack's name (`{}`): the name is asked so that nothing is destroyed by mistake",
                    crate::report::text::visible(answer.trim()),
                    t.stack
                ));
            }
            typed
        }
        Operation::Up | Operation::Refresh => {
            report::info(&format!(
                "{}: {} of provider {}, stack {}, backend {backend}",
                plan.operation.as_str(),
                crate::render::count(plan.order.len(), "project"),
                t.provider.name,
                t.stack
            ));
            if let Some(line) = runs {
                report::info(line);
            }
            terminal.confirm("Go ahead?").map_err(io)?
        }
    };
    if confirmed { Ok(()) } else { Err(RunnerError::Declined) }
}

/// The cluster projects a destroy of `result` removed whose `kubeconfig-merge` left entries in
/// a kubeconfig (its merge record is there), in run order.
pub(super) fn merged_and_destroyed<'r>(t: &StackContext, result: &'r RunResult) -> Vec<&'r str> {
    let merges: BTreeSet<&str> = t
        .provider
        .projects
        .iter()
        .filter(|p| p.merges_kubeconfig())
        .map(|p| p.name.as_str())
        .collect();
    result
        .results
        .iter()
        .filter(|(name, f)| {
            f.status == Status::Succeeded && merges.contains(name.as_str()) && t.run_dir.merge_record(name).exists()
        })
        .map(|(name, _)| name.as_str())
        .collect()
}

/// After an interactive destroy: offer to remove the kubeconfig entries `kubeconfig-merge` added
/// for each cluster project destroyed (with `--prune-kubeconfig` this happens without asking).
pub(super) fn offer_kubeconfig_prune(s: &Settings, t: &StackContext, result: &RunResult) {
    let mut declined = Vec::new();
    for name in merged_and_destroyed(t, result) {
        let question = format!("{name} is destroyed: remove its cluster, user and context from your kubeconfig?");
        if Terminal::new(s.console).confirm(&question).unwrap_or(false) {
            match pulumi::prune_kubeconfig(&t.run_dir, name) {
                Ok(Some(message)) => report::info(&message),
                Ok(None) => {}
                Err(e) => report::warning(&format!("cannot prune the kubeconfig: {e}")),
            }
        } else {
            declined.push(name);
        }
    }
    // A "no" now need not be for good: the way to do it later.
    if !declined.is_empty() {
        report::info(&kubeconfig_kept(t, &declined));
    }
}

/// What stays in the kubeconfig after a destroy of `kept` (the projects that merged into it),
/// and the command that removes it later.
pub(super) fn kubeconfig_kept(t: &StackContext, kept: &[&str]) -> String {
    format!(
        "The kubeconfig keeps the cluster, user and context that {} merged into it: \
         `runner destroy -s {} --target {} --prune-kubeconfig` removes them (it asks as every destroy \
         does, but its stacks are empty now: nothing else changes).",
        kept.join(", "),
        t.stack,
        kept.join(" --target ")
    )
}
