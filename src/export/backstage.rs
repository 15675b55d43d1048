//! Backstage: a catalog (`catalog-info.yaml`) with a System for the platform and one Resource
//! per project — its type from its layer, `dependsOn` equal to the plan's edges, every ref with
//! its kind (`resource:vpc`: Backstage applies no default kind there) — so the portal shows the
//! graph the runner runs.

use serde_json::{Map, Value, json};

use super::names::{Names, Rule};
use super::{Common, Export, File, Format, header, waits, yaml};
use crate::graph::Layer;
use crate::plan::Plan;

fn resource_type(layer: Layer) -> &'static str {
    match layer {
        Layer::Identity => "identity",
        Layer::Infra => "infrastructure",
        Layer::Cluster => "kubernetes-cluster",
        Layer::Services => "cluster-service",
        Layer::Apps => "application",
    }
}

/// What a Backstage export takes besides the plan and [`Common`].
#[derive(Debug, Clone)]
pub(crate) struct BackstageOptions {
    /// The owner of the System and its Resources.
    pub(crate) owner: String,
}

/// `name` as a Backstage namespace (a DNS label: lower-case letters, digits and inner `-`, at
/// most 63 characters).
fn namespace_of(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().map(|c| c.to_ascii_lowercase()) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    out.truncate(63);
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "default".into()
    } else {
        out.to_string()
    }
}

/// The owner as given, in the `default` namespace unless it names one: an unqualified ref is
/// read in the namespace of the entity that holds it, where the team's group is not.
fn owner_ref(owner: &str) -> String {
    if owner.contains('/') {
        return owner.to_string();
    }
    match owner.split_once(':') {
        Some((kind, name)) => format!("{kind}:default/{name}"),
        None => format!("default/{owner}"),
    }
}

pub(crate) fn export(plan: &Plan<'_>, common: &Common, o: &BackstageOptions) -> Export {
    let system_name = format!("runner-{}-{}", plan.provider.name, common.stack);
    let system = Names::new(Rule::Backstage, [system_name.as_str()], &[]);
    let system = system.get(&system_name).to_string();
    let names = Names::new(Rule::Backstage, plan.order.iter().map(|&i| plan.name(i)), &[]);
    // Each stack's entities in a namespace of their own: the catalogs of two stacks (or two
    // providers) name their projects alike, and bare names would collide in one catalog.
    let namespace = namespace_of(&system_name);
    let mut docs = vec![json!({
        "apiVersion": "backstage.io/v1alpha1",
        "kind": "System",
        "metadata": {
            "name": system,
            "namespace": namespace,
            "description": plan.provider.description,
            "tags": ["pulumi", "runner"],
        },
        "spec": {"owner": owner_ref(&o.owner)},
    })];
    for (i, waits_for) in waits(plan) {
        let project = plan.project(i);
        let mut metadata = Map::new();
        metadata.insert("name".into(), json!(names.get(&project.name)));
        metadata.insert("namespace".into(), json!(namespace));
        if names.get(&project.name) != project.name {
            metadata.insert("title".into(), json!(project.name));
        }
        if let Some(d) = &project.description {
            metadata.insert("description".into(), json!(d));
        }
        metadata.insert(
            "annotations".into(),
            json!({
                "pulumi.com/project-slug": format!("{}/{}", project.name, common.stack),
                "runner/path": project.path,
                "runner/wave": plan.wave(i).to_string(),
            }),
        );
        let mut spec = Map::new();
        spec.insert("type".into(), json!(resource_type(project.layer)));
        spec.insert("owner".into(), json!(owner_ref(&o.owner)));
        spec.insert("system".into(), json!(format!("system:{namespace}/{system}")));
        if !waits_for.is_empty() {
            spec.insert(
                "dependsOn".into(),
                Value::Array(
                    waits_for
                        .iter()
                        .map(|&w| json!(format!("resource:{namespace}/{}", names.get(plan.name(w)))))
                        .collect(),
                ),
            );
        }
        docs.push(json!({
            "apiVersion": "backstage.io/v1alpha1",
            "kind": "Resource",
            "metadata": metadata,
            "spec": spec,
        }));
    }
    let mut h = header(plan, common, Format::Backstage, "The platform as a Backstage System");
    h.push("Register it in the catalog (a Location, or `catalog.locations` in app-config.yaml).".into());
    Export {
        files: vec![File::new("catalog-info.yaml", yaml::documents(&h, &docs))],
        names: vec![("Backstage entity", names)],
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_stacks_namespace_is_a_dns_label() {
        assert_eq!(super::namespace_of("runner-aws-dev"), "runner-aws-dev");
        assert_eq!(super::namespace_of("runner-aws-Dev_2.x"), "runner-aws-dev-2-x");
        assert_eq!(super::namespace_of(&"a".repeat(70)).len(), 63);
        assert_eq!(super::namespace_of("__"), "default");
        assert_eq!(super::owner_ref("platform"), "default/platform");
        assert_eq!(super::owner_ref("user:ana"), "user:default/ana");
        assert_eq!(super::owner_ref("group:ops/sre"), "group:ops/sre");
    }
}
