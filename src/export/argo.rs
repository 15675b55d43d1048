//! Argo Workflows: a `Workflow` whose DAG has one task per project with `dependencies` equal to
//! the plan's edges, at most `--parallel` at once (`spec.parallelism`); each task checks the
//! repository out (a git input artifact) and runs `runner up --only X` in the runner's image,
//! the credentials and secrets from the Kubernetes Secrets the PKO and KEBAP exports use, as the
//! `ServiceAccount` of `rbac.yaml`. Argo's `failFast` default matches the runner's: after a
//! failure nothing new starts.
//!
//! The teardown is no Workflow but a `WorkflowTemplate`, which nothing runs by itself: it is
//! submitted by hand (`argo submit --from workflowtemplate/…`) with the parameter `confirm`
//! naming the stack, and its first task checks that parameter before any project is touched.

use serde_json::{Map, Value, json};

use super::names::{Names, Rule};
use super::{
    Common, Export, ExportError, File, Format, Image, Repo, Revision, base_name, config_secret, credentials_secret,
    header, secret_key, shell, stack_file, waits_in, yaml,
};
use crate::plan::{Operation, Plan};

const TEMPLATE: &str = "runner";
/// The first task of the teardown: the `confirm` parameter must name the stack.
const CONFIRM: &str = "confirm";

/// What an Argo Workflows export takes besides the plan and [`Common`].
#[derive(Debug, Clone)]
pub(crate) struct ArgoOptions {
    pub(crate) namespace: String,
    /// The repository the tasks check out.
    pub(crate) repo: Repo,
    /// At most this many tasks at once.
    pub(crate) parallel: usize,
    /// The image the tasks run in.
    pub(crate) image: Image,
}

pub(crate) fn export(plan: &Plan<'_>, common: &Common, o: &ArgoOptions) -> Result<Export, ExportError> {
    no_template(
        &common.backend,
        "PULUMI_BACKEND_URL",
        "set PULUMI_BACKEND_URL to the backend's URL without `{{`",
    )?;
    no_template(&o.image.name, "--image", "pass the image's name without `{{`")?;
    no_template(&o.repo.url, "the repository URL", "pass --repo URL without `{{`")?;
    no_template(
        o.repo.revision.as_str(),
        "the revision",
        "pass --branch NAME or --commit SHA without `{{`",
    )?;
    let names = Names::new(
        Rule::Dns1123(63),
        plan.order.iter().map(|&i| plan.name(i)),
        &[TEMPLATE, CONFIRM, Operation::Up.as_str(), Operation::Destroy.as_str()],
    );
    let mut files = vec![File::new("rbac.yaml", rbac(plan, common, &o.namespace))];
    files.extend(super::up_and_destroy(
        "workflow-up.yaml",
        "workflow-destroy.yaml",
        |op| workflow(plan, common, o, &names, op),
    ));
    Ok(Export {
        files,
        names: vec![("Argo Workflows task", names)],
    })
}

/// Argo substitutes `{{…}}` tags (`{{=…}}` expressions too) anywhere in a template, and more than
/// once: the controller's `SubstituteParams` replaces the globals, then the inputs, and the pod
/// is substituted once more. Its documentation gives no escape, and the one trick (`{{='{{'}}`,
/// an expression whose value is `{{`) is undone by the first pass and expanded by the next. So
/// the text Argo sees holds no `{{` of ours: a stack file that would is written as JSON (which
/// YAML, and so Pulumi and the runner, read the same: `\u007b` is `{`), each `{{` in its
/// strings escaped (pretty JSON has no `{{` outside strings: a `{` there ends its line).
fn argo_stack_file(common: &Common) -> String {
    let text = stack_file(common);
    if !text.contains("{{") {
        return text;
    }
    let json = serde_json::to_string_pretty(&json!({ "config": common.config })).expect("JSON values serialize");
    format!("{}\n", json.replace("{{", "\\u007b\\u007b"))
}

/// A value the Workflow holds as it is (not through the stack file): one holding `{{` would be
/// an Argo template, so it is refused, naming where it came from.
fn no_template(value: &str, what: &str, fix: &str) -> Result<(), ExportError> {
    if value.contains("{{") {
        return Err(ExportError {
            message: format!(
                "{what} {value:?} holds `{{{{`, which Argo Workflows reads as a template tag and replaces"
            ),
            help: fix.into(),
        });
    }
    Ok(())
}

/// The `ServiceAccount` the tasks run as, and what Argo's executor needs of it (it records each
/// task's result as a `WorkflowTaskResult`).
fn rbac(plan: &Plan<'_>, common: &Common, namespace: &str) -> String {
    let sa = super::pko::service_account(common);
    let role = format!("{sa}-executor");
    let objects = vec![
        super::pko::service_account_object(&sa, namespace),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": role, "namespace": namespace},
            "rules": [{
                "apiGroups": ["argoproj.io"],
                "resources": ["workflowtaskresults"],
                "verbs": ["create", "patch"],
            }],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": role, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}],
        }),
    ];
    let mut h = header(plan, common, Format::ArgoWorkflows, "The identity the tasks run as");
    h.push(format!(
        "Apply it once, after `kubectl create namespace {namespace}`: kubectl apply -f rbac.yaml"
    ));
    yaml::documents(&h, &objects)
}

/// The teardown's first task: it fails unless the `confirm` parameter is the stack's name (read
/// from the environment, never pasted into the script).
fn confirm_template(common: &Common, image: &str) -> Value {
    json!({
        "name": CONFIRM,
        "container": {
            "name": "main",
            "image": image,
            "command": ["sh", "-c"],
            "args": [format!(
                "if [ \"$CONFIRM\" != {stack} ]; then echo \"the parameter confirm is '$CONFIRM', not {stack}: \
                 nothing was destroyed\" >&2; exit 1; fi\n",
                stack = shell::quote(&common.stack)
            )],
            "env": [{"name": "CONFIRM", "value": "{{workflow.parameters.confirm}}"}],
        },
    })
}

fn env(common: &Common) -> Vec<Value> {
    let from = |secret: String, key: String| json!({"secretKeyRef": {"name": secret, "key": key}});
    let mut env = vec![json!({"name": "PULUMI_BACKEND_URL", "value": common.backend})];
    for c in &common.credentials {
        env.push(json!({"name": c, "valueFrom": from(credentials_secret(common), c.clone())}));
    }
    let mut seen: Vec<&str> = Vec::new();
    for s in common.config_secrets.iter().chain(&common.store_secrets) {
        if !seen.contains(&s.env.as_str()) {
            seen.push(&s.env);
            env.push(json!({"name": s.env, "valueFrom": from(config_secret(common), secret_key(&s.key))}));
        }
    }
    env.push(json!({"name": "CI", "value": "true"}));
    env.push(json!({"name": "MARA_STACK_CONFIG", "value": argo_stack_file(common)}));
    env
}

/// What a Workflow's head says: what it does, how it is started, what it needs.
fn workflow_header(plan: &Plan<'_>, common: &Common, o: &ArgoOptions, destroy: bool) -> Vec<String> {
    let what = if destroy {
        "Destroys every project, dependents first"
    } else {
        "Deploys every project, one DAG task each, needs first"
    };
    let mut h = header(plan, common, Format::ArgoWorkflows, what);
    if destroy {
        h.push(format!(
            "A WorkflowTemplate: nothing runs it by itself. Apply it (kubectl apply -f workflow-destroy.yaml), then \
             to tear down: argo submit -n {} --from workflowtemplate/{}-destroy -p confirm={}",
            o.namespace,
            base_name(common),
            common.stack
        ));
    } else {
        h.push(format!(
            "Submit with `argo submit -n {} workflow-up.yaml`.",
            o.namespace
        ));
    }
    h.extend(super::cluster_needs(common, &o.namespace, true));
    h.extend(o.image.needs());
    h.extend(super::docker_needs(
        plan,
        "a Docker daemon for the task: a docker:dind sidecar and DOCKER_HOST=tcp://localhost:2375 in the runner template",
    ));
    h
}

fn workflow(plan: &Plan<'_>, common: &Common, o: &ArgoOptions, names: &Names, op: Operation) -> String {
    let repo = &o.repo;
    let destroy = op == Operation::Destroy;
    let mut tasks: Vec<Value> = Vec::new();
    if destroy {
        tasks.push(json!({"name": CONFIRM, "template": CONFIRM}));
    }
    tasks.extend(waits_in(plan, op).iter().map(|(i, waits_for)| {
        let mut task = Map::new();
        task.insert("name".into(), json!(names.get(plan.name(*i))));
        task.insert("template".into(), json!(TEMPLATE));
        let mut deps: Vec<Value> = waits_for.iter().map(|&w| json!(names.get(plan.name(w)))).collect();
        if destroy && deps.is_empty() {
            deps.push(json!(CONFIRM));
        }
        if !deps.is_empty() {
            task.insert("dependencies".into(), Value::Array(deps));
        }
        task.insert(
            "arguments".into(),
            json!({"parameters": [{"name": "project", "value": plan.name(*i)}]}),
        );
        Value::Object(task)
    }));
    let mut git = Map::new();
    git.insert("repo".into(), json!(repo.url));
    git.insert("revision".into(), json!(repo.revision.as_str()));
    if matches!(repo.revision, Revision::Branch(_)) {
        git.insert("singleBranch".into(), json!(true));
        git.insert("branch".into(), json!(repo.revision.as_str()));
    }
    let workdir = format!("/src/{}", repo.prefix).trim_end_matches('/').to_string();
    let script = format!(
        "set -eu\nmkdir -p config/pulumi\nprintf '%s' \"$MARA_STACK_CONFIG\" > {}\n\
         runner {} --only \"$PROJECT\" -p {} -s {} --non-interactive --yes\n",
        // The task runs in the workspace (`workingDir`): the path from there.
        shell::quote(&format!("config/pulumi/Pulumi.{}.yaml", common.stack)),
        op.as_str(),
        shell::quote(&plan.provider.name),
        shell::quote(&common.stack)
    );
    let mut env = env(common);
    env.push(json!({"name": "PROJECT", "value": "{{inputs.parameters.project}}"}));
    let runner = json!({
        "name": TEMPLATE,
        "inputs": {
            "parameters": [{"name": "project"}],
            "artifacts": [{"name": "source", "path": "/src", "git": git}],
        },
        "container": {
            "name": "main",
            "image": o.image.name,
            "workingDir": workdir,
            "command": ["sh", "-c"],
            "args": [script],
            "env": env,
        },
    });
    let mut templates = vec![json!({"name": op.as_str(), "dag": {"tasks": tasks}}), runner];
    let mut spec = Map::new();
    spec.insert("entrypoint".into(), json!(op.as_str()));
    if destroy {
        // The parameter has no value: `argo submit` refuses to start the teardown without one.
        spec.insert("arguments".into(), json!({"parameters": [{"name": CONFIRM}]}));
        templates.push(confirm_template(common, &o.image.name));
    }
    spec.insert("parallelism".into(), json!(o.parallel));
    spec.insert("serviceAccountName".into(), json!(super::pko::service_account(common)));
    spec.insert("templates".into(), Value::Array(templates));
    let mut metadata = Map::new();
    if destroy {
        metadata.insert("name".into(), json!(format!("{}-destroy", base_name(common))));
    } else {
        metadata.insert(
            "generateName".into(),
            json!(format!("{}-{}-", base_name(common), op.as_str())),
        );
    }
    metadata.insert("namespace".into(), json!(o.namespace));
    let doc = json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": if destroy { "WorkflowTemplate" } else { "Workflow" },
        "metadata": metadata,
        "spec": spec,
    });
    let h = workflow_header(plan, common, o, destroy);
    yaml::document(&h, &doc)
}
