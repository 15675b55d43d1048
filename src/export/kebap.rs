//! The KEBAP bundle (Kubernetes, External Secrets, Backstage, Argo CD, PKO): a directory Argo CD
//! syncs from git. `manifests/` holds the operator's identity, a `ClusterSecretStore` on the
//! Pulumi ESC environment with one `ExternalSecret` per Kubernetes Secret the Stacks read (the
//! passphrase and the cloud credentials included, so nothing is created by hand), the Programs
//! (`--source program`) and the PKO Stacks, each with the sync wave of its plan wave;
//! `application.yaml` is the Argo CD `Application` that syncs `manifests/`; `argocd-health.yaml`
//! patches Argo CD's settings with a health check for Stacks; `teardown.sh`
//! deletes the Stacks dependents first (neither PKO nor a pruning sync orders deletion).

use serde_json::{Map, Value, json};

use super::pko::{self, PkoOptions, ProgramSource};
use super::{
    Common, Export, ExportError, File, Format, Repo, Revision, base_name, config_secret, credentials_secret, header,
    secret_key, yaml,
};
use crate::plan::Plan;

/// Sync waves before the Stacks' (which start at 1): identity, then secrets, then programs.
const WAVE_RBAC: i32 = -3;
const WAVE_SECRETS: i32 = -2;
const WAVE_PROGRAMS: i32 = -1;

/// The one Secret the bundle does not make: the store's own Pulumi access token (ESO cannot
/// fetch the credential it signs in with). Put there once, by the cluster's bootstrap.
pub(crate) const ESC_TOKEN_SECRET: &str = "pulumi-esc-token";

/// The patch of Argo CD's settings that teaches it a Stack's health, and its key there.
const HEALTH_FILE: &str = "argocd-health.yaml";
const HEALTH_KEY: &str = "resource.customizations.health.pulumi.com_Stack";

/// The Pulumi ESC environment the bundle's secrets come from.
#[derive(Debug, Clone)]
pub(crate) struct Esc {
    pub(crate) organization: String,
    pub(crate) project: String,
    pub(crate) environment: String,
}

/// What a KEBAP export takes besides the plan and [`Common`]: PKO's options for its Stacks,
/// and what Argo CD and External Secrets need.
#[derive(Debug, Clone)]
pub(crate) struct KebapOptions {
    pub(crate) stacks: PkoOptions,
    /// The repository Argo CD syncs the bundle from.
    pub(crate) repo: Repo,
    /// The bundle's directory in the repository.
    pub(crate) bundle_path: String,
    pub(crate) esc: Esc,
}

pub(crate) fn export(plan: &Plan<'_>, common: &Common, o: &KebapOptions) -> Result<Export, ExportError> {
    let repo = &o.repo;
    let names = pko::stack_names(plan);
    let mut files = Vec::new();
    let application = json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": base_name(common), "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": repo.url,
                "targetRevision": repo.revision.as_str(),
                "path": format!("{}/manifests", o.bundle_path.trim_end_matches('/')),
                "directory": {"recurse": true},
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": o.stacks.namespace},
            "syncPolicy": {
                "automated": {"prune": false, "selfHeal": true},
                "syncOptions": ["CreateNamespace=true"],
            },
        },
    });
    let mut app_header = header(plan, common, Format::Kebap, "The Argo CD Application of the bundle");
    app_header.push("Apply it once (kubectl apply -f application.yaml); Argo CD syncs manifests/ from git.".into());
    if matches!(repo.revision, Revision::Commit(_)) {
        app_header.push("It follows one commit: export again with --branch to follow a branch.".into());
    }
    app_header.push(format!(
        "On Argo CD up to v3.5, patch its settings with {HEALTH_FILE} once, before the first sync."
    ));
    files.push(File::new("application.yaml", yaml::document(&app_header, &application)));
    files.push(health_check(plan, common));

    let mut rbac = pko::rbac(common, &o.stacks.namespace);
    for o in &mut rbac {
        annotate(o, WAVE_RBAC);
    }
    files.push(File::new(
        "manifests/00-rbac.yaml",
        yaml::documents(&header(plan, common, Format::Kebap, "The operator's identity"), &rbac),
    ));
    files.push(File::new(
        "manifests/01-secrets.yaml",
        yaml::documents(&secrets_header(plan, common, o), &secrets(common, o)),
    ));
    if let ProgramSource::Program(programs) = &o.stacks.origin {
        let mut programs = pko::programs(plan, &o.stacks.namespace, programs)?;
        for o in &mut programs {
            annotate(o, WAVE_PROGRAMS);
        }
        files.push(File::new(
            "manifests/02-programs.yaml",
            yaml::documents(
                &header(
                    plan,
                    common,
                    Format::Kebap,
                    "One Program per project, named as its project",
                ),
                &programs,
            ),
        ));
    }
    let stacks = pko::stacks(plan, common, &o.stacks, &names, true);
    files.push(File::new(
        "manifests/03-stacks.yaml",
        yaml::documents(&pko::stacks_header(plan, common, &o.stacks, Format::Kebap), &stacks),
    ));
    files.push(pko::teardown(
        plan,
        common,
        &o.stacks,
        &names,
        "teardown.sh",
        Format::Kebap,
    ));
    Ok(Export {
        files,
        names: vec![("PKO Stack", names)],
    })
}

/// Argo CD's health check for PKO Stacks, as a patch of its settings (`argocd-cm`). Argo CD up
/// to v3.5 has none and calls a Stack healthy as soon as it exists, so a sync wave would not
/// wait for its Stacks; the check is merged for the next release (argo-cd#28534), and a key in
/// `argocd-cm` takes the place of a built-in one.
fn health_check(plan: &Plan<'_>, common: &Common) -> File {
    let mut lines = header(plan, common, Format::Kebap, "Argo CD's health check for PKO Stacks");
    lines.extend([
        "Argo CD up to v3.5 calls a Stack healthy as soon as it exists: without this check a sync".to_string(),
        "wave does not wait for its Stacks to succeed (their prerequisites still order them).".to_string(),
        "Healthy once Ready, Degraded when Stalled, else Progressing. Apply it once:".to_string(),
        format!("  kubectl -n argocd patch configmap argocd-cm --type merge --patch-file {HEALTH_FILE}"),
    ]);
    let patch = json!({"data": {HEALTH_KEY: include_str!("stack_health.lua")}});
    File::new(HEALTH_FILE, yaml::document(&lines, &patch))
}

fn annotate(object: &mut Value, wave: i32) {
    let metadata = object["metadata"].as_object_mut().expect("every object has metadata");
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    annotations["argocd.argoproj.io/sync-wave"] = json!(wave.to_string());
}

fn store_name(common: &Common) -> String {
    format!("{}-esc", base_name(common))
}

/// Where each secret lives in the ESC environment: `runner.credentials.<VARIABLE>` and
/// `runner.config["<key>"]`.
fn credential_path(name: &str) -> String {
    format!("runner.credentials.{name}")
}

fn config_path(key: &str) -> String {
    format!(
        "runner.config[{}]",
        serde_json::to_string(key).expect("a string serializes")
    )
}

fn secrets_header(plan: &Plan<'_>, common: &Common, o: &KebapOptions) -> Vec<String> {
    let mut h = header(
        plan,
        common,
        Format::Kebap,
        "Every Kubernetes Secret the Stacks read, from Pulumi ESC",
    );
    h.push(String::new());
    h.push(format!(
        "The ESC environment {}/{}/{} holds the values (set them with `esc env set … --secret`):",
        o.esc.organization, o.esc.project, o.esc.environment
    ));
    for c in &common.credentials {
        h.push(format!("  {}", credential_path(c)));
    }
    for s in config_keys(common) {
        h.push(format!("  {}", config_path(&s)));
    }
    h.push(format!(
        "The store signs in with a Pulumi access token, the one Secret made by the cluster's bootstrap: \
         {ESC_TOKEN_SECRET} (key accessToken) in {}.",
        o.stacks.namespace
    ));
    h
}

fn config_keys(common: &Common) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for s in common.config_secrets.iter().chain(&common.store_secrets) {
        if !keys.contains(&s.key) {
            keys.push(s.key.clone());
        }
    }
    keys
}

fn secrets(common: &Common, o: &KebapOptions) -> Vec<Value> {
    let store = store_name(common);
    let mut out = vec![json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {
            "name": store,
            "annotations": {"argocd.argoproj.io/sync-wave": WAVE_SECRETS.to_string()},
        },
        "spec": {
            "provider": {
                "pulumi": {
                    "organization": o.esc.organization,
                    "project": o.esc.project,
                    "environment": o.esc.environment,
                    "accessToken": {
                        "secretRef": {"name": ESC_TOKEN_SECRET, "key": "accessToken", "namespace": o.stacks.namespace},
                    },
                },
            },
        },
    })];
    let external = |name: String, data: Vec<Value>| {
        json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {
                "name": name,
                "namespace": o.stacks.namespace,
                "annotations": {"argocd.argoproj.io/sync-wave": WAVE_SECRETS.to_string()},
            },
            "spec": {
                "refreshInterval": "1h",
                "secretStoreRef": {"kind": "ClusterSecretStore", "name": store},
                "target": {"name": name, "creationPolicy": "Owner"},
                "data": data,
            },
        })
    };
    if !common.credentials.is_empty() {
        let data = common
            .credentials
            .iter()
            .map(|c| json!({"secretKey": c, "remoteRef": {"key": credential_path(c)}}))
            .collect();
        out.push(external(credentials_secret(common), data));
    }
    let keys = config_keys(common);
    if !keys.is_empty() {
        let data = keys
            .iter()
            .map(|k| json!({"secretKey": secret_key(k), "remoteRef": {"key": config_path(k)}}))
            .collect();
        out.push(external(config_secret(common), data));
    }
    out
}
