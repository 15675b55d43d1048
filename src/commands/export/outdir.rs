//! The output directory of `runner export`, which may sit in the repository (the default
//! `exports/…` does) and so hold whatever a commit put there. The export writes only inside it:
//! never through a symbolic link (the directory, a parent inside the repository, a
//! subdirectory or a file being one is refused, naming it; `--force` replaces a file's link
//! itself, never its target), never into a `.git` directory, and never over a file it did not
//! make (one without the "Made by `runner export …`" header) unless `--force`. The files an
//! earlier export of the same format wrote there and this one no longer writes are removed
//! (only those carrying its header). Everything is checked before the first file is written.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::error::RunnerError;
use crate::export::{self, File, Format};
use crate::fs::{normalize, replace_file};

/// Why the export cannot write its files where it was asked to.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutDirError {
    #[error("{path} is not a directory: -o/--output takes the directory the export writes its files into")]
    NotADirectory { path: String, output: bool },
    #[error("{path} is inside a git directory (.git): the export does not write into git's own files")]
    GitDirectory { path: String },
    #[error("{link} is a symbolic link (to {target}): the export never writes through a link")]
    DirectoryLink { link: String, target: String },
    #[error("{link} is a symbolic link (to {target}) where the export writes a file: it never writes through a link")]
    FileLink { link: String, target: String },
    #[error("{path} is in the way of a file the export writes, and is not a regular file")]
    NotAFile { path: String },
    #[error(
        "{} not made by `runner export` (no \"Made by `runner export …`\" line at the top), and the export would replace {}: {}",
        if .paths.len() == 1 { "a file was" } else { "files were" },
        if .paths.len() == 1 { "it" } else { "them" },
        .paths.join(", ")
    )]
    NotMade { paths: Vec<String> },
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl OutDirError {
    fn help(&self) -> String {
        match self {
            OutDirError::NotADirectory { output: true, .. } => {
                "pass a directory (it is made when missing), or `-o -` to print every file on standard output".into()
            }
            OutDirError::NotADirectory { output: false, .. } => {
                "it stands where the output directory needs a directory: pass another -o DIR".into()
            }
            OutDirError::GitDirectory { .. } => "pass a directory of the work tree, outside .git".into(),
            OutDirError::DirectoryLink { target, .. } => format!(
                "pass the directory it points to as -o ({target}) if the files belong there, or replace the link by a directory"
            ),
            OutDirError::FileLink { .. } => {
                "remove the link, or pass --force to replace the link itself by the generated file (its target is left alone)"
                    .into()
            }
            OutDirError::NotAFile { .. } => "move it away, or pass another -o DIR".into(),
            OutDirError::NotMade { paths } => {
                let them = if paths.len() == 1 { "it" } else { "them" };
                format!("move {them} away, pass another -o DIR, or pass --force to replace {them}")
            }
            OutDirError::Io { .. } => "check the directory's permissions and free space".into(),
        }
    }
}

impl From<OutDirError> for RunnerError {
    fn from(e: OutDirError) -> Self {
        match e {
            OutDirError::Io { path, source } => RunnerError::Io {
                context: format!("cannot write {path}"),
                source,
            },
            other => RunnerError::usage(other.to_string(), other.help()),
        }
    }
}

/// What writing an export into a directory will do, every check passed.
#[derive(Debug)]
pub(crate) struct Writes {
    dir: PathBuf,
    /// Files of an earlier export of the same format that this one no longer writes.
    pub(crate) stale: Vec<PathBuf>,
}

fn io(show: &dyn Fn(&Path) -> String, path: &Path) -> impl FnOnce(std::io::Error) -> OutDirError {
    let path = show(path);
    move |source| OutDirError::Io { path, source }
}

/// The link's target as text, for the message.
fn target(link: &Path) -> String {
    std::fs::read_link(link).map_or_else(|_| "?".into(), |t| t.display().to_string())
}

/// Checks `dir` and each component from `base` (exclusive) down to it: a link or something
/// other than a directory is refused; a missing one ends the walk (it will be made).
fn check_directories(
    base: &Path,
    dir: &Path,
    output: &Path,
    show: &dyn Fn(&Path) -> String,
) -> Result<(), OutDirError> {
    let rel = dir.strip_prefix(base).unwrap_or(dir);
    let mut at = base.to_path_buf();
    for c in rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(OutDirError::DirectoryLink {
                    link: show(&at),
                    target: target(&at),
                });
            }
            Ok(m) if !m.is_dir() => {
                return Err(OutDirError::NotADirectory {
                    path: show(&at),
                    output: at == output,
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(show, &at)(e)),
        }
    }
    Ok(())
}

/// The first lines of a regular file (enough for the header), lossily.
fn head(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(4096).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Checks that `files` of a `format` export can be written into `dir` (see the module comment)
/// and finds what an earlier export left there. `trusted` are the directories above which links
/// are the user's own (the repository's top and the workspace root): from the highest of them
/// that holds `dir` down, every component is checked; outside them, `dir` and what is below it.
pub(crate) fn check(
    dir: &Path,
    trusted: &[&Path],
    files: &[File],
    format: Format,
    force: bool,
    show: &dyn Fn(&Path) -> String,
) -> Result<Writes, OutDirError> {
    let dir = normalize(dir);
    if dir.components().any(|c| c.as_os_str().eq_ignore_ascii_case(".git")) {
        return Err(OutDirError::GitDirectory { path: show(&dir) });
    }
    let base = trusted
        .iter()
        .map(|t| normalize(t))
        .filter(|t| dir.starts_with(t) && *t != dir)
        .min_by_key(|t| t.components().count())
        .or_else(|| dir.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    check_directories(&base, &dir, &dir, show)?;

    let mut not_made = Vec::new();
    let mut written = BTreeSet::new();
    let mut directories = BTreeSet::from([dir.clone()]);
    for f in files {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            check_directories(&dir, parent, &dir, show)?;
            directories.insert(parent.to_path_buf());
        }
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                if !force {
                    return Err(OutDirError::FileLink {
                        link: show(&path),
                        target: target(&path),
                    });
                }
            }
            Ok(m) if !m.is_file() => return Err(OutDirError::NotAFile { path: show(&path) }),
            Ok(_) => {
                let text = head(&path).map_err(io(show, &path))?;
                if export::made_by(&text).is_none() && !force {
                    not_made.push(show(&path));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(show, &path)(e)),
        }
        written.insert(path);
    }
    if !not_made.is_empty() {
        return Err(OutDirError::NotMade { paths: not_made });
    }

    // What an earlier export of this format wrote in the directories this one writes into.
    let mut stale = Vec::new();
    for d in &directories {
        let Ok(entries) = std::fs::read_dir(d) else { continue };
        let mut found: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        found.sort();
        for path in found {
            if written.contains(&path) {
                continue;
            }
            let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
            if regular && head(&path).is_ok_and(|text| export::made_by(&text) == Some(format)) {
                stale.push(path);
            }
        }
    }
    Ok(Writes { dir, stale })
}

impl Writes {
    /// Writes `files` (making the directories they need) and removes the stale ones.
    pub(crate) fn write(&self, files: &[File], show: &dyn Fn(&Path) -> String) -> Result<(), OutDirError> {
        for f in files {
            let path = self.dir.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io(show, parent))?;
            }
            replace_file(&path, f.text.as_bytes(), f.executable).map_err(io(show, &path))?;
        }
        for path in &self.stale {
            std::fs::remove_file(path).map_err(io(show, path))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(format: &str, path: &str) -> File {
        let text = format!("# x\n# Made by `runner export {format} -p aws -s dev`: export again rather than edit.\n");
        File {
            path: path.into(),
            text,
            executable: false,
        }
    }

    /// Checks a PKO export into `dir`, under the trusted `top`.
    fn check_in(top: &Path, dir: &Path, files: &[File], force: bool) -> Result<Writes, OutDirError> {
        check(dir, &[top], files, Format::Pko, force, &|p: &Path| {
            p.display().to_string()
        })
    }

    #[test]
    fn only_its_own_files_are_replaced_and_its_earlier_ones_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("old.yaml"), &made("pko", "old.yaml").text).unwrap();
        std::fs::write(dir.join("theirs.yaml"), &made("gitlab-ci", "theirs.yaml").text).unwrap();
        std::fs::write(dir.join("stacks.yaml"), "mine: true\n").unwrap();
        let files = [made("pko", "stacks.yaml")];
        assert!(
            matches!(check_in(tmp.path(), &dir, &files, false), Err(OutDirError::NotMade { paths }) if paths.len() == 1)
        );
        let writes = check_in(tmp.path(), &dir, &files, true).unwrap();
        assert_eq!(writes.stale, [dir.join("old.yaml")], "another format's file stays");
        writes.write(&files, &|p: &Path| p.display().to_string()).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("stacks.yaml")).unwrap(), files[0].text);
        assert!(!dir.join("old.yaml").exists() && dir.join("theirs.yaml").exists());
    }

    #[cfg(unix)]
    #[test]
    fn no_write_goes_through_a_link_or_into_git() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("real")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("real"), tmp.path().join("link")).unwrap();
        let files = [made("pko", "sub/stacks.yaml")];
        let into_link = check_in(tmp.path(), &tmp.path().join("link/out"), &files, true);
        assert!(matches!(into_link, Err(OutDirError::DirectoryLink { .. })));
        let git = check_in(tmp.path(), &tmp.path().join("repo/.git/x/../out"), &files, false);
        assert!(matches!(git, Err(OutDirError::GitDirectory { .. })));
        std::fs::create_dir_all(tmp.path().join("out/sub")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("real"), tmp.path().join("out/sub/stacks.yaml")).unwrap();
        let file_link = check_in(tmp.path(), &tmp.path().join("out"), &files, false);
        assert!(matches!(file_link, Err(OutDirError::FileLink { .. })));
    }
}
