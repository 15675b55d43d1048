//! The Pulumi Kubernetes Operator: one `pulumi.com/v1` `Stack` per project in one namespace,
//! `prerequisites` from every edge of the plan, the shared configuration's plain values in
//! `config`, its secrets and the credentials as references to Kubernetes Secrets (`Secret`
//! refs only: PKO v2 accepts `Secret` and `Literal`), the `ServiceAccount` with its
//! `system:auth-delegator` binding, and — since PKO does not order deletion — a teardown
//! script that deletes the Stacks dependents first. The program comes from git
//! (`projectRepo`, exactly one of `branch` and `commit`, `repoDir`) or from a `Program` object
//! per project, named as the project (PKO runs a Program as the project named after it).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::names::{Names, Rule};
use super::{
    Common, Export, ExportError, File, Format, Repo, Revision, base_name, config_secret, credentials_secret, header,
    secret_key, secrets_of, shell, waits, yaml,
};
use crate::plan::Plan;

/// The CRD's rule for a Stack's `metadata.name`.
pub(crate) const STACK_NAME_MAX: usize = 42;

/// Where PKO takes each project's program from (`--source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Source {
    /// The repository: `projectRepo`, `branch` or `commit`, `repoDir`.
    #[default]
    Git,
    /// A `pulumi.com/v1` `Program` object per project, embedded in the export.
    Program,
}

/// A [`Source`] with what it takes: the repository, or each project's program.
#[derive(Debug, Clone)]
pub(crate) enum ProgramSource {
    Git(Repo),
    /// Each project's Pulumi YAML program, as data, by project name.
    Program(BTreeMap<String, Value>),
}

/// What a PKO export takes besides the plan and [`Common`]: where its Stacks go and how they
/// are made (a KEBAP bundle's Stacks too).
#[derive(Debug, Clone)]
pub(crate) struct PkoOptions {
    pub(crate) namespace: String,
    pub(crate) origin: ProgramSource,
    /// A prerequisite counts only when it succeeded within this duration.
    pub(crate) succeeded_within: Option<String>,
    pub(crate) destroy_on_finalize: bool,
    /// The workspace pods' image (`workspaceTemplate.spec.image`); PKO's own when `None`.
    pub(crate) image: Option<String>,
}

/// Refuses a repository PKO cannot clone: it takes `https://` and SSH (`ssh://`, `git@host:path`)
/// only, and a Stack given another (`git://`, `http://`, a path) stalls with `invalid URL
/// scheme` (pulumi's `gitutil.ParseGitRepoURL`).
pub(crate) fn cloneable(url: &str) -> Result<(), crate::error::RunnerError> {
    let scp_like = !url.contains("://")
        && url
            .split_once(':')
            .is_some_and(|(host, path)| !host.is_empty() && !host.contains('/') && !path.is_empty());
    if url.starts_with("https://") || url.starts_with("ssh://") || scp_like {
        return Ok(());
    }
    let url = crate::charts::fetch::hide_credentials(url);
    Err(crate::error::RunnerError::usage(
        format!(
            "PKO clones a repository over https:// or SSH only, and {url} is neither: its Stacks would stall with \
             `invalid URL scheme`"
        ),
        "give --repo the https:// or SSH address of the same repository (git@host:org/repo.git), or embed the \
         programs with --source program",
    ))
}

pub(crate) fn export(plan: &Plan<'_>, common: &Common, o: &PkoOptions) -> Result<Export, ExportError> {
    let names = stack_names(plan);
    let mut files = vec![File::new(
        "rbac.yaml",
        yaml::documents(
            &header(plan, common, Format::Pko, "The operator's identity"),
            &rbac(common, &o.namespace),
        ),
    )];
    if let ProgramSource::Program(programs) = &o.origin {
        files.push(File::new(
            "programs.yaml",
            yaml::documents(
                &header(
                    plan,
                    common,
                    Format::Pko,
                    "One Program per project, named as its project",
                ),
                &self::programs(plan, &o.namespace, programs)?,
            ),
        ));
    }
    files.push(File::new(
        "stacks.yaml",
        yaml::documents(
            &stacks_header(plan, common, o, Format::Pko),
            &stacks(plan, common, o, &names, false),
        ),
    ));
    files.push(teardown(plan, common, o, &names, "teardown.sh", Format::Pko));
    Ok(Export {
        files,
        names: vec![("PKO Stack", names)],
    })
}

pub(super) fn stack_names(plan: &Plan<'_>) -> Names {
    Names::new(
        Rule::Dns1123(STACK_NAME_MAX),
        plan.order.iter().map(|&i| plan.name(i)),
        &[],
    )
}

pub(super) fn service_account(common: &Common) -> String {
    base_name(common)
}

/// The header of the Stacks file: what it needs that it does not hold.
pub(super) fn stacks_header(plan: &Plan<'_>, common: &Common, o: &PkoOptions, format: Format) -> Vec<String> {
    let mut h = header(plan, common, format, "One PKO Stack per project");
    h.push(String::new());
    h.push("The Kubernetes Secrets they read (values never written here):".into());
    h.push(format!(
        "  {}: {}",
        credentials_secret(common),
        common.credentials.join(", ")
    ));
    let mut keys: Vec<String> = Vec::new();
    for s in common.config_secrets.iter().chain(&common.store_secrets) {
        let k = secret_key(&s.key);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    if !keys.is_empty() {
        h.push(format!("  {}: {}", config_secret(common), keys.join(", ")));
    }
    h.push("PKO does not order deletion: delete them with the teardown script, dependents first.".into());
    if matches!(o.origin, ProgramSource::Git(_)) {
        h.push("A private repository: give each Stack spec.gitAuth (accessToken or sshAuth, from a Secret).".into());
    }
    if format == Format::Pko {
        h.extend(super::cluster_needs(common, &o.namespace, false));
        h.push("  kubectl apply -f rbac.yaml   # the ServiceAccount the Stacks' workspaces run as".into());
    }
    h.extend(super::docker_needs(
        plan,
        "a Docker daemon for its workspace pod: a docker:dind sidecar and DOCKER_HOST in spec.workspaceTemplate",
    ));
    h
}

/// The `ServiceAccount` the Stacks' workspaces run as, and its `system:auth-delegator` binding.
pub(super) fn rbac(common: &Common, namespace: &str) -> Vec<Value> {
    let sa = service_account(common);
    vec![
        service_account_object(&sa, namespace),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("{namespace}:{sa}:system:auth-delegator")},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "system:auth-delegator",
            },
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
        }),
    ]
}

/// The `ServiceAccount` object named `sa` (PKO's Stacks and Argo's tasks each run as one).
pub(super) fn service_account_object(sa: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": sa, "namespace": namespace},
    })
}

fn secret_ref(name: &str, key: &str) -> Value {
    json!({"type": "Secret", "secret": {"name": name, "key": key}})
}

/// The Stacks in run order; with `waves`, each annotated with its Argo CD sync wave.
pub(super) fn stacks(plan: &Plan<'_>, common: &Common, o: &PkoOptions, names: &Names, waves: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, waits_for) in waits(plan) {
        let project = plan.project(i);
        let mut metadata = Map::new();
        metadata.insert("name".into(), json!(names.get(&project.name)));
        metadata.insert("namespace".into(), json!(o.namespace));
        metadata.insert(
            "labels".into(),
            json!({
                "app.kubernetes.io/managed-by": "runner",
                "runner/project": Names::new(Rule::Backstage, [project.name.as_str()], &[]).get(&project.name),
                "runner/layer": project.layer.as_str(),
            }),
        );
        if waves {
            metadata.insert(
                "annotations".into(),
                json!({"argocd.argoproj.io/sync-wave": plan.wave(i).to_string()}),
            );
        }
        let mut spec = Map::new();
        spec.insert("serviceAccountName".into(), json!(service_account(common)));
        spec.insert("stack".into(), json!(common.stack));
        spec.insert("backend".into(), json!(common.backend));
        match &o.origin {
            ProgramSource::Git(repo) => {
                spec.insert("projectRepo".into(), json!(repo.url));
                match &repo.revision {
                    Revision::Branch(b) => spec.insert("branch".into(), json!(b)),
                    Revision::Commit(c) => spec.insert("commit".into(), json!(c)),
                };
                spec.insert("repoDir".into(), json!(format!("{}{}", repo.prefix, project.path)));
            }
            ProgramSource::Program(_) => {
                spec.insert("programRef".into(), json!({"name": project.name}));
            }
        }
        if !waits_for.is_empty() {
            let prerequisites: Vec<Value> = waits_for
                .iter()
                .map(|&w| {
                    let mut p = Map::new();
                    p.insert("name".into(), json!(names.get(plan.name(w))));
                    if let Some(d) = &o.succeeded_within {
                        p.insert("requirement".into(), json!({"succeededWithinDuration": d}));
                    }
                    Value::Object(p)
                })
                .collect();
            spec.insert("prerequisites".into(), Value::Array(prerequisites));
        }
        let mut config = match &o.origin {
            ProgramSource::Program(programs) => program_values(&project.name, programs.get(&project.name)),
            ProgramSource::Git(_) => Map::new(),
        };
        config.extend(common.config.clone());
        if !project.secrets_store && !config.is_empty() {
            spec.insert("config".into(), Value::Object(config));
        }
        let secrets = secrets_of(plan, i, common);
        if !secrets.is_empty() {
            let refs: Map<String, Value> = secrets
                .iter()
                .map(|s| (s.key.clone(), secret_ref(&config_secret(common), &secret_key(&s.key))))
                .collect();
            spec.insert("secretsRef".into(), Value::Object(refs));
        }
        let env: Map<String, Value> = common
            .credentials
            .iter()
            .map(|c| (c.clone(), secret_ref(&credentials_secret(common), c)))
            .collect();
        if !env.is_empty() {
            spec.insert("envRefs".into(), Value::Object(env));
        }
        if let Some(image) = &o.image {
            spec.insert("workspaceTemplate".into(), json!({"spec": {"image": image}}));
        }
        spec.insert("destroyOnFinalize".into(), json!(o.destroy_on_finalize));
        out.push(json!({
            "apiVersion": "pulumi.com/v1",
            "kind": "Stack",
            "metadata": metadata,
            "spec": spec,
        }));
    }
    out
}

/// Is `name` a DNS-1123 subdomain (what a Kubernetes object name must be)?
fn dns1123_subdomain(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && label.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

/// One `Program` per project, in run order, named as the project.
pub(super) fn programs(
    plan: &Plan<'_>,
    namespace: &str,
    programs: &BTreeMap<String, Value>,
) -> Result<Vec<Value>, ExportError> {
    let mut out = Vec::new();
    for &i in &plan.order {
        let project = plan.project(i);
        if !dns1123_subdomain(&project.name) {
            return Err(ExportError {
                message: format!(
                    "project `{}` cannot be a PKO Program: PKO runs a Program as the Pulumi project named after the \
                     object, whose name must be lower-case letters, digits, `-` and `.`, so stack references to `{}` \
                     would break",
                    project.name, project.name
                ),
                help: format!(
                    "rename the project in {} and its Pulumi.yaml (for example `{}`), or export with --source git",
                    project.declared_in,
                    Names::new(Rule::Dns1123(63), [project.name.as_str()], &[]).get(&project.name)
                ),
            });
        }
        let program = programs.get(&project.name).ok_or_else(|| ExportError {
            message: format!(
                "the program of `{}` ({}/Pulumi.yaml) cannot be read",
                project.name, project.path
            ),
            help: "run `runner validate` to see what is wrong with it".into(),
        })?;
        let mut body = Map::new();
        if let Some(config) = program.get("config").and_then(Value::as_object) {
            body.insert(
                "configuration".into(),
                Value::Object(configuration(&project.name, &project.path, config)?),
            );
        }
        for key in ["variables", "resources", "outputs", "packages"] {
            if let Some(v) = program.get(key) {
                body.insert(key.into(), v.clone());
            }
        }
        out.push(json!({
            "apiVersion": "pulumi.com/v1",
            "kind": "Program",
            "metadata": {"name": project.name, "namespace": namespace},
            "program": body,
        }));
    }
    Ok(out)
}

/// The values a program's `config:` gives keys of other namespaces (`kubernetes:chart_mirror:
/// URL`, or `{value: URL}`): the stack's own value wins over them, as over a default, but a
/// Program's `configuration` declares only the project's parameters, so they go to its Stack's
/// `config`, under the shared configuration's.
fn program_values(project: &str, program: Option<&Value>) -> Map<String, Value> {
    let Some(config) = program.and_then(|p| p.get("config")).and_then(Value::as_object) else {
        return Map::new();
    };
    config
        .iter()
        .filter(|(key, _)| foreign(project, key))
        .filter_map(|(key, decl)| {
            let value = match decl {
                Value::Object(m) => m.get("value")?,
                Value::Null => return None,
                v => v,
            };
            Some((key.clone(), value.clone()))
        })
        .collect()
}

/// Whether `key` of `project`'s `config:` belongs to another namespace (`kubernetes:…`).
fn foreign(project: &str, key: &str) -> bool {
    key.split_once(':').is_some_and(|(ns, _)| ns != project)
}

/// A program's `config:` section in the Program CRD's terms: its `configuration` accepts only
/// `String`, `Number`, `List<String>` and `List<Number>` types; a value of another type keeps
/// its default alone (Pulumi YAML takes the type from it). Keys of other namespaces are values,
/// not parameters: [`program_values`] puts them in the Stack.
fn configuration(project: &str, path: &str, config: &Map<String, Value>) -> Result<Map<String, Value>, ExportError> {
    let mut out = Map::new();
    for (key, decl) in config.iter().filter(|(key, _)| !foreign(project, key)) {
        let kind = decl.get("type").and_then(Value::as_str);
        let items = decl.get("items").and_then(|i| i.get("type")).and_then(Value::as_str);
        let default = decl.get("default");
        let translated = match (kind, items) {
            (Some("string"), _) => Some("String"),
            (Some("integer" | "number"), _) => Some("Number"),
            (Some("array" | "List<String>"), Some("string") | None) => Some("List<String>"),
            (Some("array"), Some("integer" | "number")) => Some("List<Number>"),
            (Some(t @ ("String" | "Number" | "List<String>" | "List<Number>")), _) => Some(t),
            _ => None,
        };
        let mut entry = Map::new();
        if let Some(t) = translated {
            entry.insert("type".into(), json!(t));
        }
        if let Some(d) = default {
            entry.insert("default".into(), d.clone());
        }
        if entry.is_empty() {
            return Err(ExportError {
                message: format!(
                    "{path}/Pulumi.yaml: config `{key}` of `{project}` has type `{}` and no default, which a PKO \
                     Program cannot declare (it accepts String, Number, List<String> and List<Number>)",
                    kind.unwrap_or("?")
                ),
                help: "give it a default in the program, or export with --source git".into(),
            });
        }
        out.insert(key.clone(), Value::Object(entry));
    }
    Ok(out)
}

/// The teardown's wait for one Stack: at most TIMEOUT, then the way out said.
const TEARDOWN_GONE: &str = r#"timeout=${TIMEOUT:-1h}
gone() {
  kubectl delete stack.pulumi.com "$1" --namespace "$namespace" --ignore-not-found --wait=true --timeout="$timeout" && return
  echo "teardown.sh: Stack $1 is not gone after $timeout (TIMEOUT sets it): its destroy failed or cannot start." >&2
  echo "Why: kubectl describe stack.pulumi.com $1 --namespace $namespace. A Stack that never deployed holds nothing: let it go with" >&2
  echo "kubectl patch stack.pulumi.com $1 --namespace $namespace --type merge -p '{\"spec\":{\"destroyOnFinalize\":false}}', then run this again." >&2
  exit 1
}
"#;

/// The teardown script: PKO ignores prerequisites on deletion, so the Stacks are deleted one
/// at a time, dependents first, each waited for (with `destroyOnFinalize` its resources are
/// destroyed before the object goes).
pub(super) fn teardown(
    plan: &Plan<'_>,
    common: &Common,
    o: &PkoOptions,
    names: &Names,
    path: &str,
    format: Format,
) -> File {
    let mut s = String::from("#!/bin/sh\n");
    s.push_str(&yaml::comments(&header(
        plan,
        common,
        format,
        "Ordered teardown of the PKO Stacks",
    )));
    s.push_str(
        "#\n# PKO does not order deletion (prerequisites are ignored on delete): this deletes the\n\
         # Stacks one by one, dependents first, waiting for each to be gone.\nset -eu\n",
    );
    if o.destroy_on_finalize {
        s.push_str("# The Stacks destroy on finalize: deleting each destroys its cloud resources first.\n");
    } else {
        // Deleting a Stack that does not destroy on finalize forgets its resources and leaves
        // them running: not what a teardown is taken to do, so it takes a second word.
        s.push_str(
            "# The Stacks do NOT destroy on finalize (exported without --destroy-on-finalize): deleting\n\
             # them leaves every cloud resource running, forgotten by PKO. To destroy the resources,\n\
             # export again with --destroy-on-finalize and apply that first, or run `runner destroy`.\n\
             # To delete the Stacks and keep the resources anyway: KEEP_RESOURCES=yes ./teardown.sh\n\
             if [ \"${KEEP_RESOURCES:-}\" != yes ]; then\n\
             \x20 echo 'teardown.sh: these Stacks do not destroy on finalize: deleting them leaves every cloud resource running.' >&2\n\
             \x20 echo 'Export again with --destroy-on-finalize and apply it first (or run runner destroy); to delete the Stacks and keep the resources, run it with KEEP_RESOURCES=yes.' >&2\n\
             \x20 exit 1\n\
             fi\n",
        );
    }
    // Unquoted, so the default's single quotes are the shell's (inside double quotes they
    // would be characters of the value); an assignment neither splits nor globs.
    let _ = writeln!(s, "namespace=${{NAMESPACE:-{}}}", shell::quote(&o.namespace));
    // A Stack whose destroy fails, or that never resolved its program, is never gone: each
    // is waited for at most TIMEOUT, then the way out is said.
    s.push_str(TEARDOWN_GONE);
    for &i in plan.order.iter().rev() {
        let _ = writeln!(s, "gone {}", shell::quote(names.get(plan.name(i))));
    }
    if let ProgramSource::Program(_) = o.origin {
        for &i in plan.order.iter().rev() {
            let _ = writeln!(
                s,
                "kubectl delete program.pulumi.com {} --namespace \"$namespace\" --ignore-not-found",
                shell::quote(plan.name(i))
            );
        }
    }
    File {
        path: path.to_string(),
        text: s,
        executable: true,
    }
}
