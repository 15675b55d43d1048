//! GitHub Actions: an `up` workflow with one job per project whose `needs:` are exactly the
//! plan's edges (data and ordering), each running `runner up --only X`, and a `destroy`
//! workflow with the edges reversed (`runner destroy --only X`, dependents first). One job
//! builds the runner for all; the backend, the passphrase, the credentials and the secrets come
//! from `${{ secrets.* }}`; both workflows share one concurrency group per stack, so an `up`
//! and a `destroy` of the same stack never overlap.

use serde_json::{Map, json};

use super::names::{Names, Rule};
use super::{
    Export, File, Format, Input, ci_secrets, dependents, header, runner_command, stack_file, stack_file_path, waits,
    yaml,
};
use crate::plan::Plan;

/// The job that builds the runner once for every other job.
pub(crate) const BUILD_JOB: &str = "runner";
const BIN_DIR: &str = ".runner-bin";

pub(super) fn export(plan: &Plan<'_>, input: &Input) -> Export {
    let names = Names::new(Rule::GithubJob, plan.order.iter().map(|&i| plan.name(i)), &[BUILD_JOB]);
    let files = vec![
        File::new(
            "workflows/runner-up.yml",
            workflow(plan, input, &names, "up", &waits(plan)),
        ),
        File::new(
            "workflows/runner-destroy.yml",
            workflow(plan, input, &names, "destroy", &dependents(plan)),
        ),
    ];
    Export {
        files,
        names: vec![("GitHub Actions job", names)],
    }
}

/// `value` as GitHub reads it back literally. GitHub evaluates every `${{ … }}` in a workflow's
/// strings (a stack value `${{ secrets.X }}` would put a repository secret into the stack
/// configuration), and its expression syntax has no escape for `${{` itself: the rule followed is
/// that of its expression literals ("About expressions", Literals: a string is single-quoted,
/// `''` for a quote), so each `${{` becomes `${{ '${{' }}`, an expression whose value is the
/// string `${{`. What follows it stays text (`}}` outside an expression is plain text).
pub(crate) fn literal(value: &str) -> String {
    value.replace("${{", "${{ '${{' }}")
}

fn workflow(plan: &Plan<'_>, input: &Input, names: &Names, op: &str, order: &[(usize, Vec<usize>)]) -> String {
    let mut env = Map::new();
    env.insert("PULUMI_BACKEND_URL".into(), json!("${{ secrets.PULUMI_BACKEND_URL }}"));
    for name in ci_secrets(input) {
        env.insert(name.clone(), json!(format!("${{{{ secrets.{name} }}}}")));
    }
    env.insert("MARA_STACK_CONFIG".into(), json!(literal(&stack_file(input))));

    let mut jobs = Map::new();
    jobs.insert(
        BUILD_JOB.into(),
        json!({
            "name": "build the runner",
            "runs-on": "ubuntu-latest",
            "steps": [
                {"uses": "actions/checkout@v4"},
                {"run": "cargo build --release --locked --bin runner"},
                {"uses": "actions/upload-artifact@v4", "with": {"name": "runner", "path": "target/release/runner"}},
            ],
        }),
    );
    let config = stack_file_path(input);
    for (i, waits_for) in order {
        let project = plan.name(*i);
        let mut needs = vec![json!(BUILD_JOB)];
        needs.extend(waits_for.iter().map(|&w| json!(names.get(plan.name(w)))));
        let command = runner_command(plan, input, op, project);
        jobs.insert(
            names.get(project).to_string(),
            json!({
                "name": project,
                "needs": needs,
                "runs-on": "ubuntu-latest",
                "steps": [
                    {"uses": "actions/checkout@v4"},
                    {"uses": "actions/download-artifact@v4", "with": {"name": "runner", "path": BIN_DIR}},
                    {"uses": "pulumi/actions@v6", "with": {"pulumi-version": literal(&input.pulumi_version)}},
                    {
                        "name": "stack configuration",
                        "run": format!(
                            "mkdir -p config/pulumi\nprintf '%s' \"$MARA_STACK_CONFIG\" > {config}\n\
                             chmod +x {BIN_DIR}/runner\necho \"$PWD/{BIN_DIR}\" >> \"$GITHUB_PATH\"\n"
                        ),
                    },
                    {"name": command, "run": command},
                ],
            }),
        );
    }
    let doc = json!({
        "name": format!("runner {op}: {} {}", plan.provider.name, input.stack),
        "on": {"workflow_dispatch": {}},
        "permissions": {"contents": "read"},
        "concurrency": {"group": format!("pulumi-stack-{}", input.stack), "cancel-in-progress": false},
        "env": env,
        "jobs": jobs,
    });
    let what = if op == "up" {
        "Deploys every project, one job each, needs first"
    } else {
        "Destroys every project, one job each, dependents first"
    };
    let mut h = header(plan, input, Format::GithubActions, what);
    h.push("Copy into .github/workflows/. Repository secrets it reads:".into());
    h.push(format!("  PULUMI_BACKEND_URL, {}", ci_secrets(input).join(", ")));
    yaml::document(&h, &doc)
}
