//! `pulumi PROJECT -- ARGS…`: any `pulumi` command in a project's directory with the run's
//! environment — the environment file's variables, the backend, the passphrase, the stack — for
//! what the runner does not cover (`pulumi cancel`, `pulumi stack history`, `pulumi state …`).
//! `--stack` is added where the command takes it and `--config-file` (the shared stack file)
//! where it reads the configuration, unless given; the terminal is `pulumi`'s, and so is the
//! exit code.

use crate::error::RunnerError;
use crate::pulumi;
use crate::report;
use crate::runstate::Recorder;
use crate::settings::{Settings, StackContext};
use crate::workspace::WorkspaceLock;

/// Commands (and their aliases) that take `--stack` (`pkg/cmd/pulumi`: a flag on each, or a
/// persistent one on `stack`, `config` and `logs` for their subcommands).
const TAKE_STACK: [&str; 17] = [
    "up", "update", "preview", "pre", "refresh", "destroy", "down", "dn", "config", "stack", "cancel", "import",
    "state", "watch", "logs", "console", "about",
];

/// Subcommands of `state` without `--stack`: they name their stacks otherwise (`state move
/// --source/--dest`) or act on the whole backend (`state upgrade`).
const STATE_WITHOUT_STACK: [&str; 3] = ["move", "mv", "upgrade"];

/// Commands that read the stack configuration and take `--config-file`.
const TAKE_CONFIG_FILE: [&str; 12] = [
    "up", "update", "preview", "pre", "refresh", "destroy", "down", "dn", "config", "import", "watch", "logs",
];

/// Commands that take the stack as their argument instead (`cancel dev`, `stack rm dev`): with
/// both, `pulumi` refuses ("only one of --stack or argument stack name may be specified").
const STACK_AS_ARGUMENT: [(&str, Option<&str>); 9] = [
    ("cancel", None),
    ("stack", Some("select")),
    ("stack", Some("rm")),
    ("stack", Some("remove")),
    ("stack", Some("delete")),
    ("stack", Some("new")),
    ("stack", Some("init")),
    ("stack", Some("create")),
    ("stack", Some("setup")),
];

/// Flags of those commands that take a value, so their values are not taken for arguments.
const ARGUMENT_VALUES: [&str; 7] = [
    "--stack",
    "-s",
    "--secrets-provider",
    "--copy-config-from",
    "--teams",
    "--source",
    "--dest",
];

/// Root flags of `pulumi` that take a value (`pkg/cmd/pulumi/pulumi.go`), to find the command
/// after them.
const ROOT_VALUES: [&str; 10] = [
    "-C",
    "--cwd",
    "--color",
    "-v",
    "--verbose",
    "--tracing",
    "--tracing-header",
    "--profiling",
    "--memprofilerate",
    "--otel-traces",
];

pub(crate) fn run(s: &Settings, t: &StackContext, project: &str, args: &[String]) -> Result<i32, RunnerError> {
    let project = super::project_of(t, Some(project), "`runner pulumi`")?.clone();
    // A command that changes the stack is recorded in the run state (the next `up` runs the
    // project, saying why): the workspace is held meanwhile, as a run holds it.
    let changes = changes_state(args);
    let by = format!("runner pulumi {} -- {}", project.name, before_end(args).join(" "));
    let _lock = changes.map(|_| WorkspaceLock::take(&s.ws, &t.run_dir)).transpose()?;
    let engine = super::pulumi_with_passphrase(s, t)?;
    let config_file = (!project.secrets_store).then(|| engine.config_file.display().to_string());
    let args = with_run_flags(args, &t.stack, config_file.as_deref());
    let dir = s.ws.root.join(&project.path);
    report::debug(
        s.style,
        &format!("pulumi {} (in {})", shown(&args).join(" "), project.path),
    );
    let mut cmd = std::process::Command::new(&engine.program);
    cmd.current_dir(&dir).args(&args);
    engine.env.apply_for_pulumi(&mut cmd);
    // The terminal is `pulumi`'s, and so is every signal the runner gets (Ctrl-C, or a SIGTERM
    // sent to the runner): `pulumi` cancels cleanly, and the runner ends with its exit code.
    let code = pulumi::attached(&cmd).map_err(|e| {
        RunnerError::failed(
            format!("cannot run `pulumi` in {}: {e}", s.ws.show(&dir)),
            "install the pulumi CLI (v3.142.0 or newer) and put it on PATH",
        )
    })?;
    if let Some(destroys) = changes {
        let recorded = Recorder::open(&t.run_dir, &t.provider, &|p| s.ws.show(p))
            .map_err(|e| e.to_string())
            .and_then(|(mut state, _)| {
                state
                    .changed_outside(&project.name, &by, destroys && code == 0)
                    .and_then(|()| state.close())
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = recorded {
            report::warning(&format!(
                "`{by}` changed {}'s stack, and the run state could not record it ({e}): run `runner up --fresh` \
                 to deploy it again",
                project.name
            ));
        }
    }
    Ok(code)
}

/// `args` with `--stack STACK` where the command takes it and `--config-file FILE` where it
/// reads the configuration (`None`: a project with its own stack file), unless given, placed
/// before a `--` so they stay flags.
fn with_run_flags(args: &[String], stack: &str, config_file: Option<&str>) -> Vec<String> {
    let before = before_end(args);
    let (command, arguments) = command_words(before);
    let subcommand = arguments.first().copied();
    let given = |long: &str, short: Option<&str>| {
        before
            .iter()
            .any(|a| a == long || a.starts_with(&format!("{long}=")) || short.is_some_and(|s| a == s))
    };
    let mut extra = Vec::new();
    if let Some(command) = command {
        let named_by_argument = STACK_AS_ARGUMENT.iter().any(|&(c, sub)| {
            c == command
                && match sub {
                    None => !arguments.is_empty(),
                    Some(sub) => subcommand == Some(sub) && arguments.len() > 1,
                }
        });
        let takes_stack = TAKE_STACK.contains(&command)
            && !named_by_argument
            && !(command == "state" && subcommand.is_some_and(|sub| STATE_WITHOUT_STACK.contains(&sub)));
        if takes_stack && !given("--stack", Some("-s")) {
            extra.extend(["--stack".to_string(), stack.to_string()]);
        }
        if let Some(file) = config_file
            && TAKE_CONFIG_FILE.contains(&command)
            && !given("--config-file", None)
        {
            extra.extend(["--config-file".to_string(), file.to_string()]);
        }
    }
    let mut out = before.to_vec();
    out.extend(extra);
    out.extend(args[before.len()..].iter().cloned());
    out
}

/// `args` up to a `--` (what follows it is the command's own, not `pulumi`'s flags).
fn before_end(args: &[String]) -> &[String] {
    match args.iter().position(|a| a == "--") {
        Some(end) => &args[..end],
        None => args,
    }
}

/// The `pulumi` command `before` names, and the words after it that are neither flags nor
/// their values (the subcommand first).
fn command_words(before: &[String]) -> (Option<&str>, Vec<&str>) {
    let mut words = before.iter();
    let mut command = None;
    while let Some(a) = words.next() {
        if ROOT_VALUES.contains(&a.as_str()) {
            words.next();
        } else if !a.starts_with('-') {
            command = Some(a.as_str());
            break;
        }
    }
    // The words after the command that are not flags or their values: the subcommand first.
    let mut arguments = Vec::new();
    while let Some(a) = words.next() {
        if ROOT_VALUES.contains(&a.as_str()) || ARGUMENT_VALUES.contains(&a.as_str()) {
            words.next();
        } else if !a.starts_with('-') {
            arguments.push(a.as_str());
        }
    }
    (command, arguments)
}

/// `args` as the debug line shows them: the value of `config set --secret KEY VALUE` and of
/// each `config set-all --secret KEY=VALUE` masked (pulumi reads the value hidden when it is
/// left out, which docs/configuration.md advises).
fn shown(args: &[String]) -> Vec<String> {
    const MASK: &str = "[secret]";
    let mut out = args.to_vec();
    // Positions of the words that are neither flags nor their values; after `--`, all are.
    let mut words = Vec::new();
    let mut ended = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if ended {
            words.push(i);
        } else if a == "--" {
            ended = true;
        } else if ROOT_VALUES.contains(&a) || ARGUMENT_VALUES.contains(&a) || a == "--config-file" {
            i += 1;
        } else if !a.starts_with('-') {
            words.push(i);
        }
        i += 1;
    }
    let word = |n: usize| words.get(n).map(|&i| args[i].as_str());
    let secret = |a: &String| a == "--secret" || (a.starts_with("--secret=") && a != "--secret=false");
    match (word(0), word(1)) {
        (Some("config"), Some("set")) if args.iter().any(secret) => {
            if let Some(&value) = words.get(3) {
                out[value] = MASK.to_string();
            }
        }
        (Some("config"), Some("set-all")) => {
            for (i, a) in args.iter().enumerate() {
                if a == "--secret"
                    && let Some(pair) = out.get_mut(i + 1)
                    && let Some((key, _)) = pair.split_once('=')
                {
                    *pair = format!("{key}={MASK}");
                }
            }
        }
        _ => {}
    }
    out
}

/// What a `pulumi` command does to the stack the run state records: `Some(true)` when the
/// stack is gone after it (`destroy`, `stack rm`, `stack rename`: no stack of that name is
/// left), `Some(false)` when it may change it otherwise (`up`, `refresh`, `import`, `state …`,
/// `watch`, `stack import`, `stack change-secrets-provider`), `None` when it only reads
/// (`stack history`, `preview`, `config get`…).
fn changes_state(args: &[String]) -> Option<bool> {
    let (command, arguments) = command_words(before_end(args));
    match (command?, arguments.first().copied()) {
        ("destroy" | "down" | "dn", _) | ("stack", Some("rm" | "remove" | "delete" | "rename")) => Some(true),
        ("up" | "update" | "refresh" | "import" | "state" | "watch", _)
        | ("stack", Some("import" | "change-secrets-provider")) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_that_changes_a_stack_is_known_as_such() {
        let changes = |line: &str| changes_state(&line.split(' ').map(String::from).collect::<Vec<_>>());
        assert_eq!(changes("watch"), Some(false));
        assert_eq!(changes("stack import --file s.json"), Some(false));
        assert_eq!(changes("stack change-secrets-provider passphrase"), Some(false));
        assert_eq!(changes("stack rename dev2"), Some(true));
        assert_eq!(changes("stack history"), None);
        assert_eq!(changes("stack export"), None);
    }

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_stack_and_the_config_file_go_where_the_command_takes_them() {
        let f = Some("/ws/config/pulumi/Pulumi.dev.yaml");
        let cf = "--config-file /ws/config/pulumi/Pulumi.dev.yaml";
        for (given, file, expected) in [
            ("stack output --json", f, "stack output --json --stack dev".to_string()),
            (
                "--color never config set k -- -v",
                f,
                format!("--color never config set k --stack dev {cf} -- -v"),
            ),
            (
                "up -s prod --config-file x.yaml",
                f,
                "up -s prod --config-file x.yaml".into(),
            ),
            ("up", None, "up --stack dev".into()),
            ("version", f, "version".into()),
            ("whoami -v 9", f, "whoami -v 9".into()),
            // `state move` names its stacks with --source/--dest; `state upgrade` has no stack.
            (
                "state move --source dev --dest prod urn",
                f,
                "state move --source dev --dest prod urn".into(),
            ),
            ("state upgrade", f, "state upgrade".into()),
            ("state delete urn", f, "state delete urn --stack dev".into()),
            (
                "import aws:s3/bucket:Bucket b id",
                f,
                format!("import aws:s3/bucket:Bucket b id --stack dev {cf}"),
            ),
        ] {
            assert_eq!(with_run_flags(&args(given), "dev", file).join(" "), expected, "{given}");
        }
    }

    #[test]
    fn a_secret_given_on_the_command_line_is_masked_in_the_debug_line() {
        for (given, expected) in [
            (
                "config set --secret app:pwd hunter2 --stack dev",
                "config set --secret app:pwd [secret] --stack dev",
            ),
            (
                "config set --config-file f.yaml app:pwd --secret=true -- -starts-with-dash",
                "config set --config-file f.yaml app:pwd --secret=true -- [secret]",
            ),
            // No value: pulumi asks for it hidden; a plain value is not a secret.
            (
                "config set --secret app:pwd --stack dev",
                "config set --secret app:pwd --stack dev",
            ),
            ("config set app:user alice", "config set app:user alice"),
            (
                "config set-all --plaintext a=1 --secret b=2 --secret c=x=y",
                "config set-all --plaintext a=1 --secret b=[secret] --secret c=[secret]",
            ),
        ] {
            assert_eq!(shown(&args(given)).join(" "), expected, "{given}");
        }
    }
}
