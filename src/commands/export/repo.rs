//! The repository an exported engine checks out, read with `git` from the workspace: its URL
//! (`--repo`, else the `origin` remote, with a warning when no pod could clone it), the revision
//! (`--branch`, `--commit`, else HEAD), the workspace's directory in it, and where a KEBAP
//! bundle lives in it (Argo CD syncs the bundle from git, so it must be inside).

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use crate::error::RunnerError;
use crate::export::{Format, Repo, Revision};
use crate::{fs, report};

/// `git -C root ARGS`'s output, trimmed; `None` when it fails (no git, or no checkout).
pub(crate) fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The top directory of the git checkout `root` is in, if it is in one.
pub(crate) fn top(root: &Path) -> Option<PathBuf> {
    git(root, &["rev-parse", "--show-toplevel"]).map(PathBuf::from)
}

/// The repository the engine of a `format` export checks out: `url` (`--repo`) or the `origin`
/// remote; `revision` (`--branch`, `--commit`) or HEAD (its branch, else its commit); the
/// workspace's directory in it.
pub(super) fn repository(
    root: &Path,
    format: Format,
    url: Option<&str>,
    revision: Option<&Revision>,
) -> Result<Repo, RunnerError> {
    let url = match url {
        Some(u) => u.to_string(),
        None => origin(root, format)?,
    };
    let revision = match revision {
        Some(r) => r.clone(),
        None => match git(root, &["symbolic-ref", "--short", "-q", "HEAD"]) {
            Some(b) if !b.is_empty() => Revision::Branch(b),
            _ => Revision::Commit(git(root, &["rev-parse", "HEAD"]).ok_or_else(|| {
                RunnerError::usage(
                    "cannot tell which revision the engine should check out: the workspace is not a git checkout",
                    "pass --branch NAME or --commit SHA",
                )
            })?),
        },
    };
    let prefix = git(root, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    Ok(Repo { url, revision, prefix })
}

/// The `origin` remote's URL, with a warning when no engine in a cluster could clone it.
fn origin(root: &Path, format: Format) -> Result<String, RunnerError> {
    let url = git(root, &["remote", "get-url", "origin"]).ok_or_else(|| {
        RunnerError::usage(
            format!(
                "`export {}` points the engine at the repository, and the workspace has no git remote `origin`",
                format.as_str()
            ),
            "pass --repo URL (and --branch NAME or --commit SHA)",
        )
    })?;
    if let Some(why) = unclonable(&url) {
        report::warning(&format!(
            "the `origin` remote {url} {why}: the engine clones the repository from inside the cluster\n  \
             fix: pass --repo with a URL the engine can clone (https://…), or set up the credentials it needs"
        ));
    }
    Ok(url)
}

/// Why an engine in a cluster could not clone `url` as it stands, if it could not: a path on
/// this machine, or SSH, which needs a key the exported objects do not carry.
fn unclonable(url: &str) -> Option<&'static str> {
    let scp_like = !url.contains("://") && url.split_once(':').is_some_and(|(host, _)| host.contains('@'));
    if url.starts_with("ssh://") || scp_like {
        Some(
            "is SSH, which needs a key the exported objects do not carry (PKO's gitAuth.sshAuth, Argo's sshPrivateKeySecret)",
        )
    } else if url.starts_with("file://") || !url.contains("://") {
        Some("is a path on this machine, which no pod can reach")
    } else {
        None
    }
}

/// `--bundle-path`: a path inside the repository, relative to its root.
pub(super) fn given_bundle_path(path: &str) -> Result<String, RunnerError> {
    let p = Path::new(path);
    let outside = p.is_absolute()
        || p.components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)));
    let trimmed = path.trim_matches('/');
    if outside || trimmed.is_empty() || trimmed == "." {
        return Err(RunnerError::usage(
            format!("--bundle-path {path:?} is not a directory inside the repository"),
            "pass the bundle's directory relative to the repository's root (`deploy/kebap`), without `..`",
        ));
    }
    Ok(trimmed.trim_start_matches("./").to_string())
}

/// Where the bundle written to `dir` will live in the repository: `dir` relative to the
/// repository's root (`root`, the workspace's, when it is no git checkout). Argo CD syncs that
/// path from git, so a directory outside the repository is refused with the fix.
pub(super) fn bundle_path(root: &Path, dir: &Path) -> Result<String, RunnerError> {
    let top = top(root).unwrap_or_else(|| root.to_path_buf());
    let (top, dir) = (fs::comparable(&top), fs::comparable(dir));
    match dir.strip_prefix(&top) {
        Ok(rel) if !rel.as_os_str().is_empty() => Ok(rel.display().to_string()),
        _ => Err(RunnerError::usage(
            format!(
                "`export kebap` writes the bundle to {}, {} the repository ({}): Argo CD syncs the bundle's \
                 manifests/ from the repository, so it needs the bundle's path there",
                dir.display(),
                if dir == top { "the root of" } else { "outside" },
                top.display()
            ),
            "pass -o DIR inside the repository, or --bundle-path PATH naming where the bundle will be committed \
             (relative to the repository's root)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A git checkout in a new temporary directory, on branch `main`, with `origin` when given.
    fn checkout(origin: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@example.test"])
                .args(args)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        run(&["init", "-q", "-b", "main"]);
        if let Some(url) = origin {
            run(&["remote", "add", "origin", url]);
        }
        run(&["commit", "-q", "--allow-empty", "-m", "first"]);
        dir
    }

    fn message(e: RunnerError) -> String {
        match e {
            RunnerError::Usage { message, help } => format!("{message} / {}", help.unwrap_or_default()),
            other => panic!("not a usage error: {other:?}"),
        }
    }

    #[test]
    fn the_repository_is_the_origin_remote_at_heads_branch_with_the_workspaces_directory() {
        let repo = checkout(Some("https://git.example.test/acme/platform.git"));
        let ws = repo.path().join("infra/platform");
        std::fs::create_dir_all(&ws).unwrap();
        let found = repository(&ws, Format::Pko, None, None).unwrap();
        assert_eq!(found.url, "https://git.example.test/acme/platform.git");
        assert_eq!(found.revision, Revision::Branch("main".into()));
        assert_eq!(found.prefix, "infra/platform/");
        // The flags win; a detached HEAD is its commit.
        let given = Revision::Commit("0a1b2c3".into());
        let found = repository(repo.path(), Format::Kebap, Some("https://x.test/r.git"), Some(&given)).unwrap();
        assert_eq!(
            (found.url.as_str(), found.revision, found.prefix.as_str()),
            ("https://x.test/r.git", given, "")
        );
        let head = git(repo.path(), &["rev-parse", "HEAD"]).unwrap();
        git(repo.path(), &["checkout", "-q", "--detach"]).unwrap();
        let found = repository(repo.path(), Format::Pko, None, None).unwrap();
        assert_eq!(found.revision, Revision::Commit(head));
    }

    #[test]
    fn without_a_remote_or_a_checkout_the_flags_to_pass_are_named() {
        let repo = checkout(None);
        let e = message(repository(repo.path(), Format::ArgoWorkflows, None, None).unwrap_err());
        assert_eq!(
            e,
            "`export argo-workflows` points the engine at the repository, and the workspace has no git remote \
             `origin` / pass --repo URL (and --branch NAME or --commit SHA)"
        );
        let plain = tempfile::tempdir().unwrap();
        let e = message(repository(plain.path(), Format::Pko, Some("https://x.test/r.git"), None).unwrap_err());
        assert!(e.ends_with("/ pass --branch NAME or --commit SHA"), "{e}");
    }

    #[test]
    fn ssh_and_local_paths_are_what_no_pod_clones() {
        for url in ["ssh://git@host/r.git", "git@github.com:acme/r.git"] {
            assert!(unclonable(url).is_some_and(|why| why.starts_with("is SSH")), "{url}");
        }
        for url in ["file:///srv/r.git", "/srv/r.git", "../r"] {
            assert_eq!(
                unclonable(url),
                Some("is a path on this machine, which no pod can reach"),
                "{url}"
            );
        }
        assert_eq!(unclonable("https://git.example.test/r.git"), None);
    }

    #[test]
    fn a_given_bundle_path_is_inside_the_repository_and_written_plainly() {
        assert_eq!(given_bundle_path("deploy/kebap").unwrap(), "deploy/kebap");
        assert_eq!(given_bundle_path("./deploy/kebap/").unwrap(), "deploy/kebap");
        for outside in ["/deploy", "../deploy", "deploy/../../x", "", ".", "/"] {
            let e = message(given_bundle_path(outside).unwrap_err());
            assert!(
                e.starts_with(&format!("--bundle-path {outside:?} is not a directory")),
                "{e}"
            );
        }
    }

    #[test]
    fn the_bundle_path_is_the_output_directory_in_the_repository() {
        let repo = checkout(None);
        let ws = repo.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        assert_eq!(bundle_path(&ws, &ws.join("deploy/./kebap")).unwrap(), "ws/deploy/kebap");
        assert_eq!(bundle_path(&ws, &repo.path().join("kebap")).unwrap(), "kebap");
        let e = message(bundle_path(&ws, repo.path()).unwrap_err());
        assert!(e.contains(", the root of the repository ("), "{e}");
        let elsewhere = tempfile::tempdir().unwrap();
        let e = message(bundle_path(&ws, elsewhere.path()).unwrap_err());
        assert!(e.contains(", outside the repository ("), "{e}");
        // No checkout: the workspace is the repository's root.
        assert_eq!(bundle_path(elsewhere.path(), &elsewhere.path().join("k")).unwrap(), "k");
    }
}
