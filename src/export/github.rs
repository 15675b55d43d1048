//! GitHub Actions: an `up` workflow with one job per project whose `needs:` are exactly the
//! plan's edges (data and ordering), each running `runner up --only X`, and a `destroy`
//! workflow with the edges reversed (`runner destroy --only X`, dependents first). One job
//! builds the runner for all; the backend, the passphrase, the credentials and the secrets come
//! from `${{ secrets.* }}`; both workflows share one concurrency group per stack, so an `up`
//! and a `destroy` of the same stack never overlap.
//!
//! The destroy workflow takes a human act: it is started by hand only (`workflow_dispatch`),
//! with an input that must be the stack's name, checked by its first job (`confirm`), which
//! every other job needs; that job runs in the environment `destroy-<stack>`, so the
//! repository's protection rules for it (required reviewers) hold the teardown too.

use serde_json::{Map, json};

use super::names::{Names, Rule};
use super::{
    Common, Export, Format, ci_secrets, header, runner_command, shell, stack_file, stack_file_path, waits_in, yaml,
};
use crate::plan::{Operation, Plan};

/// The job that builds the runner once for every other job.
pub(crate) const BUILD_JOB: &str = "runner";
/// The first job of the destroy workflow: the input must name the stack.
pub(crate) const CONFIRM_JOB: &str = "confirm";
const BIN_DIR: &str = ".runner-bin";

/// What a GitHub Actions export takes besides the plan and [`Common`].
#[derive(Debug, Clone)]
pub(crate) struct GithubOptions {
    /// The Pulumi CLI version the jobs install.
    pub(crate) pulumi_version: String,
}

pub(crate) fn export(plan: &Plan<'_>, common: &Common, o: &GithubOptions) -> Export {
    let names = Names::new(
        Rule::GithubJob,
        plan.order.iter().map(|&i| plan.name(i)),
        &[BUILD_JOB, CONFIRM_JOB],
    );
    let files = super::up_and_destroy("workflows/runner-up.yml", "workflows/runner-destroy.yml", |op| {
        workflow(plan, common, o, &names, op)
    });
    Export {
        files: files.into(),
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

/// The destroy workflow's trigger (its input naming the stack) and its first job, which fails
/// unless the input is the stack's name; it runs in `environment`, for protection rules.
fn confirm(common: &Common, environment: &str) -> (serde_json::Value, serde_json::Value) {
    let trigger = json!({"workflow_dispatch": {"inputs": {"stack": {
        "description": format!("The stack to destroy: type {} to confirm", common.stack),
        "required": true,
        "type": "string",
    }}}});
    // The input reaches the shell through the environment, never pasted into the script.
    let check = format!(
        "if [ \"$CONFIRM\" != {stack} ]; then\n  echo \"::error title=not confirmed::the input stack is \
         '$CONFIRM', not {stack}: nothing was destroyed\"\n  exit 1\nfi\n",
        stack = shell::quote(&common.stack)
    );
    let job = json!({
        "name": format!("confirm: the input names the stack {}", common.stack),
        "runs-on": "ubuntu-latest",
        "environment": environment,
        "steps": [{"name": "the input must be the stack's name", "env": {"CONFIRM": "${{ inputs.stack }}"}, "run": check}],
    });
    (trigger, job)
}

/// A project job's `timeout-minutes`: its own `timeout` when it declares one, else three times
/// its estimate (at least 30 minutes), plus 10 for the job's set-up: a hung cloud call ends the
/// job long before GitHub's default of six hours.
fn timeout_minutes(project: &crate::provider::Project) -> u64 {
    let run = match (project.timeout, project.estimate) {
        (Some(t), _) => t.as_secs().div_ceil(60),
        (None, Some(secs)) => (secs * 3).div_ceil(60).max(30),
        (None, None) => 60,
    };
    run + 10
}

fn workflow(plan: &Plan<'_>, common: &Common, o: &GithubOptions, names: &Names, op: Operation) -> String {
    let mut env = Map::new();
    env.insert("PULUMI_BACKEND_URL".into(), json!("${{ secrets.PULUMI_BACKEND_URL }}"));
    for name in ci_secrets(common, op) {
        env.insert(name.clone(), json!(format!("${{{{ secrets.{name} }}}}")));
    }
    env.insert("MARA_STACK_CONFIG".into(), json!(literal(&stack_file(common))));

    let destroy = op == Operation::Destroy;
    let environment = format!("destroy-{}", common.stack);
    let mut jobs = Map::new();
    let mut trigger = json!({"workflow_dispatch": {}});
    if destroy {
        let (on, job) = confirm(common, &environment);
        trigger = on;
        jobs.insert(CONFIRM_JOB.into(), job);
    }
    let mut build = Map::new();
    build.insert("name".into(), json!("build the runner"));
    if destroy {
        build.insert("needs".into(), json!([CONFIRM_JOB]));
    }
    build.insert("runs-on".into(), json!("ubuntu-latest"));
    build.insert(
        "steps".into(),
        json!([
            {"uses": "actions/checkout@v4"},
            // The crates and the build of the last run with the same lock file: minutes saved
            // on every run of the workflow.
            {"uses": "actions/cache@v4", "with": {
                "path": "~/.cargo/registry\n~/.cargo/git\ntarget\n",
                "key": "runner-${{ runner.os }}-${{ hashFiles('Cargo.lock') }}",
            }},
            {"run": "cargo build --release --locked --bin runner"},
            {"uses": "actions/upload-artifact@v4", "with": {"name": "runner", "path": "target/release/runner"}},
        ]),
    );
    jobs.insert(BUILD_JOB.into(), serde_json::Value::Object(build));
    let config = stack_file_path(common);
    let config_dir = super::stack_file_dir(common);
    for (i, waits_for) in &waits_in(plan, op) {
        let project = plan.name(*i);
        let mut needs = vec![json!(BUILD_JOB)];
        needs.extend(waits_for.iter().map(|&w| json!(names.get(plan.name(w)))));
        let command = runner_command(plan, common, op, project);
        jobs.insert(
            names.get(project).to_string(),
            json!({
                "name": project,
                "needs": needs,
                "runs-on": "ubuntu-latest",
                "timeout-minutes": timeout_minutes(plan.project(*i)),
                "steps": [
                    {"uses": "actions/checkout@v4"},
                    {"uses": "actions/download-artifact@v4", "with": {"name": "runner", "path": BIN_DIR}},
                    {"uses": "pulumi/actions@v6", "with": {"pulumi-version": literal(&o.pulumi_version)}},
                    {
                        "name": "stack configuration",
                        "run": format!(
                            "mkdir -p {config_dir}\nprintf '%s' \"$MARA_STACK_CONFIG\" > {config}\n\
                             chmod +x {BIN_DIR}/runner\necho \"$PWD/{BIN_DIR}\" >> \"$GITHUB_PATH\"\n"
                        ),
                    },
                    {"name": command, "run": command},
                ],
            }),
        );
    }
    let doc = json!({
        "name": format!("runner {}: {} {}", op.as_str(), plan.provider.name, common.stack),
        "on": trigger,
        "permissions": {"contents": "read"},
        "concurrency": {"group": format!("pulumi-stack-{}", common.stack), "cancel-in-progress": false},
        "env": env,
        "jobs": jobs,
    });
    let what = if destroy {
        "Destroys every project, one job each, dependents first"
    } else {
        "Deploys every project, one job each, needs first"
    };
    let mut h = header(plan, common, Format::GithubActions, what);
    if destroy {
        h.push(format!(
            "Started by hand only (Actions > Run workflow), with the input stack={}; its first job runs in the \
             environment {environment}: give it required reviewers (Settings > Environments).",
            common.stack
        ));
    }
    h.extend(super::docker_needs(
        plan,
        "ubuntu-latest has both; a self-hosted runner needs them installed",
    ));
    h.push("Copy into .github/workflows/. Repository secrets it reads:".into());
    h.push(format!("  PULUMI_BACKEND_URL, {}", ci_secrets(common, op).join(", ")));
    yaml::document(&h, &doc)
}
