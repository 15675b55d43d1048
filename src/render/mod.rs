//! Renderings of a plan for `show-plan`: pure functions from a [`Plan`](crate::plan::Plan) to
//! text, deterministic so they can be diffed and snapshot-tested.

mod dot;
mod json;
mod mermaid;
mod tree;

pub use dot::dot;
pub use json::{SCHEMA_VERSION, json};
pub use mermaid::mermaid;
pub use tree::tree;

/// Outputs read along each edge: (upstream project, downstream project) → output names.
pub type EdgeLabels = std::collections::BTreeMap<(String, String), Vec<String>>;

/// The outputs that flow along the edge `a → b` (in run order, so on destroy the reverse).
fn flows<'l>(labels: &'l EdgeLabels, a: &str, b: &str) -> &'l [String] {
    labels
        .get(&(a.to_string(), b.to_string()))
        .or_else(|| labels.get(&(b.to_string(), a.to_string())))
        .map_or(&[], Vec::as_slice)
}

/// `a, b, c`
fn list(items: &[&str]) -> String {
    items.join(", ")
}
