//! The run state under `.runner/<stack>/state.json`: per project, how its last operation ended,
//! when, and the digests that let `up` skip what has not changed. Written atomically after
//! every change, so an interrupted run leaves a consistent file to resume from. Holds no secret
//! values: outputs are redacted and digests are keyed.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::exec::Outputs;

pub const RUNNER_DIR: &str = ".runner";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RunState {
    pub schema_version: u32,
    pub stack: String,
    pub projects: BTreeMap<String, ProjectState>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProjectState {
    /// `running`, `succeeded`, `failed`, `skipped`, `unchanged`, `not started`, `waits`.
    pub status: String,
    pub operation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// The stack holds a deployment made by the runner (`up` succeeded and no destroy since).
    #[serde(default)]
    pub deployed: bool,
    /// Inputs digest of the last successful `up`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_digest: Option<String>,
    /// Outputs digest of the last successful `up`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs_digest: Option<String>,
    /// Outputs of the last successful `up`, secrets redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Map<String, Value>>,
}

pub fn state_path(root: &Path, stack: &str) -> PathBuf {
    root.join(RUNNER_DIR).join(stack).join("state.json")
}

impl RunState {
    pub fn load(root: &Path, stack: &str) -> Result<Self, String> {
        let path = state_path(root, stack);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a run state the runner can read ({e}); delete it to start afresh",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RunState {
                schema_version: 1,
                stack: stack.to_string(),
                projects: BTreeMap::new(),
            }),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    pub fn save(&self, root: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).expect("state serializes") + "\n";
        write_atomic(&state_path(root, &self.stack), text.as_bytes())
    }
}

/// Temporary file in the same directory, flushed, then renamed over the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("a file path has a parent");
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// Keyed digests (a random key kept in `.runner/digest-key`), so a digest of outputs that hold
/// secrets says nothing about them.
pub struct Digests {
    key: Vec<u8>,
    root: PathBuf,
    config_file: PathBuf,
}

impl Digests {
    pub fn open(root: &Path, config_file: &Path) -> std::io::Result<Self> {
        let path = root.join(RUNNER_DIR).join("digest-key");
        let key = match std::fs::read(&path) {
            Ok(k) if k.len() >= 32 => k,
            _ => {
                let mut k = vec![0u8; 32];
                fill_random(&mut k)?;
                std::fs::create_dir_all(path.parent().expect("parent"))?;
                let mut opts = std::fs::OpenOptions::new();
                opts.write(true).create(true).truncate(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
                opts.open(&path)?.write_all(&k)?;
                k
            }
        };
        Ok(Digests {
            key,
            root: root.to_path_buf(),
            config_file: config_file.to_path_buf(),
        })
    }

    fn hasher(&self) -> Sha256 {
        let mut h = Sha256::new();
        h.update(&self.key);
        h
    }

    /// Digest of what a project's `up` depends on: every file of its directory, the shared
    /// stack configuration, and the digests of its upstream projects' outputs.
    pub fn inputs(&self, project_path: &str, upstream: &BTreeMap<String, String>) -> String {
        let mut h = self.hasher();
        let dir = self.root.join(project_path);
        let mut files = Vec::new();
        collect_files(&dir, &dir, &mut files);
        files.sort();
        for rel in files {
            h.update(rel.as_bytes());
            h.update([0]);
            h.update(std::fs::read(dir.join(&rel)).unwrap_or_default());
            h.update([0]);
        }
        h.update(b"config\0");
        // Pulumi adds `encryptionsalt` to the shared file during the first parallel runs; it is
        // not configuration, so it must not make the projects that finished earlier look changed.
        let config = std::fs::read_to_string(&self.config_file).unwrap_or_default();
        for line in config.lines().filter(|l| !l.starts_with("encryptionsalt:")) {
            h.update(line.as_bytes());
            h.update(b"\n");
        }
        for (name, digest) in upstream {
            h.update(name.as_bytes());
            h.update(b"=");
            h.update(digest.as_bytes());
            h.update([0]);
        }
        hex(&h.finalize())
    }

    pub fn outputs(&self, outputs: &Outputs) -> String {
        let mut h = self.hasher();
        h.update(serde_json::to_string(&outputs.values).unwrap_or_default().as_bytes());
        hex(&h.finalize())
    }
}

/// Files under `dir`, relative, skipping hidden entries and dependency or build directories.
fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || matches!(name.as_str(), "node_modules" | "venv" | "__pycache__" | "target") {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.display().to_string());
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn fill_random(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read as _;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}

/// `2026-11-22T14:06:03.881Z`, for the state and the summary.
pub fn timestamp(t: std::time::SystemTime) -> String {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_787_339_880_123);
        assert_eq!(timestamp(t), "2026-08-21T19:18:00.123Z");
    }

    #[test]
    fn digests_follow_files_config_and_upstream() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("p")).unwrap();
        std::fs::write(dir.path().join("p/Pulumi.yaml"), "name: p\n").unwrap();
        let cfg = dir.path().join("cfg.yaml");
        std::fs::write(&cfg, "config: {}\n").unwrap();
        let d = Digests::open(dir.path(), &cfg).unwrap();
        let none = BTreeMap::new();
        let a = d.inputs("p", &none);
        assert_eq!(a, d.inputs("p", &none), "stable");
        std::fs::write(dir.path().join("p/Pulumi.yaml"), "name: p\n# edited\n").unwrap();
        let b = d.inputs("p", &none);
        assert_ne!(a, b);
        std::fs::write(&cfg, "encryptionsalt: v1:abc\nconfig: {}\n").unwrap();
        assert_eq!(b, d.inputs("p", &none), "the salt is not configuration");
        std::fs::write(&cfg, "config: {a: b}\n").unwrap();
        assert_ne!(b, d.inputs("p", &none));
        let up = BTreeMap::from([("x".to_string(), "1".to_string())]);
        assert_ne!(d.inputs("p", &none), d.inputs("p", &up));
        // The key is kept: a second open gives the same digests.
        let again = Digests::open(dir.path(), &cfg).unwrap();
        assert_eq!(again.inputs("p", &up), d.inputs("p", &up));
    }
}
