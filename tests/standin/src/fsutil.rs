//! Files written whole, as `sdk/go/common/util/fsutil` does for the real CLI: the backend's
//! checkpoints and metadata, the credentials file, and `check-programs --fix`'s pins.

use std::path::Path;

use crate::fail::{Failure, fail};
use crate::time;

/// Temporary file in the same directory, then rename: readers never see half a file, and a
/// kill midway leaves the old one. An existing file keeps its mode; a link is written through,
/// to the file it names.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = path.parent().expect("a file path has a parent");
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("could not create {}: {e}", dir.display())))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        time::random_hex(6)
    ));
    let written = std::fs::write(&tmp, bytes)
        .map_err(|e| fail(format!("could not write {}: {e}", tmp.display())))
        .and_then(|()| match std::fs::metadata(&path) {
            Ok(old) => std::fs::set_permissions(&tmp, old.permissions())
                .map_err(|e| fail(format!("could not write {}: {e}", tmp.display()))),
            Err(_) => Ok(()),
        })
        .and_then(|()| {
            std::fs::rename(&tmp, &path).map_err(|e| fail(format!("could not write {}: {e}", path.display())))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
