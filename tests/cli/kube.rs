//! MARA's cluster layer on a real API server: this repository's workspace with `-p kubeconfig`
//! (its 10 projects, unchanged) run by the real `pulumi` and the real Kubernetes provider
//! against the local cluster (`scripts/local-cluster`: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler and kwok, built from Go modules), its charts the
//! published ones: `runner charts mirror` fills the cluster's chart repository from them
//! (`kubernetes:chart_mirror`) as an air-gapped site's mirror would be filled. The same
//! scenario runs on the stand-in, with the same assertions on what the runner says; the steps
//! that look into the cluster itself run on the real engine only (the stand-in has no cluster).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cluster::Cluster;
use crate::engines::{E2e, Engine, KUBE_SECRETS};
use test_requires::requires;

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
    // Bank of Sirius in its own namespace.
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
    sirius_as_published(k);
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

/// What Bank of Sirius' workloads read, made by its program: the six `ConfigMap`s, the
/// Secrets holding the passwords (no `ConfigMap` holds one) and `jwt-key`, a key pair whose halves
/// match. Each container's environment resolved as a kubelet resolves it: every reference
/// found (kwok's pods start without them, a real node's would not), and each password where
/// its reader looks for it.
fn sirius_config(k: &Cluster) {
    use rsa::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _};
    let named = |kind: &str| -> BTreeMap<String, Value> {
        k.json(&["-n", "bos", "get", kind])["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["metadata"]["name"].as_str().unwrap().to_string(), m["data"].clone()))
            .collect()
    };
    let maps = named("configmaps");
    let secrets: BTreeMap<String, Value> = named("secrets")
        .into_iter()
        .map(|(name, data)| {
            let plain = data
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), decoded(v).into()));
            (name, Value::Object(plain.collect()))
        })
        .collect();
    let passwords = [
        "MARA_SECRET_SIRIUS_ACCOUNTS_PWD",
        "MARA_SECRET_SIRIUS_LEDGER_PWD",
        "MARA_SECRET_SIRIUS_DEMO_LOGIN_PWD",
    ]
    .map(secret);
    for (name, data) in &maps {
        for password in passwords {
            assert!(
                !data.to_string().contains(password),
                "ConfigMap {name} holds a password: {data}"
            );
        }
    }
    assert_eq!(maps["accounts-db-config"]["POSTGRES_DB"], "postgresdb");
    assert_eq!(maps["environment-config"]["PUB_KEY_PATH"], "/root/.ssh/publickey");
    assert_eq!(maps["environment-config"]["LOCAL_ROUTING_NUM"], "883745000");

    // Who reads which password, and under which name.
    let accounts = secret("MARA_SECRET_SIRIUS_ACCOUNTS_PWD");
    let ledger = secret("MARA_SECRET_SIRIUS_LEDGER_PWD");
    let accounts_uri = format!("postgresql://admin:{accounts}@accounts-db:5432/postgresdb");
    let expected: &[(&str, &str, &str)] = &[
        ("accounts-db", "POSTGRES_PASSWORD", accounts),
        (
            "accounts-db",
            "DEMO_LOGIN_PASSWORD",
            secret("MARA_SECRET_SIRIUS_DEMO_LOGIN_PWD"),
        ),
        ("userservice", "ACCOUNTS_DB_URI", &accounts_uri),
        ("contacts", "ACCOUNTS_DB_URI", &accounts_uri),
        ("ledger-db", "POSTGRES_PASSWORD", ledger),
        ("ledgerwriter", "SPRING_DATASOURCE_PASSWORD", ledger),
        ("balancereader", "SPRING_DATASOURCE_PASSWORD", ledger),
        ("transactionhistory", "SPRING_DATASOURCE_PASSWORD", ledger),
        (
            "frontend",
            "DEFAULT_PASSWORD",
            secret("MARA_SECRET_SIRIUS_DEMO_LOGIN_PWD"),
        ),
        (
            "frontend",
            "DEFAULT_USERNAME",
            secret("MARA_SECRET_SIRIUS_DEMO_LOGIN_USER"),
        ),
        (
            "ledgerwriter",
            "SPRING_DATASOURCE_URL",
            "jdbc:postgresql://ledger-db:5432/postgresdb",
        ),
    ];
    let workloads = k.json(&["-n", "bos", "get", "deployments,statefulsets"]);
    let mut seen = BTreeMap::new();
    for w in workloads["items"].as_array().unwrap() {
        let name = w["metadata"]["name"].as_str().unwrap();
        for c in w["spec"]["template"]["spec"]["containers"].as_array().unwrap() {
            seen.insert(name.to_string(), environment(name, c, &maps, &secrets));
        }
    }
    for (workload, variable, value) in expected {
        assert_eq!(
            seen[*workload].get(*variable).map(String::as_str),
            Some(*value),
            "{workload}'s {variable}"
        );
    }

    let jwt = &secrets["jwt-key"];
    let private = jwt["jwtRS256.key"].as_str().unwrap();
    let public = jwt["jwtRS256.key.pub"].as_str().unwrap();
    assert!(private.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
    assert_eq!(
        rsa::RsaPrivateKey::from_pkcs8_pem(private).unwrap().to_public_key(),
        rsa::RsaPublicKey::from_public_key_pem(public).unwrap()
    );
}

/// A container's environment as the kubelet builds it (`envFrom` in order, then `env`), each
/// reference checked to exist: a missing `ConfigMap`, Secret or key is the
/// `CreateContainerConfigError` a real node would give.
fn environment(
    workload: &str,
    container: &Value,
    maps: &BTreeMap<String, Value>,
    secrets: &BTreeMap<String, Value>,
) -> BTreeMap<String, String> {
    let source = |kind: &str, name: &Value| -> &Value {
        let name = name.as_str().unwrap();
        let all = if kind == "secret" { secrets } else { maps };
        all.get(name)
            .unwrap_or_else(|| panic!("{workload} reads the {kind} {name}, which is not there"))
    };
    let mut env = BTreeMap::new();
    for from in container["envFrom"].as_array().into_iter().flatten() {
        let (kind, r) = match (&from["configMapRef"], &from["secretRef"]) {
            (Value::Null, r) => ("secret", r),
            (r, _) => ("configmap", r),
        };
        for (key, value) in source(kind, &r["name"]).as_object().unwrap() {
            env.insert(key.clone(), value.as_str().unwrap().to_string());
        }
    }
    for e in container["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap().to_string();
        let value = match (
            &e["value"],
            &e["valueFrom"]["configMapKeyRef"],
            &e["valueFrom"]["secretKeyRef"],
        ) {
            (Value::String(v), _, _) => v.clone(),
            (_, r, Value::Null) if !r.is_null() => lookup(workload, source("configmap", &r["name"]), r),
            (_, _, r) if !r.is_null() => lookup(workload, source("secret", &r["name"]), r),
            _ => continue,
        };
        env.insert(name, value);
    }
    env
}

fn lookup(workload: &str, data: &Value, r: &Value) -> String {
    let key = r["key"].as_str().unwrap();
    data[key]
        .as_str()
        .unwrap_or_else(|| {
            panic!(
                "{workload} reads the key {key} of {}, which it does not hold",
                r["name"]
            )
        })
        .to_string()
}

/// The program's workloads and Services are Bank of Sirius' published manifests (the copy in the
/// folder of published charts) with only the changes its comment lists: every field of each
/// published object is in the object on the server, but for the `ConfigMap`s that held passwords
/// (each followed by its Secret) and the demo's password (read from its Secret).
fn sirius_as_published(k: &Cluster) {
    let dir = crate::cluster::charts_dir()
        .expect("the published charts")
        .join("bank-of-sirius");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 9, "{files:?}");
    for file in files {
        // One JSON document an object, as kubectl prints several.
        let published = k
            .kubectl(&["create", "--dry-run=client", "-o", "json", "-f", file.to_str().unwrap()])
            .expect(0)
            .stdout;
        let objects = serde_json::Deserializer::from_str(&published).into_iter::<Value>();
        for object in objects {
            let mut object = object.unwrap();
            let kind = object["kind"].as_str().unwrap().to_lowercase();
            let name = object["metadata"]["name"].as_str().unwrap().to_string();
            let live = k.json(&["-n", "bos", "get", &kind, &name]);
            let containers = object
                .pointer_mut("/spec/template/spec/containers")
                .and_then(Value::as_array_mut);
            for c in containers.into_iter().flatten() {
                owned(c);
            }
            if let Err(at) = within(&object["spec"], &live["spec"], "spec") {
                panic!("{} {kind}/{name}: {at}", file.display());
            }
        }
    }
}

/// What the program changes in a published container: each `ConfigMap` that held a password is
/// followed by the Secret that holds it now, the demo's password is read from its Secret, and a
/// variable listed twice is listed once.
fn owned(container: &mut Value) {
    let credentials = |map: &str| match map {
        "accounts-db-config" => Some("accounts-db-credentials"),
        "ledger-db-config" => Some("ledger-db-credentials"),
        "demo-data-config" => Some("demo-data-credentials"),
        _ => None,
    };
    if let Some(from) = container["envFrom"].as_array_mut() {
        let mut with = Vec::new();
        for f in from.drain(..) {
            let secret = credentials(f["configMapRef"]["name"].as_str().unwrap_or_default());
            with.push(f);
            if let Some(secret) = secret {
                with.push(serde_json::json!({ "secretRef": { "name": secret } }));
            }
        }
        *from = with;
    }
    if let Some(env) = container["env"].as_array_mut() {
        let mut names = std::collections::BTreeSet::new();
        env.retain(|e| names.insert(e["name"].as_str().unwrap().to_string()));
        for e in env.iter_mut() {
            let r = &e["valueFrom"]["configMapKeyRef"];
            if r["name"] == "demo-data-config" && r["key"] == "DEMO_LOGIN_PASSWORD" {
                e["valueFrom"] = serde_json::json!({
                    "secretKeyRef": { "name": "demo-data-credentials", "key": "DEMO_LOGIN_PASSWORD" }
                });
            }
        }
    }
}

/// Every field of `want` is in `have` with the same value (the server adds its defaults); lists
/// match item by item. The path of the first difference, else `Ok`.
fn within(want: &Value, have: &Value, at: &str) -> Result<(), String> {
    match (want, have) {
        (Value::Object(w), Value::Object(h)) => w
            .iter()
            .try_for_each(|(key, v)| within(v, h.get(key).unwrap_or(&Value::Null), &format!("{at}.{key}"))),
        (Value::Array(w), Value::Array(h)) if w.len() == h.len() => w
            .iter()
            .zip(h)
            .enumerate()
            .try_for_each(|(i, (w, h))| within(w, h, &format!("{at}[{i}]"))),
        _ if want == have => Ok(()),
        _ => Err(format!("{at} is {have}, published {want}")),
    }
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

#[requires("real-pulumi", "kube", "charts")]
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
#[requires("real-pulumi", "kube")]
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
