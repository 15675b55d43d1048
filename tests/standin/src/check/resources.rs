//! A resource declaration (`typeResource`, `validateResources`): its type in the SDK, its keys,
//! its options, its properties against the type's inputs, and `get`.

use serde_json::Value;

use super::Checker;
use super::messages::{bag_detail, did_you_mean, existing};
use super::problem::{Against, BUILT_IN};
use super::types::{Source, Ty, props_of};
use crate::check::schema::package_of;
use crate::yaml::{Key, Node, Yaml};

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

impl<'a> Checker<'a> {
    /// A resource declaration, as pulumi-yaml checks it (`validateResources` in run.go, then its
    /// analyser's types).
    #[expect(
        clippy::too_many_lines,
        reason = "pulumi-yaml's checks of one resource, in its order, so each can be checked against it"
    )]
    pub(super) fn resource(&mut self, key: &Key, decl: &'a Node) {
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
    pub(super) fn resource_spec(&self, ty: &str) -> Option<(Value, String)> {
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
}
