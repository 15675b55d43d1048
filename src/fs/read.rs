//! Every file the runner reads: a regular file, bounded.

use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
