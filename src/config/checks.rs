//! The checks of `runner validate` (and of every run): the tools the graph needs, the projects'
//! `Pulumi.yaml` names, the programs against the needs, and the provider's credential checks
//! (declared in its file). The stack configuration, secrets and passphrase are checked while
//! they are prepared (`super::prepare`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value};

use super::env::Env;
use super::stackfile::{StackFile, describe};
use crate::diagnostic::Problem;
use crate::programs::{self, Programs};
use crate::provider::{Check, KubeconfigCheck, Project, Provider};
use crate::workspace::Workspace;

/// What the checks look at: the workspace, the provider, and the environment a child gets.
pub(crate) struct Subject<'a> {
    pub(crate) ws: &'a Workspace,
    pub(crate) provider: &'a Provider,
    pub(crate) env: &'a Env,
}

impl Subject<'_> {
    /// A variable as a child will see it.
    fn var(&self, name: &str) -> Option<String> {
        self.env.get(name)
    }
}

/// The checks that need the stack configuration in place: project names, the `programs` (read
/// once by the preparation) against the graph and the configuration, and the provider's
/// credential checks. (Tools, the stack file, secrets and the passphrase are checked while the
/// configuration is prepared: see `setup`.)
pub(crate) fn checks(
    i: &Subject<'_>,
    programs: &Programs,
    config: &Map<String, Value>,
    file: &StackFile,
    runs: &[&Project],
) -> Vec<Problem> {
    let mut problems = Vec::new();
    project_names(i, programs, &mut problems);
    problems.extend(programs::check(i.ws, i.provider, programs));
    problems.extend(programs::undeclared(i.ws, i.provider, programs, config));
    declared_config(i, programs, (config, file), runs, &mut problems);
    for check in &i.provider.checks {
        let applies =
            check.when_projects.is_empty() || check.when_projects.iter().any(|p| i.provider.graph.find(p).is_some());
        if applies {
            credentials(i, check, Some(config), &mut problems);
            if let Some(k) = &check.kubeconfig {
                problems.extend(kubeconfig(check, k, config));
            }
        }
    }
    problems
}

/// The oldest `pulumi` CLI the programs work with: every pinned SDK needs `@pulumi/pulumi`
/// ^3.142.0 (docs/providers.md, "Provider versions").
pub(crate) const MIN_PULUMI: (u64, u64, u64) = (3, 142, 0);

/// `pulumi version` is at least [`MIN_PULUMI`]. (A `pulumi` missing from PATH is reported with
/// the other tools.)
pub(crate) fn pulumi_cli(i: &Subject<'_>) -> Option<Problem> {
    let exe = which("pulumi", i.var("PATH").as_deref())?;
    let (min_major, min_minor, min_patch) = MIN_PULUMI;
    let fix = format!("install pulumi v{min_major}.{min_minor}.{min_patch} or newer (`pulumi version` prints it)");
    let mut cmd = Command::new(&exe);
    i.env.apply_for_tool(&mut cmd);
    let out = match cmd.arg("version").stdin(Stdio::null()).output() {
        Ok(out) if out.status.success() => out,
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string();
            return Some(Problem::new(format!("`{} version` failed: {last}", exe.display()), fix));
        }
        Err(e) => return Some(Problem::new(format!("cannot run `{}`: {e}", exe.display()), fix)),
    };
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match parse_version(&text) {
        Some(v) if v >= MIN_PULUMI => None,
        Some(_) => Some(Problem::new(
            format!("`{}` is pulumi {text}, older than the programs need", exe.display()),
            fix,
        )),
        None => Some(Problem::new(
            format!("`{} version` printed `{text}`, which is not a version", exe.display()),
            fix,
        )),
    }
}

/// `v3.259.0` (or `3.259.0-dev.0`) as numbers.
fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text.trim().trim_start_matches('v');
    let core = core.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// The kubeconfig file a configuration key names exists, is a kubeconfig, and holds the
/// context another key names.
fn kubeconfig(check: &Check, k: &KubeconfigCheck, config: &Map<String, Value>) -> Option<Problem> {
    let path = config.get(&k.file)?.as_str()?;
    let problem = |what: String| {
        Some(Problem::new(
            format!("{}: {what}", check.description),
            check.fix.clone(),
        ))
    };
    let text = match crate::fs::read_text(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return problem(format!("{path} (`{}`) does not exist", k.file));
        }
        Err(e) => return problem(format!("cannot read {path} (`{}`): {e}", k.file)),
    };
    let Ok(doc) = serde_saphyr::from_str::<Value>(&text) else {
        return problem(format!("{path} (`{}`) is not YAML", k.file));
    };
    let contexts: Vec<&str> = doc["contexts"]
        .as_array()
        .map(|c| c.iter().filter_map(|e| e["name"].as_str()).collect())
        .unwrap_or_default();
    let wanted = k
        .context
        .as_ref()
        .and_then(|key| config.get(key)?.as_str().map(|c| (key, c)));
    match wanted {
        Some((key, context)) if !contexts.contains(&context) => problem(format!(
            "{path} has no context `{context}` (`{key}`); it has: {}",
            if contexts.is_empty() {
                "none".to_string()
            } else {
                contexts.join(", ")
            }
        )),
        _ => None,
    }
}

/// The path of `tool` on `PATH`, if it is there.
fn which(tool: &str, path: Option<&str>) -> Option<PathBuf> {
    std::env::split_paths(path.unwrap_or_default())
        .map(|d| d.join(tool))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    p.is_file()
}

pub(crate) fn tools(i: &Subject<'_>, problems: &mut Vec<Problem>) {
    let path = i.var("PATH");
    for tool in &i.provider.required_tools {
        if which(tool, path.as_deref()).is_none() {
            problems.push(Problem::new(
                format!("`{tool}` is not on PATH (the {} graph needs it)", i.provider.name),
                match i.provider.install.get(tool) {
                    Some(how) => format!("{how}; or put the directory that holds `{tool}` on PATH"),
                    None => format!("install {tool}, or put the directory that holds it on PATH"),
                },
            ));
        }
    }
}

/// Every project directory holds a `Pulumi.yaml` whose `name` is the project's name.
/// Programs already read (and cached) are not read again; only one that could not be is, to
/// say why.
fn project_names(i: &Subject<'_>, programs: &programs::Programs, problems: &mut Vec<Problem>) {
    for (index, p) in i.provider.projects.iter().enumerate() {
        let name = match programs.get(index) {
            Some(program) => Ok(program.name.clone()),
            None => programs::Program::name_in(&i.ws.root.join(&p.path)),
        };
        let shown = || programs::file(i.ws, p);
        match name {
            Err(e) => problems.push(Problem::new(format!("{}: {e}", shown()), "make it a valid Pulumi.yaml")),
            Ok(name) => match name {
                Some(n) if n == p.name => {}
                Some(n) => problems.push(Problem::new(
                    format!(
                        "{} names the project `{n}`, but {} calls it `{}`",
                        shown(),
                        p.declared_in,
                        p.name
                    ),
                    format!(
                        "use one name in both: stack references find projects by their Pulumi name (`name: {}`)",
                        p.name
                    ),
                )),
                None => problems.push(Problem::new(
                    format!("{} has no `name`", shown()),
                    format!("add `name: {}`", p.name),
                )),
            },
        }
    }
}

/// Each program's declared configuration against the shared stack file every project gets
/// (`--config-file`): what `pulumi up` would refuse only when the project's turn came, after
/// what it needs had run. `config` is the file's mapping with this run's answers added.
fn declared_config(
    i: &Subject<'_>,
    programs: &programs::Programs,
    (config, file): (&Map<String, Value>, &StackFile),
    runs: &[&Project],
    problems: &mut Vec<Problem>,
) {
    let prompted = |key: &str| i.provider.prompts.iter().any(|p| p.key == key);
    let runs: std::collections::HashSet<&str> = runs.iter().map(|p| p.name.as_str()).collect();
    for (index, p) in i.provider.projects.iter().enumerate() {
        // The secrets store runs on a stack file of its own.
        let runs_it = runs.contains(p.name.as_str());
        let Some(program) = programs.get(index).filter(|_| runs_it && !p.secrets_store) else {
            continue;
        };
        for d in &program.config {
            let key = if d.key.contains(':') {
                d.key.clone()
            } else {
                format!("{}:{}", p.name, d.key)
            };
            let declared_at = format!("{}:{}", programs::file(i.ws, p), d.line);
            // A bare key of the stack file is every project's own (the CLI's loader gives it
            // the namespace of the project that reads it).
            let bare = key.strip_prefix(&format!("{}:", p.name));
            let found = config
                .get_key_value(&key)
                .or_else(|| bare.and_then(|b| config.get_key_value(b)));
            let Some((written, value)) = found else {
                // A prompt's key is asked for (or reported missing) with the questions.
                if d.required && !prompted(&key) {
                    problems.push(Problem::new(
                        format!(
                            "{} has no `{key}`, which {declared_at} declares without a default: `pulumi up` would refuse the project",
                            file.shown
                        ),
                        format!("add `{key}: <value>` under `config:` in {}", file.shown),
                    ));
                }
                continue;
            };
            // Encrypted (or answered as a secret in this run): its type cannot be told here.
            let secure = match file.config.get(written) {
                Some(stored) => super::stackfile::encrypted(stored),
                None => value.as_str() == Some("[secret]"),
            };
            if secure {
                continue;
            }
            if d.secret {
                problems.push(Problem::at(
                    file.place(written),
                    format!(
                        "`{key}` is stored in plain text, but {declared_at} declares it secret: `pulumi up` would refuse the project"
                    ),
                    format!(
                        "remove the line from {} and set it with `{}`",
                        file.shown,
                        super::set_secret_command(
                            &p.name,
                            &i.provider.name,
                            &i.var("PULUMI_STACK").unwrap_or_else(|| "STACK".into()),
                            &key
                        )
                    ),
                ));
                continue;
            }
            // Stored as text, unless a list or a mapping.
            let stored = match value {
                Value::Array(_) | Value::Object(_) => value.clone(),
                Value::String(s) => Value::String(s.clone()),
                Value::Null => Value::String(String::new()),
                other => Value::String(other.to_string()),
            };
            if let Some(t) = d.ty.as_ref().filter(|t| !t.admits(&stored)) {
                // A value a prompt asks as a secret is never shown, even one stored in plain text.
                let secret_prompt = i.provider.prompts.iter().any(|p| p.key == key && p.secret);
                problems.push(Problem::at(
                    file.place(written),
                    format!(
                        "`{key}` is {}, but {declared_at} declares it {}: `pulumi up` would refuse the project (must be of type '{}')",
                        if secret_prompt { "a value of another type".to_string() } else { describe(value) },
                        t.described(),
                        t.full_name()
                    ),
                    format!("set `{key}` to {} in {}", t.described(), file.shown),
                ));
            }
        }
    }
}

/// One of the provider's credential checks.
fn credentials(i: &Subject<'_>, check: &Check, config: Option<&Map<String, Value>>, problems: &mut Vec<Problem>) {
    if !check.any_of.is_empty() {
        let found = check.any_of.iter().any(|source| {
            if let Some(var) = source.strip_prefix("env:") {
                i.var(var).is_some()
            } else if let Some(key) = source.strip_prefix("config:") {
                config.is_some_and(|c| c.contains_key(key))
            } else {
                false
            }
        });
        if !found {
            problems.push(Problem::new(
                format!("{}: not set", check.description),
                check.fix.clone(),
            ));
        }
    }
    if let Some((program, args)) = check.command.split_first() {
        let path = i.var("PATH");
        let Some(exe) = which(program, path.as_deref()) else {
            // Already reported as a missing tool when the provider requires it.
            if !i.provider.required_tools.contains(program) {
                problems.push(Problem::new(
                    format!("{}: `{program}` is not on PATH", check.description),
                    check.fix.clone(),
                ));
            }
            return;
        };
        let mut cmd = Command::new(exe);
        i.env.apply_for_tool(&mut cmd);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (var, key) in &check.env_from_config {
            if let Some(v) = config.and_then(|c| c.get(key)).and_then(Value::as_str) {
                cmd.env(var, v);
            }
        }
        match cmd.output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                problems.push(Problem::new(
                    format!(
                        "{}: `{}` failed{}",
                        check.description,
                        check.command.join(" "),
                        if last.is_empty() {
                            String::new()
                        } else {
                            format!(": {last}")
                        }
                    ),
                    check.fix.clone(),
                ));
            }
            Err(e) => problems.push(Problem::new(
                format!("{}: cannot run `{program}`: {e}", check.description),
                check.fix.clone(),
            )),
        }
    }
}
