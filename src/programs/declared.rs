//! What a program's `config:` block asks of the stack configuration, read as the Pulumi CLI
//! reads it (`sdk/go/common/workspace/project.go`: a plain value is a default of the project's
//! key or the value of another namespace's; `ValidateConfigValue`), so that a value `pulumi up`
//! would refuse (`pkg/workspace/config.go` `validateStackConfigValue`) is found before a run
//! starts rather than when the project's turn comes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One key of a program's `config:` that the stack is checked against: typed, secret, or
/// required (the project's own key with neither a default nor a value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Declared {
    /// As written in `Pulumi.yaml`; the project's name is the namespace of a key without one.
    pub key: String,
    pub ty: Option<ConfigType>,
    pub required: bool,
    pub secret: bool,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConfigType {
    pub name: String,
    pub items: Option<Box<ConfigType>>,
}

const TYPES: [&str; 5] = ["string", "integer", "boolean", "array", "object"];

impl ConfigType {
    fn read(v: &Value) -> Option<Self> {
        let name = v.get("type")?.as_str().filter(|t| TYPES.contains(t))?.to_string();
        let items = v.get("items").and_then(Self::read).map(Box::new);
        Some(ConfigType { name, items })
    }

    /// `array<string>`, as the CLI names it.
    pub(crate) fn full_name(&self) -> String {
        match &self.items {
            Some(items) => format!("array<{}>", items.full_name()),
            None => self.name.clone(),
        }
    }

    /// Whether the CLI takes `value` (a scalar as the text it is stored as, a list or mapping as
    /// itself) for this type.
    pub(crate) fn admits(&self, value: &Value) -> bool {
        match self.name.as_str() {
            "string" => value.is_string(),
            "integer" => match value {
                Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
                // Go's strconv.Atoi: a sign and digits, nothing around them.
                Value::String(s) => {
                    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
                    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && s.parse::<i64>().is_ok()
                }
                _ => false,
            },
            "boolean" => value.is_boolean() || matches!(value.as_str(), Some("true" | "false")),
            "object" => value.is_object(),
            _ => match (value, &self.items) {
                (Value::Array(items), Some(t)) => items.iter().all(|i| t.admits(i)),
                _ => false,
            },
        }
    }

    /// In words, for a message: "a whole number", "a list, each item a text value".
    pub(crate) fn described(&self) -> String {
        match (self.name.as_str(), &self.items) {
            ("string", _) => "a text value".into(),
            ("integer", _) => "a whole number".into(),
            ("boolean", _) => "true or false".into(),
            ("object", _) => "a mapping".into(),
            (_, Some(items)) => format!("a list, each item {}", items.described()),
            _ => "a list".into(),
        }
    }
}

/// The keys of `config` (a program's `config:` block, `project` its name) worth checking,
/// sorted; `text` is the file, for their lines.
pub(crate) fn read(project: &str, config: Option<&Value>, text: &str) -> Vec<Declared> {
    let Some(entries) = config.and_then(Value::as_object) else {
        return Vec::new();
    };
    let own = |key: &str| !key.contains(':') || key.starts_with(&format!("{project}:"));
    let block = text.find("\nconfig:").map_or(0, |at| at + 1);
    let mut found: Vec<Declared> = entries
        .iter()
        .filter_map(|(key, raw)| {
            let (ty, given, secret) = match raw {
                Value::Object(m) => (
                    ConfigType::read(raw),
                    m.get("default")
                        .or_else(|| m.get("value"))
                        .is_some_and(|v| !v.is_null()),
                    m.get("secret").and_then(Value::as_bool).unwrap_or(false),
                ),
                Value::Null => (None, false, false),
                _ => (None, true, false),
            };
            let required = own(key) && !given;
            (ty.is_some() || required || secret).then(|| Declared {
                key: key.clone(),
                ty,
                required,
                secret,
                line: line_after(text, block, key),
            })
        })
        .collect();
    found.sort_by(|a, b| a.key.cmp(&b.key));
    found
}

/// 1-based line of the indented line that starts with `key:` (or the key quoted) at or after
/// `from`; the line of `from` when there is none.
fn line_after(text: &str, from: usize, key: &str) -> usize {
    let first = text[..from].matches('\n').count() + 1;
    let forms = [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")];
    text[from..]
        .lines()
        .position(|l| {
            let body = l.trim_start();
            body.len() < l.len() && forms.iter().any(|f| body.starts_with(f.as_str()))
        })
        .map_or(first, |n| first + n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_secret_and_required_keys_are_kept_with_their_lines() {
        let text = "name: vpc\nconfig:\n  azs:\n    type: array\n    description: \"the zone: where\"\n    items:\n      type: string\n  cidr:\n    type: string\n    default: 10.0.0.0/16\n  zone: {}\n  region: eu\n  aws:profile:\n    value: dev\n  \"token\":\n    type: string\n    secret: true\n";
        let doc: Value = serde_saphyr::from_str(text).unwrap();
        let got = read("vpc", doc.get("config"), text);
        let keys: Vec<(&str, bool, usize)> = got.iter().map(|d| (d.key.as_str(), d.required, d.line)).collect();
        assert_eq!(
            keys,
            [
                ("azs", true, 3),
                ("cidr", false, 8),
                ("token", true, 15),
                ("zone", true, 11)
            ]
        );
        assert_eq!(got[0].ty.as_ref().unwrap().full_name(), "array<string>");
        assert!(got[2].secret);
    }

    #[test]
    fn values_are_admitted_as_the_cli_admits_them() {
        let t = |v: Value| ConfigType::read(&v).unwrap();
        let int = t(json!({"type": "integer"}));
        assert!(int.admits(&json!("12")) && int.admits(&json!(3)) && int.admits(&json!("-4")));
        assert!(!int.admits(&json!(" 3")) && !int.admits(&json!("three")) && !int.admits(&json!("3.5")));
        let boolean = t(json!({"type": "boolean"}));
        assert!(boolean.admits(&json!("true")) && boolean.admits(&json!(false)));
        assert!(!boolean.admits(&json!("yes")) && !boolean.admits(&json!("True")));
        let list = t(json!({"type": "array", "items": {"type": "string"}}));
        assert!(list.admits(&json!(["a"])) && !list.admits(&json!("a,b")) && !list.admits(&json!([1])));
        assert_eq!(list.described(), "a list, each item a text value");
    }
}
