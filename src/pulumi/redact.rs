//! Secret values known so far — the run's own (asked, given in `MARA_SECRET_*`, the provider
//! tokens, the passphrase) and the stack outputs marked secret — removed from every line
//! printed or logged, in every form a value can take on the way: as it is, JSON-escaped,
//! base64-encoded whole, and for a multi-line value (a kubeconfig) each line that carries
//! secret material.

use std::sync::{Arc, RwLock};

use crate::exec::ResourceDiff;

use base64::Engine as _;

use crate::exec::outputs::REDACTED;

/// Shorter values are not masked: replacing every `yes` or `dev` would garble output and hide
/// nothing a person could not guess.
const SHORTEST: usize = 4;

#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor(Arc<RwLock<Vec<String>>>);

impl Redactor {
    /// Adds secret values (each in all its forms).
    pub(crate) fn add(&self, values: impl IntoIterator<Item = String>) {
        let mut known = self.0.write().expect("not poisoned");
        for v in values {
            for form in forms(&v) {
                if !known.contains(&form) {
                    known.push(form);
                }
            }
        }
        // Longest first, so a secret containing another is removed whole.
        known.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    pub(crate) fn scrub(&self, line: &str) -> String {
        let known = self.0.read().expect("not poisoned");
        let mut out = line.to_string();
        for s in known.iter() {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), REDACTED);
            }
        }
        out
    }

    /// A preview's diffs with every known secret removed from their values (the engine blinds
    /// the values it knows are secret; a secret passed on as plain text is caught here).
    pub(crate) fn scrub_diffs(&self, mut diffs: Vec<ResourceDiff>) -> Vec<ResourceDiff> {
        for p in diffs.iter_mut().flat_map(|d| &mut d.properties) {
            for v in [&mut p.deployed, &mut p.declared].into_iter().flatten() {
                *v = self.scrub(v);
            }
        }
        diffs
    }
}

/// The forms a secret value can be printed in.
fn forms(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut push = |s: &str| {
        if s.trim().len() >= SHORTEST {
            out.push(s.to_string());
            // In JSON text (an event, a summary) quotes, backslashes and newlines are escaped.
            let escaped = serde_json::to_string(s).expect("a string serializes");
            let escaped = &escaped[1..escaped.len() - 1];
            if escaped != s {
                out.push(escaped.to_string());
            }
        }
    };
    push(value);
    if value.len() >= SHORTEST {
        push(&base64::engine::general_purpose::STANDARD.encode(value));
    }
    if value.contains('\n') {
        for line in value.lines() {
            if let Some(material) = material(line) {
                push(material);
            }
        }
    }
    // A JSON document as text (a kubeconfig as JSON, docker credentials): its secret strings
    // may be printed one by one, pretty-printed or cut into lines.
    if value.trim_start().starts_with(['{', '['])
        && let Ok(doc) = serde_json::from_str::<serde_json::Value>(value)
    {
        let mut leaves = Vec::new();
        json_material(None, &doc, &mut leaves);
        for leaf in leaves {
            push(&leaf);
        }
    }
    out
}

/// The strings of a JSON document that are secret: under a credential-like key, or key-like.
fn json_material(key: Option<&str>, v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => {
            let line = match key {
                Some(k) => format!("{k}: {s}"),
                None => s.clone(),
            };
            if material(&line).is_some() {
                out.push(s.clone());
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| json_material(key, i, out)),
        serde_json::Value::Object(m) => m.iter().for_each(|(k, i)| json_material(Some(k), i, out)),
        _ => {}
    }
}

/// The part of one line of a multi-line secret that is secret: the value of a key named like a
/// credential (`token:`, `client-key-data:`, `password:`), or anything that looks like key
/// material (a long run of base64 or hex); not `apiVersion: v1` or a cluster's name.
fn material(line: &str) -> Option<&str> {
    let line = line.trim().trim_start_matches("- ");
    let (key, value) = match line.split_once(": ") {
        Some((k, v)) => (Some(k), v.trim().trim_matches(['"', '\''])),
        None => (None, line),
    };
    let credential = key.is_some_and(|k| {
        let k = k.to_ascii_lowercase();
        [
            "token",
            "password",
            "passwd",
            "secret",
            "key",
            "data",
            "cert",
            "credential",
            "auth",
        ]
        .iter()
        .any(|w| k.contains(w))
    });
    let keylike = value.len() >= 20
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_' | '.'));
    ((credential && value.len() >= SHORTEST) || keylike).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_a_secret_is_masked() {
        let r = Redactor::default();
        let kubeconfig = "apiVersion: v1\nkind: Config\nusers:\n- name: eks-dev-admin\n  user:\n    token: s3cr3t-token\n    client-key-data: QUJDREVGR0hJSktMTU5PUFFSU1RVVldY\n";
        r.add([kubeconfig.to_string(), "pa\"ss\\word".to_string()]);
        let json = serde_json::to_string(kubeconfig).unwrap();
        for line in [
            kubeconfig,
            json.as_str(),
            "token: s3cr3t-token",
            "  client-key-data: QUJDREVGR0hJSktMTU5PUFFSU1RVVldY",
            &base64::engine::general_purpose::STANDARD.encode(kubeconfig),
            r#"{"pw": "pa\"ss\\word"}"#,
        ] {
            let out = r.scrub(line);
            for leaked in ["s3cr3t-token", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY", "pa\"ss", "pa\\\"ss"] {
                assert!(!out.contains(leaked), "{leaked} in {out}");
            }
        }
        // What is not secret stays readable.
        assert_eq!(r.scrub("apiVersion: v1"), "apiVersion: v1");
        assert_eq!(
            r.scrub("Added new context eks-dev-admin"),
            "Added new context eks-dev-admin"
        );
    }
}
