//! The `fn::` built-ins (`ast/expr.go` `tryParseFunction`, `typeExpr`) and invokes
//! (`parseInvoke`, `typeInvoke`): each one's argument shapes, and an invoke's function, arguments,
//! options and `return` against the SDK.

use super::Checker;
use super::messages::{did_you_mean, existing};
use super::problem::Against;
use super::types::Ty;
use crate::check::schema::package_of;
use crate::yaml::{Key, Node, Yaml};

/// `ast.InvokeOptionsDecl`.
pub const INVOKE_OPTIONS: [&str; 5] = ["dependsOn", "parent", "provider", "version", "pluginDownloadURL"];

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

impl<'a> Checker<'a> {
    pub(super) fn builtin(&mut self, key: &'a Key, arg: &'a Node) -> Ty {
        let lower = key.name.to_lowercase();
        if !BUILTINS.iter().any(|b| b.eq_ignore_ascii_case(&lower)) {
            if let Some(function) = short_invoke(&key.name) {
                return self.invoke_parts(function, arg.line, Some(arg).filter(|a| a.is_map()), None);
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
            return self.invoke(arg);
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
    fn invoke(&mut self, arg: &'a Node) -> Ty {
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
            function,
            line,
            arguments,
            ret.and_then(|r| r.as_str().map(|s| (s, r.line))),
        )
    }

    /// `typeInvoke`: the function exists; its arguments are inputs (a warning otherwise, and
    /// their types are not checked); its `return` is an output.
    fn invoke_parts(
        &mut self,
        function: &str,
        line: usize,
        arguments: Option<&'a Node>,
        ret: Option<(&str, usize)>,
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
