//! What every run (and `validate`) does before any project runs: read the shared stack
//! configuration, ask for — or take from the environment — what it lacks, the secrets of the
//! planned projects and the backend passphrase; write what was answered (the stack file, the
//! secrets through `pulumi config set --secret`); then check tools, project names and the
//! provider's credentials. Every problem is reported at once (exit 3); nothing is written
//! while any answer is missing or wrong.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::checks::{self, Inputs};
use super::env::Env;
use super::passphrase::{self, Check};
use super::questions::{self, Answers, Ask, Context};
use super::set_secret_command;
use super::stackedit;
use super::stackfile::{self, StackFile};
use crate::diagnostic::Problem;
use crate::error::RunnerError;
use crate::exec::Failure;
use crate::fs::{NewFile, write_atomic};
use crate::programs::{self, Programs};
use crate::provider::{Project, Provider, Secret};
use crate::report;
use crate::workspace::Workspace;

/// The documented defaults every question starts from.
pub(crate) const EXAMPLE_FILE: &str = "config/pulumi/Pulumi.stackname.yaml.example";

/// Why the store could not do what was asked, as a failure (worded by `report::failure`; boxed,
/// as the error of every store call).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StoreError {
    /// A lock on the stack refused it: the fix is to wait, or to remove a stale lock.
    #[error("{}", report::failure::text(.0))]
    Locked(Box<Failure>),
    /// It failed otherwise, or `pulumi` could not be started.
    #[error("{}", report::failure::text(.0))]
    Failed(Box<Failure>),
}

impl StoreError {
    /// A failure told in the runner's words alone.
    pub(crate) fn said(what: impl Into<String>) -> Self {
        StoreError::Failed(Box::new(Failure::said(what)))
    }
}

/// Where secret answers go, encrypted by the stack's own secrets provider (`pulumi config set
/// --secret`: `crate::pulumi::Store`).
pub(crate) trait SecretStore {
    /// Creates the stack of the project in `dir` when missing (its own stack file then holds the
    /// passphrase salt); notes of what it removed on the way (stale locks).
    fn create_stack(&self, dir: &Path, env: &Env) -> Result<Vec<String>, StoreError>;

    /// Stores `key` in the stack of the project in `dir`: into `config_file` when given, else
    /// the project's own `Pulumi.<stack>.yaml`.
    fn set_secret(
        &self,
        dir: &Path,
        env: &Env,
        key: &str,
        value: &str,
        config_file: Option<&Path>,
    ) -> Result<(), StoreError>;

    /// Reaches the state backend (`pulumi whoami` from the project in `dir`): done before any
    /// question, so a backend that cannot be reached costs no typed answer.
    fn reach(&self, dir: &Path, env: &Env) -> Result<(), StoreError>;

    /// A new `encryptionsalt` for the passphrase, made by `pulumi` for the stack of the project
    /// in `dir` in a scratch stack file: for when the project's own file has none (its stack
    /// was made elsewhere, e.g. from another clone against the same backend).
    fn new_salt(&self, dir: &Path, env: &Env) -> Result<String, StoreError>;
}

pub(crate) struct Request<'a> {
    pub(crate) ws: &'a Workspace,
    pub(crate) provider: &'a Provider,
    pub(crate) stack: &'a str,
    /// The environment every child gets; the passphrase is added when it is asked.
    pub(crate) env: Env,
    /// The projects whose secrets this run needs (none for `destroy`).
    pub(crate) secrets_for: Vec<&'a Project>,
    /// The projects whose programs it runs (their configuration is checked against the
    /// stack's): none for `destroy` and `refresh`.
    pub(crate) runs: Vec<&'a Project>,
    /// A person can be asked (a terminal, not CI, not `--non-interactive`).
    pub(crate) interactive: bool,
    pub(crate) mode: Mode,
    /// Nothing would run unless an answer changes something (an `up` with every project
    /// unchanged): the passphrase is not asked then.
    pub(crate) idle: bool,
    /// `--switch-stack` switched the workspace to this stack, and a refusal switches it back:
    /// the command suggested to fix it must switch again.
    pub(crate) switched: bool,
}

impl Request<'_> {
    /// The command that asks for what is missing, as the workspace is left after a refusal.
    fn asks(&self) -> String {
        let switch = if self.switched { " --switch-stack" } else { "" };
        format!("runner validate -p {} -s {}{switch}", self.provider.name, self.stack)
    }
}

/// What the preparation is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A run: ask, write the answers, check.
    Run,
    /// `validate`: as a run, and also the `pulumi` CLI and the passphrase against the stack files.
    Validate,
    /// `validate --check`: ask nothing and write nothing; report what a run would still ask.
    Check,
}

/// Ready to run: the environment every `pulumi` gets (with the passphrase when one was asked).
#[derive(Debug)]
pub(crate) struct Ready {
    pub(crate) env: Env,
    pub(crate) config_file: PathBuf,
    /// The stack configuration with the answers (secret values as `[secret]`).
    pub(crate) config: Map<String, Value>,
    /// Every secret value this run knows of (answers, `MARA_SECRET_*`, the provider tokens'
    /// variables, the passphrase): never to be printed.
    pub(crate) secrets: Vec<String>,
    /// The passphrase's check against the stack's salts, still under way: a run takes its
    /// verdict ([`Ready::passphrase_problem`]) before its first project starts.
    pub(crate) passphrase_check: Option<Check>,
}

impl Ready {
    /// A wrong passphrase, as one problem (waits for the check).
    pub(crate) fn passphrase_problem(&mut self, show: &dyn Fn(&Path) -> String) -> Option<Problem> {
        self.passphrase_check.take()?.problem(&self.env, show)
    }
}

impl Request<'_> {
    /// The secrets store's directory, and its own stack file: the secrets already stored (by
    /// key; values stay encrypted).
    fn store(&self) -> Result<(Option<PathBuf>, StackFile), RunnerError> {
        let Some(p) = self.provider.projects.iter().find(|p| p.secrets_store) else {
            return Ok((None, StackFile::default()));
        };
        let dir = self.ws.root.join(&p.path);
        let path = stackfile::own(&dir, self.stack);
        let file = StackFile::load(&path, &self.ws.show(&path)).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
        Ok((Some(dir), file))
    }

    /// The stack files whose salt `pulumi` checks the passphrase against: the shared one, and
    /// the secrets store's own.
    fn salted(&self, shared: &Path, store_dir: Option<&Path>) -> Vec<PathBuf> {
        let mut salted = vec![shared.to_path_buf()];
        salted.extend(store_dir.map(|d| stackfile::own(d, self.stack)));
        salted
    }

    /// [`set_secret_command`] through the secrets store (`store`), which keeps its own stack
    /// file, or through a project that reads the shared one.
    fn set_secret(&self, store: bool, key: &str) -> String {
        let project = self
            .provider
            .projects
            .iter()
            .find(|p| p.secrets_store == store)
            .map_or("PROJECT", |p| p.name.as_str());
        set_secret_command(project, &self.provider.name, self.stack, key)
    }
}

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
    let inputs = Inputs {
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
    inputs: &Inputs<'_>,
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
        let said = value_at(&p.what).is_some_and(|at| problems.iter().any(|q| q.what.starts_with(at)));
        if !said {
            problems.push(p);
        }
    }
}

/// The start of a problem with a stack file's value, its place and key (`file:8: `key` is `).
fn value_at(what: &str) -> Option<&str> {
    what.find("` is ").map(|i| &what[..i + "` is ".len()])
}

/// What `validate` checks and a run leaves to `pulumi`: the `pulumi` CLI's version, and the
/// charts the run installs from a mirror ([`crate::charts::check_mirror`]).
fn validate_only(r: &Request<'_>, inputs: &Inputs<'_>, config: &Map<String, Value>) -> Vec<Problem> {
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
    let mut problems: Vec<Problem> = provider
        .prompts
        .iter()
        .filter_map(|p| file.type_problem(p))
        .map(|what| Problem::new(what, format!("correct the value in {}", file.shown)))
        .collect();
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

/// For a command that hands one project's stack to `pulumi` without running the graph (`output`,
/// `pulumi`): the environment with the passphrase a file backend needs, from the environment or
/// asked once at a terminal. Without one and nobody to ask: the problem, with its fix (exit 3).
pub(crate) fn with_passphrase(
    ws: &Workspace,
    stack: &str,
    env: Env,
    interactive: bool,
    ask: &mut dyn Ask,
) -> Result<Env, RunnerError> {
    let path = stackfile::path(&ws.root, stack);
    let file = StackFile::load(&path, &ws.show(&path)).map_err(|d| RunnerError::in_configuration(vec![*d]))?;
    let mut env = env;
    let var_env = env.clone();
    let var = move |name: &str| var_env.get(name);
    let given = env.passphrase().is_some() || var("PULUMI_CONFIG_PASSPHRASE_FILE").is_some();
    let example = Map::new();
    let cx = Context {
        var: &var,
        example: &example,
        file_shown: &file.shown,
        // Only the passphrase is asked here: no secret key is reported missing.
        asks: "",
        interactive,
        defaults: false,
    };
    let (mut problem, check) = passphrase::obtain_checked(&cx, ws, &file, std::slice::from_ref(&path), &mut env, ask)
        .map_err(|source| RunnerError::Io {
        context: "cannot read the answer from the terminal".into(),
        source,
    })?;
    ask.finished();
    problem = problem.or_else(|| check?.problem(&env, &|f| ws.show(f)));
    if let Some(p) = problem {
        return Err(RunnerError::Problems(vec![p]));
    }
    // Asked at each read otherwise: said once it opened the stack.
    if !given && env.passphrase().is_some() {
        report::info(
            "to be asked no more in this shell: export PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE, a file holding it)",
        );
    }
    Ok(env)
}

/// Said before the wait of storing the secrets: how many, and how many of them were made here
/// (more are stored than were asked then: said, so the counts add up).
fn storing(r: &Request<'_>, answers: &Answers) -> String {
    let made: Vec<String> = r
        .secrets_for
        .iter()
        .flat_map(|p| &p.secrets)
        .filter(|s| s.generate.is_some())
        .flat_map(crate::provider::Secret::keys)
        .collect();
    let made = answers.secrets.iter().filter(|(k, _)| made.contains(k)).count();
    let of_them = if made > 0 {
        format!(" ({made} of them made here)")
    } else {
        String::new()
    };
    format!(
        "storing {} secrets{of_them}, one `pulumi config set --secret` each…",
        answers.secrets.len()
    )
}

/// Writes the answers: the stack file (with `kubernetes:infra_type`), the provider's token
/// secrets into it and the projects' secrets into the store's own stack, both encrypted by
/// `pulumi`. The shared file gets its passphrase salt now, before projects run in parallel and
/// would each try to add one.
fn save(
    r: &Request<'_>,
    file: &StackFile,
    answers: &Answers,
    (store, env): (&dyn SecretStore, &Env),
    store_dir: Option<&Path>,
    passphrase: bool,
    retry: &mut dyn FnMut(&StoreError) -> bool,
) -> Result<(), RunnerError> {
    let ws = r.ws;
    let write_err = |source| RunnerError::Io {
        context: format!("cannot write {}", file.shown),
        source,
    };
    let mut entries = Vec::new();
    if let Some(t) = &r.provider.infra_type
        && !file.config.contains_key("kubernetes:infra_type")
    {
        entries.push(("kubernetes:infra_type".to_string(), Value::from(t.as_str())));
    }
    entries.extend(answers.config.iter().cloned());
    if !entries.is_empty() {
        let header = format!(
            "# The stack configuration every project of stack `{}` shares, written by `runner` for the\n\
             # {} provider. {} documents every key.\n",
            r.stack, r.provider.name, EXAMPLE_FILE
        );
        if let Some(dir) = file.path.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let text = file
            .with_entries(&header, &entries)
            .map_err(|p| RunnerError::Problems(vec![p]))?;
        write_atomic(&file.path, text.as_bytes(), NewFile::Default).map_err(write_err)?;
        if !answers.defaulted.is_empty() {
            let used: Vec<String> = answers.defaulted.iter().map(|(k, v)| format!("{k}={v}")).collect();
            report::info(&format!("used defaults: {}", used.join(", ")));
        }
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        report::info(&format!("wrote {}: {}", file.shown, keys.join(", ")));
    }

    // Writing the entries never adds a salt: the file as read says whether one is there.
    let needs_salt = passphrase && !file.has_secrets_provider();
    if answers.secrets.is_empty() && answers.shared_secrets.is_empty() && !needs_salt {
        return Ok(());
    }
    let failed = |e: StoreError| RunnerError::Problems(vec![Problem::new(e.to_string(), store_fix(&e))]);
    // Each step of storing, tried again while `retry` says so.
    let mut stored = |step: &mut dyn FnMut() -> Result<(), StoreError>| loop {
        match step() {
            Ok(()) => return Ok(()),
            Err(e) if retry(&e) => {}
            Err(e) => return Err(failed(e)),
        }
    };
    // Any project serves to run `pulumi config` against the shared file: the store if there is one.
    let dir = store_dir
        .map(Path::to_path_buf)
        .or_else(|| r.provider.projects.first().map(|p| ws.root.join(&p.path)));
    let Some(dir) = dir else { return Ok(()) };
    stored(&mut || {
        for note in store.create_stack(&dir, env)? {
            report::warning(&note);
        }
        Ok(())
    })?;
    for (key, value) in &answers.shared_secrets {
        stored(&mut || store.set_secret(&dir, env, key, value, Some(&file.path)))?;
        report::info(&format!("stored {key} (encrypted) in {}", file.shown));
    }
    if let Some(store_dir) = store_dir
        && !answers.secrets.is_empty()
    {
        // Each is a `pulumi` start (its key derivation included): say so before the wait.
        if answers.secrets.len() > 1 {
            report::info(&storing(r, answers));
        }
        for (key, value) in &answers.secrets {
            stored(&mut || store.set_secret(store_dir, env, key, value, None))?;
        }
        let keys: Vec<&str> = answers.secrets.iter().map(|(k, _)| k.as_str()).collect();
        let own = ws.show(&stackfile::own(store_dir, r.stack));
        report::info(&format!("stored {} (encrypted) in {own}", keys.join(", ")));
        // Said once stored: a run refused before this forgets what it made (the next makes anew).
        for made in &answers.made {
            report::info(made);
        }
    }
    if needs_salt && passphrase::salt_of(&file.path).is_none() {
        // The project's own file has a salt when `stack select --create` made the stack or a
        // secret was stored there; else `pulumi` makes one (never left to the parallel runs).
        let own = stackfile::own(&dir, r.stack);
        let salt = match passphrase::salt_of(&own) {
            Some(salt) => salt,
            None => store.new_salt(&dir, env).map_err(failed)?,
        };
        copy_salt(&salt, &file.path, &file.shown).map_err(|e| match e {
            SaltError::Io(source) => write_err(source),
            SaltError::Refused(p) => RunnerError::Problems(vec![p]),
        })?;
    }
    Ok(())
}

/// At a terminal a failure to store is said, and storing is tried again when the person says
/// so: the answers typed (the secrets too) are still here, so nothing is asked twice.
fn ask_again(at_terminal: bool, ask: &mut dyn Ask) -> impl FnMut(&StoreError) -> bool + '_ {
    move |e: &StoreError| {
        at_terminal && {
            report::warning(&format!("{e}\n  fix: {}", store_fix(e)));
            ask.confirm("The answers are kept: fix it, then store them again?")
                .unwrap_or(false)
        }
    }
}

/// How to go on when storing failed.
fn store_fix(e: &StoreError) -> &'static str {
    if matches!(e, StoreError::Locked(_)) {
        "wait for the process that holds the lock to end; if it no longer runs, remove its lock: `runner up` (or \
         `preview`, `refresh`, `destroy`) with `--remove-stale-locks` does; nothing else was changed"
    } else {
        "check the passphrase and the backend (PULUMI_BACKEND_URL), then run again; nothing else was changed"
    }
}

/// Why the salt could not be copied.
enum SaltError {
    Io(std::io::Error),
    Refused(Problem),
}

/// Puts `salt` (any salt made with the same passphrase serves) at the top of the shared file,
/// unless that has one by now. The shared file is edited through its syntax tree and checked
/// before it is written ([`stackedit::add_salt`]).
fn copy_salt(salt: &str, to: &Path, shown: &str) -> Result<(), SaltError> {
    let shared = match std::fs::read_to_string(to) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(SaltError::Io(e)),
    };
    match stackedit::add_salt(&shared, salt) {
        Ok(Some(text)) => write_atomic(to, text.as_bytes(), NewFile::Default).map_err(SaltError::Io),
        Ok(None) => Ok(()),
        Err(stackedit::Refused(why)) => Err(SaltError::Refused(Problem::new(
            format!("{shown}: cannot add the passphrase salt safely: {why}; the file was left unchanged"),
            format!(
                "add `encryptionsalt: {}` as a top-level key of {shown} by hand, then run again",
                stackedit::yaml_key(salt)
            ),
        ))),
    }
}
