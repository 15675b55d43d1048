//! Which stack a command works on, by MARA's rules for `PULUMI_STACK` in the environment file,
//! and the words for a stack the workspace does not know.

use crate::config::env_file::{self, ENVIRONMENT_FILE, EnvironmentFile};
use crate::config::stackfile;
use crate::error::RunnerError;
use crate::workspace::{RunDir, Workspace};

/// The stack every project uses, and where it came from, by MARA's rules for `PULUMI_STACK` in
/// the environment file: `--stack`, else `PULUMI_STACK` from the file, else from the process
/// environment. A stack in the file or the process environment that differs from `--stack` is
/// refused (exit 2, naming both), unless `--switch-stack` makes the given one the file's.
/// Nothing is written here: see [`record_stack`].
pub(super) fn stack(
    ws: &Workspace,
    file: &EnvironmentFile,
    given: Option<&str>,
    (switch, read_only): (bool, bool),
    command: &str,
) -> Result<(String, StackSource), RunnerError> {
    let display = ws.show(&ws.root.join(ENVIRONMENT_FILE));
    let from_file = file.vars.get("PULUMI_STACK").filter(|s| !s.is_empty()).cloned();
    let from_process = std::env::var("PULUMI_STACK").ok().filter(|s| !s.is_empty());
    let stack = match (given, &from_file, &from_process) {
        (Some(s), _, _) => s.to_string(),
        (None, Some(f), _) => f.to_lowercase(),
        (None, None, Some(p)) => p.to_lowercase(),
        (None, None, None) => {
            return Err(RunnerError::usage(
                format!("`{command}` needs a stack: pass -s/--stack NAME"),
                format!("or set PULUMI_STACK in {display}"),
            ));
        }
    };
    // Before any path is built from it: the stack names files and directories.
    if !valid_stack_name(&stack) {
        let from = match (given, &from_file) {
            (Some(_), _) => "-s/--stack".to_string(),
            (None, Some(_)) => format!("PULUMI_STACK in {display}"),
            (None, None) => "PULUMI_STACK in the process environment".to_string(),
        };
        return Err(RunnerError::usage(
            format!("`{stack}` (from {from}) is not a valid stack name"),
            "use letters, digits, `-`, `_` and `.` (Pulumi's rule), not `.` or `..` alone, at most 100 characters",
        ));
    }
    if let Some(p) = &from_process
        && !p.eq_ignore_ascii_case(&stack)
    {
        return Err(RunnerError::usage(
            format!("the stack `{stack}` differs from PULUMI_STACK=`{p}` in the process environment"),
            format!("use `-s {p}`, or unset PULUMI_STACK (`unset PULUMI_STACK`) to use `{stack}`"),
        ));
    }
    let source = match &from_file {
        None => StackSource::Missing,
        Some(f) if f.eq_ignore_ascii_case(&stack) => StackSource::Recorded,
        Some(f) if switch => StackSource::Switched(f.clone()),
        // A command that only reads may look at another stack: the workspace's stays its.
        Some(_) if read_only => StackSource::Looked,
        Some(f) => {
            return Err(RunnerError::usage(
                format!("the stack `{stack}` differs from PULUMI_STACK=`{f}` in {display}"),
                format!(
                    "use `-s {f}`, or add `--switch-stack` to make `{stack}` the workspace's stack \
                     (every project shares one stack; stack `{f}` stays as it is)"
                ),
            ));
        }
    };
    Ok((stack, source))
}

/// Pulumi's stack name rule: letters, digits, `-`, `_`, `.`; and not a path of its own.
pub(super) fn valid_stack_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What the environment file says about the stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum StackSource {
    /// It names this stack.
    Recorded,
    /// It names none (or does not exist): the stack is written into it.
    Missing,
    /// It names this other stack, and `--switch-stack` replaces it.
    Switched(String),
    /// It names another stack, which a command that only reads looks at (nothing is written).
    Looked,
}

/// Records the stack in the environment file as [`stack`] decided, and says so (MARA does too).
pub(super) fn record_stack(ws: &Workspace, stack: &str, source: &StackSource) -> Result<(), RunnerError> {
    let path = ws.root.join(ENVIRONMENT_FILE);
    let display = ws.show(&path);
    let io = |source| RunnerError::Io {
        context: format!("cannot write PULUMI_STACK to {display}"),
        source,
    };
    match source {
        StackSource::Recorded | StackSource::Looked => {}
        StackSource::Missing => {
            let existed = path.exists();
            env_file::add_stack(&path, stack).map_err(io)?;
            crate::report::info(&if existed {
                format!("Added PULUMI_STACK={stack} to {display}")
            } else {
                format!("Created {display} with PULUMI_STACK={stack}")
            });
        }
        StackSource::Switched(old) => {
            env_file::set_stack(&path, stack).map_err(io)?;
            crate::report::info(&format!(
                "Switched the workspace from stack {old} to {stack}: PULUMI_STACK={stack} in {display}"
            ));
        }
    }
    Ok(())
}

/// The note that the provider was taken from the stack file, said when it is not the one the
/// last command of the stack took (so not on every command of a day's work); an empty note
/// (the workspace's only provider) is not said.
pub(super) fn say_once(ws: &Workspace, stack: Option<&str>, provider: &str, note: &str) {
    if note.is_empty() {
        return;
    }
    let Some(stack) = stack else {
        crate::report::info(note);
        return;
    };
    if said_before(ws, stack, provider) {
        return;
    }
    crate::report::info(note);
    let run_dir = RunDir::new(&ws.root, stack);
    if run_dir.create().is_ok() {
        let path = run_dir.inferred_provider();
        let _ = crate::fs::write_atomic(&path, format!("{provider}\n").as_bytes(), crate::fs::NewFile::Default);
    }
}

/// Whether the last command of `stack` took `provider` from its stack file too (and said so).
pub(super) fn said_before(ws: &Workspace, stack: &str, provider: &str) -> bool {
    crate::fs::read_text(RunDir::new(&ws.root, stack).inferred_provider()).is_ok_and(|last| last.trim() == provider)
}

/// ` -p NAME` in a command the runner suggests, only where it must be said: not under a
/// wrapper that gives it (`scripts/try-local`), nor in a workspace of one provider.
pub(crate) fn provider_flag(ws: &Workspace, name: &str) -> String {
    let one_provider = crate::provider::entries(ws).is_ok_and(|(entries, _)| {
        entries
            .iter()
            .filter(|e| e.kind == crate::provider::FileKind::Provider)
            .count()
            == 1
    });
    if one_provider || crate::report::typed_command().is_some() {
        String::new()
    } else {
        format!(" -p {name}")
    }
}

/// A stack with neither a stack file nor anything a run left here: the problem that says so,
/// with the stacks this workspace knows.
pub(super) fn unknown_stack(ws: &Workspace, stack: &str, command: &str) -> Option<RunnerError> {
    if is_known(ws, stack) {
        return None;
    }
    let known = known_stacks(ws);
    let fix = if known.is_empty() {
        // A wrapper (`scripts/try-local`) gives the provider and the stack itself.
        let up = if crate::report::typed_command().is_some() {
            "`runner up`"
        } else {
            "`runner up -p PROVIDER -s STACK`"
        };
        format!("no stack was configured here yet: {up} makes one (it asks what it needs)")
    } else {
        // The one it most likely meant: `tyr` is `try`.
        let likely = known
            .iter()
            .max_by(|a, b| strsim::jaro_winkler(stack, a).total_cmp(&strsim::jaro_winkler(stack, b)))
            .unwrap_or(&known[0]);
        let p = provider_flag(ws, "PROVIDER");
        format!(
            "stacks here: {} (`runner {command} -s {likely}`); `runner show-plan{p} -s {stack}` says what an up of a new stack would run",
            known.join(", "),
        )
    };
    Some(RunnerError::usage(
        format!(
            "stack `{stack}` has no runs here and no configuration ({})",
            ws.show(&stackfile::path(&ws.root, stack))
        ),
        fix,
    ))
}

/// Whether `stack` has a configuration or runs in this workspace.
pub(super) fn is_known(ws: &Workspace, stack: &str) -> bool {
    stackfile::path(&ws.root, stack).exists() || ws.run_dir(stack).stack_dir().exists()
}

/// The stacks configured in this workspace, by name.
pub(super) fn known_stacks(ws: &Workspace) -> Vec<String> {
    let mut known: Vec<String> = std::fs::read_dir(ws.root.join("config/pulumi"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let s = name.strip_prefix("Pulumi.")?.strip_suffix(".yaml")?;
            valid_stack_name(s).then(|| s.to_string())
        })
        .collect();
    known.sort();
    known
}
