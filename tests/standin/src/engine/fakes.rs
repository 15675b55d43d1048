//! What providers return for the resources and functions of the workspace's programs
//! (`fakes.yaml`), so programs that read output-only properties evaluate as they would for real.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Map, Value};

fn table() -> &'static Value {
    static TABLE: OnceLock<Value> = OnceLock::new();
    TABLE.get_or_init(|| serde_saphyr::from_str(include_str!("fakes.yaml")).expect("fakes.yaml parses"))
}

/// Output-only properties of a resource of type `ty` named `name`.
pub fn resource(ty: &str, name: &str, stack: &str) -> Map<String, Value> {
    match &table()["resources"][ty] {
        Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), fill(v, name, stack))).collect(),
        _ => Map::new(),
    }
}

/// The result of invoking `function`.
pub fn function(function: &str, stack: &str) -> Option<Value> {
    table()["functions"].get(function).map(|v| fill(v, "", stack))
}

fn fill(v: &Value, name: &str, stack: &str) -> Value {
    match v {
        Value::String(s) => {
            let text = s.replace("{stack}", stack).replace("{name}", name);
            match text.strip_prefix("base64:") {
                Some(raw) => Value::String(B64.encode(raw)),
                None => Value::String(text),
            }
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, name, stack)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(x, name, stack))).collect()),
        other => other.clone(),
    }
}
