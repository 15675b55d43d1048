//! Stack outputs as the runner holds them: the values (in memory only) and which are secret.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// Shown instead of a secret value, everywhere the runner writes or prints.
pub const REDACTED: &str = "[secret]";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outputs {
    pub values: Map<String, Value>,
    pub secret: BTreeSet<String>,
}

impl Outputs {
    /// From `stack output --json --show-secrets` and `stack output --json` (where secrets read
    /// `"[secret]"`), as Pulumi's Automation API tells them apart.
    pub fn from_pair(shown: Map<String, Value>, hidden: &Map<String, Value>) -> Self {
        let secret = hidden
            .iter()
            .filter(|(_, v)| v.as_str() == Some(REDACTED))
            .map(|(k, _)| k.clone())
            .collect();
        Outputs { values: shown, secret }
    }

    /// The outputs with every secret value replaced by `[secret]`: safe to print and write.
    pub fn redacted(&self) -> Map<String, Value> {
        self.values
            .iter()
            .map(|(k, v)| {
                let shown = if self.secret.contains(k) {
                    Value::String(REDACTED.into())
                } else {
                    v.clone()
                };
                (k.clone(), shown)
            })
            .collect()
    }

    /// Every secret value as text, so output lines can be scrubbed of them.
    pub fn secret_texts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for k in &self.secret {
            if let Some(v) = self.values.get(k) {
                collect_strings(v, &mut out);
            }
        }
        out.retain(|s| s.len() >= 4);
        out
    }
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out)),
        Value::Null => {}
        other => out.push(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_told_apart_and_redacted() {
        let shown = json!({"url": "http://x", "password": "hunter22", "nested": {"token": "abcd1234"}});
        let hidden = json!({"url": "http://x", "password": "[secret]", "nested": "[secret]"});
        let o = Outputs::from_pair(shown.as_object().unwrap().clone(), hidden.as_object().unwrap());
        assert_eq!(o.secret.iter().collect::<Vec<_>>(), ["nested", "password"]);
        assert_eq!(
            Value::Object(o.redacted()),
            json!({"url": "http://x", "password": "[secret]", "nested": "[secret]"})
        );
        let mut texts = o.secret_texts();
        texts.sort();
        assert_eq!(texts, ["abcd1234", "hunter22"]);
    }
}
