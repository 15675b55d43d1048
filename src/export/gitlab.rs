//! GitLab CI: one pipeline file, a stage per layer (in run order), one job per project whose
//! `needs:` are exactly the plan's edges (`needs: []` for the first ones, so nothing waits for
//! a whole stage), each running `runner up --only X` in the runner's image; and a destroy
//! pipeline with the stages and edges reversed. The backend, the passphrase, the credentials
//! and the secrets are the project's masked CI/CD variables (GitLab puts them in every job's
//! environment); the stack file is written from the export before each job.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::names::{Names, Rule};
use super::{
    Export, File, Format, Input, ci_secrets, dependents, header, runner_command, stack_file, stack_file_path, waits,
    yaml,
};
use crate::graph::Layer;
use crate::plan::Plan;

pub(super) fn export(plan: &Plan<'_>, input: &Input) -> Export {
    let names = Names::new(Rule::GitlabJob, plan.order.iter().map(|&i| plan.name(i)), &[]);
    let name = |p: &str| names.get(p).to_string();
    let files = vec![
        File::new(
            "runner-up.gitlab-ci.yml",
            pipeline(plan, input, &name, "up", &waits(plan)),
        ),
        File::new(
            "runner-destroy.gitlab-ci.yml",
            pipeline(plan, input, &name, "destroy", &dependents(plan)),
        ),
    ];
    Export {
        files,
        names: vec![("GitLab CI job", names)],
    }
}

fn pipeline(
    plan: &Plan<'_>,
    input: &Input,
    name: &dyn Fn(&str) -> String,
    op: &str,
    order: &[(usize, Vec<usize>)],
) -> String {
    let mut layers: Vec<Layer> = plan
        .order
        .iter()
        .map(|&i| plan.project(i).layer)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if op == "destroy" {
        layers.reverse();
    }
    let mut doc = Map::new();
    doc.insert(
        "stages".into(),
        Value::Array(layers.iter().map(|l| json!(l.as_str())).collect()),
    );
    // GitLab expands `$VAR` and `${VAR}` in a variable's value (a stack value `$CI_JOB_TOKEN`
    // would become the job's token): `expand: false` (GitLab's `variables:expand`, 15.6 and later)
    // makes the value raw, taken as written.
    doc.insert(
        "variables".into(),
        json!({"MARA_STACK_CONFIG": {"value": stack_file(input), "expand": false}}),
    );
    doc.insert(
        "default".into(),
        json!({
            "image": input.image,
            "before_script": [
                "mkdir -p config/pulumi",
                format!("printf '%s' \"$MARA_STACK_CONFIG\" > {}", stack_file_path(input)),
            ],
        }),
    );
    for (i, waits_for) in order {
        let project = plan.project(*i);
        let needs: Vec<Value> = waits_for.iter().map(|&w| json!(name(plan.name(w)))).collect();
        doc.insert(
            name(&project.name),
            json!({
                "stage": project.layer.as_str(),
                "needs": needs,
                "resource_group": format!("pulumi-{}-{}", input.stack, project.name),
                "script": [runner_command(plan, input, op, &project.name)],
            }),
        );
    }
    let what = if op == "up" {
        "Deploys every project, a stage per layer, one job each with its needs"
    } else {
        "Destroys every project, dependents first"
    };
    let mut h = header(plan, input, Format::GitlabCi, what);
    h.push(format!(
        "The image must hold `runner` and `pulumi` {}. Masked CI/CD variables it reads:",
        input.pulumi_version
    ));
    h.push(format!("  PULUMI_BACKEND_URL, {}", ci_secrets(input).join(", ")));
    yaml::document(&h, &Value::Object(doc))
}
