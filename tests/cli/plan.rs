//! `show-plan` and `list-providers` on the reference workspace: graphs, waves, critical paths,
//! targets, destroy order, and every output format checked by its consumer.

use std::collections::HashMap;

use serde_json::Value;

use crate::support::{REPO, Ws, providers};
use test_requires::requires;

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The project names of a JSON plan, in run order.
fn run_order(plan: &Value) -> Vec<&str> {
    plan["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect()
}

fn plan_json(ws: &Ws, args: &[&str]) -> Value {
    let mut all = vec!["show-plan", "--format", "json"];
    all.extend_from_slice(args);
    ws.run(&all).expect(0).json()
}

/// Every project runs after everything it waits for, and waves agree with that.
fn assert_consistent(plan: &Value) {
    let projects = plan["projects"].as_array().unwrap();
    let position: HashMap<&str, usize> = projects
        .iter()
        .enumerate()
        .map(|(k, p)| (p["name"].as_str().unwrap(), k))
        .collect();
    let wave: HashMap<&str, u64> = projects
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["wave"].as_u64().unwrap()))
        .collect();
    for p in projects {
        let name = p["name"].as_str().unwrap();
        for w in p["waits_for"].as_array().unwrap() {
            let w = w.as_str().unwrap();
            assert!(
                position[w] < position[name],
                "{name} runs before {w}, which it waits for"
            );
            assert!(wave[w] < wave[name], "{name} is not in a later wave than {w}");
        }
    }
}

#[test]
fn list_providers_names_each_provider_with_its_description() {
    let run = Ws::reference().run(&["list-providers"]).expect(0);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn tree_of_each_provider() {
    let ws = Ws::reference();
    for p in providers() {
        let run = ws.run(&["show-plan", "-p", p]).expect(0);
        insta::assert_snapshot!(format!("tree_{p}"), run.stdout);
    }
}

#[test]
fn tree_of_a_targeted_destroy() {
    let run = Ws::reference()
        .run(&crate::support::words(
            "show-plan -p aws --operation destroy --target ingress-controller",
        ))
        .expect(0);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn dot_mermaid_and_json_of_aws() {
    let ws = Ws::reference();
    for format in ["dot", "mermaid", "json"] {
        let run = ws.run(&["show-plan", "-p", "aws", "--format", format]).expect(0);
        insta::assert_snapshot!(format!("aws_{format}"), run.stdout);
    }
}

#[test]
fn reference_graphs_have_the_expected_waves_and_critical_paths() {
    let ws = Ws::reference();
    let aws = plan_json(&ws, &["-p", "aws"]);
    let waves: Vec<Vec<String>> = aws["waves"].as_array().unwrap().iter().map(names).collect();
    assert_eq!(
        waves,
        [
            vec!["iam", "vpc", "ecr", "kic-image-build"],
            vec!["eks", "kic-image-push"],
            vec!["kubeconfig"],
            vec![
                "secrets",
                "ingress-controller-namespace",
                "logstore",
                "certmgr",
                "observability"
            ],
            vec!["ingress-controller", "logagent", "prometheus"],
            vec!["sirius"],
        ]
    );
    assert_eq!(
        names(&aws["critical_path"]["projects"]),
        ["vpc", "eks", "kubeconfig", "logstore", "logagent", "sirius"]
    );
    assert_eq!(aws["critical_path"]["unit"], "seconds");
    assert_eq!(aws["critical_path"]["weight"], 180 + 900 + 15 + 300 + 120 + 180);

    // MARA ran these one after another: 15, 17 and 16 projects; the graph allows far fewer steps.
    let expected = [("aws", 16, 6), ("do", 16, 6), ("linode", 16, 8), ("kubeconfig", 10, 4)];
    assert_eq!(
        expected
            .map(|e| e.0)
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        providers().into_iter().collect(),
        "each provider of providers/ (and only those) needs its number of projects and waves here"
    );
    for (p, projects, waves) in expected {
        let plan = plan_json(&ws, &["-p", p]);
        assert_eq!(plan["projects"].as_array().unwrap().len(), projects, "{p}");
        assert_eq!(plan["waves"].as_array().unwrap().len(), waves, "{p}");
        assert_consistent(&plan);
    }
}

#[test]
fn each_provider_wires_its_cluster_and_registry_into_the_shared_layer() {
    let ws = Ws::reference();
    let needs = |plan: &Value, project: &str| -> Vec<String> {
        let p = plan["projects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == project)
            .unwrap_or_else(|| panic!("no {project}"));
        names(&p["needs"])
    };
    let aws = plan_json(&ws, &["-p", "aws"]);
    assert_eq!(needs(&aws, "kubeconfig"), ["eks"]);
    assert_eq!(needs(&aws, "kic-image-push"), ["kic-image-build", "ecr"]);
    let eks = crate::support::project(&aws, "eks").clone();
    assert_eq!(names(&eks["on_success"]), ["kubeconfig-merge"]);
    assert_eq!(eks["layer"], "cluster");

    let d = plan_json(&ws, &["-p", "do"]);
    assert_eq!(needs(&d, "kubeconfig"), ["domk8s"]);
    assert_eq!(needs(&d, "kic-image-push"), ["kic-image-build", "container-registry"]);
    assert_eq!(needs(&d, "dns-record"), ["ingress-controller"]);

    let linode = plan_json(&ws, &["-p", "linode"]);
    assert_eq!(needs(&linode, "kubeconfig"), ["lke"]);
    assert_eq!(needs(&linode, "harbor-configuration"), ["harbor"]);
    let harbor = crate::support::project(&linode, "harbor").clone();
    assert_eq!(
        names(&harbor["secrets"]),
        [
            "linode:harbor_password",
            "linode:harbor_db_password",
            "linode:harbor_sudo_user_password"
        ]
    );

    // An existing cluster: no cloud projects, no image build or push, the public image.
    let kc = plan_json(&ws, &["-p", "kubeconfig"]);
    let all = kc["projects"].as_array().unwrap();
    assert!(
        all.iter()
            .all(|p| p["name"] != "kic-image-build" && p["name"] != "kic-image-push")
    );
    assert!(all.iter().all(|p| p["layer"] != "infra" && p["layer"] != "identity"));
    assert!(needs(&kc, "kubeconfig").is_empty());
    assert_eq!(
        needs(&kc, "ingress-controller"),
        ["kubeconfig", "ingress-controller-namespace"]
    );
}

#[test]
fn up_target_takes_what_it_needs() {
    let ws = Ws::reference();
    let plan = plan_json(&ws, &["-p", "aws", "--target", "eks"]);
    let run: Vec<&str> = run_order(&plan);
    assert_eq!(run, ["iam", "vpc", "eks"]);
    assert_eq!(names(&plan["targets"]), ["eks"]);

    let plan = plan_json(&ws, &["-p", "aws", "-t", "logagent", "-t", "ecr"]);
    let mut run: Vec<&str> = run_order(&plan);
    run.sort_unstable();
    assert_eq!(run, ["ecr", "eks", "iam", "kubeconfig", "logagent", "logstore", "vpc"]);
    assert_consistent(&plan);
}

#[test]
fn destroy_runs_dependents_first_and_target_takes_what_needs_it() {
    let ws = Ws::reference();
    let plan = plan_json(&ws, &["-p", "aws", "--operation", "destroy"]);
    let run: Vec<&str> = run_order(&plan);
    assert_eq!(run.first(), Some(&"sirius"));
    assert_consistent(&plan);
    // Dependents first: every project is destroyed after everything that needs it.
    let pos: HashMap<&str, usize> = run.iter().enumerate().map(|(k, n)| (*n, k)).collect();
    for p in plan["projects"].as_array().unwrap() {
        for need in names(&p["needs"]) {
            assert!(pos[need.as_str()] > pos[p["name"].as_str().unwrap()]);
        }
    }

    let plan = plan_json(&ws, &["-p", "aws", "--operation", "destroy", "--target", "logstore"]);
    let run: Vec<&str> = run_order(&plan);
    assert_eq!(run, ["sirius", "logagent", "logstore"]);
    assert_consistent(&plan);
}

#[test]
fn json_plans_validate_against_the_documented_schema() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{REPO}/schemas/plan.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let ws = Ws::reference();
    for p in providers() {
        for op in ["up", "destroy", "refresh", "preview"] {
            let plan = plan_json(&ws, &["-p", p, "--operation", op]);
            let errors: Vec<String> = validator
                .iter_errors(&plan)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{p} {op}: {errors:#?}");
        }
    }
    // The schema is not vacuous: a plan missing a field or with a bad layer fails it.
    let mut bad = plan_json(&ws, &["-p", "aws"]);
    bad["projects"][0]["layer"] = "nowhere".into();
    assert!(!validator.is_valid(&bad));
    bad.as_object_mut().unwrap().remove("waves");
    assert!(!validator.is_valid(&bad));
}

#[requires("dot")]
#[test]
fn dot_renders_with_graphviz_without_warnings() {
    if crate::support::tool("dot").is_none() {
        return;
    }
    let ws = Ws::reference();
    for p in providers() {
        for op in ["up", "destroy"] {
            let run = ws
                .run(&["show-plan", "-p", p, "--operation", op, "--format", "dot"])
                .expect(0);
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("plan.dot");
            std::fs::write(&file, &run.stdout).unwrap();
            let out = std::process::Command::new("dot")
                .arg("-Tsvg")
                .arg(&file)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "dot failed on {p} {op}: {stderr}");
            assert!(stderr.trim().is_empty(), "dot warned on {p} {op}: {stderr}");
            let svg = String::from_utf8_lossy(&out.stdout);
            assert!(
                svg.contains("<svg") && svg.contains("kubeconfig"),
                "{p}: no graph drawn"
            );
        }
    }
}

#[test]
fn mermaid_is_a_flowchart_with_one_subgraph_per_layer() {
    let ws = Ws::reference();
    for p in providers() {
        let run = ws.run(&["show-plan", "-p", p, "--format", "mermaid"]).expect(0);
        let plan = plan_json(&ws, &["-p", p]);
        assert!(run.stdout.starts_with("flowchart LR\n"));
        let subgraphs = run
            .stdout
            .lines()
            .filter(|l| l.trim_start().starts_with("subgraph "))
            .count();
        let ends = run.stdout.lines().filter(|l| l.trim() == "end").count();
        assert_eq!(subgraphs, plan["layers"].as_array().unwrap().len(), "{p}");
        assert_eq!(ends, subgraphs, "{p}");
        let arrows = run
            .stdout
            .lines()
            .filter(|l| l.contains("-->") || l.contains("-.->"))
            .count();
        assert_eq!(arrows, plan["edges"].as_array().unwrap().len(), "{p}");
    }
}

#[test]
fn edges_carry_the_outputs_the_downstream_program_reads() {
    let ws = Ws::reference();
    let plan = plan_json(&ws, &["-p", "aws"]);
    let edge = |from: &str, to: &str| -> Vec<String> {
        let e = plan["edges"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["from"] == from && e["to"] == to)
            .unwrap_or_else(|| panic!("no edge {from} -> {to}"));
        names(&e["outputs"])
    };
    assert_eq!(edge("logstore", "logagent"), ["elastic_hostname", "kibana_hostname"]);
    assert_eq!(edge("kubeconfig", "logagent"), ["kubeconfig"]);
    assert_eq!(edge("vpc", "eks"), ["vpc"]);
    assert!(
        edge("certmgr", "sirius").is_empty(),
        "ordering-only edges carry nothing"
    );
    // A program that reads another output shows it at once.
    ws.edit(
        "projects/services/logagent/Pulumi.yaml",
        "  release:\n",
        "  extra:\n    type: kubernetes:core/v1:ConfigMap\n    properties:\n      data:\n        x: ${logstore.outputs[\"extra\"]}\n  release:\n",
    );
    let plan = plan_json(&ws, &["-p", "aws"]);
    let e = plan["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["from"] == "logstore" && e["to"] == "logagent")
        .unwrap();
    assert_eq!(names(&e["outputs"]), ["elastic_hostname", "extra", "kibana_hostname"]);
    let dot = ws.run(&["show-plan", "-p", "aws", "--format", "dot"]).expect(0).stdout;
    assert!(
        dot.contains("\"logstore\" -> \"logagent\" [label=\"elastic_hostname\\nextra\\nkibana_hostname\", fontsize=10"),
        "{dot}"
    );
    let mermaid = ws
        .run(&["show-plan", "-p", "aws", "--format", "mermaid"])
        .expect(0)
        .stdout;
    assert!(
        mermaid.contains("-->|\"elastic_hostname, extra, kibana_hostname\"|"),
        "{mermaid}"
    );
}
