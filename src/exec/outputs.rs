//! Stack outputs as the runner holds them: the values (in memory only) and which are secret.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// Shown instead of a secret value, everywhere the runner writes or prints.
pub const REDACTED: &str = "[secret]";

/// The largest output value (as JSON) the run state and a run's summary keep: 64 KiB.
pub const KEPT: usize = 64 * 1024;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outputs {
    pub values: Map<String, Value>,
    pub secret: BTreeSet<String>,
    /// Where the secrets are in a secret output that is only secret in part: its value with
    /// each secret `[secret]`, as `stack output --json` prints it. Without one, all of it is.
    pub blinded: Map<String, Value>,
}

impl Outputs {
    /// From `stack output --json --show-secrets` and `stack output --json` (where each secret,
    /// however deep in a value, reads `"[secret]"`), as Pulumi's Automation API tells them
    /// apart. An output with a secret anywhere in it is secret as a whole, as a stack
    /// reference takes it; one missing from the second read counts as secret.
    pub fn from_pair(shown: Map<String, Value>, hidden: &Map<String, Value>) -> Self {
        let secret: BTreeSet<String> = shown
            .keys()
            .filter(|k| hidden.get(*k).is_none_or(holds_redacted))
            .cloned()
            .collect();
        let blinded = secret
            .iter()
            .filter_map(|k| hidden.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        Outputs {
            values: shown,
            secret,
            blinded,
        }
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

    /// [`Outputs::redacted`], with each value larger than [`KEPT`] bytes (as JSON) replaced by
    /// what it was: what the run state and the run's summary keep. A 9 MB output (a rendered
    /// manifest, a CA bundle) would otherwise make a state file larger than the runner reads
    /// back; `runner output` reads the whole value from the backend.
    pub fn kept(&self) -> Map<String, Value> {
        self.redacted()
            .into_iter()
            .map(|(k, v)| {
                let size = serde_json::to_string(&v).map_or(0, |s| s.len());
                let v = if size > KEPT {
                    Value::String(format!("[{size} bytes: not kept; `runner output` reads it]"))
                } else {
                    v
                };
                (k, v)
            })
            .collect()
    }

    /// Every secret value as text, so output lines can be scrubbed of them: of an output
    /// secret in part, only its secret parts (its user name `admin` is left to be read).
    pub fn secret_texts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for k in &self.secret {
            if let Some(v) = self.values.get(k) {
                match self.blinded.get(k) {
                    Some(b) => collect_secret_strings(v, b, &mut out),
                    None => collect_strings(v, &mut out),
                }
            }
        }
        out.retain(|s| s.len() >= 4);
        out
    }
}

/// `[secret]` anywhere in a value as `pulumi` blinds it (`stack output --json`, an event
/// log): a secret there, or the text `[secret]`, which counts as one (nothing that could be a
/// secret is taken for plain).
pub(crate) fn holds_redacted(v: &Value) -> bool {
    match v {
        Value::String(s) => s == REDACTED,
        Value::Array(a) => a.iter().any(holds_redacted),
        Value::Object(m) => m.values().any(holds_redacted),
        _ => false,
    }
}

/// The strings of `v` where `blinded` (the same value, its secrets `[secret]`) has a secret;
/// where the two differ in shape, every string of `v` there: nothing secret is left out.
fn collect_secret_strings(v: &Value, blinded: &Value, out: &mut Vec<String>) {
    match (v, blinded) {
        (_, Value::String(b)) if b == REDACTED => collect_strings(v, out),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).for_each(|(x, y)| collect_secret_strings(x, y, out));
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, x) in a {
                match b.get(k) {
                    Some(y) => collect_secret_strings(x, y, out),
                    None => collect_strings(x, out),
                }
            }
        }
        (x, y) if x == y => {}
        _ => collect_strings(v, out),
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
        let shown = json!({"url": "http://x", "password": "hunter22", "nested": {"token": "abcd1234"},
            "deep": {"user": "u", "hosts": ["h", "s3cr3t"]}, "late": 1});
        // The real CLI blinds each secret where it is, however deep.
        let hidden = json!({"url": "http://x", "password": "[secret]", "nested": "[secret]",
            "deep": {"user": "u", "hosts": ["h", "[secret]"]}});
        let o = Outputs::from_pair(shown.as_object().unwrap().clone(), hidden.as_object().unwrap());
        assert_eq!(
            o.secret.iter().collect::<Vec<_>>(),
            ["deep", "late", "nested", "password"]
        );
        assert_eq!(
            Value::Object(o.redacted()),
            json!({"url": "http://x", "password": "[secret]", "nested": "[secret]", "deep": "[secret]", "late": "[secret]"})
        );
        let mut texts = o.secret_texts();
        texts.sort();
        assert_eq!(texts, ["abcd1234", "hunter22", "s3cr3t"]);
        // Only the secret parts of an output secret in part are scrubbed from logs.
        let shown = json!({"conn": {"user": "admin", "password": "hunter22", "hosts": ["primary", "replica-secret"]}});
        let hidden = json!({"conn": {"user": "admin", "password": "[secret]", "hosts": ["primary", "[secret]"]}});
        let o = Outputs::from_pair(shown.as_object().unwrap().clone(), hidden.as_object().unwrap());
        let mut texts = o.secret_texts();
        texts.sort();
        assert_eq!(texts, ["hunter22", "replica-secret"]);
        // A shape the blinded read does not share is scrubbed whole.
        let mut odd = o.clone();
        odd.blinded.insert("conn".into(), json!(["x"]));
        assert_eq!(odd.secret_texts().len(), 4);
    }
}
