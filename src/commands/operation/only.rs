//! `up --only X` (and `destroy`, `refresh`, `preview`): X runs alone, assuming what it waits for
//! is done. Before it runs, the backend must prove it: on `up`, `refresh` and `preview` every
//! need (data or ordering) has a successful `up` — its stack has outputs, and every output X's
//! program reads from it; on `destroy` every dependent is gone. The proven needs' outputs reach
//! X's hooks as in a full run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::error::RunnerError;
use crate::exec::Outputs;
use crate::graph::{Direction, EdgeKind};
use crate::plan::Plan;
use crate::programs::Program;
use crate::pulumi::{Deployed, Pulumi};
use crate::settings::Settings;

/// Proves what the one project of `plan` waits for; returns the needs' outputs (for hooks), or
/// one error listing every need not proven, with the fix.
pub(crate) fn prove(s: &Settings, plan: &Plan<'_>, engine: &Pulumi) -> Result<BTreeMap<String, Outputs>, RunnerError> {
    let outside = plan.outside();
    if outside.is_empty() {
        return Ok(BTreeMap::new());
    }
    let runtime = crate::commands::runtime(crate::commands::Threads::One)?;
    // The outputs project `i`'s program reads from `them`.
    let reads = |i: usize, them: &str| -> Vec<String> {
        Program::load(&s.ws.root.join(&plan.project(i).path))
            .and_then(|p| p.reference(them).map(|r| r.outputs().map(String::from).collect()))
            .unwrap_or_default()
    };
    let forward = plan.operation.direction() == Direction::Forward;
    // One backend read per project it waits for: say what is read before the wait.
    let mut them: Vec<&str> = outside.iter().map(|&(_, other, _)| plan.name(other)).collect();
    them.dedup();
    let doing = if forward {
        "reading the outputs of what it waits for from the backend"
    } else {
        "checking in the backend that what needs it is gone"
    };
    crate::report::info(&format!(
        "--only {}: {doing}: {}…",
        plan.name(outside[0].0),
        them.join(", ")
    ));
    let mut given = BTreeMap::new();
    let mut problems = Vec::new();
    for (i, other, kind) in outside {
        let (me, them) = (plan.name(i), plan.name(other));
        let found = runtime.block_on(engine.deployed(plan.project(other))).map_err(|e| {
            RunnerError::usage(
                format!(
                    "cannot read the stack outputs of {them} from the backend: {}",
                    crate::report::failure::text(&e)
                ),
                "check PULUMI_BACKEND_URL and the passphrase: `runner up --only` reads each need's \
                     outputs from the backend the full run uses",
            )
        })?;
        let outputs = match found {
            Deployed::NoStack => None,
            Deployed::Outputs(o) if o.values.is_empty() => None,
            Deployed::Outputs(o) => Some(o),
        };
        if forward {
            let Some(outputs) = outputs else {
                problems.push(format!(
                    "{me} needs {them} ({}), which has no successful `up` in the backend: its stack `{}` has no outputs",
                    describe(kind),
                    engine.stack
                ));
                continue;
            };
            let wanted = reads(i, them);
            let missing: Vec<&str> = wanted
                .iter()
                .filter(|k| !outputs.values.contains_key(k.as_str()))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                problems.push(format!(
                    "{me} reads {} from {them}, which its stack in the backend lacks: its last successful `up` predates them",
                    missing.join(", ")
                ));
                continue;
            }
            given.insert(them.to_string(), outputs);
        } else if outputs.is_some() {
            problems.push(format!(
                "{me} is needed by {them} ({}), which is still deployed: its stack `{}` has outputs",
                describe(kind),
                engine.stack
            ));
        }
    }
    if problems.is_empty() {
        return Ok(given);
    }
    let target = plan.name(plan.order[0]);
    let op = plan.operation.as_str();
    let mut message = format!("`{op} --only {target}` cannot run alone:");
    for p in &problems {
        let _ = write!(message, "\n  - {p}");
    }
    let help = if forward {
        format!(
            "run what it needs first (`runner up --only NEED` for each, in plan order), or run it with \
             its needs: `runner {op} --target {target}`"
        )
    } else {
        format!(
            "destroy what needs it first (`runner destroy --only DEPENDENT`), or destroy it with its \
             dependents: `runner destroy --target {target}`"
        )
    };
    Err(RunnerError::usage(message, help))
}

fn describe(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Data => "reads its outputs",
        EdgeKind::Order => "runs after it",
    }
}
