//! `runner charts mirror DIR`: a Helm repository of exactly the charts the plan's programs
//! install, pulled from each chart's own repository (or one upstream, `--from`), each package's
//! digest and `Chart.yaml` checked, and every values schema that points at documents off the
//! chart made whole ([`super::schema`]) and the package written again with it. Everything is
//! fetched and checked in memory first: a chart that fails leaves DIR as it was. Then the
//! packages are written, and the index last (merged with the one DIR holds), each file
//! replaced atomically and never through a link.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::Digest as _;

use super::Chart;
use super::fetch::{Fetcher, Url};
use super::index::{self, Index};
use super::package::Package;
use super::schema;

/// What the mirror is asked.
pub(crate) struct MirrorRequest<'a> {
    pub(crate) charts: &'a [Chart],
    /// One repository every chart is pulled from in place of its own (a proxy).
    pub(crate) from: Option<Url>,
    /// The cluster whose `OpenAPI` stands in for Kubernetes definitions that cannot be fetched.
    pub(crate) cluster: &'a Cluster,
}

/// The cluster `kubectl` reaches: its own defaults unless these say otherwise.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cluster {
    pub(crate) kubeconfig: Option<PathBuf>,
    pub(crate) context: Option<String>,
}

impl Cluster {
    /// How it is named in a message.
    pub(crate) fn shown(&self) -> String {
        match (&self.kubeconfig, &self.context) {
            (_, Some(c)) => format!("context {c}"),
            (Some(k), None) => format!("the current context of {}", k.display()),
            (None, None) => "kubectl's current context".into(),
        }
    }

    /// `kubectl get --raw /openapi/v2`, read.
    fn openapi(&self) -> Result<Value, String> {
        let mut cmd = std::process::Command::new("kubectl");
        if let Some(k) = &self.kubeconfig {
            cmd.arg("--kubeconfig").arg(k);
        }
        if let Some(c) = &self.context {
            cmd.arg("--context").arg(c);
        }
        cmd.args(["get", "--raw", "/openapi/v2"]);
        cmd.stdin(std::process::Stdio::null());
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run kubectl (is it on PATH?): {e}"))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "kubectl get --raw /openapi/v2 failed: {}",
                crate::report::text::visible(said.trim())
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("kubectl gave no JSON for /openapi/v2: {e}"))
    }
}

/// What was done for one chart, as it is said.
#[derive(Debug, Clone)]
pub(crate) enum MirrorStep {
    /// Its package was read from there.
    Pulled { chart: String, from: String },
    /// A values schema's document off the chart was taken in.
    Resolved {
        chart: String,
        schema: String,
        document: String,
        definitions: usize,
        source: SchemaSource,
    },
}

/// Where a document a schema needed came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SchemaSource {
    /// Its own URL.
    Fetched,
    /// The cluster's `/openapi/v2` (the document could not be fetched: why).
    Cluster { cluster: String, why: String },
}

/// A chart ready to be written: its package file's name and bytes, and its index entry.
pub(crate) struct Mirrored {
    pub(crate) name: String,
    pub(crate) file: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) entry: Value,
}

/// A chart that cannot be mirrored: which, why, and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{chart} {version} ({project}): {what}")]
pub(crate) struct Failed {
    pub(crate) chart: String,
    pub(crate) version: String,
    pub(crate) project: String,
    pub(crate) what: String,
    pub(crate) fix: String,
}

/// Pulls, checks and mends every chart of `r` (each name and version once), saying each step.
pub(crate) fn pull(r: &MirrorRequest<'_>, say: &mut dyn FnMut(MirrorStep)) -> Result<Vec<Mirrored>, Failed> {
    let mut puller = Puller {
        r,
        fetcher: Fetcher::new(),
        indexes: BTreeMap::new(),
        documents: BTreeMap::new(),
        openapi: None,
    };
    let mut out: Vec<Mirrored> = Vec::new();
    for c in r.charts {
        if !out.iter().any(|m| m.file == file_name(c)) {
            out.push(puller.chart(c, say)?);
        }
    }
    Ok(out)
}

/// What one mirror has read so far: each repository's index, each schema's document, the
/// cluster's `OpenAPI` (`None` until asked for).
struct Puller<'r> {
    r: &'r MirrorRequest<'r>,
    fetcher: Fetcher,
    indexes: BTreeMap<String, Index>,
    documents: BTreeMap<String, Value>,
    openapi: Option<Result<Value, String>>,
}

/// A chart's failure, before it is tied to the chart: what, and the fix.
type Why = (String, String);

impl Puller<'_> {
    fn chart(&mut self, c: &Chart, say: &mut dyn FnMut(MirrorStep)) -> Result<Mirrored, Failed> {
        let failed = |(what, fix): Why| Failed {
            chart: c.name.clone(),
            version: c.version.clone(),
            project: c.project.clone(),
            what,
            fix,
        };
        let (mut package, bytes, entry, url) = self.package(c).map_err(failed)?;
        say(MirrorStep::Pulled {
            chart: format!("{} {}", c.name, c.version),
            from: url.shown(),
        });
        let mut mended = false;
        let schemas: Vec<(String, Vec<u8>)> = package.schemas().map(|e| (e.path.clone(), e.bytes.clone())).collect();
        for (path, bytes) in schemas {
            if let Some(whole) = self.mend(c, &path, &bytes, say).map_err(failed)? {
                package.replace(&path, whole);
                mended = true;
            }
        }
        let bytes = if mended {
            package.write().map_err(|e| {
                failed((
                    format!("cannot write its package again: {e}"),
                    "free memory and run again".into(),
                ))
            })?
        } else {
            bytes
        };
        let mut entry = entry;
        if let Some(m) = entry.as_object_mut() {
            m.insert("urls".into(), Value::Array(vec![Value::String(file_name(c))]));
            m.insert("digest".into(), Value::String(hex(&sha2::Sha256::digest(&bytes))));
        }
        Ok(Mirrored {
            name: c.name.clone(),
            file: file_name(c),
            bytes,
            entry,
        })
    }

    /// The chart's package from its repository (or `--from`), checked against the index and
    /// itself, with its bytes and the index's entry.
    fn package(&mut self, c: &Chart) -> Result<(Package, Vec<u8>, Value, Url), Why> {
        let r = self.r;
        let repo = match &r.from {
            Some(from) => from.clone(),
            None => own_repository(c)?,
        };
        let index = self.index(&repo)?;
        let Some(entry) = index.find(&c.name, &c.version) else {
            return Err((
                format!("{repo} has no version {} of {}", c.version, c.name),
                missing_version_fix(c, &index.versions(&c.name)),
            ));
        };
        let entry = entry.clone();
        let relative = entry
            .get("urls")
            .and_then(|u| u.get(0))
            .and_then(Value::as_str)
            .ok_or_else(|| (format!("{repo}'s index gives no URL for it"), fix_url(r)))?;
        let url = repo.join(relative).map_err(|e| (e.to_string(), fix_url(r)))?;
        let bytes = self
            .fetcher
            .get(&url)
            .map_err(|e| (format!("cannot read its package: {e}"), fix_reach(r)))?;
        let wanted = index::text(entry.get("digest"));
        let got = hex(&sha2::Sha256::digest(&bytes));
        if !wanted.is_empty() && !wanted.trim_start_matches("sha256:").eq_ignore_ascii_case(&got) {
            return Err((
                format!("its package {url} has the sha256 {got}, and the index says {wanted}"),
                "the package or the index was changed or cut in transit: pull again, and if it stays, ask the \
                 repository's owner (a proxy's cache may hold a stale copy)"
                    .into(),
            ));
        }
        let package = Package::read(&bytes).map_err(|e| (format!("{url} is no chart package: {e}"), fix_url(r)))?;
        package
            .check(&c.name, &c.version)
            .map_err(|e| (format!("{url} is not this chart: {e}"), fix_url(r)))?;
        Ok((package, bytes, entry, url))
    }

    /// The index of `repo`, read once.
    fn index(&mut self, repo: &Url) -> Result<&Index, Why> {
        let key = repo.shown();
        if !self.indexes.contains_key(&key) {
            let url = repo.join("index.yaml").map_err(|e| (e.to_string(), fix_url(self.r)))?;
            let bytes = self
                .fetcher
                .get(&url)
                .map_err(|e| (format!("cannot read the repository's index: {e}"), fix_reach(self.r)))?;
            let index = Index::parse(&bytes)
                .map_err(|e| (format!("{url} is not a Helm repository's index: {e}"), fix_url(self.r)))?;
            self.indexes.insert(key.clone(), index);
        }
        Ok(&self.indexes[&key])
    }

    /// The schema at `path` made whole, when it refers off the chart (`None`: it does not, or
    /// it is no JSON, which Helm says itself).
    fn mend(
        &mut self,
        c: &Chart,
        path: &str,
        bytes: &[u8],
        say: &mut dyn FnMut(MirrorStep),
    ) -> Result<Option<Vec<u8>>, Why> {
        let Ok(mut doc) = serde_json::from_slice::<Value>(bytes) else {
            return Ok(None);
        };
        let external = schema::external(&doc);
        if external.is_empty() {
            return Ok(None);
        }
        let mut have: BTreeMap<String, Value> = BTreeMap::new();
        let mut sources: Vec<(String, SchemaSource)> = Vec::new();
        for (document, fragments) in &external {
            let (value, source) = self.document(path, document, fragments)?;
            have.insert(document.clone(), value);
            sources.push((document.clone(), source));
        }
        let taken = schema::inline(&mut doc, &have).map_err(|e| {
            (
                format!("its {path} cannot be made whole: {e}"),
                "report it to the chart's maintainers; until then install it where the document can be read".into(),
            )
        })?;
        for (document, source) in sources {
            say(MirrorStep::Resolved {
                chart: format!("{} {}", c.name, c.version),
                schema: path.to_string(),
                document: super::fetch::hide_credentials(&document),
                definitions: taken,
                source,
            });
        }
        let mut text = serde_json::to_vec_pretty(&doc).expect("JSON serializes");
        text.push(b'\n');
        Ok(Some(text))
    }

    /// A document a schema refers to: from its URL, else (Kubernetes definitions only) made
    /// from the cluster's `OpenAPI`.
    fn document(
        &mut self,
        path: &str,
        document: &str,
        fragments: &std::collections::BTreeSet<String>,
    ) -> Result<(Value, SchemaSource), Why> {
        if let Some(d) = self.documents.get(document) {
            return Ok((d.clone(), SchemaSource::Fetched));
        }
        let read = Url::parse(document)
            .map_err(|e| e.to_string())
            .and_then(|u| self.fetcher.get(&u).map_err(|e| e.to_string()))
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| format!("it is not JSON: {e}")));
        let why = match read {
            Ok(v) => {
                self.documents.insert(document.to_string(), v.clone());
                return Ok((v, SchemaSource::Fetched));
            }
            Err(why) => why,
        };
        let cluster = self.r.cluster;
        if !schema::kubernetes_only(fragments) {
            return Err((
                format!("its {path} refers to {document}, which cannot be read: {why}"),
                format!("run where {document} can be read, or mirror it and serve it at that address"),
            ));
        }
        let api = self.openapi.get_or_insert_with(|| cluster.openapi());
        let api = api.as_ref().map_err(|cluster_why| {
            (
                format!(
                    "its {path} refers to {document}, which cannot be read ({why}), nor can the cluster's \
                     definitions stand in for it ({cluster_why})"
                ),
                format!(
                    "run where {document} can be read, or give --kubeconfig/--context of a cluster of the \
                     Kubernetes version the chart targets ({} was asked)",
                    cluster.shown()
                ),
            )
        })?;
        let made = schema::from_openapi(api).ok_or_else(|| {
            (
                format!("the cluster's /openapi/v2 ({}) holds no definitions", cluster.shown()),
                "give --kubeconfig/--context of a Kubernetes cluster".into(),
            )
        })?;
        Ok((
            made,
            SchemaSource::Cluster {
                cluster: cluster.shown(),
                why,
            },
        ))
    }
}

/// The chart's own repository as a URL, or why it cannot be pulled from.
fn own_repository(c: &Chart) -> Result<Url, Why> {
    if c.repository.starts_with("oci://") {
        return Err((
            format!(
                "its repository {} is an OCI registry; the mirror reads Helm repositories (an index.yaml)",
                c.repository
            ),
            format!(
                "give --from URL of a proxy that serves it as a Helm repository, or pull it with `helm pull {}/{} --version {}` \
                 and add it to DIR with `helm repo index DIR`",
                c.repository, c.name, c.version
            ),
        ));
    }
    Url::parse(&c.repository).map_err(|e| {
        (
            format!("its repository is {e}"),
            format!("correct repositoryOpts.repo in {}:{}", c.file, c.line),
        )
    })
}

fn fix_url(r: &MirrorRequest<'_>) -> String {
    match &r.from {
        Some(from) => format!("check --from {from}: it must be a Helm repository's URL, the folder of its index.yaml"),
        None => {
            "check the chart's repository in the program: a Helm repository's URL, the folder of its index.yaml".into()
        }
    }
}

fn fix_reach(r: &MirrorRequest<'_>) -> String {
    match &r.from {
        Some(_) => "check that the proxy answers from here (HTTPS_PROXY, its credentials), then run again".into(),
        None => "run where the charts' repositories can be reached (HTTPS_PROXY for a proxy), or give --from URL of a \
                 proxy that serves them"
            .into(),
    }
}

fn missing_version_fix(c: &Chart, versions: &[String]) -> String {
    let place = format!("{}:{}", c.file, c.line);
    if versions.is_empty() {
        return format!(
            "it has no chart {} at all: check the chart's name and repository at {place}",
            c.name
        );
    }
    let some: Vec<&str> = versions.iter().take(6).map(String::as_str).collect();
    format!(
        "pin a version it has ({}{}) at {place}, or in the stack file",
        some.join(", "),
        if versions.len() > some.len() { ", …" } else { "" }
    )
}

/// `NAME-VERSION.tgz`, as `helm package` names it.
pub(crate) fn file_name(c: &Chart) -> String {
    format!("{}-{}.tgz", c.name, c.version)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Why DIR cannot take the mirror.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DirError {
    #[error("{0} is a symbolic link: the mirror never writes through a link")]
    Link(String),
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error("{0}/index.yaml is there and is not a Helm repository's index ({1}): the mirror would replace it")]
    ForeignIndex(String, String),
    #[error("cannot write {0}: {1}")]
    Io(String, std::io::Error),
}

impl DirError {
    pub(crate) fn fix(&self) -> &'static str {
        match self {
            DirError::Link(_) => "pass the directory it points to, or a new directory",
            DirError::NotADirectory(_) => "pass a directory (it is made when missing)",
            DirError::ForeignIndex(..) => "pass an empty directory, or one an earlier mirror wrote",
            DirError::Io(..) => "check the directory's permissions and free space, then run again",
        }
    }
}

/// Checks DIR before anything is fetched: not a link, a directory when it exists, its index a
/// Helm index when it has one (returned, to be merged).
pub(crate) fn prepare_dir(dir: &Path, shown: &str) -> Result<Index, DirError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => return Err(DirError::Link(shown.to_string())),
        Ok(m) if !m.is_dir() => return Err(DirError::NotADirectory(shown.to_string())),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Index::default()),
        Err(e) => return Err(DirError::Io(shown.to_string(), e)),
    }
    let index = dir.join("index.yaml");
    match std::fs::symlink_metadata(&index) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index::default()),
        Err(e) => Err(DirError::Io(format!("{shown}/index.yaml"), e)),
        Ok(m) if !m.is_file() => Err(DirError::ForeignIndex(shown.to_string(), "not a regular file".into())),
        Ok(_) => {
            let bytes =
                crate::fs::read_bytes(&index, 256 << 20).map_err(|e| DirError::Io(format!("{shown}/index.yaml"), e))?;
            Index::parse(&bytes).map_err(|e| DirError::ForeignIndex(shown.to_string(), e.to_string()))
        }
    }
}

/// Writes the packages, then the index (`existing` with the new entries): each file replaced
/// atomically, never through a link. `header`: the index's comment lines.
pub(crate) fn write(
    dir: &Path,
    shown: &str,
    mut existing: Index,
    mirrored: &[Mirrored],
    header: &[String],
) -> Result<(), DirError> {
    std::fs::create_dir_all(dir).map_err(|e| DirError::Io(shown.to_string(), e))?;
    for m in mirrored {
        crate::fs::replace_file(&dir.join(&m.file), &m.bytes, false)
            .map_err(|e| DirError::Io(format!("{shown}/{}", m.file), e))?;
        existing.put(&m.name, m.entry.clone());
    }
    let generated = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let text = existing.to_yaml(header, &generated);
    crate::fs::replace_file(&dir.join("index.yaml"), text.as_bytes(), false)
        .map_err(|e| DirError::Io(format!("{shown}/index.yaml"), e))
}
