//! Keyed digests of what a project's `up` depended on and produced, so `up` can skip a project
//! whose inputs did not change. The key (random, kept in `.runner/digest-key`) makes a digest of
//! outputs that hold secrets say nothing about them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::exec::Outputs;
use crate::fs::{NewFile, write_atomic};
use crate::workspace::RunDir;

/// Keyed digests (a random key kept in `.runner/digest-key`), so a digest of outputs that hold
/// secrets says nothing about them.
pub(crate) struct Digests {
    key: Vec<u8>,
    root: PathBuf,
    config_file: PathBuf,
    /// Inputs from outside the projects: see [`Digests::with_outside`].
    outside: Outside,
}

/// What a project depends on beyond its directory and the stack file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outside {
    /// Files a configuration key names (a `path` question's answer, such as the kubeconfig of
    /// an existing cluster), by key: part of the inputs of the projects whose program uses it.
    pub(crate) files: Vec<(String, PathBuf)>,
    /// The environment file's variables (and the runner's defaults), which every `pulumi` sees.
    pub(crate) env: BTreeMap<String, String>,
}

impl Digests {
    /// The digests of projects under `root`, with the key kept in `run_dir` (made on first use).
    pub(crate) fn open(root: &Path, run_dir: &RunDir, config_file: &Path) -> std::io::Result<Self> {
        let path = run_dir.digest_key();
        let key = match crate::fs::read_bytes(&path, 4096) {
            Ok(k) if k.len() >= 32 => k,
            // A pipe or a device is no key, and a new one would be written through it.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "{}: {e}; remove it (a new key is made, and every project runs once more)",
                        path.display()
                    ),
                ));
            }
            _ => {
                let mut k = vec![0u8; 32];
                fill_random(&mut k)?;
                write_atomic(&path, &k, NewFile::Private)?;
                k
            }
        };
        Ok(Digests {
            key,
            root: root.to_path_buf(),
            config_file: config_file.to_path_buf(),
            outside: Outside::default(),
        })
    }

    /// The inputs from outside the projects: a rotated token in a kubeconfig the stack file
    /// names, or a changed variable of the environment file, makes the projects run again.
    pub(crate) fn with_outside(mut self, outside: Outside) -> Self {
        self.outside = outside;
        self
    }

    fn hasher(&self) -> Sha256 {
        let mut h = Sha256::new();
        h.update(&self.key);
        h
    }

    /// Digest of what a project's `up` depends on: every file of its directory, the shared
    /// stack configuration, and the digests of its upstream projects' outputs.
    pub(crate) fn inputs(&self, project_path: &str, upstream: &BTreeMap<String, String>) -> String {
        let mut h = self.hasher();
        let dir = self.root.join(project_path);
        let mut files = Vec::new();
        collect_files(&dir, &dir, &mut Vec::new(), &mut files);
        files.sort();
        let program = std::fs::read_to_string(dir.join("Pulumi.yaml")).unwrap_or_default();
        for rel in files {
            h.update(rel.as_bytes());
            h.update([0]);
            hash_file(&mut h, &dir.join(&rel));
            h.update([0]);
        }
        for (key, path) in &self.outside.files {
            if program.contains(key.as_str()) {
                h.update(b"file\0");
                h.update(key.as_bytes());
                h.update([0]);
                hash_file(&mut h, path);
                h.update([0]);
            }
        }
        h.update(b"env\0");
        for (k, v) in &self.outside.env {
            h.update(k.as_bytes());
            h.update(b"=");
            h.update(v.as_bytes());
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

    pub(crate) fn outputs(&self, outputs: &Outputs) -> String {
        let mut h = self.hasher();
        h.update(serde_json::to_string(&outputs.values).unwrap_or_default().as_bytes());
        hex(&h.finalize())
    }
}

/// A regular file's content, streamed (a project may hold a large archive or binary). Anything
/// else counts by its kind alone: reading a FIFO, a socket or a device could block the run or
/// never end, and what the program would read there is not a file's content anyway.
fn hash_file(h: &mut Sha256, path: &Path) {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {
            if let Ok(mut f) = std::fs::File::open(path) {
                let _ = std::io::copy(&mut f, h);
            }
        }
        Ok(_) => h.update(b"\0not a regular file\0"),
        Err(_) => h.update(b"\0missing\0"),
    }
}

/// Files under `dir`, relative, skipping hidden entries and dependency or build directories.
/// Links are followed (a program may link a shared library in), but a directory already on the
/// way down is not entered again: a link to a parent would otherwise repeat the tree until the
/// path grows too long, and two such links would double it at every level.
fn collect_files(root: &Path, dir: &Path, above: &mut Vec<DirId>, out: &mut Vec<String>) {
    let Some(real) = dir_id(dir) else { return };
    if above.contains(&real) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    above.push(real);
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || matches!(name.as_str(), "node_modules" | "venv" | "__pycache__" | "target") {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            collect_files(root, &path, above, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.display().to_string());
        }
    }
    above.pop();
}

/// What tells a directory from any other, whatever the path it is reached by.
#[cfg(unix)]
type DirId = (u64, u64);
#[cfg(not(unix))]
type DirId = PathBuf;

#[cfg(unix)]
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn dir_id(dir: &Path) -> Option<DirId> {
    std::fs::canonicalize(dir).ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_follow_files_config_and_upstream() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("p")).unwrap();
        std::fs::write(dir.path().join("p/Pulumi.yaml"), "name: p\n").unwrap();
        let cfg = dir.path().join("cfg.yaml");
        std::fs::write(&cfg, "config: {}\n").unwrap();
        let run_dir = RunDir::new(dir.path(), "dev");
        let d = Digests::open(dir.path(), &run_dir, &cfg).unwrap();
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
        // A file the configuration names counts for the programs that use its key, and the
        // environment file's variables for every project.
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, "token: a").unwrap();
        std::fs::write(
            dir.path().join("p/Pulumi.yaml"),
            "name: p\nconfig:\n  kubernetes:kubeconfig: {}\n",
        )
        .unwrap();
        let outside = |env: &[(&str, &str)]| Outside {
            files: vec![("kubernetes:kubeconfig".into(), kubeconfig.clone())],
            env: env.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect(),
        };
        let d = Digests::open(dir.path(), &run_dir, &cfg)
            .unwrap()
            .with_outside(outside(&[]));
        let before = d.inputs("p", &none);
        std::fs::write(&kubeconfig, "token: b").unwrap();
        let rotated = d.inputs("p", &none);
        assert_ne!(before, rotated, "the rotated token is an input");
        let d = d.with_outside(outside(&[("AWS_PROFILE", "ops")]));
        assert_ne!(rotated, d.inputs("p", &none), "the environment file is an input");
        std::fs::write(dir.path().join("p/Pulumi.yaml"), "name: p\n").unwrap();
        let unused = d.inputs("p", &none);
        std::fs::write(&kubeconfig, "token: c").unwrap();
        assert_eq!(
            unused,
            d.inputs("p", &none),
            "a program that does not use the key ignores its file"
        );
        // The key is kept: a second open gives the same digests.
        let again = Digests::open(dir.path(), &run_dir, &cfg)
            .unwrap()
            .with_outside(outside(&[("AWS_PROFILE", "ops")]));
        assert_eq!(again.inputs("p", &up), d.inputs("p", &up));
    }

    #[cfg(unix)]
    #[test]
    fn linked_directories_count_and_a_link_to_a_parent_is_entered_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::create_dir_all(dir.path().join("shared")).unwrap();
        std::fs::write(p.join("Pulumi.yaml"), "name: p\n").unwrap();
        std::fs::write(dir.path().join("shared/lib.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink("../shared", p.join("lib")).unwrap();
        // Two links up: followed blindly, the tree doubles at every level.
        std::os::unix::fs::symlink("..", p.join("up")).unwrap();
        std::os::unix::fs::symlink(".", p.join("here")).unwrap();
        let mut files = Vec::new();
        collect_files(&p, &p, &mut Vec::new(), &mut files);
        files.sort();
        assert_eq!(
            files,
            ["Pulumi.yaml", "lib/lib.yaml", "up/shared/lib.yaml"],
            "each directory once below the project, a parent's files through the link"
        );
        let cfg = dir.path().join("cfg.yaml");
        std::fs::write(&cfg, "config: {}\n").unwrap();
        let d = Digests::open(dir.path(), &RunDir::new(dir.path(), "dev"), &cfg).unwrap();
        let none = BTreeMap::new();
        let before = d.inputs("p", &none);
        std::fs::write(dir.path().join("shared/lib.yaml"), "a: 2\n").unwrap();
        assert_ne!(before, d.inputs("p", &none), "a linked file is an input");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_in_a_project_counts_without_being_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("Pulumi.yaml"), "name: p\n").unwrap();
        let cfg = dir.path().join("cfg.yaml");
        std::fs::write(&cfg, "config: {}\n").unwrap();
        let d = Digests::open(dir.path(), &RunDir::new(dir.path(), "dev"), &cfg).unwrap();
        let none = BTreeMap::new();
        let before = d.inputs("p", &none);
        // Nobody writes to it: reading it would wait for ever.
        let made = std::process::Command::new("mkfifo")
            .arg(p.join("gate"))
            .status()
            .unwrap();
        assert!(made.success());
        assert_ne!(before, d.inputs("p", &none), "a new entry changes the digest");
    }
}
