//! Hooks that run after a project's `up` succeeded: built-in ones (Rust code) and scripts under
//! `scripts/`. A script gets the project's outputs three ways: a JSON file with secret values
//! redacted (`RUNNER_OUTPUTS_FILE`), the full JSON on standard input, and one environment
//! variable per output (`RUNNER_OUTPUT_<NAME>`); secrets only ever travel through the pipe and
//! the environment, never through a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::exec::{Level, Outputs};
use crate::provider::Project;

/// Hook names the runner implements itself; any other hook is a script under `scripts/`.
pub const BUILTIN_HOOKS: &[&str] = &["kubeconfig-merge"];

pub struct Context<'a> {
    pub root: &'a Path,
    pub provider: &'a str,
    pub stack: &'a str,
    pub project: &'a Project,
    pub outputs: &'a Outputs,
    pub upstream: &'a BTreeMap<String, Outputs>,
    pub scratch: &'a Path,
}

/// Runs a built-in hook; returns a message for the user.
pub fn builtin(name: &str, ctx: &Context<'_>) -> Result<(Level, String), String> {
    match name {
        "kubeconfig-merge" => {
            let has = ctx.outputs.values.contains_key("kubeconfig");
            Ok((
                Level::Warning,
                if has {
                    format!(
                        "{}: this runner version does not merge kubeconfigs yet; get it with `pulumi stack output kubeconfig --show-secrets --stack {}` in {}",
                        ctx.project.name, ctx.stack, ctx.project.path
                    )
                } else {
                    format!("{}: has no `kubeconfig` output to merge", ctx.project.name)
                },
            ))
        }
        other => Err(format!("unknown built-in hook `{other}`")),
    }
}

/// A hook script ready to start.
pub struct Prepared {
    pub program: PathBuf,
    pub env: BTreeMap<String, String>,
    pub stdin: String,
    /// The redacted outputs file, to remove once the hook ended.
    pub outputs_file: PathBuf,
}

/// `RUNNER_OUTPUT_<NAME>`: upper case, anything but letters and digits as `_`.
pub fn env_name(output: &str) -> String {
    let mut s: String = output
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    s.insert_str(0, "RUNNER_OUTPUT_");
    s
}

pub fn script(path: &str, ctx: &Context<'_>) -> Result<Prepared, String> {
    let program = ctx.root.join(path);
    if !program.is_file() {
        return Err(format!("{} does not exist", program.display()));
    }
    std::fs::create_dir_all(ctx.scratch).map_err(|e| e.to_string())?;
    let redacted = json!({
        "project": ctx.project.name,
        "provider": ctx.provider,
        "stack": ctx.stack,
        "outputs": Value::Object(ctx.outputs.redacted()),
        "secret_outputs": ctx.outputs.secret,
    });
    let outputs_file = ctx.scratch.join(format!("{}-outputs.json", ctx.project.name));
    std::fs::write(
        &outputs_file,
        serde_json::to_string_pretty(&redacted).expect("JSON") + "\n",
    )
    .map_err(|e| e.to_string())?;
    let full = json!({
        "project": ctx.project.name,
        "provider": ctx.provider,
        "stack": ctx.stack,
        "outputs": Value::Object(ctx.outputs.values.clone()),
        "upstream": ctx.upstream.iter().map(|(k, o)| (k.clone(), Value::Object(o.values.clone()))).collect::<serde_json::Map<_, _>>(),
    });
    let mut env = BTreeMap::from([
        ("RUNNER_PROJECT".to_string(), ctx.project.name.clone()),
        ("RUNNER_PROJECT_PATH".to_string(), ctx.project.path.clone()),
        ("RUNNER_PROVIDER".to_string(), ctx.provider.to_string()),
        ("RUNNER_STACK".to_string(), ctx.stack.to_string()),
        ("RUNNER_WORKSPACE".to_string(), ctx.root.display().to_string()),
        ("RUNNER_OUTPUTS_FILE".to_string(), outputs_file.display().to_string()),
    ]);
    for (k, v) in &ctx.outputs.values {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        env.insert(env_name(k), text);
    }
    Ok(Prepared {
        program,
        env,
        stdin: serde_json::to_string(&full).expect("JSON"),
        outputs_file,
    })
}
