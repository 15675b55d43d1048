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
//!
//! One `Checker` walks the program; its methods live beside what they check (a module each for
//! the config block, resources, expressions, built-ins and invokes, assignability), so each part
//! can be read against its counterpart in the analyser.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::check::schema::{Schema, package_of};
use crate::program::diag::Severity;
use crate::yaml::Node;

mod builtins;
mod config;
mod expressions;
mod messages;
mod problem;
mod resources;
pub mod schema;
mod types;

pub use builtins::{BUILTINS, INVOKE_OPTIONS, short_invoke};
pub use messages::closest;
pub use problem::{Against, Problem};
pub use resources::RESOURCE_OPTIONS;
use types::Ty;

/// Checks a program: `text` is its `Pulumi.yaml`, `project` its name.
pub fn program(text: &str, schema: Option<&Schema>) -> Vec<Problem> {
    let doc = match crate::yaml::parse(text) {
        Ok(d) => d,
        Err(e) => {
            return vec![Problem {
                severity: Severity::Error,
                line: e.line,
                summary: format!("not valid YAML: {}", e.message.lines().next().unwrap_or_default()),
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
        for (key, decl) in doc.get("resources").map(Node::entries).unwrap_or_default() {
            self.resource(key, decl);
        }
        let variables: Vec<String> = self.variables.keys().cloned().collect();
        for name in variables {
            self.variable(&name);
        }
        for (_, v) in doc.get("outputs").map(Node::entries).unwrap_or_default() {
            self.type_of(v);
        }
    }
}

#[cfg(test)]
mod tests;
