//! MARA's cluster layer on a real API server: this repository's workspace with `-p kubeconfig`
//! (its 10 projects, unchanged) run by the real `pulumi` and the real Kubernetes provider
//! against the local cluster (`scripts/local-cluster`: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler and kwok, built from Go modules), its charts the
//! published ones: `runner charts mirror` fills the cluster's chart repository from them
//! (`kubernetes:chart_mirror`) as an air-gapped site's mirror would be filled. The same
//! scenario runs on the stand-in, with the same assertions on what the runner says; the steps
//! that look into the cluster itself run on the real engine only (the stand-in has no cluster).

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
        what_the_cluster_holds(e, k);
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
        values_checked_against_the_charts_schema(e);
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
    // The key pair the runner made for the app is nowhere in plain text.
    e.assert_no_plain_secret(&["-----BEGIN PRIVATE KEY-----".to_string()]);
}

/// What `up` left in the cluster: every namespace, every Deployment available (kwok's pods
/// become Ready), every chart's release deployed at the version its program pins and its CRDs,
/// the ingress controller's load balancer with an address, the app's Ingress, its `ConfigMap`s
/// and Secrets (passwords in Secrets only, the key pair the runner made), the stored secrets.
fn what_the_cluster_holds(e: &E2e, k: &Cluster) {
    let namespaces = k.namespaces();
    for ns in NAMESPACES {
        assert!(namespaces.iter().any(|n| n == ns), "no namespace {ns}: {namespaces:?}");
    }
    for kind in ["deployments", "statefulsets"] {
        let all = k.json(&["get", kind, "--all-namespaces"]);
        for d in all["items"].as_array().unwrap() {
            let name = format!("{kind} {}/{}", d["metadata"]["namespace"], d["metadata"]["name"]);
            let ready = if kind == "deployments" {
                "availableReplicas"
            } else {
                "readyReplicas"
            };
            assert_eq!(
                d["status"][ready], d["spec"]["replicas"],
                "{name} is not ready: {}",
                d["status"]
            );
        }
    }
    // Bank of Sirius as published, in its own namespace (its manifests name none).
    let bos = k.json(&["-n", "bos", "get", "deployments,statefulsets"]);
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
    // The secrets project loaded the stored values.
    let stored = k.json(&["-n", "default", "get", "secret", "pulumi-secret-prometheus"]);
    assert_eq!(
        decoded(&stored["data"]["adminpass"]),
        secret("MARA_SECRET_PROMETHEUS_ADMINPASS")
    );
    sirius_config(k);
    releases(e, k);
    // The charts' own CRDs: cert-manager's, the Prometheus operator's, OpenTelemetry's, NGINX's.
    let crds = k.json(&["get", "crds"]);
    let crds: Vec<&str> = crds["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    for crd in [
        "certificates.cert-manager.io",
        "prometheuses.monitoring.coreos.com",
        "servicemonitors.monitoring.coreos.com",
        "opentelemetrycollectors.opentelemetry.io",
        "virtualservers.k8s.nginx.org",
    ] {
        assert!(crds.contains(&crd), "no CRD {crd}: {crds:?}");
    }
}

/// What Bank of Sirius' manifests read, made by its program: the six `ConfigMap`s (the
/// databases' passwords where the manifests read them, see the program) and `jwt-key`, a key
/// pair whose halves match.
fn sirius_config(k: &Cluster) {
    use rsa::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _};
    let maps = k.json(&["-n", "bos", "get", "configmaps"]);
    let maps: std::collections::BTreeMap<&str, &Value> = maps["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["metadata"]["name"].as_str().unwrap(), &m["data"]))
        .collect();
    for name in [
        "environment-config",
        "tracing-config",
        "service-api-config",
        "demo-data-config",
        "accounts-db-config",
        "ledger-db-config",
    ] {
        assert!(maps.contains_key(name), "no ConfigMap {name}: {maps:?}");
    }
    assert_eq!(maps["accounts-db-config"]["POSTGRES_DB"], "postgresdb");
    assert_eq!(
        maps["accounts-db-config"]["POSTGRES_PASSWORD"],
        secret("MARA_SECRET_SIRIUS_ACCOUNTS_PWD")
    );
    assert_eq!(
        maps["ledger-db-config"]["SPRING_DATASOURCE_URL"],
        "jdbc:postgresql://ledger-db:5432/postgresdb"
    );
    assert_eq!(
        maps["ledger-db-config"]["SPRING_DATASOURCE_PASSWORD"],
        secret("MARA_SECRET_SIRIUS_LEDGER_PWD")
    );
    assert_eq!(maps["environment-config"]["PUB_KEY_PATH"], "/root/.ssh/publickey");
    assert_eq!(maps["environment-config"]["LOCAL_ROUTING_NUM"], "883745000");
    assert_eq!(
        maps["demo-data-config"]["DEMO_LOGIN_USERNAME"],
        secret("MARA_SECRET_SIRIUS_DEMO_LOGIN_USER")
    );
    let jwt = k.json(&["-n", "bos", "get", "secret", "jwt-key"]);
    let private = decoded(&jwt["data"]["jwtRS256.key"]);
    let public = decoded(&jwt["data"]["jwtRS256.key.pub"]);
    assert!(private.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
    assert_eq!(
        rsa::RsaPrivateKey::from_pkcs8_pem(&private).unwrap().to_public_key(),
        rsa::RsaPublicKey::from_public_key_pem(&public).unwrap()
    );
}

/// Every Helm release deployed, at the chart version `runner charts` says its program pins.
fn releases(e: &E2e, k: &Cluster) {
    use std::io::Read as _;
    let pinned = e.runner(&["charts", "-f", "json"]).expect(0).json();
    let releases = k.json(&["get", "secrets", "--all-namespaces", "-l", "owner=helm,status=deployed"]);
    let mut deployed: Vec<(String, String)> = releases["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            // Helm's release record: base64 of gzipped JSON, in the Secret's base64.
            let inner = decoded(&s["data"]["release"]);
            let gz = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, inner).unwrap();
            let mut json = String::new();
            flate2::read::GzDecoder::new(gz.as_slice())
                .read_to_string(&mut json)
                .unwrap();
            let r: Value = serde_json::from_str(&json).unwrap();
            (
                r["chart"]["metadata"]["name"].as_str().unwrap().to_string(),
                r["chart"]["metadata"]["version"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut wanted: Vec<(String, String)> = pinned
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["chart"].as_str().unwrap().to_string(),
                c["version"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    deployed.sort();
    wanted.sort();
    assert_eq!(deployed, wanted);
}

/// A value of the wrong type for the chart's schema fails that project's `up` with the chart's
/// own message, offline (nginx-ingress's schema points at GitHub; the mirror took it in).
fn values_checked_against_the_charts_schema(e: &E2e) {
    let program = "projects/services/ingress-controller/public/Pulumi.yaml";
    let text = std::fs::read_to_string(e.path().join(program)).unwrap();
    let wrong = text.replacen(
        "        controller:\n",
        "        controller:\n          replicaCount: two\n",
        1,
    );
    assert_ne!(wrong, text);
    std::fs::write(e.path().join(program), wrong).unwrap();
    let up = e.runner(&["up", "--yes", "--target", "ingress-controller"]).expect(1);
    assert!(
        up.stderr
            .contains("values don't meet the specifications of the schema(s)")
            && up
                .stderr
                .contains("at '/controller/replicaCount': got string, want integer"),
        "{}",
        up.stderr
    );
    assert!(!up.stderr.contains("raw.githubusercontent.com"), "{}", up.stderr);
    std::fs::write(e.path().join(program), text).unwrap();
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
