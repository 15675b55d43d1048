//! GitLab CI: one pipeline file, a stage per layer (in run order), one job per project whose
//! `needs:` are exactly the plan's edges (`needs: []` for the first ones, so nothing waits for
//! a whole stage), each running `runner up --only X` in the runner's image; and a destroy
//! pipeline with the stages and edges reversed. The backend, the passphrase, the credentials
//! and the secrets are the project's masked CI/CD variables (GitLab puts them in every job's
//! environment); the stack file is written from the export before each job.
//!
//! The up jobs run on the default branch only, and never in a destroy pipeline: GitLab reads one
//! `.gitlab-ci.yml`, so a team includes both files.
//!
//! The destroy pipeline takes a human act twice over: its jobs exist only in a pipeline run
//! with the variable `RUNNER_DESTROY_STACK` naming the stack (a `rules:` entry on every job),
//! and even then nothing runs until someone plays the manual job `confirm-destroy`, which
//! every first job needs.

use serde_json::{Map, Value, json};

use super::names::{Names, Rule};
use super::{
    Common, Export, Format, Image, ci_secrets, header, runner_command, stack_file, stack_file_path, waits_in, yaml,
};
use crate::plan::{Operation, Plan};

/// The manual job every first job of the destroy pipeline needs, and its stage.
pub(crate) const CONFIRM_JOB: &str = "confirm-destroy";
const CONFIRM_STAGE: &str = "confirm";
/// The variable a destroy pipeline must be run with, naming the stack.
pub(crate) const DESTROY_VARIABLE: &str = "RUNNER_DESTROY_STACK";

/// What a GitLab CI export takes besides the plan and [`Common`]: the image the jobs run in.
pub(crate) type GitlabOptions = Image;

pub(crate) fn export(plan: &Plan<'_>, common: &Common, o: &GitlabOptions) -> Export {
    let names = Names::new(
        Rule::GitlabJob,
        plan.order.iter().map(|&i| plan.name(i)),
        &[CONFIRM_JOB],
    );
    let name = |p: &str| names.get(p).to_string();
    let files = super::up_and_destroy("runner-up.gitlab-ci.yml", "runner-destroy.gitlab-ci.yml", |op| {
        pipeline(plan, common, o, &name, op)
    });
    Export {
        files: files.into(),
        names: vec![("GitLab CI job", names)],
    }
}

fn pipeline(
    plan: &Plan<'_>,
    common: &Common,
    o: &GitlabOptions,
    name: &dyn Fn(&str) -> String,
    op: Operation,
) -> String {
    let destroy = op == Operation::Destroy;
    // The plan's layers in up order; a destroy's stages run them reversed.
    let mut stages: Vec<Value> = plan.layers().iter().map(|l| json!(l.as_str())).collect();
    if destroy {
        stages.reverse();
        stages.insert(0, json!(CONFIRM_STAGE));
    }
    // Stack names are letters, digits, `-`, `_` and `.`: nothing to escape in a quoted string.
    let named = format!("${DESTROY_VARIABLE} == \"{}\"", common.stack);
    let mut doc = Map::new();
    doc.insert("stages".into(), Value::Array(stages));
    // GitLab expands `$VAR` and `${VAR}` in a variable's value (a stack value `$CI_JOB_TOKEN`
    // would become the job's token): `expand: false` (GitLab's `variables:expand`, 15.6 and later)
    // makes the value raw, taken as written.
    doc.insert(
        "variables".into(),
        json!({"MARA_STACK_CONFIG": {"value": stack_file(common), "expand": false}}),
    );
    doc.insert(
        "default".into(),
        json!({
            "image": o.name,
            "before_script": [
                format!("mkdir -p {}", super::stack_file_dir(common)),
                format!("printf '%s' \"$MARA_STACK_CONFIG\" > {}", stack_file_path(common)),
            ],
        }),
    );
    if destroy {
        doc.insert(
            CONFIRM_JOB.into(),
            json!({
                "stage": CONFIRM_STAGE,
                "rules": [{"if": named, "when": "manual"}],
                "allow_failure": false,
                "before_script": [],
                "script": [format!(
                    "echo \"{DESTROY_VARIABLE} names the stack {}: destroying it, dependents first\"",
                    common.stack
                )],
            }),
        );
    }
    for (i, waits_for) in &waits_in(plan, op) {
        let project = plan.project(*i);
        let mut needs: Vec<Value> = waits_for.iter().map(|&w| json!(name(plan.name(w)))).collect();
        if destroy && needs.is_empty() {
            needs.push(json!(CONFIRM_JOB));
        }
        let mut job = Map::new();
        job.insert("stage".into(), json!(project.layer.as_str()));
        job.insert("needs".into(), Value::Array(needs));
        let rules = if destroy {
            json!([{"if": named}])
        } else {
            // Deploys from the default branch only (its pushes, schedules and manual runs), never
            // in a merge request's pipeline nor beside a destroy (GitLab reads one file: a team
            // includes both).
            json!([
                {"if": format!("${DESTROY_VARIABLE}"), "when": "never"},
                {"if": "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"},
            ])
        };
        job.insert("rules".into(), rules);
        job.insert(
            "resource_group".into(),
            json!(format!("pulumi-{}-{}", common.stack, project.name)),
        );
        job.insert(
            "script".into(),
            json!([runner_command(plan, common, op, &project.name)]),
        );
        doc.insert(name(&project.name), Value::Object(job));
    }
    let what = if destroy {
        "Destroys every project, dependents first"
    } else {
        "Deploys every project, a stage per layer, one job each with its needs"
    };
    let mut h = header(plan, common, Format::GitlabCi, what);
    if !destroy {
        h.push(format!(
            "Runs on the default branch only (pushes, schedules, Run pipeline), never in a merge request's \
             pipeline nor in one run with {DESTROY_VARIABLE}: include it beside runner-destroy.gitlab-ci.yml."
        ));
    }
    if destroy {
        h.push(format!(
            "Runs only in a pipeline run with the variable {DESTROY_VARIABLE}={} (Build > Pipelines > Run \
             pipeline), and only once someone plays its manual job {CONFIRM_JOB}.",
            common.stack
        ));
    }
    h.extend(o.needs());
    h.extend(super::docker_needs(
        plan,
        "a runner with a Docker daemon, or Docker-in-Docker: a docker:dind service and DOCKER_HOST=tcp://docker:2375",
    ));
    h.push("Masked CI/CD variables it reads:".into());
    h.push(format!("  PULUMI_BACKEND_URL, {}", ci_secrets(common, op).join(", ")));
    yaml::document(&h, &Value::Object(doc))
}
