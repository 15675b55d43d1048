//! The one type checker of Pulumi YAML programs, as pulumi-yaml's analyser checks them before a
//! program runs (`pkg/pulumiyaml/analyser.go` `TypeCheck`, the parse of `ast/expr.go` and
//! `ast/template.go`, `run.go` `validateResources`; messages from `diags/diags.go`): the keys of a
//! resource, of its `options` and `get`; with the SDKs' schema, its type, its properties
//! (structural: names, nested objects, enum values, lists vs objects vs scalars), its required
//! inputs; every `${…}` read (the name exists, each property is an output of the type read);
//! `fn::invoke` (the function, its arguments, its options, its `return`); the built-ins' shapes;
//! the project's `config:` block as the CLI validates it.
//!
//! It reads the program's text and returns data, [`Problem`]s: the engine's summary and detail,
//! the line, and what was checked (a type token and the SDK at its version, or Pulumi YAML's own
//! vocabulary), with a fix where one is known. The stand-in words them as the engine does;
//! `check-programs` as one line each. A package the schema does not describe is not checked
//! (as without a schema at all).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::{self, Write as _};

use serde_json::Value;

use crate::diag::{Severity, edit_distance};
use crate::schema::{Schema, package_of};
use crate::yaml::{Key, Node, Yaml};

/// One problem the checker found.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub severity: Severity,
    /// 1-based line in the program.
    pub line: usize,
    /// The engine's message.
    pub summary: String,
    /// The engine's detail (lines), empty when none.
    pub detail: String,
    pub against: Against,
    /// How to fix it, where one is known (`did you mean …?`): not the engine's words.
    pub fix: Option<String>,
}

/// What a problem was checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// A resource type, an object type or a function of an SDK (`sdk`: `@pulumi/aws@7.48.0`,
    /// or `built in` for the engine's own resources).
    Type {
        token: String,
        sdk: String,
    },
    /// What a package has: `the resource types of @pulumi/aws@7.48.0`.
    Package {
        what: &'static str,
        sdk: String,
    },
    ResourceOptions,
    InvokeOptions,
    /// The keys a resource declaration takes.
    ResourceKeys,
    /// The resources, variables and config this program declares.
    Names,
    BuiltIns,
    /// The project file's schema (the CLI's `project.json`), for `config:`.
    ProjectSchema,
}

impl fmt::Display for Against {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Against::Type { token, sdk } if sdk == BUILT_IN => write!(f, "{token} (built in)"),
            Against::Type { token, sdk } => write!(f, "{token} in {sdk}"),
            Against::Package { what, sdk } => write!(f, "the {what} of {sdk}"),
            Against::ResourceOptions => {
                f.write_str("the Pulumi YAML resource options (pulumi-yaml ast/template.go ResourceOptionsDecl)")
            }
            Against::InvokeOptions => {
                f.write_str("the Pulumi YAML invoke options (pulumi-yaml ast/template.go InvokeOptionsDecl)")
            }
            Against::ResourceKeys => f.write_str("the keys of a Pulumi YAML resource"),
            Against::Names => f.write_str("the names this program declares"),
            Against::BuiltIns => f.write_str("the Pulumi YAML built-in functions"),
            Against::ProjectSchema => f.write_str("the Pulumi project schema"),
        }
    }
}

const BUILT_IN: &str = "built in";

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

/// `ast.InvokeOptionsDecl`.
pub const INVOKE_OPTIONS: [&str; 5] = ["dependsOn", "parent", "provider", "version", "pluginDownloadURL"];

/// `ResourceDecl.Fields()` plus `condition` and `metadata` (lower-cased, as compared).
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

/// Pulumi YAML's built-in functions (`ast/expr.go` `tryParseFunction`; matched
/// case-insensitively).
pub const BUILTINS: [&str; 24] = [
    "fn::invoke",
    "fn::join",
    "fn::toJSON",
    "fn::toBase64",
    "fn::fromBase64",
    "fn::select",
    "fn::split",
    "fn::stackReference",
    "fn::assetArchive",
    "fn::secret",
    "fn::unsecret",
    "fn::readFile",
    "fn::filebase64",
    "fn::filebase64sha256",
    "fn::sha1",
    "fn::length",
    "fn::singleOrNone",
    "fn::pulumiResourceName",
    "fn::pulumiResourceType",
    "fn::stringAsset",
    "fn::fileAsset",
    "fn::remoteAsset",
    "fn::fileArchive",
    "fn::remoteArchive",
];

/// `fn::<package>:<module>(:<name>)?`: an invoke in short (`ast/expr.go` `fnInvokeRegex`).
pub fn short_invoke(key: &str) -> Option<&str> {
    let rest = key
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("fn::"))
        .map(|_| &key[4..])?;
    let parts: Vec<&str> = rest.split(':').collect();
    ((2..=3).contains(&parts.len()) && parts.iter().all(|p| !p.is_empty())).then_some(rest)
}

/// A type, as the analyser's `schema.Type`s.
#[derive(Debug, Clone, PartialEq)]
enum Ty {
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
    fn from_schema(v: &Value) -> Ty {
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
    fn display(&self) -> String {
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
fn props_of(v: &Value) -> Vec<(String, Ty, bool)> {
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
struct NotAssignable {
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

/// "Existing properties are: a, b, c, d, e and 3 others", closest names first (pulumi-yaml
/// `diags.NonExistentFieldFormatter`; `max` 0 lists all); `parent` names the owner when there
/// are none.
fn existing(fields: &[String], field: &str, noun: &str, max: usize, parent: &str) -> String {
    let mut sorted: Vec<&String> = fields.iter().collect();
    sorted.sort();
    sorted.sort_by_key(|f| edit_distance(f, field));
    if sorted.is_empty() {
        return format!("{parent} has no {noun}");
    }
    let shown: Vec<&str> = sorted
        .iter()
        .take(if max == 0 { usize::MAX } else { max })
        .map(|s| s.as_str())
        .collect();
    let more = if max == 0 { 0 } else { sorted.len().saturating_sub(max) };
    let tail = match more {
        0 => String::new(),
        1 => " and 1 other".to_string(),
        n => format!(" and {n} others"),
    };
    format!("Existing {noun} are: {}{tail}", shown.join(", "))
}

/// The closest name, if close enough to be what was meant (case-insensitive).
pub fn closest<'a>(names: impl IntoIterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let (best, d) = names
        .into_iter()
        .map(|n| (n, edit_distance(&lower, &n.to_lowercase())))
        .min_by_key(|(_, d)| *d)?;
    (d <= (name.chars().count() / 3).max(2)).then_some(best)
}

fn did_you_mean<'a>(names: impl IntoIterator<Item = &'a str>, name: &str) -> Option<String> {
    closest(names, name).map(|n| format!("did you mean `{n}`?"))
}

/// One step of a `${…}` read.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Name(String),
    Key(String),
    Index(u64),
}

/// `a.b[0]["c"]` → `("a", [Name b, Index 0, Key c])`.
fn parse_access(expr: &str) -> Option<(String, Vec<Step>)> {
    let expr = expr.trim();
    let end = expr.find(['.', '[']).unwrap_or(expr.len());
    let root = expr[..end].to_string();
    if root.is_empty() {
        return None;
    }
    let mut rest = &expr[end..];
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let e = r.find(['.', '[']).unwrap_or(r.len());
            steps.push(Step::Name(r[..e].to_string()));
            rest = &r[e..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let e = r.find(']')?;
            let inner = r[..e].trim();
            steps.push(match inner.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                Some(q) => Step::Key(q.to_string()),
                None => Step::Index(inner.parse::<u64>().ok()?),
            });
            rest = &r[e + 1..];
        } else {
            return None;
        }
    }
    Some((root, steps))
}

/// The `${…}` reads of a string (not `$${…}`, which is literal), and whether the string is one
/// read alone.
fn reads(s: &str) -> (Vec<&str>, bool) {
    let mut out = Vec::new();
    let mut rest = s;
    let mut at_start = true;
    let mut alone = false;
    while let Some(at) = rest.find("${") {
        if at > 0 && rest.as_bytes()[at - 1] == b'$' {
            rest = &rest[at + 2..];
            at_start = false;
            continue;
        }
        let Some(end) = rest[at..].find('}') else { break };
        out.push(&rest[at + 2..at + end]);
        alone = at_start && at == 0 && at + end + 1 == rest.len() && out.len() == 1;
        at_start = false;
        rest = &rest[at + end + 1..];
    }
    (out, alone)
}

/// Checks a program: `text` is its `Pulumi.yaml`, `project` its name.
pub fn program(text: &str, schema: Option<&Schema>) -> Vec<Problem> {
    let doc = match crate::yaml::parse(text) {
        Ok(d) => d,
        Err(e) => {
            return vec![Problem {
                severity: Severity::Error,
                line: 1,
                summary: format!("not valid YAML: {}", e.lines().next().unwrap_or_default()),
                detail: String::new(),
                against: Against::ProjectSchema,
                fix: None,
            }];
        }
    };
    let mut c = Checker::new(&doc, schema);
    c.check();
    let mut problems = c.problems;
    problems.sort_by_key(|p| p.line);
    problems
}

struct Checker<'a> {
    doc: &'a Node,
    schema: Option<&'a Schema>,
    resources: BTreeMap<String, &'a Node>,
    variables: BTreeMap<String, &'a Node>,
    config: HashMap<String, Ty>,
    var_types: HashMap<String, Option<Ty>>,
    problems: Vec<Problem>,
    seen: HashSet<(usize, String)>,
}

impl<'a> Checker<'a> {
    fn new(doc: &'a Node, schema: Option<&'a Schema>) -> Self {
        let section = |name: &str| -> BTreeMap<String, &'a Node> {
            doc.get(name)
                .map(|n| n.entries().iter().map(|(k, v)| (k.name.clone(), v)).collect())
                .unwrap_or_default()
        };
        Checker {
            doc,
            schema,
            resources: section("resources"),
            variables: section("variables"),
            config: HashMap::new(),
            var_types: HashMap::new(),
            problems: Vec::new(),
            seen: HashSet::new(),
        }
    }

    fn push(&mut self, p: Problem) {
        if self.seen.insert((p.line, p.summary.clone())) {
            self.problems.push(p);
        }
    }

    fn error(&mut self, line: usize, summary: impl Into<String>, detail: impl Into<String>, against: Against) {
        self.push(Problem {
            severity: Severity::Error,
            line,
            summary: summary.into(),
            detail: detail.into(),
            against,
            fix: None,
        });
    }

    fn with_fix(&mut self, fix: Option<String>) {
        if let Some(p) = self.problems.last_mut() {
            p.fix = fix;
        }
    }

    fn warning(&mut self, line: usize, summary: impl Into<String>, detail: impl Into<String>, against: Against) {
        self.push(Problem {
            severity: Severity::Warning,
            line,
            summary: summary.into(),
            detail: detail.into(),
            against,
            fix: None,
        });
    }

    fn sdk(&self, token: &str) -> Option<String> {
        self.schema?.package(package_of(token))
    }

    fn check(&mut self) {
        let doc = self.doc;
        self.config_block();
        let names: Vec<String> = self.resources.keys().cloned().collect();
        for (key, decl) in doc.get("resources").map(Node::entries).unwrap_or_default() {
            self.resource(key, decl);
        }
        let _ = names;
        let variables: Vec<String> = self.variables.keys().cloned().collect();
        for name in variables {
            self.variable(&name);
        }
        for (_, v) in doc.get("outputs").map(Node::entries).unwrap_or_default() {
            self.type_of(v);
        }
    }

    // ------------------------------------------------------------------ config

    /// `config:` as the CLI validates it when it loads the project, and each key's type for
    /// what the program reads (`typeConfig`: a default's type, else the declared one).
    fn config_block(&mut self) {
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

    // ------------------------------------------------------------------ resources

    fn resource(&mut self, key: &Key, decl: &'a Node) {
        let name = key.name.as_str();
        let ty_node = decl.get_ci("type").map(|(_, v)| v);
        let Some(ty) = ty_node.and_then(Node::as_str) else {
            // run.go validateResources.
            self.error(
                decl.line,
                format!("Required field 'type' is missing on resource \"{name}\""),
                "",
                Against::ResourceKeys,
            );
            for (_, v) in decl.entries() {
                self.type_of(v);
            }
            return;
        };
        let ty_line = ty_node.map_or(key.line, |n| n.line);
        let found = self.resource_spec(ty);
        let against = match &found {
            Some((_, sdk)) => Against::Type {
                token: ty.to_string(),
                sdk: sdk.clone(),
            },
            None => Against::ResourceKeys,
        };
        let spec = found.as_ref().map(|(s, _)| s.clone());
        // Its type in the schema.
        let mut known = spec.is_some();
        if spec.is_none() && ty.split(':').count() != 3 {
            self.error(
                ty_line,
                format!("error resolving type of resource {name}: invalid type token {ty:?}"),
                "",
                Against::ResourceKeys,
            );
        } else if spec.is_none()
            && let Some(sdk) = self.sdk(ty).filter(|_| !ty.starts_with("pulumi:pulumi:"))
        {
            let pkg = package_of(ty);
            self.error(
                ty_line,
                format!(
                    "error resolving type of resource {name}: unable to find resource type \"{ty}\" in resource provider \"{pkg}\""
                ),
                "",
                Against::Package {
                    what: "resource types",
                    sdk,
                },
            );
            let tokens = self.schema.map(|s| s.names(pkg, "resources")).unwrap_or_default();
            self.with_fix(did_you_mean(tokens, ty));
            known = false;
        }
        let inputs: Vec<(String, Ty, bool)> = spec.as_ref().map(|s| props_of(&s["inputs"])).unwrap_or_default();
        let input_names: Vec<String> = inputs.iter().map(|(k, _, _)| k.clone()).collect();

        // Its keys.
        let option_names: Vec<String> = RESOURCE_OPTIONS.iter().map(ToString::to_string).collect();
        let get_keys = vec!["id".to_string(), "state".to_string()];
        let resource_keys: Vec<String> = RESOURCE_KEYS.iter().map(ToString::to_string).collect();
        for (k, v) in decl.entries() {
            if RESOURCE_KEYS.contains(&k.name.to_lowercase().as_str()) {
                continue;
            }
            let detail = bag_detail(
                &k.name,
                &[
                    ("properties", &input_names),
                    ("options", &option_names),
                    ("get", &get_keys),
                    (name, &resource_keys),
                ],
                name,
                v,
            );
            let summary = format!("Resource {ty} has invalid key '{}'", k.name);
            let fix = did_you_mean(
                [
                    "type",
                    "name",
                    "defaultProvider",
                    "properties",
                    "options",
                    "get",
                    "condition",
                    "metadata",
                ]
                .into_iter()
                .chain(RESOURCE_OPTIONS),
                &k.name,
            );
            self.error(k.line, summary, detail, against.clone());
            self.with_fix(fix);
        }
        // Its options.
        if let Some((_, opts)) = decl.get_ci("options") {
            match &opts.value {
                Yaml::Map(entries) => {
                    for (k, v) in entries {
                        if RESOURCE_OPTIONS.iter().any(|o| o.eq_ignore_ascii_case(&k.name)) {
                            self.type_of(v);
                            continue;
                        }
                        self.error(
                            k.line,
                            format!("{} does not exist on resource options", k.name),
                            existing(&option_names, &k.name, "fields", 5, "resource options"),
                            Against::ResourceOptions,
                        );
                        self.with_fix(did_you_mean(RESOURCE_OPTIONS, &k.name));
                    }
                }
                Yaml::Null => {}
                _ => self.error(opts.line, "options must be an object", "", Against::ResourceOptions),
            }
        }
        let props = decl.get_ci("properties").map(|(_, v)| v);
        let get = decl.get_ci("get").map(|(k, v)| (k, v));
        let has_props = props.is_some_and(|p| match &p.value {
            Yaml::Map(m) => !m.is_empty(),
            Yaml::Null => false,
            _ => true,
        });
        let is_get = get.is_some_and(|(_, g)| {
            g.get_ci("id").is_some() || g.get_ci("state").is_some_and(|(_, s)| !s.entries().is_empty())
        });
        if is_get && has_props {
            self.error(
                key.line,
                "Resource fields properties and get are mutually exclusive",
                "Properties is used to describe a resource managed by Pulumi.\nGet is used to describe a resource managed outside of the current Pulumi stack.\nSee https://www.pulumi.com/docs/intro/concepts/resources/get for more details on using Get.",
                against.clone(),
            );
        }
        // Its properties against the type's inputs.
        if has_props || !is_get {
            let entries: &[(Key, Node)] = props.map(Node::entries).unwrap_or_default();
            let at = props.filter(|p| !p.entries().is_empty()).map_or(key.line, |p| p.line);
            if known {
                self.property_entries(entries, at, ty, &inputs, &against);
            } else {
                for (_, v) in entries {
                    self.type_of(v);
                }
            }
        }
        // `get`.
        if let Some((_, g)) = get {
            match &g.value {
                Yaml::Map(entries) => {
                    for (k, v) in entries {
                        match k.name.to_lowercase().as_str() {
                            "id" => {
                                let t = self.type_of(v);
                                self.assert_assignable(v, &t, &Ty::Str, &against);
                            }
                            "state" => {
                                let outputs: Vec<(String, Ty, bool)> = spec
                                    .as_ref()
                                    .and_then(|s| s["outputs"].as_object())
                                    .into_iter()
                                    .flatten()
                                    .map(|(k, t)| (k.clone(), Ty::from_schema(t), false))
                                    .collect();
                                if known {
                                    self.property_entries(v.entries(), v.line, ty, &outputs, &against);
                                } else {
                                    self.type_of(v);
                                }
                            }
                            _ => self.warning(
                                k.line,
                                format!("Field '{}' does not exist on Object 'get'", k.name),
                                existing(&["'id'".into(), "'state'".into()], &k.name, "fields", 0, "Object 'get'"),
                                against.clone(),
                            ),
                        }
                    }
                }
                _ => self.error(g.line, "get must be an object", "", against.clone()),
            }
        }
    }

    /// A resource's type: its spec (`{inputs, outputs, component?}`) and SDK, when known.
    fn resource_spec(&self, ty: &str) -> Option<(Value, String)> {
        match ty {
            "pulumi:pulumi:StackReference" => Some((
                serde_json::json!({
                    "inputs": { "name": { "type": "string", "required": true } },
                    "outputs": { "name": "string", "outputs": { "map": "any" }, "secretOutputNames": { "array": "string" } }
                }),
                BUILT_IN.into(),
            )),
            // pkg/codegen/schema/mock_pulumi_schema.go: one required input of any type.
            "pulumi:index:Stash" => Some((
                serde_json::json!({
                    "inputs": { "input": { "type": "any", "required": true } },
                    "outputs": { "input": "any", "output": "any" }
                }),
                BUILT_IN.into(),
            )),
            _ => {
                let schema = self.schema?;
                let sdk = schema.package(package_of(ty))?;
                Some((schema.resource(ty)?, sdk))
            }
        }
    }

    /// `typePropertyEntries`: the entries, as one object, against the properties of `token`.
    fn property_entries(
        &mut self,
        entries: &'a [(Key, Node)],
        line: usize,
        token: &str,
        props: &[(String, Ty, bool)],
        against: &Against,
    ) {
        let from: Vec<(String, Ty, bool)> = entries
            .iter()
            .map(|(k, v)| (k.name.clone(), self.type_of(v), true))
            .collect();
        let from = Ty::Object(None, from);
        let to = Ty::Object(Some(token.to_string()), props.to_vec());
        let source = Source::Entries(entries, line);
        if let Some(n) = self.assignable(&source, &from, &to) {
            self.report(n, line, &from, &to, against);
        }
    }

    // ------------------------------------------------------------------ assignability

    /// `assertTypeAssignable`.
    fn assert_assignable(&mut self, node: &'a Node, from: &Ty, to: &Ty, against: &Against) {
        if let Some(n) = self.assignable(&Source::Node(node), from, to) {
            self.report(n, node.line, from, to, against);
        }
    }

    fn report(&mut self, n: NotAssignable, line: usize, from: &Ty, to: &Ty, against: &Against) {
        let mut summary = n.summary();
        if summary.is_empty() {
            summary = format!("{} is not assignable from {}", to.display(), from.display());
        }
        let fix = missing_required(&n).map(|k| format!("add `{k}: …`"));
        self.error(n.line().unwrap_or(line), summary, n.string(0), against.clone());
        self.with_fix(fix);
    }

    fn object_props(&self, t: &Ty) -> Option<Vec<(String, Ty, bool)>> {
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
    fn assignable(&self, source: &Source<'a>, from: &Ty, to: &Ty) -> Option<NotAssignable> {
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

    // ------------------------------------------------------------------ expressions

    /// `typeExpr`: the type of a value, checking the reads and calls inside it.
    fn type_of(&mut self, node: &'a Node) -> Ty {
        match &node.value {
            Yaml::Null => Ty::Invalid,
            Yaml::Bool(_) => Ty::Bool,
            Yaml::Number(_) => Ty::Num,
            Yaml::Str(s) => self.string(node, s),
            Yaml::Seq(items) => {
                let mut types: Vec<Ty> = Vec::new();
                for i in items {
                    let t = self.type_of(i);
                    if !types.contains(&t) {
                        types.push(t);
                    }
                }
                Ty::List(Box::new(match types.len() {
                    0 => Ty::Invalid,
                    1 => types.remove(0),
                    _ => Ty::Union(types),
                }))
            }
            Yaml::Map(entries) => {
                if let [(k, v)] = entries.as_slice()
                    && k.name.to_lowercase().starts_with("fn::")
                {
                    return self.builtin(node, k, v);
                }
                let props = entries
                    .iter()
                    .map(|(k, v)| (k.name.clone(), self.type_of(v), true))
                    .collect();
                Ty::Object(None, props)
            }
        }
    }

    fn string(&mut self, node: &'a Node, s: &str) -> Ty {
        let (exprs, alone) = reads(s);
        let types: Vec<Ty> = exprs.iter().map(|e| self.read(node, e)).collect();
        if alone {
            types.into_iter().next().unwrap_or(Ty::Str)
        } else {
            Ty::Str
        }
    }

    /// `typeSymbol`: the type a `${…}` reads, each step checked.
    fn read(&mut self, node: &'a Node, expr: &str) -> Ty {
        let Some((root, steps)) = parse_access(expr) else {
            return Ty::Invalid;
        };
        let (ty, against) = if root == "pulumi" {
            (
                Ty::Object(
                    Some("pulumi:builtin:pulumi".into()),
                    ["cwd", "project", "stack", "organization", "rootDirectory"]
                        .into_iter()
                        .map(|k| (k.to_string(), Ty::Str, true))
                        .collect(),
                ),
                Against::Names,
            )
        } else if let Some(t) = self.config.get(&root) {
            (t.clone(), Against::Names)
        } else if let Some(decl) = self.resources.get(&root).copied() {
            let ty = decl.get_ci("type").and_then(|(_, t)| t.as_str()).unwrap_or_default();
            match self.resource_spec(ty) {
                Some((_, sdk)) => (
                    Ty::Resource(ty.to_string()),
                    Against::Type {
                        token: ty.to_string(),
                        sdk,
                    },
                ),
                None => (Ty::Invalid, Against::Names),
            }
        } else if self.variables.contains_key(&root) {
            (self.variable(&root), Against::Names)
        } else if root.contains(':') {
            (Ty::Any, Against::Names) // a configuration key of another namespace
        } else {
            // analyser.go typeMissing.
            let names: Vec<String> = self
                .resources
                .keys()
                .chain(self.variables.keys())
                .chain(self.config.keys())
                .cloned()
                .collect();
            self.error(
                node.line,
                format!("resource, variable, or config value {root:?} not found"),
                "",
                Against::Names,
            );
            self.with_fix(did_you_mean(names.iter().map(String::as_str), &root));
            return Ty::Invalid;
        };
        self.access(node, ty, root, &steps, &against)
    }

    /// `typePropertyAccess`.
    fn access(&mut self, node: &Node, root: Ty, running: String, steps: &[Step], against: &Against) -> Ty {
        let Some((step, rest)) = steps.split_first() else {
            return root;
        };
        let root = match root {
            Ty::Ref(_) => Ty::Object(Some(root.display()), self.object_props(&root).unwrap_or_default()),
            other => other,
        };
        if matches!(root, Ty::Any | Ty::Invalid) {
            return root;
        }
        if let Ty::Union(members) = &root {
            // The union's members that allow the access (each member quietly).
            let mut fits = Vec::new();
            let before = self.problems.len();
            for m in members {
                let t = self.access(node, m.clone(), running.clone(), steps, against);
                if self.problems.len() > before {
                    self.problems.truncate(before);
                    let op = if matches!(step, Step::Name(_)) {
                        "access"
                    } else {
                        "index"
                    };
                    self.error(
                        node.line,
                        format!("Cannot {op} into {running} of type {}", root.display()),
                        format!("'{running}' could be a type that does not support {op}ing"),
                        against.clone(),
                    );
                    return Ty::Invalid;
                }
                if !fits.contains(&t) {
                    fits.push(t);
                }
            }
            return if fits.len() == 1 {
                fits.remove(0)
            } else {
                Ty::Union(fits)
            };
        }
        match step {
            Step::Name(name) => {
                let props: Vec<(String, Ty)> = match &root {
                    Ty::Object(_, props) => props.iter().map(|(k, t, _)| (k.clone(), t.clone())).collect(),
                    Ty::Map(item) => return (**item).clone(),
                    Ty::Resource(token) => {
                        let spec = self.resource_spec(token).map(|(s, _)| s).unwrap_or_default();
                        let mut props: Vec<(String, Ty)> = spec["outputs"]
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, t)| (k.clone(), Ty::from_schema(t)))
                            .collect();
                        if spec["component"] != true {
                            props.push(("id".into(), Ty::Str));
                        }
                        props.push(("urn".into(), Ty::Str));
                        props
                    }
                    other => {
                        self.error(
                            node.line,
                            format!("cannot access a property on '{running}' (type {})", other.display()),
                            "Property access is only allowed on Resources and Objects",
                            against.clone(),
                        );
                        return Ty::Invalid;
                    }
                };
                match props.iter().find(|(k, _)| k == name) {
                    Some((_, t)) => self.access(node, t.clone(), format!("{running}.{name}"), rest, against),
                    None => {
                        let names: Vec<String> = props.iter().map(|(k, _)| k.clone()).collect();
                        self.error(
                            node.line,
                            format!("{name} does not exist on {running}"),
                            existing(&names, name, "properties", 5, &running),
                            against.clone(),
                        );
                        self.with_fix(did_you_mean(names.iter().map(String::as_str), name));
                        Ty::Invalid
                    }
                }
            }
            Step::Key(_) | Step::Index(_) => {
                let err = |this: &mut Self, via: &str, msg: &str| {
                    this.error(
                        node.line,
                        format!("Cannot index{via} into '{running}' (type {})", root.display()),
                        msg,
                        against.clone(),
                    );
                    Ty::Invalid
                };
                match (&root, step) {
                    (Ty::List(_), Step::Key(_)) => err(self, " via string", "Index via string is only allowed on Maps"),
                    (Ty::List(item), Step::Index(i)) => {
                        self.access(node, (**item).clone(), format!("{running}[{i}]"), rest, against)
                    }
                    (Ty::Map(_), Step::Index(_)) => {
                        err(self, " via number", "Index via number is only allowed on Arrays")
                    }
                    (Ty::Map(item), Step::Key(k)) => {
                        self.access(node, (**item).clone(), format!("{running}[{k:?}]"), rest, against)
                    }
                    _ => err(self, "", "Index property access is only allowed on Maps and Lists"),
                }
            }
        }
    }

    fn variable(&mut self, name: &str) -> Ty {
        if let Some(t) = self.var_types.get(name) {
            return t.clone().unwrap_or(Ty::Invalid);
        }
        self.var_types.insert(name.to_string(), None); // a cycle reads as unknown
        let node = self.variables[name];
        let t = self.type_of(node);
        self.var_types.insert(name.to_string(), Some(t.clone()));
        t
    }

    // ------------------------------------------------------------------ built-ins

    fn builtin(&mut self, node: &'a Node, key: &'a Key, arg: &'a Node) -> Ty {
        let lower = key.name.to_lowercase();
        if !BUILTINS.iter().any(|b| b.eq_ignore_ascii_case(&lower)) {
            if let Some(function) = short_invoke(&key.name) {
                return self.invoke_parts(node, function, arg.line, Some(arg).filter(|a| a.is_map()), None, None);
            }
            // ast/expr.go tryParseFunction: a warning, and the key is kept as it is.
            self.warning(
                key.line,
                "'fn::' is a reserved prefix",
                format!(
                    "If you need to use the raw key '{}', please open an issue at https://github.com/pulumi/pulumi-yaml/issues",
                    key.name
                ),
                Against::BuiltIns,
            );
            self.type_of(arg);
            return Ty::Object(None, vec![(key.name.clone(), Ty::Invalid, true)]);
        }
        if lower == "fn::invoke" {
            return self.invoke(node, arg);
        }
        if lower == "fn::stackreference" {
            self.warning(
                key.line,
                "'fn::stackReference' is deprecated; please use 'pulumi:pulumi:StackReference' instead",
                "see \"https://www.pulumi.com/docs/intro/concepts/stack/#stackreferences for more info.",
                Against::BuiltIns,
            );
        }
        let two = |this: &mut Self, what: &str| -> Option<(&'a Node, &'a Node)> {
            if let Yaml::Seq(items) = &arg.value
                && let [a, b] = items.as_slice()
            {
                return Some((a, b));
            }
            this.error(arg.line, what, "", Against::BuiltIns);
            None
        };
        match lower.as_str() {
            "fn::join" => {
                let Some((delim, values)) = two(self, "the argument to fn::join must be a two-valued list") else {
                    return Ty::Invalid;
                };
                let d = self.type_of(delim);
                self.type_of(values);
                self.assert_assignable(delim, &d, &Ty::Str, &Against::BuiltIns);
                Ty::Str
            }
            "fn::split" => {
                let Some((delim, source)) = two(self, "The argument to fn::split must be a two-values list") else {
                    return Ty::Invalid;
                };
                let d = self.type_of(delim);
                let s = self.type_of(source);
                self.assert_assignable(delim, &d, &Ty::Str, &Against::BuiltIns);
                self.assert_assignable(source, &s, &Ty::Str, &Against::BuiltIns);
                Ty::List(Box::new(Ty::Str))
            }
            "fn::select" => {
                let Some((index, values)) = two(self, "the argument to fn::select must be a two-valued list") else {
                    return Ty::Invalid;
                };
                let i = self.type_of(index);
                let v = self.type_of(values);
                self.assert_assignable(index, &i, &Ty::Int, &Against::BuiltIns);
                self.assert_assignable(values, &v, &Ty::List(Box::new(Ty::Any)), &Against::BuiltIns);
                match v {
                    Ty::List(item) => *item,
                    _ => Ty::Invalid,
                }
            }
            "fn::tojson" => {
                self.type_of(arg);
                Ty::Str
            }
            "fn::secret" | "fn::unsecret" => self.type_of(arg),
            "fn::stringasset" | "fn::fileasset" | "fn::remoteasset" => {
                self.type_of(arg);
                Ty::Asset
            }
            "fn::filearchive" | "fn::remotearchive" | "fn::assetarchive" => {
                self.type_of(arg);
                Ty::Archive
            }
            _ => {
                // Typed by nothing in the analyser (`Hit unknown type`): unknown.
                self.type_of(arg);
                Ty::Invalid
            }
        }
    }

    /// `fn::invoke: {function, arguments, options, return}` (`parseInvoke`).
    fn invoke(&mut self, node: &'a Node, arg: &'a Node) -> Ty {
        let Yaml::Map(entries) = &arg.value else {
            self.error(
                arg.line,
                "the argument to fn::invoke must be an object containing 'function', 'arguments', 'options', and 'return'",
                "",
                Against::BuiltIns,
            );
            return Ty::Invalid;
        };
        let part = |name: &str| {
            entries
                .iter()
                .find(|(k, _)| k.name.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        };
        let mut bad = false;
        if let Some(opts) = part("options") {
            match &opts.value {
                Yaml::Map(o) => {
                    let fields: Vec<String> = INVOKE_OPTIONS.iter().map(|f| format!("'{f}'")).collect();
                    for (k, v) in o {
                        if INVOKE_OPTIONS.iter().any(|f| f.eq_ignore_ascii_case(&k.name)) {
                            self.type_of(v);
                        } else {
                            self.warning(
                                k.line,
                                format!("Field '{}' does not exist on Object 'invokeOptions'", k.name),
                                existing(&fields, &k.name, "fields", 0, "Object 'invokeOptions'"),
                                Against::InvokeOptions,
                            );
                            self.with_fix(did_you_mean(INVOKE_OPTIONS, &k.name));
                        }
                    }
                }
                _ => {
                    self.error(opts.line, "invokeOptions must be an object", "", Against::InvokeOptions);
                    return Ty::Invalid;
                }
            }
        }
        let function = match part("function") {
            None => {
                self.error(arg.line, "missing function name ('function')", "", Against::BuiltIns);
                bad = true;
                None
            }
            Some(f) => match f.as_str() {
                Some(s) => Some((s, f.line)),
                None => {
                    self.error(f.line, "function name must be a string literal", "", Against::BuiltIns);
                    bad = true;
                    None
                }
            },
        };
        let arguments = part("arguments").filter(|a| !matches!(a.value, Yaml::Null));
        if let Some(a) = arguments
            && !a.is_map()
        {
            self.error(
                a.line,
                "function arguments ('arguments') must be an object",
                "",
                Against::BuiltIns,
            );
            bad = true;
        }
        let ret = part("return");
        if let Some(r) = ret
            && r.as_str().is_none()
        {
            self.error(
                r.line,
                "return directive must be a string literal",
                "",
                Against::BuiltIns,
            );
            bad = true;
        }
        let Some((function, line)) = function.filter(|_| !bad) else {
            return Ty::Invalid;
        };
        self.invoke_parts(
            node,
            function,
            line,
            arguments,
            ret.and_then(|r| r.as_str().map(|s| (s, r.line))),
            Some(()),
        )
    }

    /// `typeInvoke`: the function exists; its arguments are inputs (a warning otherwise, and
    /// their types are not checked); its `return` is an output.
    fn invoke_parts(
        &mut self,
        _node: &'a Node,
        function: &str,
        line: usize,
        arguments: Option<&'a Node>,
        ret: Option<(&str, usize)>,
        _long: Option<()>,
    ) -> Ty {
        for (_, v) in arguments.map(Node::entries).unwrap_or_default() {
            self.type_of(v);
        }
        let pkg = package_of(function);
        let Some(schema) = self.schema else { return Ty::Invalid };
        let Some(sdk) = schema.package(pkg) else {
            return Ty::Invalid; // a package the schema does not describe
        };
        let Some(spec) = schema.function(function) else {
            self.error(
                line,
                format!("unable to find function {function:?} in resource provider {pkg:?}"),
                "",
                Against::Package { what: "functions", sdk },
            );
            let tokens = schema.names(pkg, "functions");
            self.with_fix(did_you_mean(tokens, function));
            return Ty::Invalid;
        };
        let against = Against::Type {
            token: function.to_string(),
            sdk,
        };
        let inputs: Vec<String> = spec["inputs"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for (k, _) in arguments.map(Node::entries).unwrap_or_default() {
            if !inputs.contains(&k.name) {
                self.warning(
                    k.line,
                    format!("{} does not exist on Invoke {function}", k.name),
                    existing(&inputs, &k.name, "fields", 5, &format!("Invoke {function}")),
                    against.clone(),
                );
                self.with_fix(did_you_mean(inputs.iter().map(String::as_str), &k.name));
            }
        }
        let outputs: Vec<(String, Ty)> = spec["outputs"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, t)| (k.clone(), Ty::from_schema(t)))
            .collect();
        match ret {
            Some((r, at)) => match outputs.iter().find(|(o, _)| o.eq_ignore_ascii_case(r)) {
                Some((_, t)) => t.clone(),
                None => {
                    let names: Vec<String> = outputs.iter().map(|(k, _)| k.clone()).collect();
                    self.error(
                        at,
                        format!("{r} does not exist on {function}"),
                        existing(&names, r, "properties", 5, function),
                        against,
                    );
                    self.with_fix(did_you_mean(names.iter().map(String::as_str), r));
                    Ty::Invalid
                }
            },
            None => Ty::Object(
                Some(function.to_string()),
                outputs.into_iter().map(|(k, t)| (k, t, false)).collect(),
            ),
        }
    }
}

/// What a value being assigned was written as: a node, or a resource's entries (with the line
/// of the block they are in).
enum Source<'a> {
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

/// `InvalidFieldBagFormatter.MessageWithDetail`'s detail: where a misplaced key belongs.
fn bag_detail(field: &str, bags: &[(&str, &Vec<String>)], resource: &str, value: &Node) -> String {
    // Every name, with the bags it is in, ranked by distance; at most 5 within 3 edits.
    let mut places: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (bag, names) in bags {
        for n in *names {
            places.entry(n.as_str()).or_default().push(bag);
        }
    }
    let mut ranked: Vec<(usize, &str, Vec<&str>)> = places
        .into_iter()
        .map(|(p, b)| (edit_distance(field, p), p, b))
        .filter(|(d, _, _)| *d <= 3)
        .collect();
    ranked.sort_by_key(|(d, _, _)| *d);
    ranked.truncate(5);
    let Some((best, _, _)) = ranked.first() else {
        return String::new();
    };
    if *best == 0 {
        let names: Vec<&str> = ranked
            .iter()
            .filter(|(d, _, _)| *d == 0)
            .flat_map(|(_, _, b)| b.iter().copied())
            .collect();
        let mut detail = format!("'{field}' exists under {}", and_list(&names));
        if let [only] = names.as_slice() {
            let shown = value.scalar_text().unwrap_or_else(|| value.to_json().to_string());
            let _ = write!(
                detail,
                ", e.g.\n\n{resource}:\n  # ...\n  {only}:\n    {field}: {shown}"
            );
        }
        return detail;
    }
    let place = |(_, p, b): &(usize, &str, Vec<&str>)| match b.as_slice() {
        [one] => format!("'{p}' under '{one}'"),
        many => format!(
            "'{p}' under keys {}",
            many.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" or ")
        ),
    };
    if let [one] = ranked.as_slice() {
        format!("Did you mean {}?", place(one))
    } else {
        let mut d = "Did you mean one of the following:\n".to_string();
        for r in &ranked {
            let _ = writeln!(d, "  * {}", place(r));
        }
        d
    }
}

fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema of one package, `p` (`@p/sdk@1.0.0`), laid out as `sdk-schema.js` writes it.
    fn schema() -> Schema {
        let text = [
            r#"{"schemaVersion":1,"pins":{"p":"1.0.0"},"packages":{"#,
            r#""p":{"source":"@p/sdk@1.0.0","version":"1.0.0","resources":{"#,
            r#""p:index:Thing":{"inputs":{"size":{"type":"number","required":true},"mode":{"type":{"enum":["A","B"]},"required":false},"nested":{"type":{"ref":"p:types/input#Nested"},"required":false},"tags":{"type":{"map":"string"},"required":false}},"outputs":{"arn":"string","size":"number","nested":{"ref":"p:types/output#Nested"}}}},"functions":{"#,
            r#""p:index:getThing":{"inputs":{"name":{"type":"string","required":true}},"outputs":{"arn":"string","names":{"array":"string"}}}},"types":{"#,
            r#""p:types/input#Nested":{"properties":{"on":{"type":"boolean","required":true}}},"#,
            r#""p:types/output#Nested":{"properties":{"on":{"type":"boolean","required":true}}}}"#,
            "}}",
        ]
        .join("\n");
        Schema::new(text)
    }

    fn problems(program: &str) -> Vec<(usize, String, String)> {
        let s = schema();
        program_problems(program, &s)
    }

    fn program_problems(text: &str, s: &Schema) -> Vec<(usize, String, String)> {
        program(text, Some(s))
            .into_iter()
            .map(|p| (p.line, p.summary, p.against.to_string()))
            .collect()
    }

    const HEAD: &str = "name: t\nruntime: yaml\n";

    #[test]
    fn a_program_that_fits_its_types_has_no_problem() {
        let text = format!(
            "{HEAD}config:\n  n:\n    type: integer\n    default: 3\nvariables:\n  got:\n    fn::invoke:\n      function: p:index:getThing\n      arguments:\n        name: x\n      return: arn\nresources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: ${{n}}\n      mode: A\n      nested:\n        on: true\n      tags:\n        k: ${{got}}\n  b:\n    type: p:index:Thing\n    properties:\n      size: ${{a.nested.on}}\noutputs:\n  arn: ${{a.arn}}\n  first: ${{b.nested[\"on\"]}}\n"
        );
        let got = problems(&text);
        // `a.nested.on` is a boolean: not a number.
        assert_eq!(got.len(), 2, "{got:#?}");
        assert_eq!(got[0].0, 27);
        assert_eq!(got[0].1, "p:index:Thing is not assignable from {size: boolean}");
        assert_eq!(
            got[1].1, "Cannot index into 'b.nested' (type Nested)",
            "an object is not a map"
        );
    }

    #[test]
    fn what_the_engine_refuses_with_its_words_and_what_it_was_checked_against() {
        let cases: [(&str, usize, &str, &str); 8] = [
            (
                "resources:\n  a:\n    type: p:index:Thang\n",
                5,
                "error resolving type of resource a: unable to find resource type \"p:index:Thang\" in resource provider \"p\"",
                "the resource types of @p/sdk@1.0.0",
            ),
            (
                "resources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: 1\n      colour: red\n",
                8,
                "Property colour does not exist on 'p:index:Thing'",
                "p:index:Thing in @p/sdk@1.0.0",
            ),
            (
                "resources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: \"1\"\n",
                7,
                "p:index:Thing is not assignable from {size: string}",
                "p:index:Thing in @p/sdk@1.0.0",
            ),
            (
                "variables:\n  v:\n    fn::invoke:\n      function: p:index:getThings\n",
                6,
                "unable to find function \"p:index:getThings\" in resource provider \"p\"",
                "the functions of @p/sdk@1.0.0",
            ),
            (
                "variables:\n  v:\n    fn::invoke:\n      function: p:index:getThing\n      return: arns\n",
                7,
                "arns does not exist on p:index:getThing",
                "p:index:getThing in @p/sdk@1.0.0",
            ),
            (
                "outputs:\n  o: ${nothing.x}\n",
                4,
                "resource, variable, or config value \"nothing\" not found",
                "the names this program declares",
            ),
            (
                "resources:\n  a:\n    type: p:index:Thing\n    properties:\n      size: 1\n    options:\n      protekt: true\n",
                9,
                "protekt does not exist on resource options",
                "the Pulumi YAML resource options (pulumi-yaml ast/template.go ResourceOptionsDecl)",
            ),
            (
                "config:\n  n:\n    type: number\n",
                4,
                "could not validate 'Pulumi.yaml': 1 error occurred:\n\t* #/config/n/type: value must be one of \"string\", \"integer\", \"boolean\", \"array\", \"object\"\n",
                "the Pulumi project schema",
            ),
        ];
        for (body, line, summary, against) in cases {
            let got = problems(&format!("{HEAD}{body}"));
            assert_eq!(got, vec![(line, summary.to_string(), against.to_string())], "{body}");
        }
    }

    #[test]
    fn invoke_options_and_unknown_arguments_are_warnings_as_in_the_engine() {
        let text = format!(
            "{HEAD}variables:\n  v:\n    fn::invoke:\n      function: p:index:getThing\n      arguments:\n        name: x\n        nmae: y\n      options:\n        versoin: 1.0.0\n  w:\n    fn::unknown: 1\n"
        );
        let got = program(&text, Some(&schema()));
        let summaries: Vec<(Severity, &str)> = got.iter().map(|p| (p.severity, p.summary.as_str())).collect();
        assert_eq!(
            summaries,
            vec![
                (Severity::Warning, "nmae does not exist on Invoke p:index:getThing"),
                (
                    Severity::Warning,
                    "Field 'versoin' does not exist on Object 'invokeOptions'"
                ),
                (Severity::Warning, "'fn::' is a reserved prefix"),
            ]
        );
        assert_eq!(
            got[1].detail,
            "Existing fields are: 'version', 'parent', 'provider', 'dependsOn', 'pluginDownloadURL'"
        );
        assert_eq!(got[1].fix.as_deref(), Some("did you mean `version`?"));
    }

    #[test]
    fn the_engines_detail_and_a_fix() {
        let text = format!("{HEAD}resources:\n  a:\n    type: p:index:Thing\n    properties:\n      mode: C\n");
        let got = program(&text, Some(&schema()));
        assert_eq!(got.len(), 1, "one diagnostic, every reason in its detail: {got:#?}");
        assert_eq!(got[0].line, 7, "at the block the input is missing from");
        assert_eq!(
            got[0].detail,
            "Cannot assign '{mode: string}' to 'p:index:Thing':\n  size: Missing required property 'size'\n  mode: Allowed values are \"A\", \"B\""
        );
        let text = format!("{HEAD}resources:\n  a:\n    type: p:index:Thing\n    properties:\n      mode: A\n");
        let got = program(&text, Some(&schema()));
        assert_eq!(got[0].fix.as_deref(), Some("add `size: …`"));
        let text = format!("{HEAD}resources:\n  a:\n    type: p:index:Thing\n    propreties:\n      size: 1\n");
        let got = program(&text, Some(&schema()));
        let key = got.iter().find(|p| p.line == 6).expect("the key's problem");
        assert_eq!(key.summary, "Resource p:index:Thing has invalid key 'propreties'");
        assert_eq!(key.detail, "Did you mean 'properties' under 'a'?");
        assert_eq!(key.fix.as_deref(), Some("did you mean `properties`?"));
    }

    #[test]
    fn a_package_the_schema_does_not_describe_is_not_checked() {
        let text = format!(
            "{HEAD}resources:\n  a:\n    type: q:index:Any\n    properties:\n      whatever: 1\noutputs:\n  o: ${{a.anything}}\n"
        );
        assert!(problems(&text).is_empty());
        assert!(program_problems(&text, &Schema::new(String::new())).is_empty());
    }
}
