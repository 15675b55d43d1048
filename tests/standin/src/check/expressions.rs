//! Values and `${…}` reads (`typeExpr`, `typeSymbol`, `typePropertyAccess`): the type of each
//! value of the program, every name it reads and every property or index of that read checked.

use super::Checker;
use super::messages::{did_you_mean, existing};
use super::problem::Against;
use super::types::Ty;
use crate::program::access::Step;
use crate::yaml::{Node, Yaml};

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

impl<'a> Checker<'a> {
    /// `typeExpr`: the type of a value, checking the reads and calls inside it.
    pub(super) fn type_of(&mut self, node: &'a Node) -> Ty {
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
                    return self.builtin(k, v);
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
        let (root, steps) = crate::program::access::parse(expr);
        let Some(steps) = steps
            .collect::<Result<Vec<Step>, _>>()
            .ok()
            .filter(|_| !root.is_empty())
        else {
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
        } else if let Some(t) = self.config.get(root) {
            (t.clone(), Against::Names)
        } else if let Some(decl) = self.resources.get(root).copied() {
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
        } else if self.variables.contains_key(root) {
            (self.variable(root), Against::Names)
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
            self.with_fix(did_you_mean(names.iter().map(String::as_str), root));
            return Ty::Invalid;
        };
        self.access(node, ty, root.to_string(), &steps, &against)
    }

    /// `typePropertyAccess`.
    #[expect(
        clippy::too_many_lines,
        reason = "pulumi-yaml's typePropertyAccess, case by case in its order, so each can be checked against it"
    )]
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

    pub(super) fn variable(&mut self, name: &str) -> Ty {
        if let Some(t) = self.var_types.get(name) {
            return t.clone().unwrap_or(Ty::Invalid);
        }
        self.var_types.insert(name.to_string(), None); // a cycle reads as unknown
        let node = self.variables[name];
        let t = self.type_of(node);
        self.var_types.insert(name.to_string(), Some(t.clone()));
        t
    }
}
