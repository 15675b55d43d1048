//! The one way the runner writes a file a person or another run will read: a temporary file in
//! the same directory, written and fsync'ed, then renamed over the target, so a reader sees the
//! old file or the new one, never half of either. An existing file keeps its mode; a symlink is
//! written through to its target rather than replaced by a plain file. [`replace_file`] is the
//! same write for files the runner generates into a directory another party may have filled
//! (an export's output): it never follows a link. [`normalize`] is the one lexical normaliser
//! of the paths the runner compares.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

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

/// A file a person names on the command line for the runner to write (`--report`, `--junit`,
/// `--summary`, `report -o`): looked at before the run, so a wrong one is refused before
/// anything runs, and written after it. A device or a pipe is written into, never replaced (as
/// root in a CI container, replacing `/dev/null` would replace the machine's); a symbolic link
/// is refused, not written through (a fixed name in a shared directory must not let another
/// user aim the write).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Output {
    /// `-`: standard output; also `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`, written
    /// through the runner's own descriptor (a `>> log` keeps appending, never restarts at 0).
    Stdout,
    /// `/dev/stderr`, `/dev/fd/2`, `/proc/self/fd/2`: the runner's standard error.
    Stderr,
    /// A regular file, or none yet: replaced atomically, its mode kept.
    File(PathBuf),
    /// A character device or a pipe (`/dev/null`, a FIFO), or what a system link leads to
    /// (`/dev/fd/3`): written into, a regular file at its end.
    Stream(PathBuf),
}

/// Why a named output cannot be written; each with its fix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutputError {
    #[error("is a symbolic link")]
    Link,
    #[error("is a directory")]
    Directory,
    #[error("is a block device or a socket, not a file")]
    Device,
    #[error("is a pipe nobody reads")]
    Unread,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl OutputError {
    /// What to do about it.
    pub(crate) fn fix(&self) -> &'static str {
        match self {
            OutputError::Link => "name the file itself, not a link to it (or remove the link)",
            OutputError::Directory => "name a file in it, such as DIR/report.html",
            OutputError::Device => "name a regular file, `-` for standard output, or /dev/null",
            OutputError::Unread => "start the pipe's reader first, or name a regular file",
            OutputError::Io(_) => "name a file in a directory you can write",
        }
    }
}

impl Output {
    /// What `path` is as an output (nothing is opened: a pipe's reader is looked for at the
    /// write). The system's own links to streams (`/dev/stdout`, `/proc/self/fd/1`) are
    /// followed, and what they reach is written into whatever it is.
    pub(crate) fn named(path: &Path) -> Result<Self, OutputError> {
        if path.as_os_str() == "-" {
            return Ok(Output::Stdout);
        }
        // The runner's own descriptors, by the names the system gives them: written through the
        // descriptor itself, whatever it was opened as (a new open of a file it names would
        // write from byte 0 over what the shell's `>>` appends to).
        let own = |fd: u8| {
            [
                format!("/dev/fd/{fd}"),
                format!("/proc/self/fd/{fd}"),
                format!("/proc/{}/fd/{fd}", std::process::id()),
            ]
            .iter()
            .any(|p| path.as_os_str() == p.as_str())
        };
        if path.as_os_str() == "/dev/stdout" || own(1) {
            return Ok(Output::Stdout);
        }
        if path.as_os_str() == "/dev/stderr" || own(2) {
            return Ok(Output::Stderr);
        }
        let meta = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Output::File(path.to_path_buf())),
            Err(e) => return Err(e.into()),
            Ok(m) => m,
        };
        // Only the system's links to open descriptors are followed; any other link, under /dev
        // too (`/dev/shm/x` → a victim's file), is refused like one anywhere else.
        let system = descriptor_link(path);
        if meta.file_type().is_symlink() && !system {
            return Err(OutputError::Link);
        }
        let linked = meta.file_type().is_symlink();
        let meta = if linked { std::fs::metadata(path)? } else { meta };
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt as _;
            let kind = meta.file_type();
            // A regular file a system link leads to (`/dev/fd/3`) is another's open file; one
            // that merely lives under /dev (`/dev/shm/x`) is replaced like any other.
            if kind.is_char_device() || kind.is_fifo() || (system && linked && kind.is_file()) {
                return Ok(Output::Stream(path.to_path_buf()));
            }
            if kind.is_block_device() || kind.is_socket() {
                return Err(OutputError::Device);
            }
        }
        if meta.is_dir() {
            return Err(OutputError::Directory);
        }
        Ok(Output::File(path.to_path_buf()))
    }

    /// Writes `bytes` there: standard output, a file replaced atomically (its directory made;
    /// a link put there since [`Output::named`] replaced, never followed), or a stream written
    /// into (a pipe without a reader refused, not waited on).
    pub(crate) fn write(&self, bytes: &[u8]) -> Result<(), OutputError> {
        match self {
            Output::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()?;
            }
            Output::Stderr => {
                let mut out = std::io::stderr().lock();
                out.write_all(bytes)?;
                out.flush()?;
            }
            Output::File(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                replace_file(path, bytes, false)?;
            }
            Output::Stream(path) => {
                let mut f = open_stream(path)?;
                f.write_all(bytes)?;
                f.flush()?;
            }
        }
        Ok(())
    }

    /// As a person would read where it went.
    pub(crate) fn shown(&self, show: impl Fn(&Path) -> String) -> String {
        match self {
            Output::Stdout => "standard output".into(),
            Output::Stderr => "standard error".into(),
            Output::File(p) | Output::Stream(p) => show(p),
        }
    }
}

/// Opens a device or a pipe for writing, in place. A pipe is opened without waiting: with no
/// reader that fails (ENXIO) and is said, instead of blocking the runner for ever.
fn open_stream(path: &Path) -> Result<std::fs::File, OutputError> {
    #[cfg(unix)]
    {
        use nix::fcntl::{FcntlArg, OFlag, fcntl};
        use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
        if std::fs::metadata(path)?.file_type().is_fifo() {
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(OFlag::O_NONBLOCK.bits())
                .open(path)
            {
                Err(e) if e.raw_os_error() == Some(nix::errno::Errno::ENXIO as i32) => return Err(OutputError::Unread),
                Err(e) => return Err(e.into()),
                // A reader is there: this very handle is kept, made to wait for it to read. Closed
                // and opened again, the reader would see its end in between, leave, and the
                // second open wait for ever for another.
                Ok(pipe) => {
                    let flags =
                        OFlag::from_bits_truncate(fcntl(&pipe, FcntlArg::F_GETFL).map_err(std::io::Error::from)?);
                    fcntl(&pipe, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK)).map_err(std::io::Error::from)?;
                    return Ok(pipe);
                }
            }
        }
    }
    // A regular file (through a link of the system's): at its end, never over what it holds.
    let regular = std::fs::metadata(path)?.is_file();
    Ok(std::fs::OpenOptions::new().write(true).append(regular).open(path)?)
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

/// The most the runner reads of a file it was given (a provider file, a stack file, the
/// environment file, a kubeconfig, a program): far more than any real one holds.
pub(crate) const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// A text file the runner reads, refused when it is not a regular file (a FIFO would hang the
/// read, a device never end) or is larger than [`READ_LIMIT`]. A missing file is `NotFound`.
pub(crate) fn read_text(path: impl AsRef<Path>) -> std::io::Result<String> {
    use std::io::Read as _;
    let path = path.as_ref();
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a directory, a pipe or a device)",
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(READ_LIMIT + 1)
        .read_to_string(&mut text)
        .map_err(|e| match e.kind() {
            // What a person would say of the file (std says "stream did not contain valid UTF-8").
            std::io::ErrorKind::InvalidData => std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
            _ => e,
        })?;
    if text.len() as u64 > READ_LIMIT {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("larger than {} MiB", READ_LIMIT / 1024 / 1024),
        ));
    }
    Ok(text)
}

/// The most the runner reads of a file it keeps for itself and that grows with the graph (the
/// run state's journal): far more than any run writes, and still a bound.
pub(crate) const STATE_LIMIT: u64 = 256 * 1024 * 1024;

/// `path`'s metadata (links followed), refused when it is not a regular file: a FIFO would
/// hang a read (and the workspace lock with it), a device such as `/dev/zero` never end.
pub(crate) fn regular(path: &Path) -> std::io::Result<std::fs::Metadata> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        Ok(meta)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a directory, a pipe or a device)",
        ))
    }
}

/// The bytes of a file, refused as [`read_text`] refuses one (not a regular file), or when
/// larger than `limit`. A missing file is `NotFound`.
pub(crate) fn read_bytes(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    regular(path)?;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("larger than {} MiB", limit / 1024 / 1024),
        ));
    }
    Ok(bytes)
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

/// Whether `path` is one of the system's names of an open descriptor (`/dev/stdout`,
/// `/dev/fd/3`, `/proc/self/fd/3`, `/proc/<pid>/fd/3`, `/proc/thread-self/fd/3`), however
/// spelt (`/dev/./stdout`, `//dev/stdout`).
fn descriptor_link(path: &Path) -> bool {
    let norm = normalize(path);
    let parts: Vec<&str> = norm
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => p.to_str(),
            _ => None,
        })
        .collect();
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    norm.has_root()
        && match parts.as_slice() {
            ["dev", "stdin" | "stdout" | "stderr"] => true,
            ["dev", "fd", n] => number(n),
            ["proc", who, "fd", n] => (matches!(*who, "self" | "thread-self") || number(who)) && number(n),
            _ => false,
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

/// `f` over every item, the items shared out among the cores; results in the items' order.
/// For work that waits on the file system item by item (big graphs have thousands of files).
pub(crate) fn on_all_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len().max(1));
    let chunk = items.len().div_ceil(threads).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("work on files does not panic"))
            .collect()
    })
}

/// `stat`s of project programs (`<dir>/Pulumi.yaml`, links followed) taken ahead of need, by
/// project directory relative to the workspace root: planning a big graph looks at thousands of
/// them, and a thread that knows last time's directories can look while the provider file is
/// still being parsed. A directory not in it is looked at when asked.
pub(crate) trait ProgramStats: Sync {
    fn taken(&self, dir: &str) -> Taken;
}

/// What a `stat` taken ahead saw.
pub(crate) enum Taken {
    /// None was taken: look now.
    Not,
    /// There was no file (or it could not be looked at).
    Absent,
    Stat(std::fs::Metadata),
}

/// No `stat` taken ahead.
pub(crate) struct NoStats;

impl ProgramStats for NoStats {
    fn taken(&self, _: &str) -> Taken {
        Taken::Not
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_systems_names_of_descriptors_are_links_followed() {
        for followed in [
            "/dev/stdout",
            "/dev/./stdout",
            "//dev/stderr",
            "/dev/../dev/stdout",
            "/dev/fd/3",
            "/proc/self/fd/1",
            "/proc/thread-self/fd/1",
            "/proc/4242/fd/7",
        ] {
            assert!(descriptor_link(Path::new(followed)), "{followed}");
        }
        for refused in [
            "/dev/shm/lnk",
            "/dev/mylink",
            "/dev/fd/x",
            "/proc/self/root/tmp/x",
            "dev/stdout",
            "/tmp/dev/stdout",
            "/proc/self/fd/",
        ] {
            assert!(!descriptor_link(Path::new(refused)), "{refused}");
        }
    }

    #[test]
    fn a_text_file_that_is_not_utf8_is_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("Pulumi.dev.yaml");
        std::fs::write(&file, b"config:\n  a: caf\xe9\n").unwrap();
        let e = read_text(&file).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string()),
            (std::io::ErrorKind::InvalidData, "not UTF-8 text".to_string())
        );
    }

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
