//! The analyser's type model (`schema.Type`) and its `isAssignable`: a value's type against the
//! type the SDK declares, with the tree of reasons the engine prints when it does not fit.

use serde_json::Value;

use super::Checker;
use super::messages::existing;
use super::problem::Against;
use crate::yaml::{Key, Node, Yaml};

/// A type, as the analyser's `schema.Type`s.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Ty {
    /// Unknown (an error was already reported, or nothing is known): assignable anywhere.
    Invalid,
    Any,
    Str,
    Num,
    Int,
    Bool,
    Asset,
    Archive,
    List(Box<Ty>),
    Map(Box<Ty>),
    Union(Vec<Ty>),
    /// An enum's allowed values.
    Enum(Vec<Value>),
    /// An object: its token (none for an object written in the program), its properties
    /// (name, type, required).
    Object(Option<String>, Vec<(String, Ty, bool)>),
    /// An object type of the schema, by its key.
    Ref(String),
    /// A resource, by its type token.
    Resource(String),
}

impl Ty {
    pub(super) fn from_schema(v: &Value) -> Ty {
        match v {
            Value::String(t) => match t.as_str() {
                "string" => Ty::Str,
                "number" => Ty::Num,
                "integer" => Ty::Int,
                "boolean" => Ty::Bool,
                "asset" => Ty::Asset,
                "archive" => Ty::Archive,
                _ => Ty::Any,
            },
            Value::Object(m) => {
                if let Some(t) = m.get("array") {
                    Ty::List(Box::new(Ty::from_schema(t)))
                } else if let Some(t) = m.get("map") {
                    Ty::Map(Box::new(Ty::from_schema(t)))
                } else if let Some(k) = m.get("ref").and_then(Value::as_str) {
                    Ty::Ref(k.to_string())
                } else if let Some(r) = m.get("resource").and_then(Value::as_str) {
                    if r == "*" { Ty::Any } else { Ty::Resource(r.to_string()) }
                } else if let Some(e) = m.get("enum").and_then(Value::as_array) {
                    Ty::Enum(e.clone())
                } else if let Some(u) = m.get("union").and_then(Value::as_array) {
                    Ty::Union(u.iter().map(Ty::from_schema).collect())
                } else if let Some(p) = m.get("object") {
                    Ty::Object(Some("object".into()), props_of(p))
                } else {
                    Ty::Any
                }
            }
            _ => Ty::Any,
        }
    }

    fn is_primitive(&self) -> bool {
        matches!(
            self,
            Ty::Any | Ty::Str | Ty::Num | Ty::Int | Ty::Bool | Ty::Asset | Ty::Archive
        )
    }

    /// `DisplayTypeWithAdhock`.
    pub(super) fn display(&self) -> String {
        match self {
            Ty::Invalid | Ty::Any => "any".into(),
            Ty::Str => "string".into(),
            Ty::Num => "number".into(),
            Ty::Int => "integer".into(),
            Ty::Bool => "boolean".into(),
            Ty::Asset => "asset".into(),
            Ty::Archive => "archive".into(),
            Ty::List(t) => format!("List<{}>", t.display()),
            Ty::Map(t) => format!("Map<{}>", t.display()),
            Ty::Union(ts) => format!("Union<{}>", ts.iter().map(Ty::display).collect::<Vec<_>>().join(", ")),
            Ty::Enum(values) => {
                if values.iter().all(Value::is_number) {
                    "number".into()
                } else {
                    "string".into()
                }
            }
            Ty::Object(None, props) => format!(
                "{{{}}}",
                props
                    .iter()
                    .map(|(k, t, _)| format!("{k}: {}", t.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Ty::Object(Some(token), _) => token.clone(),
            Ty::Ref(key) => short_type(key),
            Ty::Resource(token) => token.clone(),
        }
    }
}

/// `{name: {type, required}}` → properties.
pub(super) fn props_of(v: &Value) -> Vec<(String, Ty, bool)> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, p)| (k.clone(), Ty::from_schema(&p["type"]), p["required"] == true))
        .collect()
}

/// `aws:types/input#ecr.RepositoryImageScanningConfiguration` → `ecr.RepositoryImageScanningConfiguration`.
fn short_type(key: &str) -> String {
    key.rsplit('#').next().unwrap_or(key).to_string()
}

/// Why a value cannot be assigned (`notAssignable`): a tree of reasons.
#[derive(Debug, Clone, Default)]
pub(super) struct NotAssignable {
    reason: String,
    summary: String,
    property: String,
    line: Option<usize>,
    because: Vec<NotAssignable>,
}

impl NotAssignable {
    fn new(reason: impl Into<String>) -> Self {
        NotAssignable {
            reason: reason.into(),
            ..Default::default()
        }
    }

    fn at(mut self, line: Option<usize>) -> Self {
        if line.is_some() {
            self.line = line;
        }
        self
    }

    fn property(mut self, name: &str) -> Self {
        self.property = name.to_string();
        self
    }

    fn because(mut self, b: Vec<NotAssignable>) -> Self {
        self.because = b;
        self
    }

    fn summary(&self) -> String {
        if !self.summary.is_empty() {
            return self.summary.clone();
        }
        match self.because.as_slice() {
            [one] => one.summary(),
            _ => String::new(),
        }
    }

    fn line(&self) -> Option<usize> {
        self.line.or_else(|| match self.because.as_slice() {
            [one] => one.line(),
            _ => None,
        })
    }

    fn string(&self, indent: usize) -> String {
        let prop = if self.property.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.property)
        };
        let mut s = format!("{}{prop}{}", "  ".repeat(indent), self.reason);
        if !self.because.is_empty() {
            s.push(':');
        }
        for b in &self.because {
            s.push('\n');
            s.push_str(&b.string(indent + 1));
        }
        s
    }
}

impl<'a> Checker<'a> {
    // ------------------------------------------------------------------ assignability

    /// `assertTypeAssignable`.
    pub(super) fn assert_assignable(&mut self, node: &'a Node, from: &Ty, to: &Ty, against: &Against) {
        if let Some(n) = self.assignable(&Source::Node(node), from, to) {
            self.report(n, node.line, from, to, against);
        }
    }

    pub(super) fn report(&mut self, n: NotAssignable, line: usize, from: &Ty, to: &Ty, against: &Against) {
        let mut summary = n.summary();
        if summary.is_empty() {
            summary = format!("{} is not assignable from {}", to.display(), from.display());
        }
        let fix = missing_required(&n).map(|k| format!("add `{k}: …`"));
        self.error(n.line().unwrap_or(line), summary, n.string(0), against.clone());
        self.with_fix(fix);
    }

    pub(super) fn object_props(&self, t: &Ty) -> Option<Vec<(String, Ty, bool)>> {
        match t {
            Ty::Object(_, props) => Some(props.clone()),
            Ty::Ref(key) => Some(
                self.schema
                    .and_then(|s| s.object(key))
                    .map(|p| props_of(&p))
                    .unwrap_or_default(),
            ),
            _ => None,
        }
    }

    /// `isAssignable`: `None` when a value of type `from` (from `source`) fits `to`.
    #[allow(clippy::too_many_lines)]
    pub(super) fn assignable(&self, source: &Source<'a>, from: &Ty, to: &Ty) -> Option<NotAssignable> {
        if matches!(from, Ty::Invalid | Ty::Any) || matches!(to, Ty::Invalid | Ty::Any) {
            return None;
        }
        let disp = |t: &Ty| {
            if from.is_primitive() {
                format!("type '{}'", t.display())
            } else {
                format!("'{}'", t.display())
            }
        };
        let fail = NotAssignable::new(format!("Cannot assign {} to {}", disp(from), disp(to)));
        let ok_if = |c: bool| (!c).then(|| fail.clone());
        let ok_if_assignable = |s: Option<NotAssignable>| s.map(|s| fail.clone().because(vec![s]));
        if let Ty::Union(members) = from {
            let reasons: Vec<NotAssignable> = members.iter().filter_map(|m| self.assignable(source, m, to)).collect();
            return (!reasons.is_empty()).then(|| fail.clone().because(reasons));
        }
        match to {
            Ty::Num | Ty::Int => return ok_if(matches!(from, Ty::Num | Ty::Int)),
            Ty::Str => {
                return ok_if(matches!(from, Ty::Resource(_) | Ty::Str | Ty::Num | Ty::Int | Ty::Bool));
            }
            Ty::Asset => return ok_if(matches!(from, Ty::Asset | Ty::Archive)),
            Ty::Bool | Ty::Archive => return ok_if(from == to),
            _ => {}
        }
        match to {
            Ty::Union(members) => {
                let mut reasons = Vec::new();
                for m in members {
                    match self.assignable(source, from, m) {
                        None => return None,
                        Some(r) => reasons.push(r),
                    }
                }
                Some(fail.because(reasons))
            }
            Ty::List(to_item) => match from {
                Ty::List(from_item) => ok_if_assignable(self.assignable(source, from_item, to_item)),
                _ => Some(fail),
            },
            Ty::Map(to_item) => match from {
                Ty::Map(from_item) => ok_if_assignable(self.assignable(source, from_item, to_item)),
                Ty::Object(None, props) => {
                    for (k, t, _) in props {
                        if let Some(n) = self.assignable(source, t, to_item) {
                            return Some(fail.because(vec![n.property(k)]));
                        }
                    }
                    None
                }
                _ => Some(fail),
            },
            Ty::Resource(token) => ok_if(matches!(from, Ty::Resource(t) if t == token)),
            Ty::Enum(values) => {
                let element = if values.iter().all(Value::is_number) {
                    Ty::Num
                } else {
                    Ty::Str
                };
                if self.assignable(source, from, &element).is_some() {
                    return Some(fail);
                }
                // (Under it, not under a "Cannot assign type 'string' to type 'string'".)
                enum_value(source, values)
            }
            Ty::Object(..) | Ty::Ref(_) => {
                let to_props = self.object_props(to).unwrap_or_default();
                let from_props = match from {
                    Ty::Map(item) => {
                        let failures: Vec<NotAssignable> = to_props
                            .iter()
                            .filter_map(|(k, t, _)| {
                                self.assignable(source, item, t)
                                    .map(|n| n.property(k).at(Some(source.line())))
                            })
                            .collect();
                        return (!failures.is_empty()).then(|| fail.because(failures));
                    }
                    Ty::Object(..) => self.object_props(from).unwrap_or_default(),
                    _ => return Some(fail),
                };
                let entries = source.entries();
                let mut failures = Vec::new();
                for (k, t, required) in &to_props {
                    let Some((_, from_t, _)) = from_props.iter().find(|(n, _, _)| n == k) else {
                        if *required {
                            failures.push(
                                NotAssignable::new(format!("Missing required property '{k}'"))
                                    .property(k)
                                    .at(Some(source.line())),
                            );
                        }
                        continue;
                    };
                    let n = match entries.and_then(|e| e.iter().find(|(key, _)| &key.name == k)) {
                        Some((_, v)) => self.assignable(&Source::Node(v), from_t, t).map(|n| n.at(Some(v.line))),
                        None => self.assignable(source, from_t, t).map(|n| n.at(Some(source.line()))),
                    };
                    if let Some(n) = n {
                        failures.push(n.property(k));
                    }
                }
                let names: Vec<String> = to_props.iter().map(|(k, _, _)| k.clone()).collect();
                for (k, _, _) in &from_props {
                    if names.contains(k) {
                        continue;
                    }
                    let line = entries
                        .and_then(|e| e.iter().find(|(key, _)| &key.name == k))
                        .map_or(source.line(), |(key, _)| key.line);
                    let parent = disp(to);
                    failures.push(NotAssignable {
                        reason: existing(&names, k, "properties", 5, &parent),
                        summary: format!("Property {k} does not exist on {parent}"),
                        line: Some(line),
                        ..Default::default()
                    });
                }
                (!failures.is_empty()).then(|| fail.because(failures))
            }
            _ => ok_if(from == to),
        }
    }
}

/// What a value being assigned was written as: a node, or a resource's entries (with the line
/// of the block they are in).
pub(super) enum Source<'a> {
    Node(&'a Node),
    Entries(&'a [(Key, Node)], usize),
}

impl Source<'_> {
    fn line(&self) -> usize {
        match self {
            Source::Node(n) => n.line,
            Source::Entries(_, line) => *line,
        }
    }

    fn entries(&self) -> Option<&[(Key, Node)]> {
        match self {
            Source::Node(n) => match &n.value {
                Yaml::Map(m) => Some(m),
                _ => None,
            },
            Source::Entries(e, _) => Some(e),
        }
    }
}

/// `hasValidEnumValue`: a literal must be one of the values.
fn enum_value(source: &Source<'_>, values: &[Value]) -> Option<NotAssignable> {
    let Source::Node(node) = source else { return None };
    let literal = match &node.value {
        Yaml::Str(s) if !s.contains("${") => Value::String(s.clone()),
        Yaml::Number(n) => Value::Number(n.clone()),
        _ => return None,
    };
    if values
        .iter()
        .any(|v| v == &literal || (v.as_f64().is_some() && v.as_f64() == literal.as_f64()))
    {
        return None;
    }
    let allowed: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => format!("\"{s}\""),
            other => other.to_string(),
        })
        .collect();
    Some(NotAssignable::new(format!("Allowed values are {}", allowed.join(", "))).at(Some(node.line)))
}

/// The property a failure says is missing, when it is the only reason.
fn missing_required(n: &NotAssignable) -> Option<String> {
    match n.because.as_slice() {
        [one] if one.reason.starts_with("Missing required property") => Some(one.property.clone()),
        [one] => missing_required(one),
        _ => None,
    }
}
