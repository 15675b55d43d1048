//! Keyed digests of what a project's `up` depended on and produced, so `up` can skip a project
//! whose inputs did not change. The key (random, kept in `.runner/digest-key`) makes a digest of
//! outputs that hold secrets say nothing about them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::exec::{ALL_FILES, Change, InputChange, InputDigest, InputKind, Inputs, Outputs};
use crate::fs::{NewFile, write_atomic};
use crate::workspace::RunDir;

/// Keyed digests (a random key kept in `.runner/digest-key`), so a digest of outputs that hold
/// secrets says nothing about them.
pub(crate) struct Digests {
    key: Vec<u8>,
    root: PathBuf,
    /// The shared stack file's `config:`.
    config: StackConfig,
    /// Inputs from outside the projects: see [`Digests::with_outside`].
    outside: Outside,
    /// The workspace's project names: see [`Digests::with_projects`].
    projects: std::collections::BTreeSet<String>,
    /// The stack: a project's stack files of other stacks (`Pulumi.<other>.yaml`) are no input
    /// of this one's.
    stack: String,
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
                getrandom::fill(&mut k)?;
                write_atomic(&path, &k, NewFile::Private)?;
                k
            }
        };
        Ok(Digests {
            key,
            root: root.to_path_buf(),
            config: stack_config(config_file),
            outside: Outside::default(),
            projects: std::collections::BTreeSet::new(),
            stack: run_dir.stack().to_string(),
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

    /// The namespaces of the workspace's projects (their names): a stack-file key in another
    /// project's namespace is that project's, and counts for a program only when it mentions
    /// the namespace. Without them every key counts for every project.
    pub(crate) fn with_projects<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        self.projects = names.into_iter().map(str::to_string).collect();
        self
    }

    /// What a project's `up` depends on, input by input (its kind, its name, a keyed digest of
    /// its value), compared whole to tell whether the project must run and entry by entry to say
    /// which input changed ([`changed_input`]). Its inputs: every file
    /// of its directory, the files the stack configuration names that its program uses, the
    /// environment file's variables, the keys of the shared stack file it may read, and its
    /// upstream projects' outputs. A key may be read unless it lies in another project's
    /// namespace that its program never mentions (when unsure, it counts: a needless run is
    /// safe, a missed one deploys the wrong thing).
    pub(crate) fn inputs(&self, project_path: &str, upstream: &BTreeMap<String, String>) -> Inputs {
        let dir = self.root.join(project_path);
        let mut walk = Walk::new(&dir);
        walk.enter(&dir);
        let Walk {
            mut files, links, cut, ..
        } = walk;
        // Another stack's file beside the program is that stack's input, not this one's: using
        // stack `ci` once must not make stack `dev` run everything again.
        files.retain(|f| self.no_other_stacks_file(f));
        files.sort();
        let program = std::fs::read_to_string(dir.join("Pulumi.yaml")).unwrap_or_default();
        let mut m = Vec::new();
        if files.len() <= FILES_LISTED && !cut {
            for rel in files {
                let mut h = self.hasher();
                hash_file(&mut h, &dir.join(&rel));
                m.push(entry(InputKind::File, &rel, h));
            }
        } else {
            // One entry for them all: the run state keeps every input of every project, and a
            // folder of thousands of files would make it too big to write (then to read back).
            let mut all = self.hasher();
            for rel in &files {
                let mut h = self.hasher();
                hash_file(&mut h, &dir.join(rel));
                all.update(rel.as_bytes());
                all.update(h.finalize());
            }
            let name = if cut {
                // Not all read, so a change can hide in the rest: it runs every time (a needless
                // run is safe, a missed one deploys the wrong thing).
                all.update(std::process::id().to_le_bytes());
                all.update(format!("{:?}", std::time::SystemTime::now()).as_bytes());
                format!("{ALL_FILES} (more than {WALK_LIMIT}: not all read, so it runs every time)")
            } else {
                format!("{ALL_FILES} ({} files, compared as one)", files.len())
            };
            m.push(entry(InputKind::File, &name, all));
        }
        // A link to a directory on another file system (`/proc`, `/sys`, a mount): an input by
        // where it points, never walked (reading `/proc/kmsg` would wait for ever).
        for (rel, target) in links {
            let mut h = self.hasher();
            h.update(target.as_os_str().as_encoded_bytes());
            m.push(entry(InputKind::File, &rel, h));
        }
        // A file the program reads from outside its folder (`fn::readFile: ../../shared/x`):
        // an input as much as its own files, named as the program writes it.
        for read in read_outside(&program) {
            let path = dir.join(&read);
            if !crate::fs::normalize(&path).starts_with(crate::fs::normalize(&dir)) {
                let mut h = self.hasher();
                hash_file(&mut h, &path);
                m.push(entry(InputKind::File, &read, h));
            }
        }
        for (key, path) in &self.outside.files {
            if program.contains(key.as_str()) {
                let mut h = self.hasher();
                hash_file(&mut h, path);
                m.push(entry(InputKind::Named, key, h));
            }
        }
        for (k, v) in &self.outside.env {
            let mut h = self.hasher();
            h.update(v.as_bytes());
            m.push(entry(InputKind::Environment, k, h));
        }
        // A program that names none counts every key (as one whose name is empty).
        let own = crate::programs::Program::name_of(&program)
            .ok()
            .flatten()
            .filter(|n| !n.is_empty());
        match &self.config {
            StackConfig::Keys(config) => {
                for (key, value) in config {
                    if self.may_read(key, own.as_deref(), &program) {
                        let mut h = self.hasher();
                        h.update(value.as_bytes());
                        m.push(entry(InputKind::Config, key, h));
                    }
                }
            }
            StackConfig::Unparsed(text) => {
                let mut h = self.hasher();
                h.update(text.as_bytes());
                m.push(entry(InputKind::Config, "(the whole file, which does not parse)", h));
            }
        }
        for (name, digest) in upstream {
            let mut h = self.hasher();
            h.update(digest.as_bytes());
            m.push(entry(InputKind::Upstream, name, h));
        }
        Inputs::Each(m)
    }

    /// Whether a file of a project's folder (`rel`) is anything but another stack's stack file
    /// beside the program (`Pulumi.<other>.yaml`).
    fn no_other_stacks_file(&self, rel: &str) -> bool {
        let Some(middle) = rel
            .strip_prefix("Pulumi.")
            .and_then(|r| r.strip_suffix(".yaml").or_else(|| r.strip_suffix(".yml")))
        else {
            return true;
        };
        rel.contains('/') || middle.is_empty() || middle == self.stack
    }

    /// Whether a program (named `own`, its text `program`) may read the stack-file key `key`.
    /// A program whose name is not known may read any: when unsure, a key counts (a needless
    /// run is safe, a missed one deploys the wrong thing).
    fn may_read(&self, key: &str, own: Option<&str>, program: &str) -> bool {
        let namespace = key.split_once(':').map_or(key, |(ns, _)| ns);
        own.is_none_or(|own| own == namespace) || !self.projects.contains(namespace) || mentions(program, namespace)
    }

    /// Digest of a project's outputs, whatever order they were read in (the event log keeps
    /// the program's, `stack output --json` sorts them).
    pub(crate) fn outputs(&self, outputs: &Outputs) -> String {
        let mut h = self.hasher();
        let values = serde_json::Value::Object(outputs.values.clone());
        h.update(canonical(&values).as_bytes());
        format!("{:x}", h.finalize())
    }
}

/// The shared stack file's `config:`, as far as it can be read.
enum StackConfig {
    /// Each key's value as canonical JSON.
    Keys(BTreeMap<String, String>),
    /// The file's text, when it does not parse: a change anywhere counts for every project.
    Unparsed(String),
}

/// The shared stack file's `config:`. Pulumi adds `encryptionsalt` to the file during the first
/// parallel runs: it is no configuration, so it is left out (also from the text kept when the
/// file does not parse).
fn stack_config(path: &Path) -> StackConfig {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let doc: Result<serde_json::Value, _> = serde_saphyr::from_str(&text);
    match doc {
        Ok(doc) => StackConfig::Keys(
            doc.get("config")
                .and_then(serde_json::Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), canonical(v))).collect())
                .unwrap_or_default(),
        ),
        Err(_) => StackConfig::Unparsed(
            text.lines()
                .filter(|l| !l.starts_with("encryptionsalt:"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// Whether `program` names a key of `namespace` (`logstore:retention`, in `${…}` or a
/// `config:` block) or a type of that package (`aws:ec2:Vpc`): the namespace and a colon
/// followed by a name. A YAML key of that name (`logstore:` at a line's end, a resource called
/// so) is no mention.
fn mentions(program: &str, namespace: &str) -> bool {
    let needle = format!("{namespace}:");
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    program.match_indices(&needle).any(|(at, _)| {
        let before = program[..at].chars().next_back();
        let after = program[at + needle.len()..].chars().next();
        !before.is_some_and(word) && after.is_some_and(word)
    })
}

/// JSON with every object's keys sorted, at any depth.
fn canonical(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", serde_json::Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        serde_json::Value::Array(a) => format!("[{}]", a.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// One input, with 16 hex digits (64 bits) of its keyed digest: enough to tell values apart,
/// and the state stays small.
fn entry(kind: InputKind, name: &str, h: Sha256) -> InputDigest {
    InputDigest {
        kind,
        name: name.to_string(),
        digest: format!("{:.16x}", h.finalize()),
    }
}

/// A digest of `inputs` that is not as [`Digests::inputs`] takes them (16 hex digits), or as an
/// older runner took one of everything (64, like an outputs digest); `None` when all are.
pub(crate) fn malformed(inputs: &Inputs) -> Option<&str> {
    match inputs {
        Inputs::Each(each) => each.iter().map(|i| i.digest.as_str()).find(|d| !is_hex(d, 16)),
        Inputs::Whole(digest) => Some(digest.as_str()).filter(|d| !is_hex(d, 64)),
    }
}

/// `len` lower-case hex digits, as digests are written.
pub(crate) fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// What differs between the inputs of a project's last up (`then`) and today's (`now`): the
/// first input that does and how many more (`report::reason` words it); `None` when `then` is
/// one digest of everything (an older runner's) or nothing differs.
pub(crate) fn changed_input(then: &Inputs, now: &Inputs) -> Option<InputChange> {
    let by_input = |inputs: &Inputs| -> Option<BTreeMap<(InputKind, String), String>> {
        match inputs {
            Inputs::Each(each) => Some(
                each.iter()
                    .map(|i| ((i.kind, i.name.clone()), i.digest.clone()))
                    .collect(),
            ),
            Inputs::Whole(_) => None,
        }
    };
    let (then, now) = (by_input(then)?, by_input(now)?);
    let mut changes = Vec::new();
    for (key, digest) in &now {
        match then.get(key) {
            None => changes.push((key, Change::Added)),
            Some(d) if d != digest => changes.push((key, Change::Changed)),
            Some(_) => {}
        }
    }
    for key in then.keys().filter(|k| !now.contains_key(*k)) {
        changes.push((key, Change::Removed));
    }
    changes.sort();
    let ((kind, name), how) = changes.first()?;
    Some(InputChange {
        kind: *kind,
        name: name.clone(),
        how: *how,
        more: changes.len() - 1,
    })
}

/// The paths a program reads as files (`fn::readFile`, `fn::fileAsset`, `fn::fileArchive`) that
/// are written out in it (a path with `${…}` in it is known at run time only) and lead outside
/// its folder: relative ones with `..` in them, and absolute ones.
fn read_outside(program: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lines: Vec<&str> = program.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let code = line.split(" #").next().unwrap_or_default();
        for f in ["fn::readFile:", "fn::fileAsset:", "fn::fileArchive:"] {
            let Some(at) = code.find(f) else { continue };
            let mut value = code[at + f.len()..].trim();
            if value.is_empty() {
                value = lines.get(n + 1).map_or("", |l| l.trim());
            }
            let value = value.trim_matches(|c| c == '"' || c == '\'');
            if value.is_empty() || value.contains("${") {
                continue;
            }
            let outside = value.starts_with('/') || value.split(['/', '\\']).any(|part| part == "..");
            if outside && !out.iter().any(|o| o == value) {
                out.push(value.to_string());
            }
        }
    }
    out
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

/// A project folder of more files than this is one input, not one per file (the run state
/// keeps each input of each project).
const FILES_LISTED: usize = 1_000;
/// A walk of a project's folder stops after this many files: a link to `/` is not read whole.
const WALK_LIMIT: usize = 100_000;
/// The files under a project's folder, relative to it, skipping dependency and build
/// directories. Links are followed (a program may link a shared library in), but each real
/// directory is entered once, however many links lead to it (a chain of links that each lead
/// twice to the next would otherwise double the walk at every step), and never one on another
/// file system than the folder's (`/proc`, `/sys`, `/dev`, a mount): such a link is kept in
/// `links` with where it points. The walk stops after [`WALK_LIMIT`] files (`cut`).
struct Walk<'a> {
    root: &'a Path,
    device: Option<u64>,
    seen: std::collections::HashSet<DirId>,
    files: Vec<String>,
    links: Vec<(String, PathBuf)>,
    cut: bool,
    limit: usize,
}

impl<'a> Walk<'a> {
    fn new(root: &'a Path) -> Self {
        Walk {
            root,
            device: dir_id(root).as_ref().and_then(device),
            seen: std::collections::HashSet::new(),
            files: Vec::new(),
            links: Vec::new(),
            cut: false,
            limit: WALK_LIMIT,
        }
    }

    fn enter(&mut self, dir: &Path) {
        let Some(real) = dir_id(dir) else { return };
        if self.device.is_some() && device(&real) != self.device {
            if let (Ok(rel), Ok(target)) = (dir.strip_prefix(self.root), std::fs::read_link(dir)) {
                self.links.push((rel.display().to_string(), target));
            }
            return;
        }
        if !self.seen.insert(real) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        // In name order, so that a directory two links lead to is named the same way each time.
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            if self.cut {
                return;
            }
            // A dotfile the program reads (`./.settings`) is an input like any file; what is left
            // out is what tools keep beside a program, never read by it.
            let skipped = path.file_name().is_some_and(|n| {
                [
                    ".git",
                    ".pulumi",
                    ".venv",
                    "node_modules",
                    "venv",
                    "__pycache__",
                    "target",
                ]
                .iter()
                .any(|s| n == *s)
            });
            if skipped {
                continue;
            }
            if path.is_dir() {
                self.enter(&path);
            } else if let Ok(rel) = path.strip_prefix(self.root) {
                if self.files.len() == self.limit {
                    self.cut = true;
                    return;
                }
                self.files.push(rel.display().to_string());
            }
        }
    }
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

/// The file system a directory is on, from what tells it apart (no second `stat`).
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)] // `None` where a directory's id says no file system
fn device(id: &DirId) -> Option<u64> {
    Some(id.0)
}

#[cfg(not(unix))]
fn device(_: &DirId) -> Option<u64> {
    None
}

/// A workspace in `root` of one project, `p`, and a stack file `cfg.yaml` holding `config`:
/// where the tests of the digests start. Returns the stack file.
#[cfg(test)]
pub(super) fn one_project(root: &Path, config: &str) -> PathBuf {
    std::fs::create_dir_all(root.join("p")).expect("the project's directory");
    std::fs::write(root.join("p/Pulumi.yaml"), "name: p\n").expect("the project's file");
    let cfg = root.join("cfg.yaml");
    std::fs::write(&cfg, config).expect("the stack file");
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_follow_files_config_and_upstream() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = one_project(dir.path(), "config: {}\n");
        let run_dir = RunDir::new(dir.path(), "dev");
        let d = Digests::open(dir.path(), &run_dir, &cfg).unwrap();
        let none = BTreeMap::new();
        let a = d.inputs("p", &none);
        assert_eq!(a, d.inputs("p", &none), "stable");
        std::fs::write(dir.path().join("p/Pulumi.yaml"), "name: p\n# edited\n").unwrap();
        let b = d.inputs("p", &none);
        assert_ne!(a, b);
        // The stack file is read once, when the digests are opened (before a run starts).
        let reopened = || Digests::open(dir.path(), &run_dir, &cfg).unwrap();
        std::fs::write(&cfg, "encryptionsalt: v1:abc\nconfig: {}\n").unwrap();
        assert_eq!(b, reopened().inputs("p", &none), "the salt is not configuration");
        std::fs::write(&cfg, "# a comment\nconfig: {a: b}\n").unwrap();
        let d = reopened();
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
    fn another_stacks_file_beside_the_program_is_no_input() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = one_project(dir.path(), "config: {}\n");
        let d = Digests::open(dir.path(), &RunDir::new(dir.path(), "dev"), &cfg).unwrap();
        let none = BTreeMap::new();
        let before = d.inputs("p", &none);
        std::fs::write(dir.path().join("p/Pulumi.ci.yaml"), "config: {a: b}\n").unwrap();
        assert_eq!(before, d.inputs("p", &none), "stack ci's file");
        std::fs::write(dir.path().join("p/Pulumi.dev.yaml"), "config: {a: b}\n").unwrap();
        assert_ne!(before, d.inputs("p", &none), "its own stack file");
    }

    #[test]
    fn the_files_a_program_reads_outside_its_folder_are_found() {
        let program = "resources:\n  a:\n    properties:\n      x:\n        fn::readFile: ../../shared/ca.pem\n      y:\n        fn::readFile: ./local.txt\n      z:\n        fn::fileAsset:\n          \"/etc/site.conf\"\n      w:\n        fn::readFile: ${dir}/../x # a value known at run time\n";
        assert_eq!(read_outside(program), ["../../shared/ca.pem", "/etc/site.conf"]);
    }

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
        let mut walk = Walk::new(&p);
        walk.enter(&p);
        assert_eq!(
            walk.files,
            ["Pulumi.yaml", "lib/lib.yaml"],
            "each directory once, by the first link in name order"
        );
        // The stack file only now: the link to the parent would make it one of the files.
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
    fn a_chain_of_doubled_links_is_walked_once_per_directory() {
        // d0 … d20, each with a file and two links to the next: each directory entered once
        // (followed per path, 2^20 walks).
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p");
        for i in 0..=20 {
            let d = p.join(format!("lib/d{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("f"), i.to_string()).unwrap();
            if i < 20 {
                std::os::unix::fs::symlink(format!("../d{}", i + 1), d.join("a")).unwrap();
                std::os::unix::fs::symlink(format!("../d{}", i + 1), d.join("b")).unwrap();
            }
        }
        let mut walk = Walk::new(&p);
        walk.enter(&p);
        assert_eq!(walk.files.len(), 21, "{:?}", walk.files);
        assert!(!walk.cut);
        // A walk that reaches its limit stops there and says so.
        let mut walk = Walk::new(&p);
        walk.limit = 5;
        walk.enter(&p);
        assert_eq!(walk.files.len(), 5);
        assert!(walk.cut);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_another_file_system_counts_by_where_it_points_and_is_not_walked() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = one_project(dir.path(), "config: {}\n");
        let p = dir.path().join("p");
        // /proc is never the file system of a temporary folder; reading /proc/kmsg would block.
        std::os::unix::fs::symlink("/proc", p.join("proc")).unwrap();
        let mut walk = Walk::new(&p);
        walk.enter(&p);
        assert_eq!(walk.files, ["Pulumi.yaml"]);
        assert_eq!(walk.links, [("proc".to_string(), PathBuf::from("/proc"))]);
        let d = Digests::open(dir.path(), &RunDir::new(dir.path(), "dev"), &cfg).unwrap();
        let none = BTreeMap::new();
        let before = d.inputs("p", &none);
        std::fs::remove_file(p.join("proc")).unwrap();
        std::os::unix::fs::symlink("/sys", p.join("proc")).unwrap();
        let after = d.inputs("p", &none);
        assert_eq!(
            changed_input(&before, &after)
                .map(|c| crate::report::reason::input(&c))
                .as_deref(),
            Some("its file `proc` changed")
        );
    }

    #[test]
    fn a_folder_of_thousands_of_files_is_one_input_and_a_change_in_it_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = one_project(dir.path(), "config: {}\n");
        let assets = dir.path().join("p/assets");
        std::fs::create_dir_all(&assets).unwrap();
        for i in 0..FILES_LISTED {
            std::fs::write(assets.join(i.to_string()), "x").unwrap();
        }
        let d = Digests::open(dir.path(), &RunDir::new(dir.path(), "dev"), &cfg).unwrap();
        let none = BTreeMap::new();
        let before = d.inputs("p", &none);
        let Inputs::Each(each) = &before else {
            panic!("{before:?}")
        };
        assert_eq!(each.len(), 1, "{each:?}");
        assert_eq!(each[0].name, format!("{ALL_FILES} (1001 files, compared as one)"));
        assert_eq!(before, d.inputs("p", &none), "stable");
        std::fs::write(assets.join("17"), "y").unwrap();
        let after = d.inputs("p", &none);
        assert_eq!(
            changed_input(&before, &after)
                .map(|c| crate::report::reason::input(&c))
                .as_deref(),
            Some("a file of its folder (1001 files, compared as one) changed")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_in_a_project_counts_without_being_read() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = one_project(dir.path(), "config: {}\n");
        let p = dir.path().join("p");
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

    /// Which stack-file keys count for a project, and how a change is told.
    #[test]
    fn a_key_of_another_projects_namespace_counts_only_where_its_program_mentions_it() {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in [
            ("logstore", "name: logstore\nconfig:\n  retention: {type: string}\n"),
            ("network", "name: network\nresources:\n  v:\n    type: aws:ec2:Vpc\n"),
            ("app", "name: app\nvariables:\n  r: ${logstore:retention}\n"),
            (
                "agent",
                "name: agent\nresources:\n  logstore:\n    type: pulumi:pulumi:StackReference\n",
            ),
        ] {
            std::fs::create_dir_all(dir.path().join(p)).unwrap();
            std::fs::write(dir.path().join(p).join("Pulumi.yaml"), text).unwrap();
        }
        let cfg = dir.path().join("cfg.yaml");
        let run_dir = RunDir::new(dir.path(), "dev");
        let open = |config: &str| {
            std::fs::write(&cfg, config).unwrap();
            Digests::open(dir.path(), &run_dir, &cfg)
                .unwrap()
                .with_projects(["logstore", "network", "app", "agent"])
        };
        let none = BTreeMap::new();
        let before = open("config:\n  aws:region: us-east-1\n");
        let after = open("config:\n  aws:region: us-east-1\n  logstore:retention: 30d\n");
        let then = |p: &str| before.inputs(p, &none);
        let now = |p: &str| after.inputs(p, &none);
        assert_eq!(then("network"), now("network"), "another project's key");
        assert_eq!(
            then("agent"),
            now("agent"),
            "a resource named like the project is no mention"
        );
        assert_ne!(then("logstore"), now("logstore"), "its own namespace");
        assert_ne!(then("app"), now("app"), "a key its program reads");
        assert_eq!(
            changed_input(&then("logstore"), &now("logstore"))
                .map(|c| crate::report::reason::input(&c))
                .as_deref(),
            Some("stack file key `logstore:retention` added")
        );
        // A namespace that is no project's (a provider's, an unknown one) counts everywhere.
        let moved = open("config:\n  aws:region: eu-west-1\n  logstore:retention: 30d\n");
        assert_ne!(now("logstore"), moved.inputs("logstore", &none));
        assert_eq!(
            changed_input(&now("network"), &moved.inputs("network", &none))
                .map(|c| crate::report::reason::input(&c))
                .as_deref(),
            Some("stack file key `aws:region` changed")
        );
        // Three changes: the first in the order kinds are told, and how many more.
        let base = now("network");
        std::fs::write(dir.path().join("network/extra.txt"), "x").unwrap();
        let up = BTreeMap::from([("vpc".to_string(), "d1".to_string())]);
        assert_eq!(
            changed_input(&base, &moved.inputs("network", &up))
                .map(|c| crate::report::reason::input(&c))
                .as_deref(),
            Some("stack file key `aws:region` changed, and 2 more")
        );
        assert_eq!(
            changed_input(&Inputs::Whole("a".repeat(64)), &now("network")),
            None,
            "an older runner's digest"
        );
        assert_eq!(malformed(&now("network")), None);
        assert_eq!(malformed(&Inputs::Whole("\u{1b}[2J".into())), Some("\u{1b}[2J"));
        // A project's own stack file is told from the shared one of the same name.
        let own = |digest: &str| {
            Inputs::Each(vec![InputDigest {
                kind: InputKind::File,
                name: "Pulumi.try.yaml".into(),
                digest: digest.into(),
            }])
        };
        assert_eq!(
            changed_input(&own("0000000000000000"), &own("1111111111111111"))
                .map(|c| crate::report::reason::input(&c))
                .as_deref(),
            Some("its own stack file `Pulumi.try.yaml`, not config/pulumi's, changed")
        );
    }
}
