//! Hooks that run after a project's `up` succeeded: built-in ones (Rust code) and scripts under
//! `scripts/`. A script gets the project's outputs three ways: a JSON file with secret values
//! redacted (`MARA_OUTPUTS_FILE`), the full JSON on standard input, and one environment
//! variable per output (`MARA_OUTPUT_<NAME>`); secrets only ever travel through the pipe and
//! the environment, never through a file. The variables' old names (`RUNNER_…`) are set too for
//! one more release, but never over a variable the environment has (GitHub Actions sets
//! `RUNNER_WORKSPACE`, `RUNNER_TEMP`… for every step: a hook sees the CI's own unchanged).

pub(crate) mod kubeconfig;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::env::Env;
use crate::config::{OUTPUT_PREFIX, env_name, old_name};
use crate::exec::{Level, Outputs};
use crate::fs::{NewFile, write_atomic};
use crate::provider::{Builtin, Project};
use crate::workspace::RunDir;

/// What a hook is given: the project whose `up` succeeded, its outputs and its upstream
/// projects', and where it runs.
pub(crate) struct AfterUp<'a> {
    pub(crate) root: &'a Path,
    pub(crate) provider: &'a str,
    pub(crate) stack: &'a str,
    pub(crate) project: &'a Project,
    pub(crate) outputs: &'a Outputs,
    pub(crate) upstream: &'a BTreeMap<String, Outputs>,
    pub(crate) env: &'a Env,
    /// Where hooks keep what they must remember, and their scratch files.
    pub(crate) run_dir: &'a RunDir,
}

/// Why a hook could not run or do its work (the project fails with it as the cause).
#[derive(Debug, thiserror::Error)]
pub(crate) enum HookError {
    #[error("{project} has no `kubeconfig` output to merge; export one, or remove the hook from its provider file")]
    NoKubeconfigOutput { project: String },
    #[error("HOME is not set, so ~/.kube/config has no place")]
    NoHome,
    #[error(transparent)]
    Kubeconfig(#[from] kubeconfig::MergeError),
    #[error("{}: {source}", path.display())]
    MergeRecord { path: PathBuf, source: serde_json::Error },
    #[error("{} does not exist", path.display())]
    NoScript { path: PathBuf },
    #[error("cannot write its input under {}: {source}", dir.display())]
    Input { dir: PathBuf, source: std::io::Error },
}

/// Runs a built-in hook; returns a message for the user.
pub(crate) fn builtin(hook: Builtin, ctx: &AfterUp<'_>) -> Result<(Level, String), HookError> {
    match hook {
        Builtin::KubeconfigMerge => merge_kubeconfig(ctx).map(|m| (Level::Info, m)),
    }
}

/// `kubeconfig-merge`: the project's `kubeconfig` output into the user's kubeconfig.
fn merge_kubeconfig(ctx: &AfterUp<'_>) -> Result<String, HookError> {
    let Some(value) = ctx.outputs.values.get("kubeconfig") else {
        return Err(HookError::NoKubeconfigOutput {
            project: ctx.project.name.clone(),
        });
    };
    let text = value.as_str().map_or_else(|| value.to_string(), str::to_string);
    let incoming = kubeconfig::parse_input(&text)?;
    // KUBECONFIG from the environment file wins over the process environment, as for pulumi.
    let env_kubeconfig = ctx.env.get("KUBECONFIG");
    // In a CI job without KUBECONFIG, not the home's ~/.kube/config: a shell executor's home
    // is a person's or a machine's and keeps the cluster's credentials after the job.
    let in_job = env_kubeconfig.is_none() && crate::settings::ci_says(ctx.env.get("CI").as_deref());
    let paths = if in_job {
        vec![ctx.run_dir.ci_kubeconfig()]
    } else {
        let home = ctx.env.get("HOME").ok_or(HookError::NoHome)?;
        kubeconfig::candidate_paths(env_kubeconfig.as_deref(), Path::new(&home))
    };
    let merged = kubeconfig::merge(&incoming, &paths)?;
    if in_job {
        // Nothing to prune later: the file goes with the job's checkout.
        return Ok(format!(
            "{} (a CI job: ~/.kube/config is left alone; set KUBECONFIG to choose the file)",
            merged.message()
        ));
    }
    let record = json!({
        "file": merged.file,
        "clusters": merged.names.0,
        "users": merged.names.1,
        "contexts": merged.names.2,
    });
    let path = ctx.run_dir.merge_record(&ctx.project.name);
    // Only `destroy --prune-kubeconfig` needs the record: the merge itself stands without it.
    let _ = write_atomic(
        &path,
        serde_json::to_string_pretty(&record).expect("JSON").as_bytes(),
        NewFile::Default,
    );
    Ok(merged.message())
}

/// `destroy --prune-kubeconfig`: removes what `kubeconfig-merge` added for the project.
pub(crate) fn prune_kubeconfig(run_dir: &RunDir, project: &str) -> Result<Option<String>, HookError> {
    let path = run_dir.merge_record(project);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let record: Value = serde_json::from_str(&text).map_err(|source| HookError::MergeRecord {
        path: path.clone(),
        source,
    })?;
    let list = |k: &str| -> Vec<String> {
        record[k]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let file = PathBuf::from(record["file"].as_str().unwrap_or_default());
    let changed = kubeconfig::prune(&file, &list("clusters"), &list("users"), &list("contexts"))?;
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
pub(crate) struct Prepared {
    pub(crate) program: PathBuf,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) stdin: String,
    /// The redacted outputs file, to remove once the hook ended.
    pub(crate) outputs_file: PathBuf,
    /// What the user should hear before it runs (the script reads a variable's old name).
    pub(crate) warnings: Vec<String>,
}

pub(crate) fn script(path: &str, ctx: &AfterUp<'_>) -> Result<Prepared, HookError> {
    let program = ctx.root.join(path);
    if !program.is_file() {
        return Err(HookError::NoScript { path: program });
    }
    let scratch = ctx.run_dir.scratch();
    let input = |source| HookError::Input {
        dir: scratch.clone(),
        source,
    };
    std::fs::create_dir_all(&scratch).map_err(input)?;
    let redacted = json!({
        "project": ctx.project.name,
        "provider": ctx.provider,
        "stack": ctx.stack,
        "outputs": Value::Object(ctx.outputs.redacted()),
        "secret_outputs": ctx.outputs.secret,
    });
    let outputs_file = scratch.join(format!("{}-outputs.json", ctx.project.name));
    std::fs::write(
        &outputs_file,
        serde_json::to_string_pretty(&redacted).expect("JSON") + "\n",
    )
    .map_err(input)?;
    let full = json!({
        "project": ctx.project.name,
        "provider": ctx.provider,
        "stack": ctx.stack,
        "outputs": Value::Object(ctx.outputs.values.clone()),
        "upstream": ctx.upstream.iter().map(|(k, o)| (k.clone(), Value::Object(o.values.clone()))).collect::<serde_json::Map<_, _>>(),
    });
    let mut env = BTreeMap::from([
        ("MARA_PROJECT".to_string(), ctx.project.name.clone()),
        ("MARA_PROJECT_PATH".to_string(), ctx.project.path.clone()),
        ("MARA_PROVIDER".to_string(), ctx.provider.to_string()),
        ("MARA_STACK".to_string(), ctx.stack.to_string()),
        ("MARA_WORKSPACE".to_string(), ctx.root.display().to_string()),
        ("MARA_OUTPUTS_FILE".to_string(), outputs_file.display().to_string()),
    ]);
    for (k, v) in &ctx.outputs.values {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        env.insert(env_name(OUTPUT_PREFIX, k), text);
    }
    let text = std::fs::read_to_string(&program).unwrap_or_default();
    let (old, warnings) = old_names(&env, &text, path, &|n| {
        ctx.env.overlay().contains_key(n) || std::env::var_os(n).is_some()
    });
    env.extend(old);
    Ok(Prepared {
        program,
        env,
        stdin: serde_json::to_string(&full).expect("JSON"),
        outputs_file,
        warnings,
    })
}

/// The hook variables under their old names (`RUNNER_…`), for one more release: each only where
/// the environment has none of that name (`is_set`), so the CI's own variables reach the hook
/// unchanged; and a warning naming those of them the script's text reads.
fn old_names(
    env: &BTreeMap<String, String>,
    script: &str,
    path: &str,
    is_set: &dyn Fn(&str) -> bool,
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut old = BTreeMap::new();
    let mut read = Vec::new();
    for (name, value) in env {
        let Some(was) = old_name(name) else { continue };
        // The environment's own variable of that name (the CI's) is what the hook reads.
        if is_set(&was) {
            continue;
        }
        if mentions(script, &was) {
            read.push(format!("{was} → {name}"));
        }
        old.insert(was, value.clone());
    }
    let warnings = if read.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "hook {path} reads variables by their old names, set for this release only where the environment has none of that name (RUNNER_* belongs to the CI): rename {}",
            read.join(", ")
        )]
    };
    (old, warnings)
}

/// Whether `text` names the variable `name` (not merely a longer name starting with it).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        text[at + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_names_never_replace_the_environments_and_reading_them_is_warned() {
        let env = BTreeMap::from([
            ("MARA_STACK".to_string(), "dev".to_string()),
            ("MARA_WORKSPACE".to_string(), "/ws".to_string()),
            ("MARA_OUTPUT_CLUSTER".to_string(), "k3s".to_string()),
        ]);
        let script = "echo $RUNNER_STACK ${RUNNER_OUTPUT_CLUSTER} $RUNNER_STACKS";
        let (old, warnings) = old_names(&env, script, "scripts/x.sh", &|n| n == "RUNNER_WORKSPACE");
        assert_eq!(
            old,
            BTreeMap::from([
                ("RUNNER_OUTPUT_CLUSTER".to_string(), "k3s".to_string()),
                ("RUNNER_STACK".to_string(), "dev".to_string()),
            ])
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("RUNNER_OUTPUT_CLUSTER → MARA_OUTPUT_CLUSTER, RUNNER_STACK → MARA_STACK"));
        assert!(!warnings[0].contains("WORKSPACE"));
        let (_, none) = old_names(&env, "echo $MARA_STACK", "scripts/x.sh", &|_| false);
        assert!(none.is_empty());
    }
}
