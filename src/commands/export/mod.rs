//! `export`: the plan written for another engine. This conductor does the reading and writing
//! around the pure exports (`crate::export`), in this order: the namespace the flags name; what
//! every format takes (`config`: the state backend every engine reaches, the stack
//! configuration's plain values, its secrets only as references); the format's own flags
//! resolved once into its exporter's options ([`FormatFlags`], implemented by each format's flags
//! in `cli::export`, with the [`Resolver`]: the repository and the bundle's place in it from
//! `repo`, the programs); then the files written (`outdir`: only inside the output directory,
//! only over its own files) and every name it had to change printed.

mod config;
mod outdir;
pub(crate) mod repo;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::write_result;
use crate::error::{RunnerError, exit};
use crate::export::names::{Names, Rule};
use crate::export::{self, Common, Export, ExportError, Format, Repo, Revision};
use crate::plan::{Operation, Plan};
use crate::report;
use crate::settings::{Settings, StackContext};

/// Where the files go.
#[derive(Debug, Clone)]
pub(crate) enum FilesTo {
    Dir(PathBuf),
    Stdout,
}

/// Where the files of an export go, and whether they may replace files it did not make.
#[derive(Debug, Clone)]
pub(crate) struct Destination {
    /// `None`: `exports/<provider>-<stack>/<format>` under the workspace.
    pub(crate) output: Option<FilesTo>,
    /// Replace files in the output directory that no export made (links themselves).
    pub(crate) force: bool,
}

/// One `export FORMAT` as its flags ask for it. Each format's flags implement it (in
/// `cli::export`): they are resolved once, with the [`Resolver`], into the options of the
/// format's exporter, which makes the export.
pub(crate) trait FormatFlags {
    fn format(&self) -> Format;

    /// `--namespace`, for a format whose objects go in a cluster: checked before anything is
    /// read.
    fn namespace(&self) -> Option<&str> {
        None
    }

    /// The flags resolved into the exporter's options, and the export it makes.
    fn export(&self, r: &Resolver<'_>, plan: &Plan<'_>, common: &Common) -> Result<Export, RunnerError>;
}

/// What a format's flags are resolved with: the workspace, the stack, where the files go.
pub(crate) struct Resolver<'a> {
    s: &'a Settings,
    t: &'a StackContext,
    format: Format,
    output: &'a FilesTo,
    namespace: String,
}

impl Resolver<'_> {
    pub(crate) fn stack(&self) -> &str {
        &self.t.stack
    }

    /// The namespace of the Kubernetes objects: `--namespace`, or `runner-<stack>`.
    pub(crate) fn namespace(&self) -> String {
        self.namespace.clone()
    }

    /// The repository the engine checks out: `url` (`--repo`) and `revision` (`--branch`,
    /// `--commit`), the rest read with git.
    pub(crate) fn repository(&self, url: Option<&str>, revision: Option<&Revision>) -> Result<Repo, RunnerError> {
        repo::repository(&self.s.ws.root, self.format, url, revision)
    }

    /// Each project's Pulumi YAML program, as data (one that cannot be read is left out: the
    /// exporter names it).
    pub(crate) fn programs(&self) -> BTreeMap<String, Value> {
        self.t
            .provider
            .projects
            .iter()
            .filter_map(|p| {
                let text = std::fs::read_to_string(self.s.ws.root.join(&p.path).join("Pulumi.yaml")).ok()?;
                let doc: Value = serde_saphyr::from_str(&text).ok()?;
                Some((p.name.clone(), doc))
            })
            .collect()
    }

    /// Where a bundle lives in the repository: `given` (`--bundle-path`), or the output
    /// directory's place there.
    pub(crate) fn bundle_path(&self, given: Option<&str>) -> Result<String, RunnerError> {
        match (given, self.output) {
            (Some(p), _) => repo::given_bundle_path(p),
            (None, FilesTo::Dir(dir)) => repo::bundle_path(&self.s.ws.root, dir),
            (None, FilesTo::Stdout) => Err(RunnerError::usage(
                "`export kebap -o -` prints the bundle, so where it will live in the repository (the path Argo CD \
                 syncs) is not known",
                "pass --bundle-path PATH: the bundle's directory relative to the repository's root",
            )),
        }
    }
}

impl From<ExportError> for RunnerError {
    fn from(e: ExportError) -> Self {
        RunnerError::usage(e.message, e.help)
    }
}

pub(crate) fn run(
    s: &Settings,
    t: &StackContext,
    request: &dyn FormatFlags,
    to: &Destination,
) -> Result<i32, RunnerError> {
    let format = request.format();
    let plan = Plan::new(&t.provider, Operation::Up, &[]).map_err(|e| RunnerError::usage(e.to_string(), ""))?;
    let namespace = namespace(request.namespace(), &t.stack)?;
    let common = config::common(s, t, format)?;
    let output = to.output.clone().unwrap_or_else(|| {
        FilesTo::Dir(
            s.ws.root
                .join("exports")
                .join(format!("{}-{}", t.provider.name, t.stack))
                .join(format.as_str()),
        )
    });
    let resolver = Resolver {
        s,
        t,
        format,
        output: &output,
        namespace,
    };
    let made = request.export(&resolver, &plan, &common)?;
    for (what, names) in &made.names {
        for (project, name) in names.changed() {
            report::info(&format!("name: {project} → {name} ({what}: {})", names.rule.describe()));
        }
    }
    match output {
        FilesTo::Stdout => {
            let mut text = String::new();
            for f in &made.files {
                if made.files.len() > 1 {
                    let _ = writeln!(text, "# ==> {} <==", f.path);
                }
                text.push_str(&f.text);
            }
            write_result(&text)?;
        }
        FilesTo::Dir(dir) => write_dir(s, format, to.force, &made.files, &dir, plan.order.len())?,
    }
    Ok(exit::SUCCESS)
}

/// The namespace of the Kubernetes objects: `--namespace`, refused unless it is a DNS-1123 label
/// (Kubernetes refuses any other, and the teardown script holds it), or `runner-<stack>` made
/// one.
fn namespace(given: Option<&str>, stack: &str) -> Result<String, RunnerError> {
    let label = |name: &str| Names::new(Rule::Dns1123(63), [name], &[]).get(name).to_string();
    match given {
        None => Ok(label(&format!("runner-{stack}"))),
        Some(n) if export::dns1123_label(n) => Ok(n.to_string()),
        Some(n) => Err(RunnerError::usage(
            format!(
                "--namespace {n:?} is not a Kubernetes namespace name: a namespace is a DNS-1123 label, 1 to 63 \
                 lower-case letters, digits and `-`, starting and ending with a letter or digit"
            ),
            format!("pass a name such as `{}`", label(n)),
        )),
    }
}

/// Writes the files into `dir` (see `outdir`), removes what an earlier export left, says so.
fn write_dir(
    s: &Settings,
    format: Format,
    force: bool,
    files: &[export::File],
    dir: &Path,
    projects: usize,
) -> Result<(), RunnerError> {
    let top = repo::top(&s.ws.root);
    let trusted: Vec<&Path> = top.iter().map(PathBuf::as_path).chain([s.ws.root.as_path()]).collect();
    let show = |p: &Path| s.ws.show(p);
    let writes = outdir::check(dir, &trusted, files, format, force, &show)?;
    writes.write(files, &show)?;
    for path in &writes.stale {
        report::info(&format!(
            "removed {}: an earlier `export {}` wrote it, this one does not",
            s.ws.show(path),
            format.as_str()
        ));
    }
    report::info(&format!(
        "Exported {} ({projects} projects) to {}: {}",
        format.as_str(),
        s.ws.show(dir),
        files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_is_a_dns_1123_label_given_or_made_from_the_stack() {
        assert_eq!(namespace(None, "dev").unwrap(), "runner-dev");
        assert_eq!(namespace(None, "Prod_EU").unwrap(), "runner-prod-eu");
        assert_eq!(namespace(Some("platform-1"), "dev").unwrap(), "platform-1");
        for bad in ["Platform", "-x", "$(touch PWN)", ""] {
            match namespace(Some(bad), "dev") {
                Err(RunnerError::Usage { message, help }) => {
                    assert!(message.starts_with(&format!("--namespace {bad:?} is not a Kubernetes namespace name")));
                    assert!(help.is_some_and(|h| h.starts_with("pass a name such as `")), "{bad}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
