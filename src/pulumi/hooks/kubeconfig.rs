//! Merging a cluster's kubeconfig into the user's, as `kubectl` does it: the target is the
//! first `KUBECONFIG` path that already holds the cluster, else the first that exists, else the
//! last (`~/.kube/config` without `KUBECONFIG`); kubectl's `<file>.lock` is held from the read
//! to the write, so a concurrent `kubectl config …` loses nothing; every cluster, user and context entry with the same name is replaced in
//! place, others appended; `current-context` set; every other field and its order kept; a new
//! file is 0600, an existing one keeps its mode; the write is atomic. A file that is not a valid
//! kubeconfig is refused and left untouched.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::fs::{NewFile, write_atomic};

const SECTIONS: [&str; 3] = ["clusters", "users", "contexts"];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum MergeError {
    #[error("the `kubeconfig` output is not a kubeconfig (YAML, JSON or base64 of either): {0}")]
    BadInput(NotKubeconfig),
    #[error("{path} is not a valid kubeconfig: {reason}; it was left untouched")]
    BadTarget { path: String, reason: String },
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

/// Why a text is no kubeconfig a merge may read or write.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum NotKubeconfig {
    /// Not YAML (nor JSON), in the parser's words.
    #[error("{0}")]
    Syntax(String),
    #[error("the top level is not a mapping")]
    NotAMapping,
    #[error("no clusters, users or contexts found")]
    NothingFound,
    #[error("`{section}[{index}]` has no name")]
    Unnamed { section: &'static str, index: usize },
    /// kubectl refuses such a file, and a merge could keep only one of them.
    #[error("`{section}` has two entries named `{name}`")]
    NamedTwice { section: &'static str, name: String },
    #[error("`{0}` is not a list")]
    NotAList(&'static str),
    #[error("`current-context` is not a string")]
    CurrentContextNotText,
    #[error("`preferences` is not a mapping")]
    PreferencesNotAMapping,
    #[error("it has no context")]
    NoContext,
    #[error("no kubeconfig path")]
    NoPath,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) struct Merged {
    pub file: PathBuf,
    pub context: String,
    /// The context did not exist in the file before.
    pub added: bool,
    /// Names merged: (clusters, users, contexts).
    pub names: (Vec<String>, Vec<String>, Vec<String>),
    /// A lock left by a runner that no longer runs, removed on the way.
    pub stale_lock: Option<String>,
}

impl Merged {
    /// `Added new context X to FILE` / `Updated context X in FILE`.
    pub(super) fn message(&self) -> String {
        let m = if self.added {
            format!("Added new context {} to {}", self.context, self.file.display())
        } else {
            format!("Updated context {} in {}", self.context, self.file.display())
        };
        match &self.stale_lock {
            Some(note) => format!("{m} ({note})"),
            None => m,
        }
    }
}

/// The output as a kubeconfig mapping: YAML or JSON text, or base64 of it.
pub(crate) fn parse_input(text: &str) -> Result<Map<String, Value>, MergeError> {
    let as_config = |t: &str| -> Option<Map<String, Value>> {
        let v: Value = serde_saphyr::from_str(t).ok()?;
        let m = v.as_object()?.clone();
        SECTIONS
            .iter()
            .any(|s| m.get(*s).is_some_and(Value::is_array))
            .then_some(m)
    };
    if let Some(m) = as_config(text) {
        return check_sections(&m).map(|()| m).map_err(MergeError::BadInput);
    }
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    match decoded.as_deref().and_then(as_config) {
        Some(m) => check_sections(&m).map(|()| m).map_err(MergeError::BadInput),
        None => Err(MergeError::BadInput(NotKubeconfig::NothingFound)),
    }
}

/// `clusters`, `users`, `contexts`: lists of mappings with a string `name`, when present.
fn check_sections(m: &Map<String, Value>) -> Result<(), NotKubeconfig> {
    for section in SECTIONS {
        match m.get(section) {
            None | Some(Value::Null) => {}
            Some(Value::Array(entries)) => {
                let mut seen = std::collections::BTreeSet::new();
                for (index, e) in entries.iter().enumerate() {
                    let Some(name) = e.get("name").and_then(Value::as_str) else {
                        return Err(NotKubeconfig::Unnamed { section, index });
                    };
                    if !seen.insert(name) {
                        return Err(NotKubeconfig::NamedTwice {
                            section,
                            name: name.to_string(),
                        });
                    }
                }
            }
            Some(_) => return Err(NotKubeconfig::NotAList(section)),
        }
    }
    if let Some(c) = m.get("current-context")
        && !(c.is_string() || c.is_null())
    {
        return Err(NotKubeconfig::CurrentContextNotText);
    }
    if let Some(p) = m.get("preferences")
        && !(p.is_object() || p.is_null())
    {
        return Err(NotKubeconfig::PreferencesNotAMapping);
    }
    Ok(())
}

/// The paths `KUBECONFIG` names (split on `:`, empty parts dropped, `~` expanded), or
/// `~/.kube/config`.
pub(super) fn candidate_paths(kubeconfig_env: Option<&str>, home: &Path) -> Vec<PathBuf> {
    let paths: Vec<PathBuf> = kubeconfig_env
        .unwrap_or_default()
        .split(':')
        .filter(|p| !p.trim().is_empty())
        .map(|p| crate::fs::expand_home(p.trim(), Some(home)))
        .collect();
    if paths.is_empty() {
        vec![home.join(".kube/config")]
    } else {
        paths
    }
}

fn read_config(path: &Path) -> Result<Option<Map<String, Value>>, MergeError> {
    let text = match crate::fs::read_text(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(MergeError::BadTarget {
                path: path.display().to_string(),
                reason: e.to_string(),
            });
        }
    };
    parse_config(&text).map_err(|reason| MergeError::BadTarget {
        path: path.display().to_string(),
        reason: reason.to_string(),
    })
}

/// A kubeconfig file's text as a mapping; `None` when it holds nothing yet.
pub(crate) fn parse_config(text: &str) -> Result<Option<Map<String, Value>>, NotKubeconfig> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let v: Value = serde_saphyr::from_str(text).map_err(|e| NotKubeconfig::Syntax(e.to_string()))?;
    let m = match v {
        Value::Object(m) => m,
        Value::Null => return Ok(None),
        _ => return Err(NotKubeconfig::NotAMapping),
    };
    check_sections(&m)?;
    Ok(Some(m))
}

fn names(m: &Map<String, Value>, section: &str) -> Vec<String> {
    m.get(section)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| e["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Merges `incoming` into the right file of `paths` and writes it atomically.
pub(super) fn merge(incoming: &Map<String, Value>, paths: &[PathBuf]) -> Result<Merged, MergeError> {
    let cluster = names(incoming, "clusters").into_iter().next();
    let context = context_of(incoming)?;
    // As kubectl chooses: the first file that already holds the cluster (unreadable ones are
    // skipped for the choice), else the first file that exists, else the last path.
    let holder = cluster.as_ref().and_then(|c| {
        paths.iter().find(|p| {
            read_config(p)
                .ok()
                .flatten()
                .is_some_and(|m| names(&m, "clusters").contains(c))
        })
    });
    let target = holder
        .or_else(|| paths.iter().find(|p| p.exists()))
        .or_else(|| paths.last())
        .ok_or(MergeError::BadInput(NotKubeconfig::NoPath))?
        .clone();
    // kubectl's lock, held from the read to the write, so no concurrent writer's entry is lost.
    let lock = Lock::take(&target)?;
    let existing = read_config(&target)?;
    let (config, added) = merged(existing, incoming, &context);
    let text = serde_saphyr::to_string(&Value::Object(config)).map_err(|e| MergeError::Write {
        path: target.display().to_string(),
        reason: e.to_string(),
    })?;
    write(&target, text.as_bytes())?;
    Ok(Merged {
        file: target,
        context,
        added,
        names: (
            names(incoming, "clusters"),
            names(incoming, "users"),
            names(incoming, "contexts"),
        ),
        stale_lock: lock.stale.clone(),
    })
}

/// The context the merged file is set to: the input's `current-context`, else its first.
pub(crate) fn context_of(incoming: &Map<String, Value>) -> Result<String, MergeError> {
    incoming
        .get("current-context")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .or_else(|| names(incoming, "contexts").into_iter().next())
        .ok_or(MergeError::BadInput(NotKubeconfig::NoContext))
}

/// The pure merge: `incoming`'s entries into `existing` (a new kubeconfig when `None`), same
/// names replaced in place, others appended, `current-context` set; and whether the context
/// is new to the file.
pub(crate) fn merged(
    existing: Option<Map<String, Value>>,
    incoming: &Map<String, Value>,
    context: &str,
) -> (Map<String, Value>, bool) {
    let mut config = existing.unwrap_or_else(|| {
        let v = json!({
            "apiVersion": "v1",
            "clusters": [],
            "contexts": [],
            "current-context": "",
            "kind": "Config",
            "preferences": {},
            "users": [],
        });
        v.as_object().expect("an object").clone()
    });
    let added = !names(&config, "contexts").iter().any(|c| c == context);
    for section in SECTIONS {
        let Some(new_entries) = incoming.get(section).and_then(Value::as_array) else {
            continue;
        };
        let list = config.entry(section).or_insert_with(|| Value::Array(Vec::new()));
        if !list.is_array() {
            *list = Value::Array(Vec::new());
        }
        let list = list.as_array_mut().expect("an array");
        for entry in new_entries {
            let name = &entry["name"];
            let mut replaced = false;
            for existing in list.iter_mut().filter(|e| &e["name"] == name) {
                existing.clone_from(entry);
                replaced = true;
            }
            if !replaced {
                list.push(entry.clone());
            }
        }
    }
    config.insert("current-context".into(), Value::String(context.to_string()));
    (config, added)
}

/// kubectl's lock on a kubeconfig: `<file>.lock`, created only when it does not exist (as
/// `clientcmd` does), removed when dropped. Held by someone else, it is waited for a while.
/// The runner writes who holds it into it, so one left by a runner killed mid-merge (a
/// process of this host that no longer runs) is removed rather than waited for.
struct Lock {
    path: PathBuf,
    /// What was said about a stale lock removed on the way.
    stale: Option<String>,
}

impl Lock {
    /// How long a lock held by someone else is waited for.
    const PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

    fn take(file: &Path) -> Result<Self, MergeError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let started = std::time::Instant::now();
        let mut wait = std::time::Duration::from_millis(5);
        let mut stale = None;
        loop {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    use std::io::Write as _;
                    // Best effort: an empty lock is still a lock (kubectl's are empty).
                    let _ = writeln!(
                        f,
                        "{}",
                        holder_line(std::process::id(), &crate::pulumi::locks::this_host())
                    );
                    return Ok(Lock { path, stale });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let said = std::fs::read_to_string(&path).unwrap_or_default();
                    // Once: a lock that cannot be removed is waited for like any other.
                    if stale.is_none()
                        && let Some(pid) = dead_runner(&said)
                    {
                        // Gone already is fine: another runner cleared it first.
                        let _ = std::fs::remove_file(&path);
                        stale = Some(format!(
                            "removed {}, left by runner pid {pid}, which no longer runs",
                            path.display()
                        ));
                        continue;
                    }
                    if started.elapsed() >= Self::PATIENCE {
                        return Err(MergeError::Write {
                            path: file.display().to_string(),
                            reason: format!(
                                "{} has been held for {}s by another writer ({}); if none is running, remove it",
                                path.display(),
                                Self::PATIENCE.as_secs(),
                                if said.trim().is_empty() {
                                    "kubectl or a runner"
                                } else {
                                    said.trim()
                                }
                            ),
                        });
                    }
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(std::time::Duration::from_millis(200));
                }
                Err(e) => {
                    return Err(MergeError::Write {
                        path: file.display().to_string(),
                        reason: format!("cannot create its lock {}: {e}", path.display()),
                    });
                }
            }
        }
    }
}

/// What the runner writes into a kubeconfig lock it takes.
fn holder_line(pid: u32, host: &str) -> String {
    format!("runner pid {pid} on {host}")
}

/// The pid of the runner that wrote `said` into a lock, when that runner was of this host and
/// no longer runs; `None` for anything else (kubectl's empty locks, a live runner, another host).
fn dead_runner(said: &str) -> Option<i32> {
    let rest = said.trim().strip_prefix("runner pid ")?;
    let (pid, host) = rest.split_once(" on ")?;
    let pid: i32 = pid.parse().ok()?;
    (host == crate::pulumi::locks::this_host() && !crate::pulumi::locks::alive(pid)).then_some(pid)
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The merged file, written atomically: a new file is 0600 (it holds credentials), an existing
/// one keeps its mode.
fn write(path: &Path, bytes: &[u8]) -> Result<(), MergeError> {
    write_atomic(path, bytes, NewFile::Private).map_err(|e| MergeError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Removes the named cluster, user and context entries (destroy with `--prune-kubeconfig`);
/// `current-context` is cleared when it named a removed context. Returns whether anything changed.
pub(super) fn prune(path: &Path, cluster: &[String], user: &[String], context: &[String]) -> Result<bool, MergeError> {
    let _lock = Lock::take(path)?;
    let Some(mut config) = read_config(path)? else {
        return Ok(false);
    };
    let mut changed = false;
    for (section, gone) in [("clusters", cluster), ("users", user), ("contexts", context)] {
        if let Some(list) = config.get_mut(section).and_then(Value::as_array_mut) {
            let before = list.len();
            list.retain(|e| !e["name"].as_str().is_some_and(|n| gone.iter().any(|g| g == n)));
            changed |= list.len() != before;
        }
    }
    if config
        .get("current-context")
        .and_then(Value::as_str)
        .is_some_and(|c| context.iter().any(|g| g == c))
    {
        config.insert("current-context".into(), Value::String(String::new()));
        changed = true;
    }
    if changed {
        let text = serde_saphyr::to_string(&Value::Object(config)).map_err(|e| MergeError::Write {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        write(path, text.as_bytes())?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EKS: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: eks-dev\n  cluster:\n    server: https://eks.example\n    certificate-authority-data: Q0E=\nusers:\n- name: eks-dev-admin\n  user:\n    token: s3cr3t-token\ncontexts:\n- name: eks-dev\n  context:\n    cluster: eks-dev\n    user: eks-dev-admin\ncurrent-context: eks-dev\n";

    #[test]
    fn only_a_lock_of_a_runner_of_this_host_that_no_longer_runs_is_stale() {
        let host = crate::pulumi::locks::this_host();
        assert_eq!(
            dead_runner(&holder_line(std::process::id(), &host)),
            None,
            "this runner runs"
        );
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id();
        gone.wait().unwrap();
        assert_eq!(dead_runner(&holder_line(pid, &host)), Some(i32::try_from(pid).unwrap()));
        assert_eq!(
            dead_runner(&holder_line(pid, "another-host")),
            None,
            "its processes are not seen"
        );
        assert_eq!(dead_runner(""), None, "kubectl's locks are empty");
    }

    #[test]
    fn input_may_be_yaml_json_or_base64() {
        let yaml = parse_input(EKS).unwrap();
        let json = parse_input(&serde_json::to_string(&Value::Object(yaml.clone())).unwrap()).unwrap();
        let b64 = parse_input(&base64::engine::general_purpose::STANDARD.encode(EKS)).unwrap();
        assert_eq!(yaml, json);
        assert_eq!(yaml, b64);
        assert!(parse_input("just text").is_err());
        assert!(parse_input("clusters: 3").is_err());
    }

    /// Found by fuzzing: an input with two contexts of one name merged into one of them.
    #[test]
    fn two_entries_of_one_name_are_refused_in_the_input_and_the_file() {
        let twice = EKS.replace("contexts:\n", "contexts:\n- name: eks-dev\n  context: {}\n");
        assert_eq!(
            parse_input(&twice),
            Err(MergeError::BadInput(NotKubeconfig::NamedTwice {
                section: "contexts",
                name: "eks-dev".into()
            }))
        );
        assert_eq!(
            parse_config(&twice).map_err(|e| e.to_string()),
            Err("`contexts` has two entries named `eks-dev`".to_string())
        );
    }

    #[test]
    fn paths_come_from_kubeconfig_with_tilde_and_empty_parts() {
        let home = Path::new("/home/u");
        assert_eq!(candidate_paths(None, home), [PathBuf::from("/home/u/.kube/config")]);
        assert_eq!(
            candidate_paths(Some(":~/a::/etc/b:"), home),
            [PathBuf::from("/home/u/a"), PathBuf::from("/etc/b")]
        );
    }
}
