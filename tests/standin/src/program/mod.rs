//! Just enough of Pulumi YAML (`runtime: yaml`) to produce real outputs: project config with
//! types and defaults, `${…}` interpolation (`pulumi.stack`, `pulumi.project`,
//! `pulumi.organization`, config, variables, resource properties), a few `fn::` built-ins,
//! and `pulumi:pulumi:StackReference` reading the referenced stack's outputs from the backend.
//! Other resources are simulated: their outputs are their inputs plus `id` and `urn`.

pub(crate) mod access;
pub mod diag;
pub mod projconfig;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Map, Value, json};
use sha2::Digest as _;

use crate::backend::Backend;
use crate::check::schema;
use crate::fail::{Failure, bail, fail};
use crate::program::access::{BadAccess, Step};
use crate::program::diag::{Diag, Severity, line_containing};
use crate::secrets::crypto::Crypter;
use crate::secrets::secret::{contains_secret, deep_reveal, is_secret, reveal, secret};
use crate::workspace::stackconfig::as_config_string;

pub struct Project {
    pub dir: PathBuf,
    pub file: PathBuf,
    pub name: String,
    pub doc: Value,
    /// Its `config:` declarations, checked as the CLI checks them when it loads a project.
    pub config: Vec<projconfig::Decl>,
    /// The file's text, for the lines diagnostics point at.
    pub text: String,
}

/// The project of the current directory: the nearest `Pulumi.yaml` (or `.yml`, `.json`) upwards.
pub fn find_project() -> Result<Project, Failure> {
    let cwd = std::env::current_dir().map_err(|e| fail(format!("cannot read the current directory: {e}")))?;
    for dir in cwd.ancestors() {
        for name in ["Pulumi.json", "Pulumi.yaml", "Pulumi.yml"] {
            let file = dir.join(name);
            if file.is_file() {
                return load_project(&file);
            }
        }
    }
    Err(fail(
        "no Pulumi.yaml project file found (searching upwards from the current directory); move to a directory containing a Pulumi.yaml or pass --cwd",
    ))
}

fn load_project(file: &Path) -> Result<Project, Failure> {
    let text = std::fs::read_to_string(file).map_err(|e| fail(format!("could not read {}: {e}", file.display())))?;
    let doc: Value =
        serde_saphyr::from_str(&text).map_err(|e| fail(format!("could not unmarshal '{}': {e}", file.display())))?;
    let name = match doc["name"].as_str() {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => return Err(fail("project is missing a 'name' attribute")),
    };
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)) || name.len() > 100 {
        return Err(fail(format!("invalid project name {name:?}")));
    }
    let config = projconfig::declarations(&name, &doc["config"], &file.display().to_string())?;
    Ok(Project {
        dir: file.parent().expect("a file has a parent").to_path_buf(),
        file: file.to_path_buf(),
        name,
        config,
        doc,
        text,
    })
}

/// What evaluating a program produced.
pub struct Evaluated {
    /// (logical name, type, inputs, outputs, read) in declaration order; `read` for resources
    /// the program reads rather than manages (`get:`, and stack references, which the SDKs
    /// register with `ReadResource`).
    pub resources: Vec<(String, String, Value, Value, bool)>,
    pub outputs: Map<String, Value>,
    /// What the language host warned about, as the engine shows it.
    pub warnings: Vec<String>,
}

pub struct Context<'a> {
    pub project: &'a Project,
    pub stack: &'a str,
    /// The stack configuration, `ns:key` → raw YAML value (`{secure: …}` for secrets).
    pub config: &'a Map<String, Value>,
    pub backend: &'a Backend,
    pub crypter: &'a Crypter,
    /// The passphrase, for stack references whose state has another salt.
    pub passphrase: &'a str,
}

/// Resolved configuration: `ns:key` → value (secret-wrapped when secret), with project defaults.
pub fn resolve_config(ctx: &Context<'_>) -> Result<Map<String, Value>, Failure> {
    let mut out = Map::new();
    for (k, v) in ctx.config {
        out.insert(k.clone(), config_value(ctx, v)?);
    }
    let mut missing = Vec::new();
    // Values were checked against the declarations before the operation (unless it was run
    // with --skip-config-validation); here they get their types.
    for d in &ctx.project.config {
        let kind = d.ty.as_ref().map_or("string", |t| t.name.as_str());
        let value = match out.get(&d.full) {
            Some(v) => Some(typed(&d.full, v, kind)?),
            None => d.value.clone().or_else(|| d.default.clone()),
        };
        match value {
            Some(v) if d.secret && !is_secret_value(&v) => {
                out.insert(d.full.clone(), secret(v));
            }
            Some(v) => {
                out.insert(d.full.clone(), v);
            }
            None => missing.push(d.full.clone()),
        }
    }
    match missing.as_slice() {
        [] => Ok(out),
        [one] => Err(fail(format!(
            "validating stack config: Stack '{}' is missing configuration value '{one}'",
            ctx.stack
        ))),
        many => {
            let (last, rest) = many.split_last().expect("several");
            let rest: Vec<String> = rest.iter().map(|k| format!("'{k}'")).collect();
            Err(fail(format!(
                "validating stack config: Stack '{}' is missing configuration values {} and '{last}'",
                ctx.stack,
                rest.join(", ")
            )))
        }
    }
}

fn is_secret_value(v: &Value) -> bool {
    is_secret(v)
}

fn config_value(ctx: &Context<'_>, v: &Value) -> Result<Value, Failure> {
    if let Some(ct) = v.get("secure").and_then(Value::as_str)
        && v.as_object().is_some_and(|m| m.len() == 1)
    {
        return Ok(secret(Value::String(ctx.crypter.decrypt(ct)?)));
    }
    Ok(match v {
        Value::Object(_) | Value::Array(_) => v.clone(),
        other => Value::String(as_config_string(other)),
    })
}

/// Applies a declared config type to a stack value (which is text in Pulumi's config map).
fn typed(key: &str, v: &Value, kind: &str) -> Result<Value, Failure> {
    let (plain, secret_flag) = reveal(v);
    let converted = match (kind, &plain) {
        ("integer", Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| fail(format!("config key '{key}' is not an integer: {s:?}")))?,
        ("boolean", Value::String(s)) => match s.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(fail(format!("config key '{key}' is not a boolean: {s:?}"))),
        },
        _ => plain,
    };
    Ok(if secret_flag { secret(converted) } else { converted })
}

pub struct Evaluator<'a> {
    ctx: &'a Context<'a>,
    config: Map<String, Value>,
    resources: Map<String, Value>,
    variables: Map<String, Value>,
    memo: HashMap<String, Value>,
    active: HashSet<String>,
    /// Resolved resources in the order they finished.
    done: Vec<(String, String, Value, Value, bool)>,
    diags: Vec<Diag>,
}

impl<'a> Evaluator<'a> {
    pub fn new(ctx: &'a Context<'a>) -> Result<Self, Failure> {
        let doc = &ctx.project.doc;
        if let Some(rt) = runtime(doc)
            && rt != "yaml"
        {
            return Err(fail(format!(
                "the pulumi stand-in runs only `runtime: yaml` programs; {} has runtime {rt}",
                ctx.project.file.display()
            )));
        }
        Ok(Evaluator {
            config: resolve_config(ctx)?,
            resources: doc["resources"].as_object().cloned().unwrap_or_default(),
            variables: doc["variables"].as_object().cloned().unwrap_or_default(),
            memo: HashMap::new(),
            active: HashSet::new(),
            done: Vec::new(),
            diags: Vec::new(),
            ctx,
        })
    }

    fn error(&mut self, summary: impl Into<String>, detail: impl Into<String>, line: Option<usize>) {
        self.diags.push(Diag {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            line,
        });
    }

    fn has_errors(&self) -> bool {
        self.diags.iter().any(|d| d.severity == Severity::Error)
    }

    fn rendered(&self, severity: Severity) -> Vec<String> {
        let file = self
            .ctx
            .project
            .file
            .file_name()
            .map_or_else(|| "Pulumi.yaml".into(), |f| f.to_string_lossy().into_owned());
        self.diags
            .iter()
            .filter(|d| d.severity == severity)
            .flat_map(|d| d.render(&file, &self.ctx.project.text))
            .collect()
    }

    /// The program's refusal: its errors (and warnings), and no further message.
    fn refusal(&self) -> Failure {
        let mut lines = self.rendered(Severity::Error);
        lines.extend(self.rendered(Severity::Warning));
        bail(lines)
    }

    pub fn run(mut self) -> Result<Evaluated, Failure> {
        // The type check before anything runs (pulumi-yaml's `TypeCheck`): its errors stop the
        // program, with its warnings.
        for p in crate::check::program(&self.ctx.project.text, schema::get()?) {
            self.diags.push(Diag {
                severity: p.severity,
                summary: p.summary,
                detail: p.detail,
                line: Some(p.line),
            });
        }
        if self.has_errors() {
            return Err(self.refusal());
        }
        let result = self.evaluate();
        if self.has_errors() {
            return Err(self.refusal());
        }
        let outputs = result?;
        let warnings = self.rendered(Severity::Warning);
        Ok(Evaluated {
            resources: self.done,
            outputs,
            warnings,
        })
    }

    fn evaluate(&mut self) -> Result<Map<String, Value>, Failure> {
        let names: Vec<String> = self.resources.keys().cloned().collect();
        for name in names {
            self.resource(&name)?;
        }
        // Every variable is evaluated, used or not, as Pulumi YAML does.
        let variables: Vec<String> = self.variables.keys().cloned().collect();
        for name in variables {
            self.variable(&name)?;
        }
        let mut outputs = Map::new();
        if let Some(out) = self.ctx.project.doc["outputs"].as_object().cloned() {
            for (k, expr) in out {
                let v = self.value(&expr)?;
                // Pulumi YAML registers an output holding a secret anywhere as a secret as a
                // whole (checked against pulumi v3.274.1 with pulumi-language-yaml v1.38.3: the
                // state keeps `{user, password: secret}` as one secret value).
                let v = if !is_secret(&v) && contains_secret(&v) {
                    secret(deep_reveal(&v))
                } else {
                    v
                };
                outputs.insert(k, v);
            }
        }
        Ok(outputs)
    }

    fn resource(&mut self, name: &str) -> Result<Value, Failure> {
        let memo_key = format!("r:{name}");
        if let Some(v) = self.memo.get(&memo_key) {
            return Ok(v.clone());
        }
        if !self.active.insert(memo_key.clone()) {
            return Err(fail(format!("Pulumi.yaml: resource `{name}` depends on itself")));
        }
        let decl = self.resources[name].clone();
        let Some(ty) = decl["type"].as_str().map(str::to_string) else {
            return Err(fail(format!("Pulumi.yaml: resource `{name}` has no `type`")));
        };
        if ty.split(':').count() != 3 || ty.split(':').any(str::is_empty) {
            return Err(fail(format!(
                "Pulumi.yaml: resource `{name}` has an invalid type token `{ty}` (expected package:module:Type)"
            )));
        }
        let props = match decl.get("properties") {
            Some(p) => self.value(p)?,
            None => json!({}),
        };
        // `get:` reads an existing resource: its id, and what the provider would return.
        let got = match decl.get("get") {
            Some(g) => Some(self.value(g)?),
            None => None,
        };
        if let Some(opts) = decl.get("options") {
            self.value(opts)?;
        }
        let urn = format!("urn:pulumi:{}::{}::{ty}::{name}", self.ctx.stack, self.ctx.project.name);
        let outputs = if ty == "pulumi:pulumi:StackReference" {
            let mut out = self.stack_reference(name, &props)?;
            // Its id is the referenced stack's name (`pkg/resource/deploy/builtins.go`).
            out["id"] = out["name"].clone();
            out
        } else {
            let mut out = props.as_object().cloned().unwrap_or_default();
            // A Stash outputs its input twice: `input`, and `output` as it was at creation
            // (kept by an update in the real engine; not imitated: here always the input).
            if ty == "pulumi:index:Stash"
                && let Some(input) = out.get("input").cloned()
            {
                out.insert("output".into(), input);
            }
            for (k, v) in crate::engine::fakes::resource(&ty, name, self.ctx.stack) {
                out.entry(k).or_insert(v);
            }
            let digest = sha2::Sha256::digest(urn.as_bytes());
            let id: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
            let id = match got.as_ref().and_then(|g| g.get("id")) {
                Some(given) => reveal(given).0,
                None => Value::String(format!("{name}-{id}")),
            };
            out.insert("id".into(), id);
            out.insert("urn".into(), Value::String(urn));
            Value::Object(out)
        };
        self.active.remove(&memo_key);
        self.memo.insert(memo_key, outputs.clone());
        let read = got.is_some() || ty == "pulumi:pulumi:StackReference";
        self.done.push((name.to_string(), ty, props, outputs.clone(), read));
        Ok(outputs)
    }

    /// What a stack reference reads now (its `name`, `outputs`, `secretOutputNames`), as a
    /// refresh reads it back (`builtinProvider.Read` reads the referenced stack again).
    pub fn read_reference(&mut self, name: &str, props: &Value) -> Result<Value, Failure> {
        self.stack_reference(name, props)
    }

    fn stack_reference(&mut self, name: &str, props: &Value) -> Result<Value, Failure> {
        let (reference, _) = reveal(props.get("name").unwrap_or(&Value::Null));
        let reference = reference.as_str().unwrap_or(name).to_string();
        let parts: Vec<&str> = reference.split('/').collect();
        let (project, stack) = match parts.as_slice() {
            [org, p, s] if *org == "organization" => ((*p).to_string(), (*s).to_string()),
            [_, _, _] => return Err(fail("organization name must be 'organization'")),
            [org, s] if *org == "organization" => (self.ctx.project.name.clone(), (*s).to_string()),
            [s] => (self.ctx.project.name.clone(), (*s).to_string()),
            _ => return Err(fail(format!("unknown stack \"{reference}\""))),
        };
        let Some(cp) = self.ctx.backend.checkpoint(&project, &stack)? else {
            return Err(fail(format!("unknown stack \"{reference}\"")));
        };
        let latest = &cp["checkpoint"]["latest"];
        let root = latest["resources"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["type"] == "pulumi:pulumi:Stack"))
            .map_or_else(|| json!({}), |r| r["outputs"].clone());
        // Secrets are decrypted with the referenced stack's own salt and our passphrase.
        let salt = latest["secrets_providers"]["state"]["salt"]
            .as_str()
            .unwrap_or_default();
        let mut outputs = Map::new();
        let mut secret_names = Vec::new();
        let mut their: Option<Crypter> = None;
        let passphrase = self.ctx.passphrase;
        let mut open = |ct: &str| {
            if their.is_none() {
                their = Some(Crypter::open(passphrase, salt)?);
            }
            Ok(crate::secrets::crypto::plaintext_value(
                their.as_ref().expect("opened").decrypt(ct)?,
            ))
        };
        // An output with a secret anywhere in it is a secret output as a whole
        // (`secretOutputNames`: every output whose value `HasSecrets()`).
        for (k, v) in root.as_object().cloned().unwrap_or_default() {
            let (plain, held_secret) = crate::secrets::crypto::open_secrets(&v, &mut open)?;
            if held_secret {
                outputs.insert(k.clone(), secret(plain));
                secret_names.push(k);
            } else {
                outputs.insert(k, plain);
            }
        }
        secret_names.sort();
        Ok(json!({ "name": reference, "outputs": outputs, "secretOutputNames": secret_names }))
    }

    fn variable(&mut self, name: &str) -> Result<Value, Failure> {
        let memo_key = format!("v:{name}");
        if let Some(v) = self.memo.get(&memo_key) {
            return Ok(v.clone());
        }
        if !self.active.insert(memo_key.clone()) {
            return Err(fail(format!("Pulumi.yaml: variable `{name}` depends on itself")));
        }
        let expr = self.variables[name].clone();
        let v = self.value(&expr)?;
        self.active.remove(&memo_key);
        self.memo.insert(memo_key, v.clone());
        Ok(v)
    }

    fn value(&mut self, v: &Value) -> Result<Value, Failure> {
        match v {
            Value::String(s) => self.string(s),
            Value::Array(a) => a
                .iter()
                .map(|x| self.value(x))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Value::Object(m)
                if m.len() == 1 && m.keys().next().is_some_and(|k| k.to_lowercase().starts_with("fn::")) =>
            {
                let (f, arg) = m.iter().next().expect("one entry");
                let lower = f.to_lowercase();
                if is_builtin(&lower) {
                    return self.function(&lower, arg);
                }
                // `fn::<package>:<module>(:<name>)?` is an invoke (ast/expr.go fnInvokeRegex).
                let short = &f[4..];
                if (2..=3).contains(&short.split(':').count()) && short.split(':').all(|p| !p.is_empty()) {
                    let mut call = Map::new();
                    call.insert("function".into(), Value::String(short.to_string()));
                    if arg.is_object() {
                        call.insert("arguments".into(), arg.clone());
                    }
                    return self.function("fn::invoke", &Value::Object(call));
                }
                // ast/expr.go tryParseFunction: the key is kept as it is (the type check warned).
                let mut out = Map::new();
                out.insert(f.clone(), self.value(arg)?);
                Ok(Value::Object(out))
            }
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, x) in m {
                    out.insert(k.clone(), self.value(x)?);
                }
                Ok(Value::Object(out))
            }
            other => Ok(other.clone()),
        }
    }

    /// `${expr}` alone keeps the value's type; inside text it interpolates. `$${` is a literal.
    fn string(&mut self, s: &str) -> Result<Value, Failure> {
        if let Some(inner) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
            && !inner.contains("${")
            && !inner.contains('}')
        {
            return self.expression(inner);
        }
        let mut out = String::new();
        let mut secret_seen = false;
        let mut rest = s;
        while let Some(at) = rest.find("${") {
            if at > 0 && rest.as_bytes()[at - 1] == b'$' {
                out.push_str(&rest[..at - 1]);
                out.push_str("${");
                rest = &rest[at + 2..];
                continue;
            }
            out.push_str(&rest[..at]);
            let Some(end) = rest[at..].find('}') else {
                return Err(fail(format!("Pulumi.yaml: unterminated interpolation in {s:?}")));
            };
            let v = self.expression(&rest[at + 2..at + end])?;
            let (plain, was_secret) = reveal(&v);
            secret_seen |= was_secret || contains_secret(&plain);
            out.push_str(&match plain {
                Value::String(t) => t,
                Value::Null => String::new(),
                other => other.to_string(),
            });
            rest = &rest[at + end + 1..];
        }
        out.push_str(rest);
        Ok(if secret_seen {
            secret(Value::String(out))
        } else {
            Value::String(out)
        })
    }

    fn expression(&mut self, expr: &str) -> Result<Value, Failure> {
        let (root, steps) = crate::program::access::parse(expr);
        let expr = expr.trim();
        let mut value = self.root(root)?;
        let mut path = root.to_string();
        for step in steps {
            let key = match step {
                Ok(Step::Name(k) | Step::Key(k)) => Value::String(k),
                Ok(Step::Index(i)) => Value::from(i),
                Err(BadAccess::Expression) => return Err(fail(format!("Pulumi.yaml: bad expression ${{{expr}}}"))),
                Err(BadAccess::Index(inner)) => {
                    return Err(fail(format!("Pulumi.yaml: bad index [{inner}] in ${{{expr}}}")));
                }
            };
            let (plain, was_secret) = reveal(&value);
            let next = match (&plain, &key) {
                (Value::Object(m), Value::String(k)) => m.get(k).cloned(),
                (Value::Array(a), Value::Number(n)) => {
                    n.as_u64().and_then(|i| a.get(usize::try_from(i).ok()?)).cloned()
                }
                _ => None,
            };
            let shown = match &key {
                Value::String(k) => format!("[\"{k}\"]"),
                other => format!("[{other}]"),
            };
            let Some(next) = next else {
                if path == format!("{root}[\"outputs\"]")
                    && self
                        .resources
                        .get(root)
                        .is_some_and(|r| r["type"] == "pulumi:pulumi:StackReference")
                {
                    return Err(fail(format!(
                        "Pulumi.yaml: stack reference `{root}` has no output {shown} (${{{expr}}})"
                    )));
                }
                value = Value::Null;
                break;
            };
            path.push_str(&shown);
            value = if was_secret { secret(next) } else { next };
        }
        Ok(value)
    }

    fn root(&mut self, name: &str) -> Result<Value, Failure> {
        if name == "pulumi" {
            return Ok(json!({
                "stack": self.ctx.stack,
                "project": self.ctx.project.name,
                "organization": "organization",
                "cwd": self.ctx.project.dir.display().to_string(),
            }));
        }
        if self.resources.contains_key(name) {
            return self.resource(name);
        }
        if self.variables.contains_key(name) {
            return self.variable(name);
        }
        let project_key = format!("{}:{name}", self.ctx.project.name);
        if let Some(v) = self.config.get(name).or_else(|| self.config.get(&project_key)) {
            return Ok(v.clone());
        }
        // pulumi-yaml pkg/pulumiyaml/analyser.go typeMissing.
        let line = line_containing(&self.ctx.project.text, &format!("${{{name}"));
        self.error(
            format!("resource, variable, or config value {name:?} not found"),
            "",
            line,
        );
        Ok(Value::Null)
    }

    /// A `fn::` built-in, evaluated as pulumi-yaml's evaluator does.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per `fn::` built-in, as pulumi-yaml's evaluator switches on them"
    )]
    fn function(&mut self, f: &str, arg: &Value) -> Result<Value, Failure> {
        let v = self.value(arg)?;
        let (plain, was_secret) = reveal(&v);
        let wrap = |x: Value| {
            if was_secret || contains_secret(&plain) {
                secret(x)
            } else {
                x
            }
        };
        match f {
            "fn::secret" => Ok(secret(plain)),
            "fn::unsecret" => Ok(plain),
            "fn::tojson" => Ok(wrap(Value::String(
                serde_json::to_string(&deep_reveal(&plain)).expect("JSON"),
            ))),
            "fn::tobase64" => match &plain {
                Value::String(s) => Ok(wrap(Value::String(B64.encode(s)))),
                _ => Err(fail("Pulumi.yaml: fn::toBase64 takes a string")),
            },
            "fn::frombase64" => match &plain {
                Value::String(s) => {
                    let bytes = B64
                        .decode(s)
                        .map_err(|_| fail("Pulumi.yaml: fn::fromBase64: not base64"))?;
                    Ok(wrap(Value::String(String::from_utf8_lossy(&bytes).into_owned())))
                }
                _ => Err(fail("Pulumi.yaml: fn::fromBase64 takes a string")),
            },
            "fn::join" => match deep_reveal(&plain) {
                Value::Array(a) if a.len() == 2 => {
                    let sep = a[0].as_str().unwrap_or_default().to_string();
                    let items: Vec<String> = a[1]
                        .as_array()
                        .map(|xs| {
                            xs.iter()
                                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    Ok(wrap(Value::String(items.join(&sep))))
                }
                _ => Err(fail("Pulumi.yaml: fn::join takes [separator, [items]]")),
            },
            "fn::split" => match deep_reveal(&plain) {
                Value::Array(a) if a.len() == 2 => {
                    let sep = a[0].as_str().unwrap_or_default();
                    let s = a[1].as_str().unwrap_or_default();
                    Ok(wrap(Value::Array(
                        s.split(sep).map(|x| Value::String(x.into())).collect(),
                    )))
                }
                _ => Err(fail("Pulumi.yaml: fn::split takes [separator, string]")),
            },
            "fn::select" => match &plain {
                Value::Array(a) if a.len() == 2 => {
                    let i = a[0]
                        .as_u64()
                        .ok_or_else(|| fail("Pulumi.yaml: fn::select needs an index"))?;
                    let (list, s2) = reveal(&a[1]);
                    let item = list
                        .as_array()
                        .and_then(|l| l.get(usize::try_from(i).ok()?))
                        .cloned()
                        .ok_or_else(|| fail("Pulumi.yaml: fn::select index out of range"))?;
                    Ok(if s2 { secret(item) } else { wrap(item) })
                }
                _ => Err(fail("Pulumi.yaml: fn::select takes [index, list]")),
            },
            "fn::readfile" => match &plain {
                Value::String(p) => {
                    let path = self.ctx.project.dir.join(p);
                    crate::cli::signals::unless_cancelled(move || std::fs::read_to_string(path))?
                        .map(|t| wrap(Value::String(t)))
                        .map_err(|e| fail(format!("Pulumi.yaml: fn::readFile {p}: {e}")))
                }
                _ => Err(fail("Pulumi.yaml: fn::readFile takes a path")),
            },
            "fn::invoke" => {
                let function = plain["function"]
                    .as_str()
                    .ok_or_else(|| fail("Pulumi.yaml: fn::invoke needs a `function`"))?
                    .to_string();
                let result = crate::engine::fakes::function(&function, self.ctx.stack)
                    .ok_or_else(|| fail(format!("Pulumi.yaml: the stand-in has no result for {function}")))?;
                match plain.get("return").and_then(Value::as_str) {
                    Some(field) => Ok(result.get(field).cloned().map_or(Value::Null, wrap)),
                    None => Ok(wrap(result)),
                }
            }
            "fn::filebase64" | "fn::filebase64sha256" | "fn::sha1" => {
                let text = match (f, &plain) {
                    ("fn::sha1", Value::String(s)) => s.clone().into_bytes(),
                    (_, Value::String(p)) => std::fs::read(self.ctx.project.dir.join(p))
                        .map_err(|e| fail(format!("Pulumi.yaml: {f} {p}: {e}")))?,
                    _ => return Err(fail(format!("Pulumi.yaml: {f} takes a string"))),
                };
                Ok(wrap(Value::String(match f {
                    "fn::filebase64" => B64.encode(&text),
                    "fn::filebase64sha256" => B64.encode(sha2::Sha256::digest(&text)),
                    _ => sha1::Sha1::digest(&text).iter().map(|b| format!("{b:02x}")).collect(),
                })))
            }
            "fn::length" => match &plain {
                Value::Array(a) => Ok(wrap(Value::from(a.len()))),
                Value::Object(m) => Ok(wrap(Value::from(m.len()))),
                Value::String(t) => Ok(wrap(Value::from(t.chars().count()))),
                _ => Err(fail("Pulumi.yaml: fn::length takes a list, an object or a string")),
            },
            "fn::singleornone" => match &plain {
                Value::Array(a) if a.len() <= 1 => Ok(wrap(a.first().cloned().unwrap_or(Value::Null))),
                Value::Array(_) => Err(fail("fn::singleOrNone expects at most one item in argument")),
                _ => Err(fail("Pulumi.yaml: fn::singleOrNone takes a list")),
            },
            "fn::pulumiresourcename" | "fn::pulumiresourcetype" => {
                let urn = plain["urn"].as_str().unwrap_or_default();
                let mut parts = urn.rsplit("::");
                let name = parts.next().unwrap_or_default();
                let ty = parts.next().unwrap_or_default();
                Ok(Value::String(
                    if f == "fn::pulumiresourcename" { name } else { ty }.to_string(),
                ))
            }
            "fn::stackreference" => Err(fail(
                "Pulumi.yaml: 'fn::stackReference' is deprecated; please use 'pulumi:pulumi:StackReference' instead",
            )),
            "fn::fileasset" | "fn::stringasset" | "fn::remoteasset" | "fn::filearchive" | "fn::remotearchive"
            | "fn::assetarchive" => {
                let canonical = crate::check::BUILTINS
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(f))
                    .copied()
                    .unwrap_or(f);
                Ok(json!({ canonical: plain }))
            }
            _ => Err(fail(format!("Pulumi.yaml: the stand-in does not implement {f}"))),
        }
    }
}

fn is_builtin(lower: &str) -> bool {
    crate::check::BUILTINS.iter().any(|n| n.eq_ignore_ascii_case(lower))
}

fn runtime(doc: &Value) -> Option<&str> {
    match &doc["runtime"] {
        Value::String(s) => Some(s),
        Value::Object(m) => m.get("name").and_then(Value::as_str),
        _ => None,
    }
}
