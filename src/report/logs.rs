//! Every project's full output in `.runner/<stack>/logs/<project>.log` (already scrubbed of
//! secrets), so the live view can show only the last line without losing anything.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::exec::{Event, Stream};
use crate::runstate::timestamp;

pub(crate) struct Logs {
    dir: PathBuf,
    files: HashMap<String, File>,
}

impl Logs {
    pub(crate) fn new(dir: &Path) -> Self {
        let _ = std::fs::create_dir_all(dir);
        Logs {
            dir: dir.to_path_buf(),
            files: HashMap::new(),
        }
    }

    pub(crate) fn path(&self, project: &str) -> PathBuf {
        self.dir.join(format!("{project}.log"))
    }

    pub(crate) fn event(&mut self, ev: &Event) {
        match ev {
            Event::Started { project, operation, at } => {
                if let Ok(mut f) = private(&self.path(project)) {
                    let _ = writeln!(f, "== {} {project} started {}", operation.as_str(), timestamp(*at));
                    self.files.insert(project.clone(), f);
                }
            }
            Event::Line { project, stream, text } => {
                if let Some(f) = self.files.get_mut(project) {
                    let mark = if *stream == Stream::Stderr { "! " } else { "" };
                    let _ = writeln!(f, "{mark}{text}");
                }
            }
            Event::Finished { project, result, .. } => {
                if let Some(mut f) = self.files.remove(project) {
                    let _ = writeln!(f, "== {} {}", result.status.name(), timestamp(result.ended));
                }
            }
            Event::Note { .. } => {}
        }
    }
}

/// A log for its owner's eyes only (0600).
fn private(path: &Path) -> std::io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let f = opts.open(path)?;
    // A log written before by an older runner keeps no wider mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}
