//! MARA's cluster layer on a real API server: this repository's workspace with `-p kubeconfig`
//! (its 10 projects, unchanged) run by the real `pulumi` and the real Kubernetes provider
//! against the local cluster (`scripts/local-cluster`: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler and kwok, built from Go modules), charts from the
//! cluster's own repository of stand-ins (`kubernetes:chart_mirror`). The same scenario runs on
//! the stand-in, with the same assertions on what the runner says; the steps that look into the
//! cluster itself run on the real engine only (the stand-in has no cluster).

use serde_json::Value;

use crate::cluster::Cluster;
use crate::engines::{E2e, Engine, KUBE_SECRETS};

/// The namespaces the graph makes, each program's.
const NAMESPACES: [&str; 7] = [
    "nginx-ingress",
    "logstore",
    "logagent",
    "cert-manager",
    "prometheus",
    "observability",
    "bos",
];

/// The 10 projects of `-p kubeconfig`.
const PROJECTS: [&str; 10] = [
    "kubeconfig",
    "secrets",
    "ingress-controller-namespace",
    "ingress-controller",
    "logstore",
    "logagent",
    "certmgr",
    "prometheus",
    "observability",
    "sirius",
];

fn secret(variable: &str) -> &'static str {
    KUBE_SECRETS.iter().find(|(k, _)| *k == variable).unwrap().1
}

/// Day one and day two of the cluster graph: validate, up, what the cluster holds, status, the
/// app's URL, a repeat that runs nothing, a change made with kubectl found by `drift
/// --refresh`, destroy leaving no namespace behind.
fn cluster_graph(e: &E2e) {
    e.runner(&["validate"]).expect(0);
    let up = e.runner(&["up", "--yes"]).expect(0);
    let statuses = e.statuses();
    assert_eq!(
        statuses
            .keys()
            .map(String::as_str)
            .collect::<std::collections::BTreeSet<_>>(),
        PROJECTS.into_iter().collect(),
        "{statuses:?}"
    );
    assert!(
        statuses.values().all(|s| s == "succeeded"),
        "{statuses:?}\n{}",
        up.stderr
    );
    if let Some(k) = e.cluster() {
        what_the_cluster_holds(k);
    }
    assert_eq!(e.output("sirius", "application_url", false), "http://localhost/");
    assert_eq!(e.output("ingress-controller", "lb_ingress", false), "127.0.0.1");
    // The stored secrets reach their programs as the secrets project's secret output.
    e.secret_output_refused("secrets", "secret_values");
    let status = e.runner(&["status"]).expect(0);
    for p in PROJECTS {
        assert!(
            status.stdout.contains(p) || status.stderr.contains(p),
            "{p}:\n{}",
            status.stdout
        );
    }

    // A repeat runs nothing: every project is unchanged since its last up.
    e.runner(&["up", "--yes"]).expect(0);
    assert!(e.statuses().values().all(|s| s == "unchanged"), "{:?}", e.statuses());

    if let Some(k) = e.cluster() {
        edited_with_kubectl(e, k);
    }

    e.runner(&["destroy", "--yes"]).expect(0);
    assert!(e.statuses().values().all(|s| s == "succeeded"), "{:?}", e.statuses());
    if let Some(k) = e.cluster() {
        let left: Vec<String> = k
            .namespaces()
            .into_iter()
            .filter(|n| NAMESPACES.contains(&n.as_str()))
            .collect();
        assert!(left.is_empty(), "namespaces left behind: {left:?}");
        let secrets = k.json(&["-n", "default", "get", "secrets"]);
        assert!(
            secrets["items"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| !s["metadata"]["name"].as_str().unwrap().starts_with("pulumi-secret-")),
            "{secrets}"
        );
    }
    e.assert_no_plain_secret(&[]);
}

/// What `up` left in the cluster: every namespace, every Deployment available (kwok's pods
/// become Ready), the ingress controller's load balancer with an address, the Ingress of the
/// app, the stored secrets loaded.
fn what_the_cluster_holds(k: &Cluster) {
    let namespaces = k.namespaces();
    for ns in NAMESPACES {
        assert!(namespaces.iter().any(|n| n == ns), "no namespace {ns}: {namespaces:?}");
    }
    let deployments = k.json(&["get", "deployments", "--all-namespaces"]);
    let deployments = deployments["items"].as_array().unwrap();
    // One per chart (the stand-ins hold one each) and nine of Bank of Sirius.
    assert!(deployments.len() >= 16, "{} deployments", deployments.len());
    for d in deployments {
        let name = format!("{}/{}", d["metadata"]["namespace"], d["metadata"]["name"]);
        assert_eq!(
            d["status"]["availableReplicas"], d["spec"]["replicas"],
            "{name} is not available: {}",
            d["status"]
        );
    }
    // Bank of Sirius in its own namespace (its manifests name none), beside its Ingress.
    let bos = k.json(&["-n", "bos", "get", "deployments"]);
    assert_eq!(bos["items"].as_array().unwrap().len(), 9, "{bos}");
    let frontend = k.json(&["-n", "bos", "get", "service", "frontend"]);
    assert_eq!(frontend["spec"]["ports"][0]["port"], 80);
    let default = k.json(&["-n", "default", "get", "deployments"]);
    assert!(default["items"].as_array().unwrap().is_empty(), "{default}");
    let service = k.json(&["-n", "nginx-ingress", "get", "service", "kic-nginx-ingress-controller"]);
    assert_eq!(service["spec"]["type"], "LoadBalancer");
    assert_eq!(service["status"]["loadBalancer"]["ingress"][0]["hostname"], "localhost");
    let ingress = k.json(&["-n", "bos", "get", "ingress", "bank-of-sirius"]);
    assert_eq!(ingress["spec"]["rules"][0]["host"], "localhost");
    // The secrets project loaded the stored values; sirius copied its own into its namespace.
    let stored = k.json(&["-n", "default", "get", "secret", "pulumi-secret-prometheus"]);
    assert_eq!(
        decoded(&stored["data"]["adminpass"]),
        secret("MARA_SECRET_PROMETHEUS_ADMINPASS")
    );
    let credentials = k.json(&["-n", "bos", "get", "secret", "sirius-credentials"]);
    assert_eq!(
        decoded(&credentials["data"]["LEDGER_DB_PASSWORD"]),
        secret("MARA_SECRET_SIRIUS_LEDGER_PWD")
    );
    // Every Helm release came from the cluster's chart repository, at the programs' versions.
    let releases = k.json(&["get", "secrets", "--all-namespaces", "-l", "owner=helm"]);
    assert_eq!(releases["items"].as_array().unwrap().len(), 7, "{releases}");
}

/// A change made with kubectl, outside Pulumi: `drift --refresh` finds it (the provider's
/// server-side apply conflict is the drift: kubectl now owns the field) and names the field and
/// its owner; the next `up` refreshes first and sets it back.
fn edited_with_kubectl(e: &E2e, k: &Cluster) {
    k.kubectl(&[
        "label",
        "namespace",
        "nginx-ingress",
        "mara/cluster=edited-by-hand",
        "--overwrite",
    ])
    .expect(0);
    let drift = e.runner(&["drift", "--refresh"]).expect(6);
    assert!(
        drift.stderr.contains("ingress-controller-namespace")
            && drift
                .stderr
                .contains("`kubectl-label` owns .metadata.labels.mara/cluster"),
        "{}",
        drift.stderr
    );
    let up = e.runner(&["up", "--yes"]).expect(0);
    assert!(up.stderr.contains("its up refreshes first"), "{}", up.stderr);
    assert_eq!(e.statuses()["ingress-controller-namespace"], "succeeded");
    let ns = k.json(&["get", "namespace", "nginx-ingress"]);
    assert_eq!(ns["metadata"]["labels"]["mara/cluster"], "runner-local");
    e.runner(&["drift", "--refresh"]).expect(0);
}

fn decoded(v: &Value) -> String {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap())
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn the_cluster_graph_runs_end_to_end_on_the_real_provider_and_a_real_api_server() {
    if let Some(e) = E2e::kube(Engine::Real) {
        cluster_graph(&e);
    }
}

#[test]
fn the_cluster_graph_runs_end_to_end_on_the_standin() {
    let e = E2e::kube(Engine::Standin).expect("the stand-in");
    cluster_graph(&e);
}

/// The `kubeconfig-merge` hook, against a server: a cluster project whose `kubeconfig` output
/// reaches the local cluster, merged into the user's kubeconfig (KUBECONFIG) after its `up`;
/// `kubectl` with that file lists the cluster's namespaces, and the next project's Kubernetes
/// provider, given that same file, applies an object the cluster then holds.
#[test]
fn the_merged_kubeconfig_reaches_the_server_for_kubectl_and_the_next_projects_provider() {
    let Some(e) = E2e::hook() else {
        return;
    };
    let k = e.cluster().expect("the real engine's cluster");
    let merged = e.kubeconfig();
    let up = e.runner(&["up", "--yes"]).expect(0);
    assert!(
        up.stderr
            .contains(&format!("Added new context runner-local to {}", merged.display())),
        "{}",
        up.stderr
    );
    let kubectl = std::process::Command::new(k.tools.join("bin/kubectl"))
        .args(["get", "namespaces", "-o", "name"])
        .env("KUBECONFIG", &merged)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&kubectl.stdout);
    assert!(
        kubectl.status.success() && listed.contains("namespace/kube-system"),
        "{listed}"
    );
    let map = k.json(&["-n", "default", "get", "configmap", &e.hook_configmap()]);
    assert_eq!(map["data"]["merged_by"], "kubeconfig-merge");
    e.runner(&["destroy", "--yes", "--prune-kubeconfig"]).expect(0);
    assert_ne!(
        k.kubectl(&["-n", "default", "get", "configmap", &e.hook_configmap()])
            .code,
        0,
        "destroy removed it"
    );
    let left = std::fs::read_to_string(&merged).unwrap_or_default();
    assert!(!left.contains("runner-local"), "pruned:\n{left}");
}
