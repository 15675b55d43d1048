//! The project's `config:` block: refused as the CLI refuses it when it loads the project, and
//! each key typed for the `${…}` reads of the program.

use serde_json::Value;

use super::Checker;
use super::problem::Against;
use super::types::Ty;
use crate::yaml::Node;

impl Checker<'_> {
    /// `config:` as the CLI validates it when it loads the project, and each key's type for
    /// what the program reads (`typeConfig`: a default's type, else the declared one).
    pub(super) fn config_block(&mut self) {
        let doc = self.doc;
        let project = doc.get("name").and_then(Node::scalar_text).unwrap_or_default();
        if let Some(config) = doc.get("config") {
            for (key, decl) in config.entries() {
                let mut one = serde_json::Map::new();
                one.insert(key.name.clone(), decl.to_json());
                let one = Value::Object(one);
                if let Err(f) = crate::program::projconfig::declarations(&project, &one, "Pulumi.yaml") {
                    self.error(key.line, f.message, "", Against::ProjectSchema);
                }
            }
        }
        for section in ["configuration", "config"] {
            for (key, decl) in doc.get(section).map(Node::entries).unwrap_or_default() {
                let ty = match decl.get("default") {
                    Some(d) if decl.is_map() => self.type_of(d),
                    _ => decl
                        .get("type")
                        .and_then(Node::as_str)
                        .map_or(Ty::Invalid, |t| config_type(t, decl.get("items"))),
                };
                let ty = if decl.is_map() { ty } else { Ty::Invalid };
                let short = key.name.split_once(':').map_or(key.name.as_str(), |(_, k)| k);
                self.config.insert(short.to_string(), ty.clone());
                self.config.insert(key.name.clone(), ty);
            }
        }
    }
}

/// A config key's declared type (`ctypes.Parse`).
fn config_type(t: &str, items: Option<&Node>) -> Ty {
    let lower = t.to_lowercase();
    match lower.as_str() {
        "string" => Ty::Str,
        "integer" | "int" => Ty::Int,
        "number" => Ty::Num,
        "boolean" | "bool" => Ty::Bool,
        "array" => Ty::List(Box::new(
            items
                .and_then(|i| {
                    i.get("type")
                        .and_then(Node::as_str)
                        .map(|t| config_type(t, i.get("items")))
                })
                .unwrap_or(Ty::Any),
        )),
        _ => match lower.strip_prefix("list<").and_then(|r| r.strip_suffix('>')) {
            Some(inner) => Ty::List(Box::new(config_type(inner, None))),
            None => Ty::Invalid,
        },
    }
}
