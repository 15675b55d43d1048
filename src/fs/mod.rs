//! Files and paths as the runner handles them: every file it writes a person or another run will
//! read, written whole or not at all ([`write_atomic`], [`replace_file`]: `write`); a path given
//! for it to write, a device or a pipe written into and a link refused ([`Output`]: `output`);
//! every file it reads, bounded and never a FIFO or a device ([`read_text`], [`read_bytes`]:
//! `read`); and here the paths themselves: `~` put in, and [`normalize`], the one lexical
//! normaliser of the paths the runner compares.

mod output;
mod read;
mod write;

use std::path::{Component, Path, PathBuf};

pub(crate) use output::Output;
pub(crate) use read::{READ_LIMIT, STATE_LIMIT, read_bytes, read_text, regular};
pub(crate) use write::{NewFile, remove_stale_temporaries, replace_file, write_atomic};

/// A path a person wrote, with `~` and `~/…` as `home`, as a shell reads them (`~user` is not
/// expanded); any other path, or one with no home to put in (none, or empty), as written. The
/// one `~` expansion: a backend URL, `KUBECONFIG`, a path a question asks for.
pub(crate) fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    let home = home.filter(|h| !h.as_os_str().is_empty());
    match (path.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) => match rest.strip_prefix('/') {
            Some(rest) => home.join(rest),
            None => PathBuf::from(path),
        },
        _ => PathBuf::from(path),
    }
}

/// The home directory the runner was given (`HOME`), when set.
pub(crate) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// `path` without `.` and with each `..` taking away the component before it, lexically: no
/// link is followed, so no component can hide behind a `..` from a check that walks them.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` [normalized](normalize), then through its nearest existing ancestor's real path, so
/// two spellings of one directory (one through a link) compare equal, even where the path
/// itself does not exist yet.
pub(crate) fn comparable(path: &Path) -> PathBuf {
    let out = normalize(path);
    let mut existing = out.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let Some(parent) = existing.parent() else { return out };
        rest.push(existing.file_name().map(PathBuf::from).unwrap_or_default());
        existing = parent;
    }
    let mut real = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    for r in rest.iter().rev() {
        real.push(r);
    }
    real
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_put_in_for_a_leading_tilde_alone() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(expand_home("~", home), Path::new("/home/u"));
        assert_eq!(expand_home("~/.kube/config", home), Path::new("/home/u/.kube/config"));
        for kept in ["~ann/x", "a/~/b", "/abs", "rel"] {
            assert_eq!(expand_home(kept, home), Path::new(kept));
        }
        assert_eq!(expand_home("~/x", None), Path::new("~/x"));
        assert_eq!(expand_home("~/x", Some(Path::new(""))), Path::new("~/x"));
    }

    #[test]
    fn normalize_takes_out_dots_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c/")), Path::new("/a/c"));
        assert_eq!(normalize(Path::new("a/../../b")), Path::new("b"));
        assert_eq!(normalize(Path::new("/../a")), Path::new("/a"));
        assert_eq!(normalize(Path::new("./.")), Path::new(""));
    }

    #[cfg(unix)]
    #[test]
    fn comparable_paths_meet_through_a_link_even_below_it_where_nothing_exists() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let canonical = real.canonicalize().unwrap();
        assert_eq!(
            comparable(&dir.path().join("link/./new/../later/x")),
            canonical.join("later/x")
        );
        assert!(comparable(&dir.path().join("link/x")).starts_with(comparable(&real)));
        // Nothing of a relative path exists here: it stays lexical.
        assert_eq!(
            comparable(Path::new("no-such-dir-here/./x")),
            Path::new("no-such-dir-here/x")
        );
    }
}
