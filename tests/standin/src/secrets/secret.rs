//! Pulumi's secret values as the engine marks them (`sdk/go/common/resource/sig`): a value
//! wrapped in an object under the secret signature. Read by the program's evaluation, the
//! encryption of stack files and the display of outputs.

use serde_json::{Value, json};

/// Pulumi's secret signature (`sdk/go/common/resource/sig`).
pub const SIG_KEY: &str = "4dabf18193072939515e22adb298388d";
pub const SIG_SECRET: &str = "1b47061264138c4ac30d75fd1eb44270";

pub fn secret(v: Value) -> Value {
    json!({ SIG_KEY: SIG_SECRET, "plaintext": v })
}

pub fn is_secret(v: &Value) -> bool {
    v.get(SIG_KEY).is_some_and(|s| s == SIG_SECRET)
}

/// The value under any secret wrappers, and whether there was one.
pub fn reveal(v: &Value) -> (Value, bool) {
    if is_secret(v) {
        let (inner, _) = reveal(&v["plaintext"]);
        (inner, true)
    } else {
        (v.clone(), false)
    }
}

/// Does a value hold a secret anywhere?
pub fn contains_secret(v: &Value) -> bool {
    is_secret(v)
        || match v {
            Value::Array(a) => a.iter().any(contains_secret),
            Value::Object(m) => m.values().any(contains_secret),
            _ => false,
        }
}

/// The value with every secret wrapper removed.
pub fn deep_reveal(v: &Value) -> Value {
    let (v, _) = reveal(v);
    match v {
        Value::Array(a) => Value::Array(a.iter().map(deep_reveal).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), deep_reveal(x))).collect()),
        other => other,
    }
}
