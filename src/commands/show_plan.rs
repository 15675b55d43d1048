//! `show-plan`: the plan of one operation rendered as a tree, DOT, Mermaid or JSON, its edges
//! labelled with the outputs that flow along them, and a warning wherever the programs and the
//! provider files' needs disagree.

use std::borrow::Cow;

use super::write_result;
use crate::error::{RunnerError, exit};
use crate::plan::{Operation, Plan};
use crate::programs::{self, Programs};
use crate::provider::Provider;
use crate::render::{self, EdgeLabels, Rendering};
use crate::report;
use crate::runstate::History;
use crate::settings::Settings;

/// What `show-plan` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct PlanOptions {
    pub(crate) operation: Operation,
    pub(crate) targets: Vec<String>,
    pub(crate) excludes: Vec<String>,
    pub(crate) format: Rendering,
}

/// `cache`: the program cache, being read since before the provider was loaded.
pub(crate) fn show(
    s: &Settings,
    provider: &Provider,
    o: &PlanOptions,
    cache: programs::CacheRead,
) -> Result<i32, RunnerError> {
    let provider = &*learned(s, provider, o.operation);
    let plan = Plan::new(provider, o.operation, &o.targets)
        .and_then(|p| p.excluding(&o.excludes))
        .map(|(p, _)| p)?;
    let programs = programs::read_with(&s.ws, provider, cache, programs::Learn::Keep);
    let labels = match o.format {
        Rendering::Tree => EdgeLabels::default(),
        Rendering::Dot | Rendering::Mermaid | Rendering::Svg | Rendering::Json => edge_labels(&plan, &programs),
    };
    let text = match o.format {
        Rendering::Tree => render::tree(&plan),
        Rendering::Dot => render::dot(&plan, &labels),
        Rendering::Mermaid => render::mermaid(&plan, &labels),
        Rendering::Svg => render::svg(&plan, &labels),
        Rendering::Json => render::json(&plan, &labels),
    };
    write_result(&text)?;
    // The plan is only as right as the needs: say where they and the programs disagree.
    let problems = programs::check(&s.ws, provider, &programs);
    report::warnings(problems.iter().map(|p| format!("{}\n  fix: {}", p.what, p.fix)));
    // The process ends here: freeing a big graph's structures one by one would cost more than
    // rendering them, and the system takes the memory back at once.
    std::mem::forget((text, labels, plan));
    std::mem::forget(programs);
    Ok(exit::SUCCESS)
}

/// The provider with the durations past runs of the stack (when one is known) took as its
/// projects' estimates, said in a note; copied only then (a big graph's provider is large).
fn learned<'p>(s: &Settings, provider: &'p Provider, operation: Operation) -> Cow<'p, Provider> {
    let Some(stack) = s.known_stack() else {
        return Cow::Borrowed(provider);
    };
    let learned = match History::load(&s.ws.run_dir(&stack), &|p| s.ws.show(p)) {
        Ok(history) => history.estimates(&provider.name, operation),
        Err(why) => {
            report::warning(&why.to_string());
            return Cow::Borrowed(provider);
        }
    };
    let known = provider
        .projects
        .iter()
        .filter(|p| learned.contains_key(&p.name))
        .count();
    if known == 0 {
        return Cow::Borrowed(provider);
    }
    let mut provider = provider.clone();
    provider.learn_estimates(&learned);
    report::info(&format!(
        "estimates: the {} durations of {known} of {} learned from past runs of stack {stack}",
        operation.as_str(),
        crate::render::count(provider.projects.len(), "project")
    ));
    Cow::Owned(provider)
}

/// The outputs each project of the plan reads from the others, from its program's
/// `StackReference`s.
fn edge_labels<'p>(plan: &Plan<'p>, programs: &'p Programs) -> EdgeLabels<'p> {
    let mut labels = EdgeLabels::with_capacity_and_hasher(plan.order.len() * 2, foldhash::fast::RandomState::default());
    for &i in &plan.order {
        let Some(program) = programs.get(i) else {
            continue;
        };
        let name = plan.name(i);
        for r in program.refs.iter().filter(|r| !r.reads.is_empty()) {
            labels.insert((r.project.as_str(), name), r.outputs().collect());
        }
    }
    labels
}
