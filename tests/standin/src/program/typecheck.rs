//! Pulumi YAML's type checker, as far as the stand-in imitates it (pulumi-yaml
//! `pkg/pulumiyaml/analyser.go`): the keys of a resource and of its `options`, and — with the
//! SDKs' schema (`PULUMI_STANDIN_SCHEMA`) — the resource type, its properties (names, nested
//! objects, enum values, lists vs objects vs scalars), its required inputs, and what the program
//! reads from it. Messages are pulumi-yaml's (see README.md, "Refusals").

use serde_json::{Value, json};

use super::{Evaluator, reveal};
use crate::diag::{existing, line_containing, line_of};
use crate::schema::package_of;

/// `ast.ResourceOptionsDecl` (pulumi-yaml `pkg/pulumiyaml/ast/template.go`), compared
/// case-insensitively as `typeResource` does.
pub const RESOURCE_OPTIONS: [&str; 20] = [
    "additionalSecretOutputs",
    "aliases",
    "customTimeouts",
    "deleteBeforeReplace",
    "dependsOn",
    "ignoreChanges",
    "import",
    "parent",
    "protect",
    "provider",
    "providers",
    "version",
    "pluginDownloadURL",
    "replaceOnChanges",
    "retainOnDelete",
    "replaceWith",
    "deletedWith",
    "hideDiffs",
    "replacementTrigger",
    "envVarMappings",
];

/// `ResourceDecl.Fields()` plus `condition` and `metadata` (lower-cased).
const RESOURCE_KEYS: [&str; 8] = [
    "type",
    "name",
    "defaultprovider",
    "properties",
    "options",
    "get",
    "condition",
    "metadata",
];

/// Outputs of the built-in `pulumi:pulumi:StackReference` (`pkg/resource/deploy/builtins.go`).
fn stack_reference_spec() -> Value {
    json!({ "outputs": { "name": "string", "outputs": { "map": "any" }, "secretOutputNames": { "array": "string" } } })
}

/// The built-in `pulumi:index:Stash` (`pkg/codegen/schema/mock_pulumi_schema.go`, its provider
/// in `pkg/resource/deploy/builtins.go`): one required input of any type, `input`; it outputs
/// `input` and `output`. Pulumi YAML knows the `pulumi` package without any schema installed.
fn stash_spec() -> Value {
    json!({
        "inputs": { "input": { "type": "any", "required": true } },
        "outputs": { "input": "any", "output": "any" }
    })
}

impl Evaluator<'_> {
    fn line(&self, path: &[String]) -> Option<usize> {
        let keys: Vec<&str> = path.iter().map(String::as_str).collect();
        line_of(&self.ctx.project.text, &keys).or_else(|| {
            // The deepest key that can be found.
            (1..keys.len())
                .rev()
                .find_map(|n| line_of(&self.ctx.project.text, &keys[..n]))
        })
    }

    /// The declaration of a resource, before it is evaluated: its keys, its options' keys,
    /// `properties` with `get`, and its type in the schema.
    pub(super) fn check_declaration(&mut self, name: &str) {
        let decl = self.resources[name].clone();
        let ty = decl["type"].as_str().unwrap_or_default().to_string();
        let at = |k: &str| vec!["resources".to_string(), name.to_string(), k.to_string()];
        for k in decl.as_object().into_iter().flat_map(|m| m.keys()) {
            if !RESOURCE_KEYS.contains(&k.to_lowercase().as_str()) {
                let line = self.line(&at(k));
                self.error(format!("Resource {ty} has invalid key '{k}'"), "", line);
            }
        }
        if let Some(opts) = decl["options"].as_object() {
            let all: Vec<String> = RESOURCE_OPTIONS.iter().map(ToString::to_string).collect();
            for k in opts.keys() {
                if !RESOURCE_OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(k)) {
                    let mut path = at("options");
                    path.push(k.clone());
                    let line = self.line(&path);
                    self.error(
                        format!("{k} does not exist on resource options"),
                        existing(&all, k, "fields"),
                        line,
                    );
                }
            }
        }
        if decl.get("get").is_some() && decl["properties"].as_object().is_some_and(|m| !m.is_empty()) {
            let line = self.line(&at("properties"));
            self.error(
                "Resource fields properties and get are mutually exclusive",
                "Properties is used to describe a resource managed by Pulumi.\nGet is used to describe a resource managed outside of the current Pulumi stack.",
                line,
            );
        }
        if ty == "pulumi:pulumi:StackReference" {
            self.specs.insert(name.to_string(), stack_reference_spec());
            return;
        }
        if ty == "pulumi:index:Stash" {
            self.specs.insert(name.to_string(), stash_spec());
            return;
        }
        let Some(schema) = self.schema else { return };
        if ty.is_empty() || ty.starts_with("pulumi:pulumi:") {
            return;
        }
        let pkg = package_of(&ty);
        if schema.package(pkg).is_none() {
            return; // a package the schema does not describe: lenient
        }
        if let Some(spec) = schema.resource(&ty) {
            self.specs.insert(name.to_string(), spec);
        } else {
            let line = self.line(&at("type"));
            self.error(
                format!(
                    "error resolving type of resource {name}: unable to find resource type \"{ty}\" in resource provider \"{pkg}\""
                ),
                "",
                line,
            );
        }
    }

    /// A resource's evaluated properties against its type's inputs.
    pub(super) fn check_properties(&mut self, name: &str, raw: &Value, props: &Value) {
        let Some(spec) = self.specs.get(name).cloned() else {
            return;
        };
        let Some(inputs) = spec.get("inputs").cloned() else {
            return;
        };
        let decl = &self.resources[name];
        if decl.get("get").is_some() && raw.as_object().is_none_or(serde_json::Map::is_empty) {
            return; // read, not managed: no inputs are needed
        }
        let ty = decl["type"].as_str().unwrap_or_default().to_string();
        let path = vec!["resources".to_string(), name.to_string(), "properties".to_string()];
        self.check_object(raw, props, &inputs, &ty, &path);
    }

    fn check_object(&mut self, raw: &Value, val: &Value, props: &Value, label: &str, path: &[String]) {
        let (val, _) = reveal(val);
        let (Some(obj), Some(spec)) = (val.as_object(), props.as_object()) else {
            return;
        };
        let names: Vec<String> = spec.keys().cloned().collect();
        let from = display_value(&val);
        for (k, v) in obj {
            let mut p = path.to_vec();
            p.push(k.clone());
            match spec.get(k) {
                None => {
                    let line = self.line(&p);
                    self.error(
                        format!("Property {k} does not exist on '{label}'"),
                        format!(
                            "Cannot assign '{from}' to '{label}':\n  {}",
                            existing(&names, k, "properties")
                        ),
                        line,
                    );
                }
                Some(prop) => {
                    let raw_v = raw.get(k).cloned().unwrap_or(Value::Null);
                    self.check_value(&raw_v, v, &prop["type"], label, &from, &p);
                }
            }
        }
        for (k, prop) in spec {
            if prop["required"] == true && !obj.contains_key(k) {
                let line = self.line(path);
                self.error(
                    format!("{label} is not assignable from {from}"),
                    format!("Cannot assign '{from}' to '{label}':\n  {k}: Missing required property '{k}'"),
                    line,
                );
            }
        }
    }

    fn mismatch(&mut self, val: &Value, ty: &Value, label: &str, from: &str, path: &[String]) {
        let prop = path.last().cloned().unwrap_or_default();
        let line = self.line(path);
        self.error(
            format!("{label} is not assignable from {from}"),
            format!(
                "Cannot assign '{from}' to '{label}':\n  {prop}: Cannot assign '{}' to '{}'",
                display_value(val),
                Self::display_type(ty)
            ),
            line,
        );
    }

    fn check_value(&mut self, raw: &Value, val: &Value, ty: &Value, label: &str, from: &str, path: &[String]) {
        let (val, _) = reveal(val);
        if val.is_null() {
            return;
        }
        // A whole `${resource}` is a resource: it goes where a resource or a string is expected.
        let reads_resource = raw
            .as_str()
            .and_then(|s| s.strip_prefix("${")?.strip_suffix('}'))
            .is_some_and(|n| self.resources.contains_key(n.trim()));
        let literal = match raw {
            Value::String(s) => !s.contains("${"),
            Value::Number(_) | Value::Bool(_) => true,
            _ => false,
        };
        match ty {
            Value::String(t) => match t.as_str() {
                "any" => {}
                "asset" | "archive" => {
                    if val.is_array() {
                        self.mismatch(&val, ty, label, from, path);
                    }
                }
                _ => {
                    if (val.is_array() || val.is_object()) && !reads_resource {
                        self.mismatch(&val, ty, label, from, path);
                    }
                }
            },
            Value::Object(m) => {
                if let Some(values) = m.get("enum").and_then(Value::as_array) {
                    if val.is_array() || val.is_object() {
                        self.mismatch(&val, ty, label, from, path);
                    } else if literal && !values.contains(&val) {
                        let allowed: Vec<String> = values.iter().map(ToString::to_string).collect();
                        let prop = path.last().cloned().unwrap_or_default();
                        let line = self.line(path);
                        self.error(
                            format!("{label} is not assignable from {from}"),
                            format!(
                                "Cannot assign '{from}' to '{label}':\n  {prop}: Allowed values are {}",
                                allowed.join(", ")
                            ),
                            line,
                        );
                    }
                } else if let Some(item) = m.get("array") {
                    let Some(items) = val.as_array() else {
                        return self.mismatch(&val, ty, label, from, path);
                    };
                    for (i, x) in items.iter().enumerate() {
                        let raw_x = raw.get(i).cloned().unwrap_or(Value::Null);
                        let mut p = path.to_vec();
                        p.push(i.to_string());
                        self.check_value(&raw_x, x, item, label, from, &p);
                    }
                } else if let Some(item) = m.get("map") {
                    let Some(entries) = val.as_object() else {
                        return self.mismatch(&val, ty, label, from, path);
                    };
                    for (k, x) in entries {
                        let raw_x = raw.get(k).cloned().unwrap_or(Value::Null);
                        let mut p = path.to_vec();
                        p.push(k.clone());
                        self.check_value(&raw_x, x, item, label, from, &p);
                    }
                } else if let Some(key) = m.get("ref").and_then(Value::as_str) {
                    if !val.is_object() {
                        return self.mismatch(&val, ty, label, from, path);
                    }
                    if let Some(props) = self.schema.and_then(|s| s.object(key)) {
                        let nested = short_type(key);
                        self.check_object(raw, &val, &props, &nested, path);
                    }
                } else if let Some(props) = m.get("object") {
                    if !val.is_object() {
                        return self.mismatch(&val, ty, label, from, path);
                    }
                    let props = props.clone();
                    self.check_object(raw, &val, &props, label, path);
                } else if let Some(members) = m.get("union").and_then(Value::as_array) {
                    let fits: Vec<&Value> = members.iter().filter(|t| Self::same_kind(&val, t)).collect();
                    match fits.as_slice() {
                        [] => self.mismatch(&val, ty, label, from, path),
                        [one] => {
                            let one = (*one).clone();
                            self.check_value(raw, &val, &one, label, from, path);
                        }
                        _ => {}
                    }
                }
                // `resource`: a resource evaluates to its outputs, an object; nothing to check.
            }
            _ => {}
        }
    }

    fn same_kind(val: &Value, ty: &Value) -> bool {
        match ty {
            Value::String(t) => t == "any" || !(val.is_array() || val.is_object()) || t == "asset" || t == "archive",
            Value::Object(m) => {
                if m.contains_key("array") {
                    val.is_array()
                } else if m.contains_key("map")
                    || m.contains_key("ref")
                    || m.contains_key("object")
                    || m.contains_key("resource")
                {
                    val.is_object()
                } else if m.contains_key("enum") {
                    !(val.is_array() || val.is_object())
                } else {
                    true
                }
            }
            _ => true,
        }
    }

    fn display_type(ty: &Value) -> String {
        match ty {
            Value::String(t) => t.clone(),
            Value::Object(m) => {
                if let Some(t) = m.get("array") {
                    format!("List<{}>", Self::display_type(t))
                } else if let Some(t) = m.get("map") {
                    format!("Map<{}>", Self::display_type(t))
                } else if let Some(k) = m.get("ref").and_then(Value::as_str) {
                    short_type(k)
                } else if let Some(r) = m.get("resource").and_then(Value::as_str) {
                    r.to_string()
                } else if m.contains_key("enum") {
                    "string".into()
                } else if let Some(u) = m.get("union").and_then(Value::as_array) {
                    format!(
                        "Union<{}>",
                        u.iter().map(Self::display_type).collect::<Vec<_>>().join(", ")
                    )
                } else {
                    "object".into()
                }
            }
            _ => "any".into(),
        }
    }

    /// A `${root.a[0]["b"]}` read: every property it names must be an output of the type read.
    pub(super) fn check_read(&mut self, expr: &str) {
        let Some((root, steps)) = parse_steps(expr) else { return };
        let Some(spec) = self.specs.get(&root).cloned() else {
            return;
        };
        let mut outputs: Vec<String> = spec["outputs"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let component = spec["component"] == true;
        outputs.push("urn".into());
        if !component {
            outputs.push("id".into());
        }
        let mut label = root.clone();
        let mut ty: Option<Value> = None; // None: the resource itself
        for step in steps {
            let here = match &ty {
                None => Some(outputs.clone()),
                Some(Value::Object(m)) if m.contains_key("ref") => {
                    let key = m["ref"].as_str().unwrap_or_default();
                    self.schema
                        .and_then(|s| s.object(key))
                        .and_then(|p| p.as_object().map(|o| o.keys().cloned().collect()))
                }
                _ => None,
            };
            match (&step, here) {
                (Value::String(name), Some(names)) => {
                    if !names.contains(name) {
                        let line = line_containing(&self.ctx.project.text, expr);
                        self.error(
                            format!("{name} does not exist on {label}"),
                            existing(&names, name, "properties"),
                            line,
                        );
                        return;
                    }
                    ty = Some(match &ty {
                        None if name == "id" || name == "urn" => json!("string"),
                        None => spec["outputs"][name.as_str()].clone(),
                        Some(t) => {
                            let key = t["ref"].as_str().unwrap_or_default();
                            self.schema
                                .and_then(|s| s.object(key))
                                .map_or(Value::Null, |p| p[name.as_str()]["type"].clone())
                        }
                    });
                    label = format!("{label}.{name}");
                }
                (_, _) => match ty.as_ref().and_then(Value::as_object) {
                    Some(m) if m.contains_key("array") => {
                        ty = Some(m["array"].clone());
                        label = format!("{label}[{step}]");
                    }
                    Some(m) if m.contains_key("map") => {
                        ty = Some(m["map"].clone());
                        label = format!("{label}[{step}]");
                    }
                    _ => return,
                },
            }
        }
    }
}

impl Evaluator<'_> {
    /// An `fn::invoke` (evaluated): its function must exist (an error), its arguments should be
    /// inputs (a warning, as pulumi-yaml's `typeInvoke`), its `return` must be an output.
    /// `false` when the call cannot be made.
    pub(super) fn check_invoke(&mut self, token: &str, call: &Value) -> bool {
        let Some(schema) = self.schema else { return true };
        let pkg = package_of(token);
        if schema.package(pkg).is_none() {
            return true;
        }
        let text = &self.ctx.project.text;
        let line = line_containing(text, token);
        let Some(spec) = schema.function(token) else {
            self.error(
                format!("unable to find function {token:?} in resource provider {pkg:?}"),
                "",
                line,
            );
            return false;
        };
        let inputs: Vec<String> = spec["inputs"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for k in call["arguments"].as_object().into_iter().flat_map(|m| m.keys()) {
            if !inputs.contains(k) {
                let at = line_containing(&self.ctx.project.text, &format!("{k}:")).or(line);
                self.warning(
                    format!("{k} does not exist on Invoke {token}"),
                    existing(&inputs, k, "fields"),
                    at,
                );
            }
        }
        if let Some(ret) = call["return"].as_str() {
            let outputs: Vec<String> = spec["outputs"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            if !outputs.iter().any(|o| o.eq_ignore_ascii_case(ret)) {
                let at = line_containing(&self.ctx.project.text, &format!("return: {ret}")).or(line);
                self.error(
                    format!("{ret} does not exist on {token}"),
                    existing(&outputs, ret, "properties"),
                    at,
                );
                return false;
            }
        }
        true
    }
}

/// `aws:types/input#ecr.RepositoryImageScanningConfiguration` → `ecr.RepositoryImageScanningConfiguration`.
fn short_type(key: &str) -> String {
    key.rsplit('#').next().unwrap_or(key).to_string()
}

/// The type of an evaluated value as pulumi-yaml displays it: `{a: string, b: List<number>}`.
pub fn display_value(v: &Value) -> String {
    let (v, _) = reveal(v);
    match &v {
        Value::String(_) => "string".into(),
        Value::Number(_) => "number".into(),
        Value::Bool(_) => "boolean".into(),
        Value::Null => "any".into(),
        Value::Array(a) => format!("List<{}>", a.first().map_or_else(|| "any".into(), display_value)),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, x)| format!("{k}: {}", display_value(x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `a.b[0]["c"]` → `("a", ["b", 0, "c"])`.
pub fn parse_steps(expr: &str) -> Option<(String, Vec<Value>)> {
    let expr = expr.trim();
    let end = expr.find(['.', '[']).unwrap_or(expr.len());
    let root = expr[..end].to_string();
    let mut rest = &expr[end..];
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let e = r.find(['.', '[']).unwrap_or(r.len());
            steps.push(Value::String(r[..e].to_string()));
            rest = &r[e..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let e = r.find(']')?;
            let inner = r[..e].trim();
            steps.push(match inner.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                Some(q) => Value::String(q.to_string()),
                None => Value::from(inner.parse::<u64>().ok()?),
            });
            rest = &r[e + 1..];
        } else {
            return None;
        }
    }
    Some((root, steps))
}
