//! Exports: the plan written for another engine, so the same graph runs where a team already
//! runs things — the Pulumi Kubernetes Operator (`pko`), GitHub Actions, GitLab CI, Argo
//! Workflows, a KEBAP bundle synced from git (`kebap`: PKO Stacks, an Argo CD Application, External
//! Secrets) and a Backstage catalog. Each is a pure function of the plan, the [`Common`] input
//! and the format's own options (`pko::PkoOptions`, …): files as text, deterministic (sorted,
//! no random ids), every edge of the plan (`needs` and `after` alike), secrets only as
//! references to where they live. The caller reads and writes files.
//!
//! A format is a module here, with its options type and its `export` entry point, and a
//! variant of [`Format`] (its name); its flags live in `cli::export`.

pub(crate) mod argo;
pub(crate) mod backstage;
pub(crate) mod github;
pub(crate) mod gitlab;
pub(crate) mod kebap;
pub(crate) mod names;
pub(crate) mod pko;
mod shell;
pub(crate) mod yaml;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::graph::Direction;
use crate::plan::{Operation, Plan};
use names::{Names, Rule};

/// The engines the runner exports to, by the name every part of an export knows them by: the
/// subcommand, the files' header, the default output directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub(crate) enum Format {
    Pko,
    GithubActions,
    GitlabCi,
    ArgoWorkflows,
    Kebap,
    Backstage,
}

impl Format {
    pub(crate) const ALL: &'static [Format] = <Format as strum::VariantArray>::VARIANTS;

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Format::Pko => "pko",
            Format::GithubActions => "github-actions",
            Format::GitlabCi => "gitlab-ci",
            Format::ArgoWorkflows => "argo-workflows",
            Format::Kebap => "kebap",
            Format::Backstage => "backstage",
        }
    }

    /// Whether what it writes runs the projects somewhere (CI jobs, the operator's workspaces):
    /// then it needs a backend those reach and the stack's values. A catalog runs nothing.
    pub(crate) fn runs_projects(self) -> bool {
        match self {
            Format::Pko | Format::GithubActions | Format::GitlabCi | Format::ArgoWorkflows | Format::Kebap => true,
            Format::Backstage => false,
        }
    }
}

/// Which revision of the repository an engine checks out: exactly one of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Revision {
    Branch(String),
    Commit(String),
}

impl Revision {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Revision::Branch(s) | Revision::Commit(s) => s,
        }
    }
}

/// The repository an engine checks out: PKO's Stacks (from git), Argo's tasks, Argo CD.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    pub(crate) url: String,
    pub(crate) revision: Revision,
    /// The workspace's directory inside the repository (`""` at its root, else ending in `/`).
    pub(crate) prefix: String,
}

/// A secret by its configuration key and the environment variable a CI job passes it in.
#[derive(Debug, Clone)]
pub(crate) struct SecretKey {
    pub(crate) key: String,
    pub(crate) env: String,
}

/// What every format takes besides the plan and its own options, resolved by the caller.
#[derive(Debug, Clone)]
pub(crate) struct Common {
    pub(crate) stack: String,
    /// The shared state backend (`PULUMI_BACKEND_URL`), one every engine reaches.
    pub(crate) backend: String,
    /// The plain values of the shared stack configuration, in its order.
    pub(crate) config: Map<String, Value>,
    /// The secret keys of the shared stack configuration (their values stay where they are).
    pub(crate) config_secrets: Vec<SecretKey>,
    /// Every project secret of the graph, kept by the secrets-store project.
    pub(crate) store_secrets: Vec<SecretKey>,
    /// Environment variables of the credentials every project needs: the passphrase, the
    /// backend's, the cloud's.
    pub(crate) credentials: Vec<String>,
    /// The workspace's directory inside the repository a CI job checks out (`""` at its root,
    /// else ending in `/`): where its jobs write the stack file and run the runner.
    pub(crate) workspace: String,
}

/// A file of an export, its path relative to the output directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct File {
    pub(crate) path: String,
    pub(crate) text: String,
    pub(crate) executable: bool,
}

impl File {
    fn new(path: &str, text: String) -> Self {
        File {
            path: path.to_string(),
            text,
            executable: false,
        }
    }
}

/// What an export produced: its files, and the names it gave projects (to print the mapping).
#[derive(Debug, Clone)]
pub(crate) struct Export {
    pub(crate) files: Vec<File>,
    pub(crate) names: Vec<(&'static str, Names)>,
}

/// The up and the destroy file of an engine that runs the plan each way: `make` writes each.
fn up_and_destroy(up: &str, destroy: &str, make: impl Fn(Operation) -> String) -> [File; 2] {
    [
        File::new(up, make(Operation::Up)),
        File::new(destroy, make(Operation::Destroy)),
    ]
}

/// Why an export cannot be made, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExportError {
    pub(crate) message: String,
    pub(crate) help: String,
}

/// How every generated file says what made it, in a comment line at its top: the writer tells
/// an export's files from a user's by it (it overwrites and removes only files carrying it).
const MADE_BY: &str = "Made by `runner export ";

/// How many lines from the top [`made_by`] looks at (the header is at most the third line).
pub(crate) const HEADER_LINES: usize = 8;

/// The header every file starts with: what made it and that it is made, not written.
fn header(plan: &Plan<'_>, common: &Common, format: Format, what: &str) -> Vec<String> {
    vec![
        format!(
            "{what}: provider {}, stack {}, {}.",
            plan.provider.name,
            common.stack,
            crate::render::count(plan.order.len(), "project")
        ),
        // From the repository's root, as its jobs run: the workspace named when it is a folder.
        format!(
            "{MADE_BY}{}{} -p {} -s {}`: export again rather than edit.",
            format.as_str(),
            if common.workspace.is_empty() {
                String::new()
            } else {
                format!(" --workspace {}", shell::quote(common.workspace.trim_end_matches('/')))
            },
            plan.provider.name,
            common.stack
        ),
    ]
}

/// The format of the export that made a file, read from the start of its text (`None`: no
/// export made it).
pub(crate) fn made_by(head: &str) -> Option<Format> {
    head.lines().take(HEADER_LINES).find_map(|line| {
        let rest = line.strip_prefix("# ")?.strip_prefix(MADE_BY)?;
        let word = rest.split(' ').next()?;
        Format::ALL.iter().copied().find(|f| f.as_str() == word)
    })
}

/// What each project of the plan waits for (its needs and `after`s), in run order.
fn waits(plan: &Plan<'_>) -> Vec<(usize, Vec<usize>)> {
    let position: BTreeMap<usize, usize> = plan.order.iter().enumerate().map(|(p, &i)| (i, p)).collect();
    plan.order
        .iter()
        .map(|&i| {
            let mut w: Vec<usize> = plan.waits_for(i).into_iter().map(|n| n.node).collect();
            w.sort_by_key(|n| position[n]);
            (i, w)
        })
        .collect()
}

/// What each project waits for in `op`, in the order `op` runs them: [`waits`] (needs first), or
/// on destroy [`dependents`] (dependents first).
fn waits_in(plan: &Plan<'_>, op: Operation) -> Vec<(usize, Vec<usize>)> {
    match op.direction() {
        Direction::Forward => waits(plan),
        Direction::Reverse => dependents(plan),
    }
}

/// What each project waits for on destroy: what needs it (reverse run order).
fn dependents(plan: &Plan<'_>) -> Vec<(usize, Vec<usize>)> {
    let mut by: BTreeMap<usize, Vec<usize>> = plan.order.iter().map(|&i| (i, Vec::new())).collect();
    for (first, after, _) in plan.edges() {
        by.get_mut(&first).expect("an edge of the plan").push(after);
    }
    let mut out: Vec<(usize, Vec<usize>)> = plan.order.iter().rev().map(|&i| (i, by[&i].clone())).collect();
    let position: BTreeMap<usize, usize> = out.iter().enumerate().map(|(p, (i, _))| (*i, p)).collect();
    for (_, d) in &mut out {
        d.sort_by_key(|n| position[n]);
    }
    out
}

/// The image CI jobs or Argo tasks run in, and the Pulumi CLI version it holds (GitLab CI,
/// Argo Workflows).
#[derive(Debug, Clone)]
pub(crate) struct Image {
    pub(crate) name: String,
    pub(crate) pulumi_version: String,
}

impl Image {
    /// What the image must hold, and the command that builds it from the repository's
    /// Dockerfile.
    fn needs(&self) -> Vec<String> {
        vec![
            format!(
                "The jobs run in the image {}, which must hold `runner`, `pulumi` {} and the provider's tools; the \
                 repository's Dockerfile makes one (its head says what it holds):",
                self.name, self.pulumi_version
            ),
            format!(
                "  docker build --build-arg PULUMI_VERSION={} -t {} .   # then push it where the jobs pull from",
                self.pulumi_version, self.name
            ),
        ]
    }
}

/// The projects of the plan that build a container image (a provider check runs `docker`
/// for them), and what their jobs need for it: a Docker daemon with buildx.
fn docker_needs(plan: &Plan<'_>, how: &str) -> Vec<String> {
    let mut projects: Vec<&str> = plan
        .provider
        .checks
        .iter()
        .filter(|c| c.command.first().is_some_and(|c| c == "docker"))
        .flat_map(|c| c.when_projects.iter())
        .filter(|p| plan.order.iter().any(|&i| plan.name(i) == p.as_str()))
        .map(String::as_str)
        .collect();
    projects.sort_unstable();
    projects.dedup();
    if projects.is_empty() {
        return Vec::new();
    }
    vec![
        format!(
            "{} build{} a container image with Docker and buildx (`docker buildx version` must work where {} run{}):",
            projects.join(", "),
            if projects.len() == 1 { "s" } else { "" },
            if projects.len() == 1 { "it" } else { "they" },
            if projects.len() == 1 { "s" } else { "" }
        ),
        format!("  {how}"),
    ]
}

/// The Kubernetes objects a format's Workflows or Stacks need and do not hold, each with the
/// command that makes it (the values come from the shell's environment: none is written here).
fn cluster_needs(common: &Common, ns: &str, service_account: bool) -> Vec<String> {
    let mut h = vec![format!("Before the first run, once (in the namespace {ns}):")];
    h.push(format!("  kubectl create namespace {ns}"));
    if service_account {
        h.push(format!(
            "  kubectl apply -f rbac.yaml   # the ServiceAccount {} the tasks run as",
            base_name(common)
        ));
    }
    // The values go through printf (a shell builtin) into a file descriptor, never on a
    // command line where `ps` shows them.
    let secret = |name: String, pairs: Vec<(String, String)>| {
        let format = "%s=%s\\n".repeat(pairs.len());
        let args: Vec<String> = pairs.iter().map(|(k, env)| format!("{k} \"${env}\"")).collect();
        format!(
            "  kubectl -n {ns} create secret generic {name} --from-env-file=<(printf '{format}' {})",
            args.join(" ")
        )
    };
    if !common.credentials.is_empty() {
        let pairs = common.credentials.iter().map(|c| (c.clone(), c.clone())).collect();
        h.push(secret(credentials_secret(common), pairs));
    }
    let mut keys: Vec<(String, String)> = Vec::new();
    for s in common.config_secrets.iter().chain(&common.store_secrets) {
        let k = secret_key(&s.key);
        if !keys.iter().any(|(have, _)| *have == k) {
            keys.push((k, s.env.clone()));
        }
    }
    if !keys.is_empty() {
        h.push(secret(config_secret(common), keys));
    }
    h.push("  (bash, with each variable set in the environment; the values are never written here)".into());
    h
}

/// Base of the Kubernetes names of one stack's objects (`runner-dev`).
fn base_name(common: &Common) -> String {
    let names = Names::new(Rule::Dns1123(40), [format!("runner-{}", common.stack).as_str()], &[]);
    names.get(&format!("runner-{}", common.stack)).to_string()
}

/// The Kubernetes Secret holding the credentials (keys: the variables' names).
fn credentials_secret(common: &Common) -> String {
    format!("{}-credentials", base_name(common))
}

/// The Kubernetes Secret holding the stack configuration's secrets.
fn config_secret(common: &Common) -> String {
    format!("{}-config", base_name(common))
}

/// A configuration key as a Kubernetes Secret key (`prometheus:adminpass` →
/// `prometheus.adminpass`).
fn secret_key(key: &str) -> String {
    key.chars()
        .map(|c| match c {
            ':' => '.',
            c if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') => c,
            _ => '-',
        })
        .collect()
}

/// The secret configuration keys one project's run needs: the secrets store keeps every project
/// secret and reads no shared configuration; every other project gets the shared file's.
fn secrets_of<'a>(plan: &Plan<'_>, i: usize, common: &'a Common) -> &'a [SecretKey] {
    if plan.project(i).secrets_store {
        &common.store_secrets
    } else {
        &common.config_secrets
    }
}

/// Every secret a CI job may need, by environment variable: credentials, then the stack
/// configuration's secrets, then the projects' (`MARA_SECRET_*`), without repeats.
fn ci_secrets(common: &Common, op: Operation) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A destroy asks for no project secret (what it removes needs none): only what opens the
    // stacks and the cloud, and the secrets of the shared stack file (a provider's token).
    let store = if op == Operation::Destroy {
        &[][..]
    } else {
        &common.store_secrets[..]
    };
    let all = common
        .credentials
        .iter()
        .cloned()
        .chain(common.config_secrets.iter().map(|s| s.env.clone()))
        .chain(store.iter().map(|s| s.env.clone()));
    for name in all {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The shared stack file a CI job writes before it runs (the repository does not hold it):
/// the plain values; the secrets come from `MARA_SECRET_*` variables.
fn stack_file(common: &Common) -> String {
    yaml::document(&[], &json!({ "config": common.config }))
}

/// The runner command a CI job or task runs for one project: nobody is at a terminal there, so
/// it says `--yes` (which `destroy` requires without one).
fn runner_command(plan: &Plan<'_>, common: &Common, op: Operation, project: &str) -> String {
    // A workspace in a sub-folder of the repository (`examples/local`): the job runs at the
    // checkout's root, the runner where the workspace is.
    let workspace = match common.workspace.trim_end_matches('/') {
        "" => String::new(),
        dir => format!(" --workspace {}", shell::quote(dir)),
    };
    format!(
        "runner {} --only {} -p {} -s {}{workspace} --non-interactive --yes",
        op.as_str(),
        shell::quote(project),
        shell::quote(&plan.provider.name),
        shell::quote(&common.stack)
    )
}

/// Where a CI job writes the shared stack file, as a shell word (from the checkout's root).
fn stack_file_path(common: &Common) -> String {
    shell::quote(&format!(
        "{}config/pulumi/Pulumi.{}.yaml",
        common.workspace, common.stack
    ))
}

/// The directory of that file, as a shell word.
fn stack_file_dir(common: &Common) -> String {
    shell::quote(&format!("{}config/pulumi", common.workspace))
}

/// Is `name` a DNS-1123 label (what a Kubernetes namespace must be): 1 to 63 lower-case letters,
/// digits and `-`, a letter or digit at both ends?
pub(crate) fn dns1123_label(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_by_reads_the_header_of_every_format_and_nothing_else() {
        for &f in Format::ALL {
            let text = format!(
                "#!/bin/sh\n# What: provider aws, stack dev, 3 projects.\n# {MADE_BY}{} -p aws -s dev`: export again rather than edit.\n",
                f.as_str()
            );
            assert_eq!(made_by(&text), Some(f));
        }
        assert_eq!(made_by("# Made by hand\nkey: value\n"), None);
        assert_eq!(made_by("key: 1\n# Made by `runner export nothing -p a -s b`\n"), None);
        let late = format!("{}# {MADE_BY}pko -p a -s b`\n", "x: 1\n".repeat(HEADER_LINES));
        assert_eq!(made_by(&late), None, "only the top of a file is its header");
    }
}
