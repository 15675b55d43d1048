//! A path a person gives the runner to write (`--report`, `--junit`, `--summary`, `report -o`).

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use super::{normalize, replace_file};

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
}
