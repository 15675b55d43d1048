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

pub(crate) fn export(plan: &Plan<'_>, common: &Common, o: &BackstageOptions) -> Export {
    let system_name = format!("runner-{}-{}", plan.provider.name, common.stack);
    let system = Names::new(Rule::Backstage, [system_name.as_str()], &[]);
    let system = system.get(&system_name).to_string();
    let names = Names::new(Rule::Backstage, plan.order.iter().map(|&i| plan.name(i)), &[]);
    let mut docs = vec![json!({
        "apiVersion": "backstage.io/v1alpha1",
        "kind": "System",
        "metadata": {
            "name": system,
            "description": plan.provider.description,
            "tags": ["pulumi", "runner"],
        },
        "spec": {"owner": o.owner},
    })];
    for (i, waits_for) in waits(plan) {
        let project = plan.project(i);
        let mut metadata = Map::new();
        metadata.insert("name".into(), json!(names.get(&project.name)));
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
        spec.insert("owner".into(), json!(o.owner));
        spec.insert("system".into(), json!(format!("system:{system}")));
        if !waits_for.is_empty() {
            spec.insert(
                "dependsOn".into(),
                Value::Array(
                    waits_for
                        .iter()
                        .map(|&w| json!(format!("resource:{}", names.get(plan.name(w)))))
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
