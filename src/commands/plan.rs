//! `show-plan`: the plan of one operation rendered as a tree, DOT, Mermaid or JSON, its edges
//! labelled with the outputs that flow along them, and a warning wherever the programs and the
//! provider files' needs disagree.

use super::write_result;
use crate::error::{RunnerError, exit};
use crate::plan::{Operation, Plan};
use crate::programs::{self, Programs};
use crate::provider::Provider;
use crate::render::{self, EdgeLabels, Format};
use crate::report;
use crate::runstate::History;
use crate::settings::Settings;

/// What `show-plan` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct PlanOptions {
    pub(crate) operation: Operation,
    pub(crate) targets: Vec<String>,
    pub(crate) excludes: Vec<String>,
    pub(crate) format: Format,
}

pub(crate) fn show(s: &Settings, provider: &Provider, o: &PlanOptions) -> Result<i32, RunnerError> {
    let provider = &learned(s, provider, o.operation);
    let plan = Plan::new(provider, o.operation, &o.targets)
        .and_then(|p| p.excluding(&o.excludes))
        .map(|(p, _)| p)
        .map_err(|e| {
            let help = match &e.suggestion {
                Some(x) => format!(
                    "did you mean `{x}`? See the projects with `runner show-plan -p {}`",
                    e.provider
                ),
                None => format!("see the projects with `runner show-plan -p {}`", e.provider),
            };
            RunnerError::usage(e.to_string(), help)
        })?;
    let programs = programs::read_all(&s.ws, provider);
    let text = match o.format {
        Format::Tree => render::tree(&plan),
        Format::Dot => render::dot(&plan, &edge_labels(&plan, &programs)),
        Format::Mermaid => render::mermaid(&plan, &edge_labels(&plan, &programs)),
        Format::Json => render::json(&plan, &edge_labels(&plan, &programs)),
    };
    write_result(&text)?;
    // The plan is only as right as the needs: say where they and the programs disagree.
    for p in programs::check(provider, &programs) {
        report::warning(&format!("{}\n  fix: {}", p.what, p.fix));
    }
    Ok(exit::SUCCESS)
}

/// The provider with the durations past runs of the stack (when one is known) took as its
/// projects' estimates, said in a note.
fn learned(s: &Settings, provider: &Provider, operation: Operation) -> Provider {
    let mut provider = provider.clone();
    if let Some(stack) = s.known_stack() {
        let learned = History::load(&s.ws.run_dir(&stack)).estimates(operation);
        let known = provider
            .projects
            .iter()
            .filter(|p| learned.contains_key(&p.name))
            .count();
        if known > 0 {
            provider.learn_estimates(&learned);
            report::info(&format!(
                "estimates: {known} of {} projects' {} durations learned from past runs of stack {stack}",
                provider.projects.len(),
                operation.as_str()
            ));
        }
    }
    provider
}

/// The outputs each project of the plan reads from the others, from its program's
/// `StackReference`s.
fn edge_labels(plan: &Plan<'_>, programs: &Programs) -> EdgeLabels {
    let mut labels = EdgeLabels::new();
    for &i in &plan.order {
        let p = plan.project(i);
        let Some((_, program)) = programs.get(&p.name) else {
            continue;
        };
        for (upstream, outputs) in &program.reads {
            if !outputs.is_empty() {
                labels.insert((upstream.clone(), p.name.clone()), outputs.iter().cloned().collect());
            }
        }
    }
    labels
}
