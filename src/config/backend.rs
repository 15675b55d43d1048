//! The state backend, `PULUMI_BACKEND_URL`, read in one place: which kind it is, where a file
//! backend keeps its files (and a stack's locks), whether a passphrase keeps its secrets, whether
//! machines other than this one reach it (an export's jobs: [`Backend::reachable_by`]), and how
//! it is named to a person, and the shared backends a person is pointed to. A new scheme is a
//! change here.

use std::path::{Path, PathBuf};

use super::env::Env;
use crate::export::Format;
use crate::fs;

/// The variable `pulumi` reads the backend from.
pub(crate) const BACKEND_VAR: &str = "PULUMI_BACKEND_URL";

/// A state backend, as `PULUMI_BACKEND_URL` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Backend {
    /// Pulumi Cloud or a self-hosted service (`https://…`), or unset: the one `pulumi login` chose.
    Service(Option<String>),
    /// `file://DIR`: a directory, read by path.
    File { url: String, dir: PathBuf },
    /// A cloud bucket: `s3://`, `gs://`, `azblob://` (and any other `scheme://` the CLI may read).
    Bucket(String),
    /// Not a URL at all.
    NotAUrl(String),
}

impl Backend {
    /// The buckets a person who must set a backend more than one machine reaches is pointed to,
    /// by example (their secrets kept with a passphrase); every message and help that names the
    /// shared backends takes them from here and [`Self::SHARED_SERVICE`].
    pub(crate) const SHARED_BUCKETS: [&str; 3] = ["s3://BUCKET", "gs://BUCKET", "azblob://CONTAINER"];

    /// The shared service by example: Pulumi Cloud.
    pub(crate) const SHARED_SERVICE: &str = "https://api.pulumi.com";

    /// The shared backends' schemes: `s3://, gs://, azblob://, https://`.
    pub(crate) fn shared_schemes() -> String {
        Self::SHARED_BUCKETS
            .iter()
            .chain([&Self::SHARED_SERVICE])
            .filter_map(|example| example.split_once("://"))
            .map(|(scheme, _)| format!("{scheme}://"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The backend every child of this environment uses.
    pub(crate) fn of(env: &Env) -> Self {
        match env.get(BACKEND_VAR) {
            Some(url) => Backend::parse(&url),
            None => Backend::Service(None),
        }
    }

    pub(crate) fn parse(url: &str) -> Self {
        if url.is_empty() {
            return Backend::Service(None);
        }
        if let Some(dir) = file_url_path(url) {
            return Backend::File {
                url: url.to_string(),
                dir,
            };
        }
        if url.starts_with("https://") || url.starts_with("http://") {
            return Backend::Service(Some(url.to_string()));
        }
        if url.contains("://") {
            return Backend::Bucket(url.to_string());
        }
        Backend::NotAUrl(url.to_string())
    }

    /// The URL as given (empty for the service `pulumi login` chose).
    pub(crate) fn url(&self) -> &str {
        match self {
            Backend::Service(url) => url.as_deref().unwrap_or_default(),
            Backend::File { url, .. } | Backend::Bucket(url) | Backend::NotAUrl(url) => url,
        }
    }

    /// How a person is told which backend: its URL, or "Pulumi Cloud" for the logged-in one.
    pub(crate) fn label(&self) -> String {
        match self {
            Backend::Service(None) => "Pulumi Cloud".to_string(),
            other => other.url().to_string(),
        }
    }

    /// A backend that keeps state in files or buckets (Pulumi's "DIY" backends): its secrets
    /// are kept with a passphrase unless the stack names a KMS secrets provider.
    pub(crate) fn keeps_secrets_with_passphrase(&self) -> bool {
        matches!(self, Backend::File { .. } | Backend::Bucket(_))
    }

    /// The environment variables a job elsewhere needs to reach it (an export's secrets): the
    /// service's token, or the bucket's cloud credentials and the passphrase.
    pub(crate) fn credentials(&self) -> Vec<&'static str> {
        let scheme = self.url().split("://").next().unwrap_or_default();
        let mut out = match (self, scheme) {
            (Backend::Service(_), _) => return vec!["PULUMI_ACCESS_TOKEN"],
            (_, "s3") => vec!["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"],
            (_, "gs") => vec!["GOOGLE_CREDENTIALS"],
            (_, "azblob") => vec!["AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY"],
            _ => vec![],
        };
        out.insert(0, "PULUMI_CONFIG_PASSPHRASE");
        out
    }

    /// What to check when `pulumi` cannot reach it.
    pub(crate) fn reach_fix(&self) -> String {
        let scheme = self.url().split("://").next().unwrap_or_default();
        match (self, scheme) {
            (Backend::Service(_), _) => format!(
                "run `pulumi login` (or set PULUMI_ACCESS_TOKEN), or set {BACKEND_VAR} to the backend the stack lives in"
            ),
            (Backend::File { dir, .. }, _) => format!(
                "create the directory (`mkdir -p {}`) or set {BACKEND_VAR} to an existing one",
                dir.display()
            ),
            (_, "s3") => format!(
                "check the bucket's name, region and credentials: set AWS_REGION (or add `?region=<region>` to {BACKEND_VAR}), and AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE"
            ),
            _ => format!("check the bucket's name and credentials in {BACKEND_VAR}"),
        }
    }

    /// The directory of a file backend.
    pub(crate) fn dir(&self) -> Option<&Path> {
        match self {
            Backend::File { dir, .. } => Some(dir),
            _ => None,
        }
    }

    /// Where a file backend keeps the locks of one project's stack (`pulumi` v3's layout for a
    /// project-scoped backend, organization `organization`).
    pub(crate) fn lock_dir(&self, project: &str, stack: &str) -> Option<PathBuf> {
        Some(self.dir()?.join(".pulumi/locks/organization").join(project).join(stack))
    }
}

/// The warning of a CI job whose state is in the workspace's own file backend, which goes with
/// the job's checkout, and the fix.
pub(crate) fn lost_with_the_job() -> String {
    format!(
        "this CI job keeps the Pulumi state in the workspace's own file backend (.pulumi-state), \
         which is lost when the job ends: the next job will not know what this one deployed\n  \
         fix: set {BACKEND_VAR} in the job's environment to a backend that outlives it: \
         {} (with PULUMI_CONFIG_PASSPHRASE), or {} for Pulumi Cloud (with PULUMI_ACCESS_TOKEN)",
        Backend::SHARED_BUCKETS.join(", "),
        Backend::SHARED_SERVICE
    )
}

/// How the jobs of an export reach the backend ([`Backend::reachable_by`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reach<'a> {
    /// From anywhere: a service or a cloud store.
    Anywhere,
    /// Through a disk every machine that takes the jobs must mount at this path.
    SharedDisk(&'a Path),
}

/// Why the jobs of an export cannot reach the backend.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unreachable {
    #[error("PULUMI_BACKEND_URL is {0}, which is not a URL")]
    NotAUrl(String),
    #[error(
        "PULUMI_BACKEND_URL is {url}, a file backend, which the machines and pods {} runs its jobs on do not mount",
        .format.as_str()
    )]
    NotMounted { url: String, format: Format },
    #[error(
        "PULUMI_BACKEND_URL is {url}, a file backend {}, which each job's checkout replaces",
        if *.relative { "relative to the job's directory" } else { "inside the repository" }
    )]
    InCheckout { url: String, relative: bool },
}

impl Backend {
    /// Whether the jobs of an export to `format` reach the backend from where they run. A cloud
    /// store or a service: yes. A file backend: only a GitLab pipeline's, and only a directory
    /// named by its absolute path outside `checkouts` (the workspace and its repository, which
    /// each job's checkout replaces) — a disk every GitLab runner of the project mounts at that
    /// path (shell executors on one machine, or an NFS mount); the other engines' jobs run on
    /// machines or pods that mount nothing of ours.
    pub(crate) fn reachable_by(&self, format: Format, checkouts: &[&Path]) -> Result<Reach<'_>, Unreachable> {
        let url = self.url().to_string();
        match self {
            Backend::NotAUrl(_) | Backend::Service(None) => Err(Unreachable::NotAUrl(url)),
            Backend::Service(Some(_)) | Backend::Bucket(_) => Ok(Reach::Anywhere),
            Backend::File { .. } if format != Format::GitlabCi => Err(Unreachable::NotMounted { url, format }),
            Backend::File { dir, .. } => {
                let inside = |root: &&Path| fs::comparable(dir).starts_with(fs::comparable(root));
                if !dir.is_absolute() || checkouts.iter().any(inside) {
                    let relative = !dir.is_absolute();
                    Err(Unreachable::InCheckout { url, relative })
                } else {
                    Ok(Reach::SharedDisk(dir))
                }
            }
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// The path of a `file://` URL as the file backend reads it: the query (`?no_tmp_dir=true`)
/// left out, `%XX` decoded (Go's `net/url` writes them), `~` the home directory; `None` for any
/// other scheme.
pub(crate) fn file_url_path(url: &str) -> Option<PathBuf> {
    let path = url.strip_prefix("file://")?;
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let path = String::from_utf8_lossy(&percent_decoded(path)).into_owned();
    Some(crate::fs::expand_home(&path, crate::fs::home().as_deref()))
}

/// `%XX` sequences as the bytes they stand for (a malformed one is kept as written).
fn percent_decoded(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scheme_is_its_kind() {
        assert_eq!(Backend::parse(""), Backend::Service(None));
        assert_eq!(Backend::parse("").label(), "Pulumi Cloud");
        let cloud = Backend::parse("https://api.pulumi.com");
        assert_eq!(cloud.label(), "https://api.pulumi.com");
        assert!(!cloud.keeps_secrets_with_passphrase());
        let bucket = Backend::parse("s3://b?region=eu-west-1");
        assert!(bucket.keeps_secrets_with_passphrase() && bucket.dir().is_none());
        let file = Backend::parse("file:///srv/state?no_tmp_dir=true");
        assert_eq!(file.dir(), Some(Path::new("/srv/state")));
        assert_eq!(
            file.lock_dir("iam", "dev"),
            Some(PathBuf::from("/srv/state/.pulumi/locks/organization/iam/dev"))
        );
        assert_eq!(Backend::parse("/srv/state"), Backend::NotAUrl("/srv/state".into()));
        assert_eq!(cloud.credentials(), ["PULUMI_ACCESS_TOKEN"]);
        assert_eq!(
            bucket.credentials(),
            ["PULUMI_CONFIG_PASSPHRASE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
        );
        assert_eq!(file.credentials(), ["PULUMI_CONFIG_PASSPHRASE"]);
        // What to check when it cannot be reached (N21: a region the URL lacks).
        assert!(bucket.reach_fix().contains("AWS_REGION (or add `?region=<region>`"));
        assert!(
            file.reach_fix()
                .starts_with("create the directory (`mkdir -p /srv/state`)")
        );
        assert!(cloud.reach_fix().starts_with("run `pulumi login`"));
    }

    #[test]
    fn the_shared_backends_a_person_is_pointed_to_are_of_their_kind() {
        for bucket in Backend::SHARED_BUCKETS {
            assert!(matches!(Backend::parse(bucket), Backend::Bucket(_)), "{bucket}");
        }
        assert!(matches!(
            Backend::parse(Backend::SHARED_SERVICE),
            Backend::Service(Some(_))
        ));
        assert_eq!(Backend::shared_schemes(), "s3://, gs://, azblob://, https://");
        assert!(lost_with_the_job().contains(
            "outlives it: s3://BUCKET, gs://BUCKET, azblob://CONTAINER (with PULUMI_CONFIG_PASSPHRASE), or \
             https://api.pulumi.com for Pulumi Cloud"
        ));
    }

    #[test]
    fn every_engine_reaches_a_store_and_only_gitlab_jobs_a_shared_disk_outside_the_checkout() {
        let ws = tempfile::tempdir().unwrap();
        let checkouts = [ws.path()];
        for &format in Format::ALL {
            for url in ["s3://b?region=eu-west-1", "gs://b", "https://api.pulumi.com"] {
                assert_eq!(
                    Backend::parse(url).reachable_by(format, &checkouts),
                    Ok(Reach::Anywhere)
                );
            }
            for url in ["", "/srv/state"] {
                let why = Backend::parse(url).reachable_by(format, &checkouts).unwrap_err();
                assert_eq!(
                    why.to_string(),
                    format!("PULUMI_BACKEND_URL is {url}, which is not a URL")
                );
            }
        }
        let disk = Backend::parse("file:///srv/state");
        assert_eq!(
            disk.reachable_by(Format::GitlabCi, &checkouts),
            Ok(Reach::SharedDisk(Path::new("/srv/state")))
        );
        assert_eq!(
            disk.reachable_by(Format::Pko, &checkouts).unwrap_err().to_string(),
            "PULUMI_BACKEND_URL is file:///srv/state, a file backend, which the machines and pods pko runs its jobs \
             on do not mount"
        );
        // Inside the checkout (through `..` too), or relative to the job's directory: replaced.
        let inside = format!("file://{}/sub/../state", ws.path().display());
        assert_eq!(
            Backend::parse(&inside)
                .reachable_by(Format::GitlabCi, &checkouts)
                .unwrap_err()
                .to_string(),
            format!(
                "PULUMI_BACKEND_URL is {inside}, a file backend inside the repository, which each job's checkout replaces"
            )
        );
        assert_eq!(
            Backend::parse("file://state").reachable_by(Format::GitlabCi, &checkouts),
            Err(Unreachable::InCheckout {
                url: "file://state".into(),
                relative: true
            })
        );
    }

    #[test]
    fn a_file_url_is_read_as_the_file_backend_reads_it() {
        // A backend URL as a user writes it: `~/` is the home directory; other schemes no path.
        let home = PathBuf::from(std::env::var_os("HOME").unwrap());
        assert_eq!(
            file_url_path("file://~/state?no_tmp_dir=true"),
            Some(home.join("state"))
        );
        assert_eq!(file_url_path("file:///a%20b/c"), Some(PathBuf::from("/a b/c")));
        assert_eq!(file_url_path("s3://bucket"), None);
    }
}
