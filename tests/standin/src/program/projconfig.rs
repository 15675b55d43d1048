//! A project's `config:` block as the real CLI reads it, and the check of a stack's values
//! against it that `up`, `preview`, `refresh` and `destroy` make before anything runs.
//! Sources: `sdk/go/common/workspace/project.go` (`RewriteShorthandConfigValues`,
//! `Project.Validate`, `ValidateConfigValue`, `InferFullTypeName`; the `configTypeDeclaration`
//! of `project.json`) and `pkg/workspace/config.go` (`mergeConfig`,
//! `validateStackConfigValue`, `formatMissingKeys`).

use serde_json::{Map, Value};

use crate::fail::{Failure, fail};
use crate::secrets::crypto::Crypter;
use crate::workspace::stackconfig::as_config_string;

/// One key of a project's `config:`, after the shorthand forms are rewritten.
#[derive(Debug, Clone, PartialEq)]
pub struct Decl {
    /// As written in `Pulumi.yaml` (what the CLI's messages name).
    pub key: String,
    /// `ns:key`: the project's name is the namespace of a key written without one.
    pub full: String,
    pub ty: Option<Type>,
    pub default: Option<Value>,
    pub value: Option<Value>,
    pub secret: bool,
}

/// A declared type; arrays say the type of their items.
#[derive(Debug, Clone, PartialEq)]
pub struct Type {
    pub name: String,
    pub items: Option<Box<Type>>,
}

const TYPES: [&str; 5] = ["string", "integer", "boolean", "array", "object"];
const ATTRIBUTES: [&str; 6] = ["default", "description", "items", "secret", "type", "value"];

impl Type {
    /// `InferFullTypeName`: `array<string>`, `array<array<integer>>`.
    pub fn full_name(&self) -> String {
        match &self.items {
            Some(items) => format!("array<{}>", items.full_name()),
            None => self.name.clone(),
        }
    }

    /// `ValidateConfigValue`.
    pub fn admits(&self, value: &Value) -> bool {
        match self.name.as_str() {
            "string" => value.is_string(),
            // YAML numbers, whole floats, and text that Go's `strconv.Atoi` takes.
            "integer" => match value {
                Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
                Value::String(s) => atoi(s),
                _ => false,
            },
            "boolean" => matches!(value, Value::Bool(_)) || value.as_str().is_some_and(|s| s == "true" || s == "false"),
            "object" => value.is_object(),
            _ => match (value, &self.items) {
                (Value::Array(items), Some(t)) => items.iter().all(|i| t.admits(i)),
                _ => false,
            },
        }
    }
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits that fit 64 bits, nothing else.
fn atoi(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && s.parse::<i64>().is_ok()
}

/// `configKeyIsNamespacedByProject`.
fn namespaced_by_project(project: &str, key: &str) -> bool {
    !key.contains(':') || key.starts_with(&format!("{project}:"))
}

/// The declarations of a project's `config:` (sorted by key), or the CLI's error for a block it
/// refuses when it loads the project (`path` is the project file as shown).
pub fn declarations(project: &str, config: &Value, path: &str) -> Result<Vec<Decl>, Failure> {
    let entries = match config {
        Value::Null => return Ok(Vec::new()),
        Value::Object(m) => m,
        // A string is the legacy `config: <dir>` (rewritten into `stackConfigDir`).
        Value::String(_) => return Ok(Vec::new()),
        _ => {
            return Err(schema_error(
                path,
                "#/config",
                "expected object, string or null, but got another type",
            ));
        }
    };
    let mut keys: Vec<&String> = entries.keys().collect();
    keys.sort();
    let mut decls = Vec::new();
    for key in keys {
        let raw = &entries[key];
        let decl = declaration(project, key, raw, path)?;
        decls.push(decl);
    }
    for d in &decls {
        validate(project, d).map_err(|m| fail(format!("could not unmarshal '{path}': {m}")))?;
    }
    Ok(decls)
}

fn declaration(project: &str, key: &str, raw: &Value, path: &str) -> Result<Decl, Failure> {
    let full = if key.contains(':') {
        key.to_string()
    } else {
        format!("{project}:{key}")
    };
    let mut decl = Decl {
        key: key.to_string(),
        full,
        ty: None,
        default: None,
        value: None,
        secret: false,
    };
    let at = format!("#/config/{key}");
    let m = match raw {
        // `RewriteShorthandConfigValues`: a plain value is the default of a key of this project,
        // the value of another namespace's key.
        Value::String(_) | Value::Bool(_) | Value::Array(_) => {
            shorthand(project, &mut decl, raw);
            return Ok(decl);
        }
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            shorthand(project, &mut decl, raw);
            return Ok(decl);
        }
        Value::Object(m) => m,
        _ => return Err(schema_error(path, &at, "oneOf failed, none matched")),
    };
    if let Some(other) = m.keys().find(|k| !ATTRIBUTES.contains(&k.as_str())) {
        let list: Vec<String> = ATTRIBUTES.iter().map(|a| format!("'{a}'")).collect();
        let (last, rest) = list.split_last().expect("attributes");
        return Err(schema_error(
            path,
            &at,
            &format!(
                "additionalProperties '{other}' not allowed; the allowed attributes are {} and {last}",
                rest.join(", ")
            ),
        ));
    }
    if let Some(t) = m.get("type") {
        let name = t.as_str().filter(|t| TYPES.contains(t)).ok_or_else(|| {
            schema_error(
                path,
                &format!("{at}/type"),
                &format!("value must be one of {}", quoted_types()),
            )
        })?;
        let items = match m.get("items") {
            Some(items) => Some(Box::new(items_type(items, path, &format!("{at}/items"))?)),
            None => None,
        };
        decl.ty = Some(Type {
            name: name.to_string(),
            items,
        });
    }
    if let Some(d) = m.get("description")
        && !d.is_string()
    {
        return Err(schema_error(
            path,
            &format!("{at}/description"),
            "expected string, but got another type",
        ));
    }
    match m.get("secret") {
        None => {}
        Some(Value::Bool(b)) => decl.secret = *b,
        Some(_) => {
            return Err(schema_error(
                path,
                &format!("{at}/secret"),
                "expected boolean, but got another type",
            ));
        }
    }
    decl.default = m.get("default").filter(|v| !v.is_null()).cloned();
    decl.value = m.get("value").filter(|v| !v.is_null()).cloned();
    Ok(decl)
}

fn shorthand(project: &str, decl: &mut Decl, raw: &Value) {
    if namespaced_by_project(project, &decl.key) {
        decl.default = Some(raw.clone());
    } else {
        decl.value = Some(raw.clone());
    }
}

/// `configItemsType`: `type` required, `items` required when it is `array`.
fn items_type(v: &Value, path: &str, at: &str) -> Result<Type, Failure> {
    let Some(m) = v.as_object() else {
        return Err(schema_error(path, at, "expected object, but got another type"));
    };
    let name = match m.get("type") {
        None => return Err(schema_error(path, at, "missing properties: 'type'")),
        Some(t) => t.as_str().filter(|t| TYPES.contains(t)).ok_or_else(|| {
            schema_error(
                path,
                &format!("{at}/type"),
                &format!("value must be one of {}", quoted_types()),
            )
        })?,
    };
    let items = match m.get("items") {
        Some(items) => Some(Box::new(items_type(items, path, &format!("{at}/items"))?)),
        None if name == "array" => return Err(schema_error(path, at, "missing properties: 'items'")),
        None => None,
    };
    Ok(Type {
        name: name.to_string(),
        items,
    })
}

fn quoted_types() -> String {
    TYPES.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ")
}

/// `ValidateProject`'s report of a schema violation (one error).
fn schema_error(path: &str, at: &str, message: &str) -> Failure {
    fail(format!(
        "could not validate '{path}': 1 error occurred:\n\t* {at}: {message}\n"
    ))
}

/// `Project.Validate`, for one key.
fn validate(project: &str, d: &Decl) -> Result<(), String> {
    let key = &d.key;
    if d.default.is_some() && d.value.is_some() {
        return Err(format!(
            "project config '{key}' cannot have both a 'default' and 'value' attribute"
        ));
    }
    if namespaced_by_project(project, key) {
        if let Some(t) = &d.ty {
            if t.name == "array" && t.items.is_none() {
                return Err(format!(
                    "The configuration key '{key}' declares an array but does not specify the underlying type via the 'items' attribute"
                ));
            }
            if let Some(default) = &d.default
                && !t.admits(default)
            {
                return Err(format!(
                    "The default value specified for configuration key '{key}' is not of the expected type '{}'",
                    t.full_name()
                ));
            }
        }
        return Ok(());
    }
    if d.ty.is_some() {
        return Err(format!(
            "Configuration key '{key}' is not namespaced by the project and should not define a type"
        ));
    }
    if d.default.is_some() {
        return Err(format!(
            "Configuration key '{key}' is not namespaced by the project and should not define a default value. Did you mean to use the 'value' attribute instead of 'default'?"
        ));
    }
    if d.value.is_none() {
        return Err(format!(
            "Configuration key '{key}' is namespaced and must provide an attribute 'value'"
        ));
    }
    Ok(())
}

/// `ValidateStackConfigAndApplyProjectConfig`: every key of this project without a stack value,
/// a `value` or a `default` is missing; then each typed key's value (the stack's, or what the
/// project gives) must be of its type, and a secret one encrypted. The message is the one
/// `pulumi up` prints after `error: `.
pub fn check_stack(
    project: &str,
    stack: &str,
    decls: &[Decl],
    values: &Map<String, Value>,
    crypter: &Crypter,
) -> Result<(), Failure> {
    let mut missing: Vec<&str> = decls
        .iter()
        .filter(|d| {
            d.full.split_once(':').is_some_and(|(ns, _)| ns == project)
                && !values.contains_key(&d.full)
                && d.value.is_none()
                && d.default.is_none()
        })
        .map(|d| d.key.as_str())
        .collect();
    missing.sort_unstable();
    if !missing.is_empty() {
        return Err(fail(format!(
            "validating stack config: Stack '{stack}' is missing configuration {} {}",
            if missing.len() == 1 { "value" } else { "values" },
            listed(&missing)
        )));
    }
    for d in decls {
        let Some(t) = &d.ty else { continue };
        // What the stack holds, or the project's value, which the CLI copies in as plain text
        // (or JSON for an array or object).
        let (content, secure) = match values.get(&d.full) {
            Some(v) => stack_content(v, crypter)?,
            None => match d.value.as_ref().or(d.default.as_ref()) {
                Some(v @ (Value::Array(_) | Value::Object(_))) => (v.clone(), false),
                Some(v) => (Value::String(as_config_string(v)), false),
                None => continue,
            },
        };
        if d.secret && !secure {
            return Err(fail(format!(
                "validating stack config: Stack '{stack}' with configuration key '{}' must be encrypted as it's secret",
                d.key
            )));
        }
        if !t.admits(&content) {
            return Err(fail(format!(
                "validating stack config: Stack '{stack}' with configuration key '{}' must be of type '{}'",
                d.key,
                t.full_name()
            )));
        }
    }
    Ok(())
}

/// A stack value as the CLI checks it: text for a scalar, the structure for an array or a
/// mapping; whether it was encrypted.
fn stack_content(v: &Value, crypter: &Crypter) -> Result<(Value, bool), Failure> {
    if let Some(ct) = v.get("secure").and_then(Value::as_str)
        && v.as_object().is_some_and(|m| m.len() == 1)
    {
        return Ok((Value::String(crypter.decrypt(ct)?), true));
    }
    Ok(match v {
        Value::Array(_) | Value::Object(_) => (v.clone(), false),
        other => (Value::String(as_config_string(other)), false),
    })
}

/// `formatMissingKeys`: `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
fn listed(keys: &[&str]) -> String {
    match keys {
        [one] => format!("'{one}'"),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(|k| format!("'{k}'")).collect();
            format!("{} and '{last}'", rest.join(", "))
        }
        [] => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decls(config: Value) -> Result<Vec<Decl>, String> {
        declarations("proj", &config, "/w/Pulumi.yaml").map_err(|f| f.message)
    }

    #[test]
    fn shorthand_values_are_defaults_of_the_projects_keys_and_values_of_others() {
        let d = decls(json!({"a": 3, "aws:region": "us-east-1", "proj:b": [1, 2]})).unwrap();
        let by = |k: &str| d.iter().find(|d| d.key == k).unwrap().clone();
        assert_eq!(by("a").default, Some(json!(3)));
        assert_eq!(by("a").full, "proj:a");
        assert_eq!(by("aws:region").value, Some(json!("us-east-1")));
        assert_eq!(by("proj:b").default, Some(json!([1, 2])));
    }

    #[test]
    fn what_project_validate_refuses() {
        for (config, message) in [
            (
                json!({"a": {"default": 1, "value": 2}}),
                "project config 'a' cannot have both a 'default' and 'value' attribute",
            ),
            (
                json!({"a": {"type": "array", "default": []}}),
                "The configuration key 'a' declares an array but does not specify the underlying type via the 'items' attribute",
            ),
            (
                json!({"a": {"type": "integer", "default": "many"}}),
                "The default value specified for configuration key 'a' is not of the expected type 'integer'",
            ),
            (
                json!({"a": {"type": "array", "items": {"type": "string"}, "default": [1]}}),
                "not of the expected type 'array<string>'",
            ),
            (
                json!({"aws:region": {"type": "string"}}),
                "Configuration key 'aws:region' is not namespaced by the project and should not define a type",
            ),
            (
                json!({"aws:region": {"default": "x"}}),
                "Did you mean to use the 'value' attribute instead of 'default'?",
            ),
            (
                json!({"aws:region": {"description": "d"}}),
                "Configuration key 'aws:region' is namespaced and must provide an attribute 'value'",
            ),
        ] {
            let got = decls(config.clone()).unwrap_err();
            assert!(got.starts_with("could not unmarshal '/w/Pulumi.yaml': "), "{got}");
            assert!(got.contains(message), "{config}: {got}");
        }
        let got = decls(json!({"a": {"type": "string", "defualt": "x"}})).unwrap_err();
        assert!(got.contains("could not validate '/w/Pulumi.yaml'"), "{got}");
        assert!(
            got.contains("#/config/a: additionalProperties 'defualt' not allowed"),
            "{got}"
        );
        let got = decls(json!({"a": {"type": "number"}})).unwrap_err();
        assert!(got.contains("#/config/a/type: value must be one of"), "{got}");
        // Accepted: a whole float for an integer, text that parses as one, "true" for a boolean.
        decls(
            json!({"a": {"type": "integer", "default": 2.0}, "b": {"type": "integer", "default": "-7"},
                     "c": {"type": "boolean", "default": "true"}}),
        )
        .unwrap();
    }

    #[test]
    fn a_stack_is_checked_against_the_declarations_before_an_operation() {
        let d = decls(json!({
            "zone": {"type": "string"}, "count": {"type": "integer"}, "azs": {"type": "array", "items": {"type": "string"}},
            "token": {"type": "string", "secret": true}, "size": {"type": "integer", "default": 3}, "aws:region": "x"
        }))
        .unwrap();
        let (crypter, _) = Crypter::new_salt("pass");
        let check = |values: Value| {
            check_stack("proj", "dev", &d, values.as_object().unwrap(), &crypter).map_err(|f| f.message)
        };
        // Every missing key of the project, sorted, as written in Pulumi.yaml; not `aws:region`.
        assert_eq!(
            check(json!({})).unwrap_err(),
            "validating stack config: Stack 'dev' is missing configuration values 'azs', 'count', 'token' and 'zone'"
        );
        assert_eq!(
            check(json!({"proj:azs": ["a"], "proj:count": "2", "proj:token": "t"})).unwrap_err(),
            "validating stack config: Stack 'dev' is missing configuration value 'zone'"
        );
        let secret = json!({"secure": crypter.encrypt("t")});
        let good = json!({"proj:azs": ["a"], "proj:count": "2", "proj:token": secret, "proj:zone": "z"});
        check(good.clone()).unwrap();
        for (key, value, message) in [
            (
                "proj:token",
                json!("t"),
                "configuration key 'token' must be encrypted as it's secret",
            ),
            (
                "proj:count",
                json!("2 "),
                "configuration key 'count' must be of type 'integer'",
            ),
            (
                "proj:azs",
                json!("a,b"),
                "configuration key 'azs' must be of type 'array<string>'",
            ),
            (
                "proj:zone",
                json!({"a": 1}),
                "configuration key 'zone' must be of type 'string'",
            ),
            (
                "proj:size",
                json!("three"),
                "configuration key 'size' must be of type 'integer'",
            ),
        ] {
            let mut values = good.clone();
            values[key] = value;
            let got = check(values).unwrap_err();
            assert_eq!(got, format!("validating stack config: Stack 'dev' with {message}"));
        }
    }

    #[test]
    fn types_admit_what_validate_config_value_admits() {
        let int = Type {
            name: "integer".into(),
            items: None,
        };
        for (v, ok) in [
            (json!("12"), true),
            (json!("+3"), true),
            (json!(" 3"), false),
            (json!("3.0"), false),
            (json!("0x1"), false),
            (json!(""), false),
            (json!(4), true),
            (json!(true), false),
        ] {
            assert_eq!(int.admits(&v), ok, "{v}");
        }
        let boolean = Type {
            name: "boolean".into(),
            items: None,
        };
        for (v, ok) in [
            (json!("true"), true),
            (json!("True"), false),
            (json!(" false"), false),
            (json!(false), true),
        ] {
            assert_eq!(boolean.admits(&v), ok, "{v}");
        }
        let strings = Type {
            name: "array".into(),
            items: Some(Box::new(Type {
                name: "string".into(),
                items: None,
            })),
        };
        assert!(strings.admits(&json!(["a", "b"])));
        assert!(
            !strings.admits(&json!("a,b")),
            "a comma-separated string is not an array"
        );
        assert!(!strings.admits(&json!([1])));
        assert_eq!(strings.full_name(), "array<string>");
    }
}
