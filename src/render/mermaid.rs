//! Mermaid `flowchart`: one subgraph per layer, arrows in run order, ordering-only needs dotted,
//! the critical path highlighted.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::graph::EdgeKind;
use crate::plan::Plan;

pub(crate) fn mermaid(plan: &Plan<'_>, labels: &super::EdgeLabels<'_>) -> String {
    // Node ids are positions in run order: project names may contain `-` and `.`, and words
    // like `end` break Mermaid's parser, so names go only into the quoted labels.
    let id: HashMap<usize, String> = plan
        .order
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, format!("p{k}")))
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "flowchart LR");
    for layer in plan.layers() {
        let _ = writeln!(out, "  subgraph {layer}[\"{layer}\"]");
        for &i in plan.order.iter().filter(|&&i| plan.project(i).layer == layer) {
            let _ = writeln!(out, "    {}[\"{}<br/>wave {}\"]", id[&i], plan.name(i), plan.wave(i));
        }
        let _ = writeln!(out, "  end");
    }
    let mut critical_links = Vec::new();
    for (k, (a, b, kind)) in plan.edges().into_iter().enumerate() {
        let arrow = if kind == EdgeKind::Order { "-.->" } else { "-->" };
        let outputs = super::flows(labels, plan.name(a), plan.name(b));
        let label = if outputs.is_empty() {
            String::new()
        } else {
            format!("|\"{}\"|", outputs.join(", "))
        };
        let _ = writeln!(out, "  {} {arrow}{label} {}", id[&a], id[&b]);
        if plan.is_critical_edge(a, b) {
            critical_links.push(k.to_string());
        }
    }
    let critical: Vec<&str> = plan.critical.nodes.iter().map(|i| id[i].as_str()).collect();
    if !critical.is_empty() {
        let _ = writeln!(out, "  classDef critical stroke:#c0392b,stroke-width:3px");
        let _ = writeln!(out, "  class {} critical", critical.join(","));
    }
    if !critical_links.is_empty() {
        let _ = writeln!(
            out,
            "  linkStyle {} stroke:#c0392b,stroke-width:3px",
            critical_links.join(",")
        );
    }
    out
}
