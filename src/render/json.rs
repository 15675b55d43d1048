//! `show-plan --format json`: the stable, documented plan schema (`schemas/plan.schema.json`).
//! Additions keep `schema_version`; removals or changes of meaning bump it.

use serde::Serialize;

use crate::graph::EdgeKind;
use crate::plan::Plan;

pub(super) const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct PlanDoc<'a> {
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::version"))]
    schema_version: u32,
    /// destroy runs dependents first; the others run needs first
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::operation"))]
    operation: &'a str,
    provider: ProviderDoc<'a>,
    /// --target values; empty means the whole graph
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::names"))]
    targets: Vec<&'a str>,
    /// layers present, in run order
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::layers"))]
    layers: Vec<&'a str>,
    /// the projects of the plan, in run order
    projects: Vec<ProjectDoc<'a>>,
    /// between projects of the plan, in run order: `from` runs before `to`
    edges: Vec<EdgeDoc<'a>>,
    /// wave n (1-based) at index n-1; the projects of a wave can run at the same time
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::waves"))]
    waves: Vec<Vec<&'a str>>,
    critical_path: CriticalDoc<'a>,
}

/// The provider the plan is of.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct ProviderDoc<'a> {
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::name"))]
    name: &'a str,
    description: &'a str,
    /// the provider file, as shown to the user
    file: &'a str,
    /// the value written to `kubernetes:infra_type`
    infra_type: Option<&'a str>,
    /// commands the graph needs on PATH
    required_tools: &'a [String],
}

/// A project of the plan.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct ProjectDoc<'a> {
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::name"))]
    name: &'a str,
    /// banner text
    description: Option<&'a str>,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::layer"))]
    layer: &'a str,
    /// Pulumi project directory, relative to the workspace
    path: &'a str,
    /// the provider or layer file declaring it
    declared_in: &'a str,
    /// projects whose outputs it reads (declared, whether or not in this plan)
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::names"))]
    needs: Vec<&'a str>,
    /// ordering-only needs: no outputs read
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::names"))]
    after: Vec<&'a str>,
    /// projects of this plan that must finish first in this operation (needs on up, dependents
    /// on destroy)
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::names"))]
    waits_for: Vec<&'a str>,
    #[cfg_attr(test, schemars(range(min = 1)))]
    wave: usize,
    /// on the critical path
    critical: bool,
    #[cfg_attr(test, schemars(range(min = 1)))]
    estimate_seconds: Option<u64>,
    /// built-in hook names or `scripts/` paths
    on_success: Vec<&'a str>,
    /// secret config keys it needs (values are never shown)
    #[cfg_attr(test, schemars(inner(regex(pattern = "^[^:]+:.+$"))))]
    secrets: Vec<&'a str>,
}

/// An edge between two projects of the plan.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct EdgeDoc<'a> {
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::name"))]
    from: &'a str,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::name"))]
    to: &'a str,
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::edge_kind"))]
    kind: &'a str,
    /// the stack outputs the downstream project's program reads along this edge (from its
    /// `StackReference`s); empty for ordering-only edges
    outputs: &'a [&'a str],
}

/// The critical path.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(deny_unknown_fields))]
struct CriticalDoc<'a> {
    /// the longest chain, in run order
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::names"))]
    projects: Vec<&'a str>,
    weight: u64,
    /// seconds when any project of the plan has an estimate (others count 1 s)
    #[cfg_attr(test, schemars(schema_with = "crate::schemas::unit"))]
    unit: &'a str,
}

/// The plan's schema, as the tests compare it with `schemas/plan.schema.json`.
#[cfg(test)]
pub(crate) fn schema() -> schemars::Schema {
    crate::schemas::document::<PlanDoc<'static>>(
        "plan.schema.json",
        "runner plan",
        "Output of `runner show-plan --format json`. Fields may be added without changing schema_version; a field removed or changed in meaning bumps it.",
    )
}

pub(crate) fn json(plan: &Plan<'_>, labels: &super::EdgeLabels<'_>) -> String {
    let p = plan.provider;
    let projects: Vec<ProjectDoc<'_>> = plan
        .order
        .iter()
        .map(|&i| {
            let pr = plan.project(i);
            ProjectDoc {
                name: &pr.name,
                description: pr.description.as_deref(),
                layer: pr.layer.as_str(),
                path: &pr.path,
                declared_in: &pr.declared_in,
                needs: plan.needs(i, EdgeKind::Data),
                after: plan.needs(i, EdgeKind::Order),
                waits_for: plan.waits_for(i).iter().map(|n| plan.name(n.node)).collect(),
                wave: plan.wave(i),
                critical: plan.is_critical(i),
                estimate_seconds: pr.estimate,
                on_success: pr.on_success.iter().map(crate::provider::Hook::as_str).collect(),
                secrets: pr.secrets.iter().map(|s| s.key.as_str()).collect(),
            }
        })
        .collect();
    let edges: Vec<EdgeDoc<'_>> = plan
        .edges()
        .into_iter()
        .map(|(a, b, kind)| EdgeDoc {
            from: plan.name(a),
            to: plan.name(b),
            kind: kind.as_str(),
            outputs: super::flows(labels, plan.name(a), plan.name(b)),
        })
        .collect();
    let doc = PlanDoc {
        schema_version: SCHEMA_VERSION,
        operation: plan.operation.as_str(),
        provider: ProviderDoc {
            name: &p.name,
            description: &p.description,
            file: &p.file,
            infra_type: p.infra_type.as_deref(),
            required_tools: &p.required_tools,
        },
        targets: plan.targets.iter().map(|&i| plan.name(i)).collect(),
        layers: plan.layers().into_iter().map(crate::graph::Layer::as_str).collect(),
        projects: Vec::new(),
        edges: Vec::new(),
        waves: plan
            .waves
            .iter()
            .map(|w| w.iter().map(|&i| plan.name(i)).collect())
            .collect(),
        critical_path: CriticalDoc {
            projects: plan.critical.nodes.iter().map(|&i| plan.name(i)).collect(),
            weight: plan.critical.weight,
            unit: plan.weighing_unit(),
        },
    };
    // The two big arrays are rendered on two cores (a plan of 10,000 projects is megabytes of
    // JSON), each as the one member of an object, so at the indentation it has in the plan,
    // and put in place of the empty arrays the rest was rendered with. Inside the document only
    // a top-level key starts a line with two spaces and a quote (strings hold no line breaks).
    let (projects, edges) = std::thread::scope(|s| {
        let edges = s.spawn(|| member("edges", &edges));
        (
            member("projects", &projects),
            edges.join().expect("rendering cannot panic"),
        )
    });
    let head = serde_json::to_string_pretty(&doc).expect("a plan always serializes");
    let mut text = String::with_capacity(head.len() + projects.len() + edges.len() + 1);
    let mut rest = head.as_str();
    for (key, member) in [("\n  \"projects\": []", &projects), ("\n  \"edges\": []", &edges)] {
        let at = rest.find(key).expect("the plan has this member") + 1;
        text.push_str(&rest[..at]);
        // Without the object's own `{\n` and `\n}`.
        text.push_str(&member[2..member.len() - 2]);
        rest = &rest[at + key.len() - 1..];
    }
    text.push_str(rest);
    text.push('\n');
    text
}

/// `{"key": value}` rendered pretty.
fn member<T: Serialize>(key: &str, value: &T) -> String {
    serde_json::to_string_pretty(&std::collections::BTreeMap::from([(key, value)])).expect("a plan always serializes")
}
