//! Hooks that run after a project's `up` succeeded: built-in ones (Rust code) and scripts under
//! `scripts/`. A script gets the project's outputs three ways: a JSON file with secret values
//! redacted (`RUNNER_OUTPUTS_FILE`), the full JSON on standard input, and one environment
//! variable per output (`RUNNER_OUTPUT_<NAME>`); secrets only ever travel through the pipe and
//! the environment, never through a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::exec::{Level, Outputs};
use crate::kubeconfig;
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
    /// The environment overlay (environment file and runner defaults).
    pub env: &'a BTreeMap<String, String>,
    /// `.runner/<stack>`: where hooks keep what they must remember.
    pub state_dir: &'a Path,
    pub scratch: &'a Path,
}

/// Runs a built-in hook; returns a message for the user.
pub fn builtin(name: &str, ctx: &Context<'_>) -> Result<(Level, String), String> {
    match name {
        "kubeconfig-merge" => merge_kubeconfig(ctx).map(|m| (Level::Info, m)),
        other => Err(format!("unknown built-in hook `{other}`")),
    }
}

/// Where the names merged for a project are kept, for `destroy --prune-kubeconfig`.
pub fn merge_record(scratch_root: &Path, project: &str) -> PathBuf {
    scratch_root.join("kubeconfig").join(format!("{project}.json"))
}

/// `kubeconfig-merge`: the project's `kubeconfig` output into the user's kubeconfig.
fn merge_kubeconfig(ctx: &Context<'_>) -> Result<String, String> {
    let Some(value) = ctx.outputs.values.get("kubeconfig") else {
        return Err(format!(
            "{} has no `kubeconfig` output to merge; export one, or remove the hook from its provider file",
            ctx.project.name
        ));
    };
    let text = value.as_str().map_or_else(|| value.to_string(), str::to_string);
    let incoming = kubeconfig::parse_input(&text).map_err(|e| e.to_string())?;
    // KUBECONFIG from the environment file wins over the process environment, as for pulumi.
    let env_kubeconfig = ctx
        .env
        .get("KUBECONFIG")
        .cloned()
        .or_else(|| std::env::var("KUBECONFIG").ok());
    let home = ctx
        .env
        .get("HOME")
        .cloned()
        .or_else(|| std::env::var("HOME").ok())
        .ok_or("HOME is not set, so ~/.kube/config has no place")?;
    let paths = kubeconfig::candidate_paths(env_kubeconfig.as_deref(), Path::new(&home));
    let merged = kubeconfig::merge(&incoming, &paths).map_err(|e| e.to_string())?;
    let record = json!({
        "file": merged.file,
        "clusters": merged.names.0,
        "users": merged.names.1,
        "contexts": merged.names.2,
    });
    let path = merge_record(ctx.state_dir, &ctx.project.name);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(&path, serde_json::to_string_pretty(&record).expect("JSON"));
    Ok(merged.message())
}

/// `destroy --prune-kubeconfig`: removes what `kubeconfig-merge` added for the project.
pub fn prune_kubeconfig(state_dir: &Path, project: &str) -> Result<Option<String>, String> {
    let path = merge_record(state_dir, project);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let record: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let list = |k: &str| -> Vec<String> {
        record[k]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let file = PathBuf::from(record["file"].as_str().unwrap_or_default());
    let changed =
        kubeconfig::prune(&file, &list("clusters"), &list("users"), &list("contexts")).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&path);
    Ok(changed.then(|| {
        format!(
            "Removed context {} from {}",
            list("contexts").join(", "),
            file.display()
        )
    }))
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
    crate::config::questions::env_name("RUNNER_OUTPUT_", output)
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
