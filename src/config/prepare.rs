//! What every run (and `validate`) does before any project runs: read the shared stack
//! configuration, ask for — or take from the environment — what it lacks, the secrets of the
//! planned projects and the backend passphrase; write what was answered (the stack file, the
//! secrets through `pulumi config set --secret`); then check tools, project names and the
//! provider's credentials. Every problem is reported at once (exit 3); nothing is written
//! while any answer is missing or wrong.

use std::path::Path;

use serde_json::{Map, Value};

use super::checks::{self, Subject};
use super::env::Env;
use super::passphrase;
use super::questions::{self, Answers, Ask, Context};
use super::request::{EXAMPLE_FILE, Mode, Ready, Request};
use super::save::{SecretStore, ask_again, save};
use super::stackfile::{self, StackFile};
use crate::diagnostic::Problem;
use crate::error::RunnerError;
use crate::programs::{self, Programs};
use crate::provider::{Provider, Secret};
use crate::report;
use crate::workspace::Workspace;

/// The planned projects' secrets (`store_file` the secrets store's own stack file, `env` the
/// passphrase that opens it, to compare a stored one with the environment's), then what the
/// environment gave that differs from what is kept, said.
fn ask_secrets(
    r: &Request<'_>,
    cx: &Context<'_>,
    (store_file, env): (&StackFile, &Env),
    ask: &mut dyn Ask,
    answers: &mut Answers,
) -> std::io::Result<()> {
    let opened = super::passphrase::Stored::new(store_file, env);
    questions::secrets(
        cx,
        r.secrets_for.iter().flat_map(|p| &p.secrets),
        &|key| store_file.config.contains_key(key),
        &|key| opened.opens().then(|| opened.value(key)),
        &|key| r.set_secret(true, key),
        ask,
        answers,
    )?;
    for note in &answers.notes {
        report::warning(note);
    }
    Ok(())
}

/// At a terminal, a program Pulumi YAML would refuse is said before anything is asked (no
/// answer typed, no passphrase, for a run that cannot start): what the programs it runs hold,
/// told from their text alone, every key a question or a secret may still set counting as set
/// (the check after the answers has them all). Elsewhere one report holds every problem.
fn refuse_programs_first(
    r: &Request<'_>,
    programs: &Programs,
    file: &StackFile,
    earlier: &[Problem],
) -> Result<(), RunnerError> {
    if !r.interactive || r.mode == Mode::Check || !earlier.is_empty() || r.runs.is_empty() {
        return Ok(());
    }
    let mut config = file.config.clone();
    let keys = r.provider.prompts.iter().map(|p| &p.key);
    let secrets = r
        .provider
        .projects
        .iter()
        .flat_map(|p| p.secrets.iter().flat_map(Secret::keys));
    for key in keys.cloned().chain(secrets) {
        config.entry(key).or_insert(Value::Null);
    }
    let mut problems = programs::check(r.ws, r.provider, programs);
    problems.extend(programs::undeclared(r.ws, r.provider, programs, &config));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(RunnerError::Problems(problems))
    }
}

pub(crate) fn prepare(r: &Request<'_>, ask: &mut dyn Ask, store: &dyn SecretStore) -> Result<Ready, RunnerError> {
    let ws = r.ws;
    let mut env = r.env.clone();
    let var_env = env.clone();
    // `MARA_CONFIG_…`/`MARA_SECRET_…`, or their old `RUNNER_…` names for one more release.
    let var = move |name: &str| super::given(&|n: &str| var_env.get(n), name);
    super::warn_old_names(&env);
    let path = stackfile::path(&ws.root, r.stack);
    let file = StackFile::load(&path, &ws.show(&path)).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
    let example = example(ws)?;

    // What makes asking pointless: another provider's stack (its keys are not this provider's
    // to ask for or to list), values of the wrong type.
    if let Some(p) = provider_lock(r.provider, &file) {
        return Err(RunnerError::Problems(vec![p]));
    }
    let mut problems = file_problems(r.provider, &file);
    // Read once, for the check before the questions and the checks after them; `validate
    // --check` leaves the cache as it is.
    let learn = if r.mode == Mode::Check {
        programs::Learn::ReadOnly
    } else {
        programs::Learn::Keep
    };
    let programs = programs::read_all(ws, r.provider, learn);
    refuse_programs_first(r, &programs, &file, &problems)?;

    let (store_dir, store_file) = r.store()?;
    let asks = r.asks();
    let cx = Context {
        var: &var,
        example: &example,
        file_shown: &file.shown,
        asks: &asks,
        interactive: r.interactive && problems.is_empty() && r.mode != Mode::Check,
        defaults: r.mode != Mode::Check,
    };
    let mut answers = Answers::default();
    let io = |source| RunnerError::Io {
        context: "cannot read the answer from the terminal".into(),
        source,
    };
    let needed = || r.secrets_for.iter().flat_map(|p| &p.secrets);
    let store_shown = store_dir.as_ref().map_or_else(String::new, |d| ws.show(d));
    let stored = |key: &str| store_file.config.contains_key(key);
    let questions = questions::pending(&cx, &r.provider.prompts, &file.config, file.is_new());
    let secrets = questions::pending_secrets(&cx, needed(), &stored);
    // Answers are stored through the backend (secrets and salt by `pulumi`): reach it before
    // asking anything, as `terraform init` does, so a typo in its URL costs no typed answer.
    if cx.interactive && questions + secrets > 0 {
        reach_backend(r, &env, store_dir.as_deref(), store)?;
    }
    if let Some(intro) = intro(r.stack, &file, questions, (secrets, &store_shown)) {
        report::info(&intro);
    }
    questions::prompts(&cx, &r.provider.prompts, &file.config, file.is_new(), ask, &mut answers).map_err(io)?;
    ask_secrets(r, &cx, (&store_file, &env), ask, &mut answers).map_err(io)?;
    problems.append(&mut answers.problems);
    let changes = !(answers.config.is_empty() && answers.secrets.is_empty() && answers.shared_secrets.is_empty());
    let mut check = None;
    if changes || !r.idle {
        let salted = r.salted(&path, store_dir.as_deref());
        let (problem, started) = passphrase::obtain_checked(&cx, ws, &file, &salted, &mut env, ask).map_err(io)?;
        problems.extend(problem);
        check = started;
    }
    let inputs = Subject {
        ws,
        provider: r.provider,
        env: &env,
    };
    checks::tools(&inputs, &mut problems);
    // Everything answered: write it. Anything missing or wrong: write nothing, but still run
    // the checks, so one report holds every problem.
    ask.finished();
    // Storing answers starts `pulumi` with the passphrase: a wrong one is said first, and
    // `validate` says it in any case.
    if changes || r.mode != Mode::Run {
        let show = |f: &Path| ws.show(f);
        problems.extend(check.take().and_then(|c| c.problem(&env, &show)));
    }
    if problems.is_empty() && r.mode != Mode::Check {
        let typed = !(answers.secrets.is_empty() && answers.shared_secrets.is_empty());
        let mut retry = ask_again(r.interactive && typed, ask);
        save(
            r,
            &file,
            &answers,
            (store, &env),
            store_dir.as_deref(),
            passphrase::in_use(&env, &file),
            &mut retry,
        )?;
    }
    let config = checks_answered(r, &inputs, (&programs, &file), &answers, &mut problems);
    if !problems.is_empty() {
        return Err(RunnerError::Problems(problems));
    }
    let secrets = known_secrets(r.provider, &env, &answers);
    Ok(Ready {
        env,
        config_file: path,
        config,
        secrets,
        passphrase_check: check,
    })
}

/// The configuration as the run will have it (the file and the answers, secrets hidden), and
/// the checks of it: each program's declared keys, and what only `validate` checks.
fn checks_answered(
    r: &Request<'_>,
    inputs: &Subject<'_>,
    (programs, file): (&programs::Programs, &StackFile),
    answers: &Answers,
    problems: &mut Vec<Problem>,
) -> Map<String, Value> {
    let mut config = file.config.clone();
    config.extend(answers.config.iter().cloned());
    for (k, _) in &answers.shared_secrets {
        config.insert(k.clone(), Value::from("[secret]"));
    }
    add_unsaid(problems, checks::checks(inputs, programs, &config, file, &r.runs));
    if r.mode != Mode::Run {
        problems.extend(validate_only(r, inputs, &config));
    }
    config
}

/// `more` added to `problems`, but one wrong value is one problem: a program's type check of a
/// line the prompt's check already said (`Pulumi.dev.yaml:8: `key` is a list, not a duration`)
/// is left out.
fn add_unsaid(problems: &mut Vec<Problem>, more: Vec<Problem>) {
    for p in more {
        let said =
            p.at.as_ref()
                .is_some_and(|at| at.line.is_some() && problems.iter().any(|q| q.at.as_ref() == Some(at)));
        if !said {
            problems.push(p);
        }
    }
}

/// What `validate` checks and a run leaves to `pulumi`: the `pulumi` CLI's version, and the
/// charts the run installs from a mirror ([`crate::charts::check_mirror`]).
fn validate_only(r: &Request<'_>, inputs: &Subject<'_>, config: &Map<String, Value>) -> Vec<Problem> {
    let mut problems: Vec<Problem> = checks::pulumi_cli(inputs).into_iter().collect();
    if !config.contains_key("kubernetes:chart_mirror") {
        return problems;
    }
    let Ok(charts) = crate::charts::installed(&r.ws.root, &|p| r.ws.show(p), r.runs.iter().copied(), config) else {
        // A chart field the runner cannot read: `runner charts` says which.
        return problems;
    };
    let (missing, warnings) = crate::charts::check_mirror(&charts, r.stack, &r.provider.name);
    report::warnings(warnings.into_iter());
    problems.extend(missing);
    problems
}

/// `pulumi whoami` against the backend, from the store's project (any project serves).
fn reach_backend(
    r: &Request<'_>,
    env: &Env,
    store_dir: Option<&Path>,
    store: &dyn SecretStore,
) -> Result<(), RunnerError> {
    let dir = store_dir
        .map(Path::to_path_buf)
        .or_else(|| r.provider.projects.first().map(|p| r.ws.root.join(&p.path)));
    let Some(dir) = dir else { return Ok(()) };
    store.reach(&dir, env).map_err(|e| {
        let backend = super::backend::Backend::of(env);
        RunnerError::Problems(vec![Problem::new(
            format!("cannot reach the state backend {backend} (nothing was asked yet): {e}"),
            format!("{}, then run again", backend.reach_fix()),
        )])
    })
}

/// What is wrong in the stack file itself: values not of their prompt's type, keys Pulumi
/// cannot read, URLs carrying a credential. Every run refuses them, so an export does too.
pub(crate) fn file_problems(provider: &Provider, file: &StackFile) -> Vec<Problem> {
    let mut problems: Vec<Problem> = provider.prompts.iter().filter_map(|p| file.type_problem(p)).collect();
    problems.extend(file.key_problems());
    problems.extend(file.credential_problems());
    problems
}

/// The secret values a run knows of, so none is ever printed: those answered or taken from
/// `MARA_SECRET_*` (or its old name `RUNNER_SECRET_*`), those in the provider tokens' own
/// variables, and the passphrase.
fn known_secrets(provider: &Provider, env: &Env, answers: &Answers) -> Vec<String> {
    let mut out: Vec<String> = answers
        .secrets
        .iter()
        .chain(&answers.shared_secrets)
        .map(|(_, v)| v.clone())
        .collect();
    let token_vars = provider
        .prompts
        .iter()
        .filter(|p| p.secret)
        .filter_map(|p| p.skip_if_env.as_deref());
    out.extend(token_vars.filter_map(|v| env.get(v)));
    out.extend(
        // Another tool's variable that is not Unicode is passed on untouched, never read here.
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .chain(env.overlay().clone())
            .filter(|(k, _)| {
                k.starts_with(super::SECRET_PREFIX)
                    || super::old_name(super::SECRET_PREFIX).is_some_and(|old| k.starts_with(&old))
            })
            .map(|(_, v)| v),
    );
    out.extend(env.passphrase().map(|p| p.expose().to_string()));
    out
}

/// The line before the questions: how many, and where the answers go.
fn intro(stack: &str, file: &StackFile, questions: usize, (secrets, store): (usize, &str)) -> Option<String> {
    let plural = crate::render::count;
    let mut parts = Vec::new();
    if questions > 0 {
        parts.push(format!(
            "{}, answers go to {}",
            plural(questions, "question"),
            file.shown
        ));
    }
    if secrets > 0 {
        parts.push(format!("{}, stored encrypted in {store}", plural(secrets, "secret")));
    }
    if parts.is_empty() {
        return None;
    }
    let head = if file.is_new() {
        format!("stack {stack} has no configuration yet")
    } else {
        format!("stack {stack} needs more")
    };
    Some(format!("{head}: {}", parts.join("; ")))
}

/// `config/pulumi/Pulumi.stackname.yaml.example`'s `config:` mapping (empty when absent).
pub(crate) fn example(ws: &Workspace) -> Result<Map<String, Value>, RunnerError> {
    let path = ws.root.join(EXAMPLE_FILE);
    if !path.exists() {
        return Ok(Map::new());
    }
    StackFile::load(&path, &ws.show(&path))
        .map(|f| f.config)
        .map_err(|d| RunnerError::in_configuration(vec![*d]))
}

/// `kubernetes:infra_type` of another provider: the stack's resources belong to it.
pub(crate) fn provider_lock(provider: &Provider, file: &StackFile) -> Option<Problem> {
    let wanted = provider.infra_type.as_deref()?;
    let stored = file.config.get("kubernetes:infra_type")?;
    let stored = stored.as_str().map_or_else(|| stored.to_string(), str::to_string);
    (!stored.eq_ignore_ascii_case(wanted)).then(|| {
        Problem::new(
            format!(
                "Stack has already been used with the provider [{stored}], so it cannot be run with the specified provider [{wanted}]"
            ),
            {
                // `Pulumi.<stack>.yaml`: the stack, for the command line of the likely move.
                let stack = file
                    .path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix("Pulumi.")?.strip_suffix(".yaml"))
                    .unwrap_or("STACK");
                format!(
                    "use another stack for `-p {0}` (`-s {stack}-{0}`); or, to move this one, destroy its resources with the provider that made them ({stored}) and remove the kubernetes:infra_type key from {1}",
                    provider.name, file.shown
                )
            },
        )
    })
}
