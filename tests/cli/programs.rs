//! The Pulumi programs of `projects/`: each provider's graph runs end to end with the stand-in
//! (outputs named as the reference graph lists them, upstream values reaching downstream
//! programs), every program follows the Pulumi YAML rules, and the cross-check of the provider
//! files' needs against the programs' stack references catches a broken program.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support::{REPO, Ws, providers};

/// How a provider's graph wires its cluster and its image registry.
struct Wiring {
    provider: &'static str,
    /// The project whose `cluster_name` the kubeconfig project passes on (none: the existing
    /// cluster's own, `k3s`).
    cluster: Option<&'static str>,
    /// The project and output the pushed ingress image's name starts with (none: no image is
    /// pushed).
    registry: Option<(&'static str, &'static str)>,
}

const WIRING: [Wiring; 4] = [
    Wiring {
        provider: "aws",
        cluster: Some("eks"),
        registry: Some(("ecr", "repository_url")),
    },
    Wiring {
        provider: "do",
        cluster: Some("domk8s"),
        registry: Some(("container-registry", "container_registry")),
    },
    Wiring {
        provider: "linode",
        cluster: Some("lke"),
        registry: Some(("harbor", "harbor_hostname")),
    },
    Wiring {
        provider: "kubeconfig",
        cluster: None,
        registry: None,
    },
];

/// [`WIRING`] of `provider`; a provider of `providers/` it lacks fails, saying what to add.
#[track_caller]
fn wiring(provider: &str) -> &'static Wiring {
    WIRING.iter().find(|w| w.provider == provider).unwrap_or_else(|| {
        panic!(
            "providers/{provider}.toml: add its cluster project and image registry to WIRING in tests/cli/programs.rs"
        )
    })
}

/// Tokens the `DigitalOcean` and Linode graphs check for.
const TOKENS: [(&str, &str); 2] = [("DIGITALOCEAN_TOKEN", "dop_v1_test"), ("LINODE_TOKEN", "linode-test")];

/// Each project's outputs after a run, from the summary (secrets shown as `[secret]`).
fn outputs(ws: &Ws) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(ws.path().join(".runner/last-run.json")).unwrap();
    let summary: Value = serde_json::from_str(&text).unwrap();
    summary["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["outputs"].clone()))
        .collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn every_providers_graph_runs_end_to_end_and_outputs_flow_downstream() {
    // The outputs the reference graph lists, per project (all providers together).
    let exports: BTreeMap<&str, &[&str]> = [
        ("iam", &["cluster_role_arn", "ci_role_arn"][..]),
        ("vpc", &["azs", "vpc"]),
        ("ecr", &["repository_url", "registry_id"]),
        ("eks", &["cluster_name", "kubeconfig"]),
        (
            "container-registry",
            &["container_registry_id", "container_registry_name", "container_registry"],
        ),
        ("domk8s", &["cluster_name", "cluster_id", "kubeconfig"]),
        ("lke", &["cluster_name", "cluster_id", "kubeconfig"]),
        ("kubeconfig", &["kubeconfig", "cluster_name"]),
        ("secrets", &["pulumi_secrets"]),
        ("kic-image-build", &["ingress_image"]),
        ("kic-image-push", &["container_repo_push"]),
        (
            "ingress-controller-namespace",
            &["ingress_namespace", "ingress_namespace_name"],
        ),
        (
            "ingress-controller",
            &["lb_ingress_hostname", "lb_ingress", "kic_status"],
        ),
        ("logstore", &["elastic_hostname", "kibana_hostname"]),
        ("logagent", &["logagent_status"]),
        ("certmgr", &["certmgr_status"]),
        ("prometheus", &["prom_hostname"]),
        ("dns-record", &["ingress_domain"]),
        ("harbor", &["harbor_hostname", "harbor_user", "harbor_password"]),
        ("harbor-configuration", &["harbor_is_alive"]),
        ("sirius", &["application_url"]),
    ]
    .into();
    for provider in providers() {
        let ws = Ws::configured(provider);
        let run = ws.exec(&["up", "-p", provider, "-s", "dev"], &TOKENS).expect(0);
        assert!(run.stderr.contains("succeeded in"), "{provider}: {}", run.stderr);
        let out = outputs(&ws);
        for (project, values) in &out {
            if let Some(names) = exports.get(project.as_str()) {
                let have = keys(values);
                for n in *names {
                    assert!(have.contains(n), "{provider}: {project} lacks the output {n}: {values}");
                }
            }
        }
        // Downstream programs received the upstream values.
        let Wiring { cluster, registry, .. } = wiring(provider);
        if let Some(c) = *cluster {
            assert_eq!(
                out["kubeconfig"]["cluster_name"], out[c]["cluster_name"],
                "{provider}: kubeconfig follows {c}"
            );
        } else {
            assert_eq!(out["kubeconfig"]["cluster_name"], "k3s");
        }
        let host = out["ingress-controller"]["lb_ingress_hostname"].as_str().unwrap();
        assert_eq!(
            out["sirius"]["application_url"],
            format!("http://{host}/"),
            "{provider}"
        );
        if let Some((project, output)) = *registry {
            let pushed = out["kic-image-push"]["container_repo_push"]["image"].as_str().unwrap();
            let registry = out[project][output].as_str().unwrap();
            assert!(
                pushed.starts_with(registry),
                "{provider}: pushed {pushed}, registry {registry}"
            );
        } else {
            assert!(
                !out.contains_key("kic-image-push"),
                "the {provider} graph pushes no image"
            );
        }
    }
}

#[test]
fn validate_passes_the_cross_check_on_every_providers_graph() {
    for provider in providers() {
        let ws = Ws::configured(provider);
        ws.exec(&["validate", "-p", provider, "-s", "dev"], &TOKENS)
            .expect(0)
            .stderr_has("All configuration is OK");
        let plan = ws.run(&["show-plan", "-p", provider]).expect(0);
        assert!(!plan.stderr.contains("warning"), "{provider}: {}", plan.stderr);
    }
}

#[test]
fn a_removed_stack_reference_and_a_misspelled_output_are_named_precisely() {
    let ws = Ws::configured("aws");
    ws.edit(
        "projects/services/certmgr/Pulumi.yaml",
        "  kubeconfig:\n    type: pulumi:pulumi:StackReference\n    properties:\n      name: ${pulumi.organization}/kubeconfig/${pulumi.stack}\n",
        "",
    );
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "outputs[\"elastic_hostname\"]",
        "outputs[\"elastic_host\"]",
    );
    // The need without its StackReference (and the fix), the output not declared (did you
    // mean…), each at its line.
    validate_refuses(&ws, "validate_a_need_without_a_reference_and_an_undeclared_output");
    // show-plan still shows the plan, and warns.
    let plan = ws.run(&["show-plan", "-p", "aws"]).expect(0);
    let warning = crate::support::message(&plan.stderr, "warning: projects/services/logagent/Pulumi.yaml:60");
    crate::snapshot!(ws.path(), "show_plan_warns_of_an_undeclared_output", warning);
    // A stack reference the provider file does not list.
    let ws = Ws::configured("aws");
    ws.edit(
        "providers/kubernetes.toml",
        "needs = [\"kubeconfig\", \"secrets\", \"ingress-controller\"]",
        "needs = [\"kubeconfig\", \"ingress-controller\"]",
    );
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[])
        .expect(3)
        .stderr_has("projects/apps/sirius/Pulumi.yaml:47: `sirius` references the stack of `secrets`, but `sirius` (providers/kubernetes.toml:")
        .stderr_has("add \"secrets\" to the `needs` of `sirius`");
}

#[test]
fn a_name_the_program_does_not_declare_is_named_with_its_line_before_anything_runs() {
    let ws = Ws::configured("aws");
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "timeout: ${helm_timeout}",
        "timeout: ${helm_timout}",
    );
    // Read through a namespace of its own (the stack configuration) and escaped: not names.
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "      chart: ${chart_name}\n",
        "      chart: ${chart_name}\n      description: \"$${literal} ${logagent_extra}\"\n",
    );
    // Each name at its line, with what Pulumi YAML would say and the fix (not the escaped one).
    validate_refuses(&ws, "validate_names_the_program_does_not_declare");
    // Every run checks first: nothing is deployed (the engine's own refusal is the stand-in's test).
    ws.exec(&["preview", "-p", "aws", "-s", "dev", "--target", "logagent"], &[])
        .expect(3)
        .stderr_has("`helm_timout` is read");
    // A key the stack configuration holds is what Pulumi YAML reads.
    ws.edit(
        "config/pulumi/Pulumi.dev.yaml",
        "config:\n",
        "config:\n  logagent:logagent_extra: x\n",
    );
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "${helm_timout}",
        "${helm_timeout}",
    );
    ws.exec(&["validate", "-p", "aws", "-s", "dev"], &TOKENS)
        .expect(0)
        .stderr_has("All configuration is OK");
}

/// `validate` of the aws graph is refused (exit 3) with the problems `name`'s snapshot holds.
#[track_caller]
fn validate_refuses(ws: &Ws, name: &str) {
    let run = ws.exec(&["validate", "-p", "aws", "-s", "dev"], &[]).expect(3);
    crate::snapshot!(ws.path(), name, crate::support::error_message(&run.stderr));
}

/// Every `Pulumi.yaml` under `projects/`, with its path.
fn programs() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut dirs = vec![Path::new(REPO).join("projects")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.file_name().is_some_and(|n| n == "Pulumi.yaml") {
                let text = std::fs::read_to_string(&p).unwrap();
                let doc: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                out.push((p.display().to_string(), doc));
            }
        }
    }
    out
}

#[test]
fn every_program_follows_the_pulumi_yaml_rules() {
    let programs = programs();
    assert!(programs.len() >= 28, "{} programs", programs.len());
    for (path, doc) in programs {
        let name = doc["name"].as_str().unwrap_or_else(|| panic!("{path}: no name"));
        assert!(runner::provider::valid_project_name(name), "{path}: bad name {name}");
        assert_eq!(doc["runtime"], "yaml", "{path}");
        let resources = doc["resources"].as_object().cloned().unwrap_or_default();
        let variables = doc["variables"].as_object().cloned().unwrap_or_default();
        let config = doc["config"].as_object().cloned().unwrap_or_default();
        for (logical, r) in &resources {
            let ty = r["type"]
                .as_str()
                .unwrap_or_else(|| panic!("{path}: {logical} has no type"));
            let parts: Vec<&str> = ty.split(':').collect();
            assert!(
                parts.len() == 3 && parts.iter().all(|p| !p.is_empty()),
                "{path}: {logical}: type {ty} is not package:module:Type"
            );
            if ty == "pulumi:pulumi:StackReference" {
                let n = r["properties"]["name"].as_str().unwrap_or_default();
                assert!(
                    n.starts_with("${pulumi.organization}/") && n.ends_with("/${pulumi.stack}"),
                    "{path}: {logical} must be named ${{pulumi.organization}}/<project>/${{pulumi.stack}}: {n}"
                );
            }
        }
        // Every interpolation starts at a resource, variable, project config key, a namespaced
        // stack configuration key or `pulumi`.
        let mut strings = Vec::new();
        collect(&doc, &mut strings);
        for s in strings {
            let mut rest = s.as_str();
            while let Some(at) = rest.find("${") {
                let end = rest[at..]
                    .find('}')
                    .unwrap_or_else(|| panic!("{path}: unterminated ${{ in {s}"));
                let expr = &rest[at + 2..at + end];
                let root = &expr[..expr.find(['.', '[']).unwrap_or(expr.len())];
                assert!(
                    root == "pulumi"
                        || resources.contains_key(root)
                        || variables.contains_key(root)
                        || config.contains_key(root)
                        || root.contains(':'),
                    "{path}: ${{{expr}}} refers to nothing the program declares"
                );
                rest = &rest[at + end + 1..];
            }
        }
    }
}

fn collect(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                collect(x, out);
            }
        }
        _ => {}
    }
}
