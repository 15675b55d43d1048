//! Graphviz DOT: one cluster per layer, arrows in run order, the critical path in bold red,
//! ordering-only needs dashed. Renders with `dot -Tsvg` without warnings.

use std::fmt::Write as _;

use crate::graph::EdgeKind;
use crate::plan::Plan;

const CRITICAL_COLOR: &str = "#c0392b";

pub(crate) fn dot(plan: &Plan<'_>, labels: &super::EdgeLabels<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "digraph {} {{",
        quote(&format!("runner {} {}", plan.provider.name, plan.operation.as_str()))
    );
    let _ = writeln!(
        out,
        "  graph [rankdir=LR, labelloc=t, fontname=\"Helvetica\", label={}];",
        quote(&format!(
            "{} · provider {} · {} in {} (arrows: run order; red: critical path; dashed: order only)",
            plan.operation.as_str(),
            plan.provider.name,
            super::count(plan.order.len(), "project"),
            super::count(plan.waves.len(), "wave")
        ))
    );
    let _ = writeln!(out, "  node [shape=box, style=rounded, fontname=\"Helvetica\"];");
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\"];");
    for layer in plan.layers() {
        let _ = writeln!(out, "  subgraph {} {{", quote(&format!("cluster_{layer}")));
        let _ = writeln!(out, "    label={};", quote(layer.as_str()));
        let _ = writeln!(out, "    style=dashed;");
        for &i in plan.order.iter().filter(|&&i| plan.project(i).layer == layer) {
            let label = format!("{}\\nwave {}", plan.name(i), plan.wave(i));
            let critical = if plan.is_critical(i) {
                format!(", color=\"{CRITICAL_COLOR}\", penwidth=2.5")
            } else {
                String::new()
            };
            let _ = writeln!(out, "    {} [label=\"{label}\"{critical}];", quote(plan.name(i)));
        }
        let _ = writeln!(out, "  }}");
    }
    for (a, b, kind) in plan.edges() {
        let mut attrs = Vec::new();
        let outputs = super::flows(labels, plan.name(a), plan.name(b));
        if !outputs.is_empty() {
            // One output per line: DOT's `\n` escape, between individually quoted names.
            let lines: Vec<String> = outputs
                .iter()
                .map(|o| o.replace('\\', "\\\\").replace('"', "\\\""))
                .collect();
            attrs.push(format!("label=\"{}\", fontsize=10", lines.join("\\n")));
        }
        if kind == EdgeKind::Order {
            attrs.push("style=dashed".to_string());
        }
        if plan.is_critical_edge(a, b) {
            attrs.push(format!("color=\"{CRITICAL_COLOR}\", penwidth=2.5"));
        }
        let attrs = if attrs.is_empty() {
            String::new()
        } else {
            format!(" [{}]", attrs.join(", "))
        };
        let _ = writeln!(out, "  {} -> {}{attrs};", quote(plan.name(a)), quote(plan.name(b)));
    }
    out.push_str("}\n");
    out
}

/// A DOT double-quoted string.
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
