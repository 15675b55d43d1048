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

/// `a, b, c`
fn list(items: &[&str]) -> String {
    items.join(", ")
}
