//! A chart's values schema made whole: every `$ref` to a document off the chart (nginx-ingress
//! points 49 times at a `_definitions.json` of kubernetes-json-schema on GitHub) replaced by a
//! reference inside the schema, the definitions it needs copied in. Helm validates a release's
//! values against the schema before it renders and fetches such documents first, so a site
//! without the Internet cannot install the chart as published (nginx/kubernetes-ingress #7193);
//! with the definitions inside, Helm validates offline, and the schema is kept whole.
//!
//! Pure: the documents come from the caller ([`external`] says which are needed), fetched or
//! made from a cluster's `OpenAPI` ([`from_openapi`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// The documents a schema refers to off the chart (`http(s)://…`), each with the references
/// into it (the fragments: `#/definitions/…`), in the order first met.
pub(crate) fn external(schema: &Value) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    walk_refs(schema, &mut |r| {
        if let Some((doc, fragment)) = remote(r) {
            out.entry(doc.to_string()).or_default().insert(fragment.to_string());
        }
    });
    out
}

/// A `$ref` to another document over the network: the document's URL and the fragment.
fn remote(r: &str) -> Option<(&str, &str)> {
    if !(r.starts_with("https://") || r.starts_with("http://")) {
        return None;
    }
    Some(r.split_once('#').map_or((r, ""), |(d, f)| (d, f)))
}

fn walk_refs(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if k == "$ref"
                    && let Some(r) = v.as_str()
                {
                    f(r);
                } else {
                    walk_refs(v, f);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| walk_refs(v, f)),
        _ => {}
    }
}

/// Why a schema could not be made whole.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum Unresolved {
    #[error("`$ref` {reference}: {document} has no {pointer}")]
    Missing {
        reference: String,
        document: String,
        pointer: String,
    },
    #[error("`$ref` {reference}: only references into `#/definitions/…` of {document} can be taken in")]
    NotADefinition { reference: String, document: String },
    #[error("the schema already has a `{key}` entry named {name}, which a taken-in definition would replace")]
    Clash { key: &'static str, name: String },
}

/// `schema` with every reference into `documents` (URL → the document, fetched or made)
/// replaced by a reference inside it, and the definitions those need (and the ones they need)
/// copied under `$defs` (draft 2019-09 and later) or `definitions` (earlier drafts). What was
/// taken in: the number of definitions.
pub(crate) fn inline(schema: &mut Value, documents: &BTreeMap<String, Value>) -> Result<usize, Unresolved> {
    let key = defs_key(schema);
    // Each definition needed, by name, and from which document.
    let mut needed: BTreeMap<String, (String, Value)> = BTreeMap::new();
    let mut queue: Vec<(String, String)> = Vec::new();
    let mut problem = None;
    walk_refs(schema, &mut |r| {
        let Some((doc, fragment)) = remote(r) else { return };
        let Some(document) = documents.get(doc) else { return };
        match definition_name(fragment) {
            Some(name) if problem.is_none() => {
                if document.pointer(fragment.trim_start_matches('#')).is_none() {
                    problem = Some(Unresolved::Missing {
                        reference: r.to_string(),
                        document: doc.to_string(),
                        pointer: fragment.to_string(),
                    });
                }
                queue.push((doc.to_string(), name.to_string()));
            }
            Some(_) => {}
            None => {
                problem.get_or_insert(Unresolved::NotADefinition {
                    reference: r.to_string(),
                    document: doc.to_string(),
                });
            }
        }
    });
    if let Some(p) = problem {
        return Err(p);
    }
    while let Some((doc, name)) = queue.pop() {
        if needed.contains_key(&name) {
            continue;
        }
        let pointer = format!("/definitions/{}", escape(&name));
        let Some(definition) = documents[&doc].pointer(&pointer) else {
            return Err(Unresolved::Missing {
                reference: format!("{doc}#{pointer}"),
                document: doc,
                pointer: format!("#{pointer}"),
            });
        };
        // A definition refers to others of its own document (`#/definitions/…`).
        walk_refs(definition, &mut |r| {
            if let Some(n) = r.strip_prefix('#').and_then(definition_name) {
                queue.push((doc.clone(), n.to_string()));
            }
        });
        needed.insert(name, (doc, definition.clone()));
    }
    let taken = needed.len();
    // The copies' own references now point inside the schema, where they were put.
    let mut defs = Map::new();
    for (name, (_, mut definition)) in needed {
        rewrite(&mut definition, &|r| {
            r.strip_prefix("#/definitions/").map(|rest| format!("#/{key}/{rest}"))
        });
        defs.insert(name, definition);
    }
    rewrite(schema, &|r| {
        let (doc, fragment) = remote(r)?;
        documents.contains_key(doc).then_some(())?;
        fragment
            .strip_prefix("/definitions/")
            .map(|rest| format!("#/{key}/{rest}"))
    });
    if taken > 0 {
        let root = schema.as_object_mut().expect("a schema with references is an object");
        let existing = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
        let Some(existing) = existing.as_object_mut() else {
            return Err(Unresolved::Clash {
                key,
                name: "(not an object)".into(),
            });
        };
        for (name, definition) in defs {
            if existing.contains_key(&name) {
                return Err(Unresolved::Clash { key, name });
            }
            existing.insert(name, definition);
        }
    }
    Ok(taken)
}

/// Where a schema of its `$schema`'s draft keeps its definitions.
fn defs_key(schema: &Value) -> &'static str {
    let draft = schema.get("$schema").and_then(Value::as_str).unwrap_or_default();
    if draft.contains("2019-09") || draft.contains("2020-12") {
        "$defs"
    } else {
        "definitions"
    }
}

/// The definition a fragment points into: `/definitions/NAME[/…]`.
fn definition_name(fragment: &str) -> Option<&str> {
    let rest = fragment.strip_prefix("/definitions/")?;
    let name = rest.split('/').next()?;
    (!name.is_empty()).then_some(name)
}

/// A name as one JSON-pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn rewrite(v: &mut Value, to: &dyn Fn(&str) -> Option<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if k == "$ref"
                    && let Some(new) = v.as_str().and_then(to)
                {
                    *v = Value::String(new);
                } else {
                    rewrite(v, to);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| rewrite(v, to)),
        _ => {}
    }
}

/// The document kubernetes-json-schema's generator (`openapi2jsonschema --kubernetes`) makes of
/// a Kubernetes API server's `OpenAPI` v2 (`/openapi/v2`): its `definitions`, with the two types
/// that take a string or a number (`IntOrString`, `Quantity`, plain strings in the `OpenAPI`)
/// written as `oneOf: [string, integer]`, as its `_definitions.json` has them. `None` when the
/// text holds no `OpenAPI` v2 definitions.
pub(crate) fn from_openapi(openapi: &Value) -> Option<Value> {
    let mut definitions = openapi.get("definitions")?.as_object()?.clone();
    for name in [
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
    ] {
        definitions.insert(
            name.to_string(),
            serde_json::json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
        );
    }
    Some(serde_json::json!({ "definitions": definitions }))
}

/// Whether every reference into `document` (its fragments) names a Kubernetes definition
/// (`io.k8s.*`), which a cluster's `OpenAPI` can stand in for.
pub(crate) fn kubernetes_only(fragments: &BTreeSet<String>) -> bool {
    !fragments.is_empty()
        && fragments
            .iter()
            .all(|f| definition_name(f).is_some_and(|n| n.starts_with("io.k8s.")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const DEFS: &str =
        "https://raw.githubusercontent.com/nginxinc/kubernetes-json-schema/master/v1.32.0/_definitions.json";

    fn definitions() -> Value {
        json!({"definitions": {
            "io.k8s.api.core.v1.Toleration": {"type": "object", "properties": {"key": {"type": "string"}}},
            "io.k8s.api.core.v1.Affinity": {"type": "object", "properties": {
                "nodeAffinity": {"$ref": "#/definitions/io.k8s.api.core.v1.NodeAffinity"}}},
            "io.k8s.api.core.v1.NodeAffinity": {"type": "object"},
            "io.k8s.api.core.v1.Unused": {"type": "object"},
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "io.k8s.api.policy.v1.PodDisruptionBudgetSpec": {"properties": {
                "maxUnavailable": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}}}
        }})
    }

    fn schema(draft: &str) -> Value {
        json!({
            "$schema": draft,
            "properties": {
                "tolerations": {"type": "array", "items": {"$ref": format!("{DEFS}#/definitions/io.k8s.api.core.v1.Toleration")}},
                "affinity": {"$ref": format!("{DEFS}#/definitions/io.k8s.api.core.v1.Affinity")},
                "maxUnavailable": {"$ref": format!("{DEFS}#/definitions/io.k8s.api.policy.v1.PodDisruptionBudgetSpec/properties/maxUnavailable")},
                "local": {"$ref": "#/properties/affinity"}
            }
        })
    }

    #[test]
    fn the_documents_off_the_chart_are_found_with_what_each_is_asked_for() {
        let found = external(&schema("https://json-schema.org/draft/2019-09/schema"));
        assert_eq!(found.len(), 1);
        assert!(kubernetes_only(&found[DEFS]));
        assert_eq!(found[DEFS].len(), 3);
    }

    #[test]
    fn references_point_inside_and_only_the_definitions_needed_come_along() {
        let mut s = schema("https://json-schema.org/draft/2019-09/schema");
        let taken = inline(&mut s, &BTreeMap::from([(DEFS.to_string(), definitions())])).unwrap();
        // Toleration, Affinity and the NodeAffinity it needs, the PDB spec and its IntOrString.
        assert_eq!(taken, 5);
        assert!(external(&s).is_empty(), "{s}");
        assert_eq!(
            s["properties"]["affinity"]["$ref"],
            "#/$defs/io.k8s.api.core.v1.Affinity"
        );
        assert_eq!(
            s["properties"]["maxUnavailable"]["$ref"],
            "#/$defs/io.k8s.api.policy.v1.PodDisruptionBudgetSpec/properties/maxUnavailable"
        );
        assert_eq!(
            s["$defs"]["io.k8s.api.core.v1.Affinity"]["properties"]["nodeAffinity"]["$ref"],
            "#/$defs/io.k8s.api.core.v1.NodeAffinity"
        );
        assert!(s["$defs"].get("io.k8s.api.core.v1.Unused").is_none());
        assert_eq!(s["properties"]["local"]["$ref"], "#/properties/affinity", "left alone");
        // Every reference left resolves inside the schema.
        walk_refs(&s.clone(), &mut |r| {
            assert!(s.pointer(r.trim_start_matches('#')).is_some(), "{r} dangles");
        });
    }

    #[test]
    fn an_older_draft_keeps_them_under_definitions() {
        let mut s = schema("http://json-schema.org/draft-07/schema#");
        inline(&mut s, &BTreeMap::from([(DEFS.to_string(), definitions())])).unwrap();
        assert!(s["definitions"]["io.k8s.api.core.v1.Toleration"].is_object());
        assert_eq!(
            s["properties"]["tolerations"]["items"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.Toleration"
        );
    }

    #[test]
    fn a_reference_to_what_the_document_lacks_is_named() {
        let mut s = schema("https://json-schema.org/draft/2019-09/schema");
        let mut defs = definitions();
        defs["definitions"]
            .as_object_mut()
            .unwrap()
            .remove("io.k8s.api.core.v1.NodeAffinity");
        let err = inline(&mut s, &BTreeMap::from([(DEFS.to_string(), defs)])).unwrap_err();
        assert!(
            matches!(&err, Unresolved::Missing { pointer, .. } if pointer == "#/definitions/io.k8s.api.core.v1.NodeAffinity"),
            "{err}"
        );
    }

    #[test]
    fn the_openapi_of_a_cluster_becomes_the_generators_document() {
        let openapi = json!({"swagger": "2.0", "definitions": {
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
            "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
            "io.k8s.api.core.v1.Toleration": {"type": "object"}
        }});
        let doc = from_openapi(&openapi).unwrap();
        assert_eq!(
            doc["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"],
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(
            doc["definitions"]["io.k8s.api.core.v1.Toleration"],
            json!({"type": "object"})
        );
        assert!(from_openapi(&json!({"openapi": "3.0.0"})).is_none());
    }
}
