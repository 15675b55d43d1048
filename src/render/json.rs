//! `show-plan --format json`: the stable, documented plan schema (`schemas/plan.schema.json`).
//! Additions keep `schema_version`; removals or changes of meaning bump it.

use serde::Serialize;

use crate::graph::EdgeKind;
use crate::plan::Plan;

pub(super) const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct PlanDoc<'a> {
    schema_version: u32,
    operation: &'a str,
    provider: ProviderDoc<'a>,
    targets: Vec<&'a str>,
    layers: Vec<&'a str>,
    projects: Vec<ProjectDoc<'a>>,
    edges: Vec<EdgeDoc<'a>>,
    waves: Vec<Vec<&'a str>>,
    critical_path: CriticalDoc<'a>,
}

#[derive(Serialize)]
struct ProviderDoc<'a> {
    name: &'a str,
    description: &'a str,
    file: &'a str,
    infra_type: Option<&'a str>,
    required_tools: &'a [String],
}

#[derive(Serialize)]
struct ProjectDoc<'a> {
    name: &'a str,
    description: Option<&'a str>,
    layer: &'a str,
    path: &'a str,
    declared_in: &'a str,
    needs: Vec<&'a str>,
    after: Vec<&'a str>,
    waits_for: Vec<&'a str>,
    wave: usize,
    critical: bool,
    estimate_seconds: Option<u64>,
    on_success: Vec<&'a str>,
    secrets: Vec<&'a str>,
}

#[derive(Serialize)]
struct EdgeDoc<'a> {
    from: &'a str,
    to: &'a str,
    kind: &'a str,
    outputs: &'a [&'a str],
}

#[derive(Serialize)]
struct CriticalDoc<'a> {
    projects: Vec<&'a str>,
    weight: u64,
    unit: &'a str,
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
