//! The one way the runner writes a file a person or another run will read: a temporary file in
//! the same directory, written and fsync'ed, then renamed over the target, so a reader sees the
//! old file or the new one, never half of either. An existing file keeps its mode; a symlink is
//! written through to its target rather than replaced by a plain file. [`replace_file`] is the
//! same write for files the runner generates into a directory another party may have filled
//! (an export's output): it never follows a link.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Who may read a file the write creates (an existing file keeps its own mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NewFile {
    /// The process umask decides, as for any file a tool writes.
    Default,
    /// Owner only (0600): a kubeconfig holds credentials.
    Private,
}

/// Replaces `path` with `bytes` atomically (see the module comment).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], new: NewFile) -> std::io::Result<()> {
    let path = resolve_symlinks(path)?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mode = existing_mode(&path)?;
    let tmp = dir.join(format!(
        ".{}.runner-{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // Created with the mode it will have (the umask may take bits away from a new
            // file's), so the content is never readable by more people than the result.
            opts.mode(mode.unwrap_or(match new {
                NewFile::Private => 0o600,
                NewFile::Default => 0o666,
            }));
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(bytes)?;
        if let Some(m) = mode {
            keep_mode(&f, m)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Replaces `path` with `bytes` atomically without ever following a symlink: the temporary file
/// is created new (`O_EXCL`, so a link planted under its name is neither followed nor reused),
/// gets its mode through its own handle (never a `chmod` of a path), and is renamed over `path`,
/// which replaces a link there itself and leaves its target alone. `executable` gives 0755;
/// otherwise an existing regular file keeps its mode and a new one gets 0666 less the umask.
pub(crate) fn replace_file(path: &Path, bytes: &[u8], executable: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mode = match std::fs::symlink_metadata(path) {
        #[cfg(unix)]
        Ok(m) if m.is_file() => {
            use std::os::unix::fs::PermissionsExt as _;
            Some(m.permissions().mode() & 0o7777)
        }
        _ => None,
    };
    let mode = if executable { Some(0o755) } else { mode };
    let mut attempt = 0;
    let (tmp, mut f) = loop {
        let tmp = dir.join(format!(".{name}.runner-{}-{attempt}.tmp", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // What a new file gets (the umask applies); an exact mode is set below.
            opts.mode(0o666);
        }
        match opts.open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        f.write_all(bytes)?;
        if let Some(m) = mode {
            keep_mode(&f, m)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes the temporary files of writes that never finished in `dir` (a killed runner leaves
/// them); call only while holding the workspace lock, so no write is under way.
pub(crate) fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.contains(".runner-") && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The file a chain of symlinks ends at (the path itself when it is not a link). A dangling
/// link gives the path it points to, so the write creates the target.
fn resolve_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    // As many hops as Linux follows before ELOOP.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// The permission bits of an existing file; `None` when there is none yet.
fn existing_mode(path: &Path) -> std::io::Result<Option<u32>> {
    match std::fs::metadata(path) {
        #[cfg(unix)]
        Ok(m) => {
            use std::os::unix::fs::PermissionsExt as _;
            Ok(Some(m.permissions().mode() & 0o7777))
        }
        #[cfg(not(unix))]
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The existing file's bits exactly, which the umask may have narrowed at creation.
#[cfg(unix)]
fn keep_mode(f: &std::fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    f.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn keep_mode(_: &std::fs::File, _: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    /// A file `name` in `dir` holding `text`, with permissions `mode`: its path.
    #[cfg(unix)]
    fn file_of_mode(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn replaces_the_content_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/a.txt");
        write_atomic(&p, b"one", NewFile::Default).unwrap();
        write_atomic(&p, b"two", NewFile::Default).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["a.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_file_keeps_its_mode_and_a_new_private_one_is_0600() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of_mode(dir.path(), "stack.yaml", "old", 0o640);
        write_atomic(&p, b"new", NewFile::Private).unwrap();
        assert_eq!(mode(&p), 0o640);
        let q = dir.path().join("kubeconfig");
        write_atomic(&q, b"new", NewFile::Private).unwrap();
        assert_eq!(mode(&q), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn replace_file_replaces_a_link_itself_and_never_chmods_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = file_of_mode(dir.path(), "profile", "mine", 0o644);
        let link = dir.path().join("teardown.sh");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // A link planted under the temporary file's name is not followed either.
        let planted = dir
            .path()
            .join(format!(".teardown.sh.runner-{}-0.tmp", std::process::id()));
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        replace_file(&link, b"#!/bin/sh\n", true).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
        assert_eq!(mode(&target), 0o644);
        assert!(!std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "#!/bin/sh\n");
        assert_eq!(mode(&link), 0o755);
        assert!(std::fs::symlink_metadata(&planted).unwrap().file_type().is_symlink());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_written_through_to_its_target() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let target = dir.path().join("real/config");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("config");
        std::os::unix::fs::symlink("real/config", &link).unwrap();
        write_atomic(&link, b"new", NewFile::Default).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link creates its target.
        let dangling = dir.path().join("later");
        std::os::unix::fs::symlink("real/later", &dangling).unwrap();
        write_atomic(&dangling, b"made", NewFile::Default).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("real/later")).unwrap(), "made");
    }
}
