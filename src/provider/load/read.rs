//! Reading: which files `providers/` holds, and one of them parsed into its [`RawFile`], its text
//! kept so every span can be shown as a file, line and column.

use std::path::Path;

use toml::Spanned;

use super::Loader;
use super::file::RawFile;
use super::problem::Fault;
use crate::diagnostic::SourceFile;
use crate::graph::Origin;
use crate::workspace::PROVIDERS_DIR;

/// Names of the `*.toml` files in `providers/`, sorted.
pub fn file_names(root: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root.join(PROVIDERS_DIR))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// `name` is a provider or layer of the workspace: a plain name, no path, whose
/// `providers/<name>.toml` is a regular file in `providers/` once symlinks are followed (a link
/// out of the directory is refused).
pub(super) fn is_file_of_providers(root: &Path, name: &str) -> bool {
    let plain = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\']);
    if !plain {
        return false;
    }
    let path = root.join(PROVIDERS_DIR).join(format!("{name}.toml"));
    let (Ok(dir), Ok(real)) = (root.join(PROVIDERS_DIR).canonicalize(), path.canonicalize()) else {
        return false;
    };
    real.starts_with(dir) && real.is_file()
}

/// Where a spanned value of file `file` was written, as the graph keeps it.
pub(super) fn origin<T>(file: usize, s: &Spanned<T>) -> Origin {
    let span = s.span();
    Origin {
        file,
        start: span.start,
        end: span.end,
    }
}

impl Loader<'_> {
    /// Reads and parses `providers/<name>.toml`; a syntax or shape error is recorded.
    pub(super) fn read(&mut self, name: &str) -> Option<(usize, RawFile)> {
        let path = self.ws.root.join(PROVIDERS_DIR).join(format!("{name}.toml"));
        let display = self.ws.show(&path);
        let text = match crate::fs::read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                self.file_problem(&display, Fault::Unreadable(e));
                return None;
            }
        };
        self.files.push(SourceFile::new(display, text));
        let file = self.files.len() - 1;
        match toml::from_str::<RawFile>(&self.files[file].text) {
            Ok(raw) => Some((file, raw)),
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                self.problem_in(file, span, Fault::Syntax(e.message().trim().to_string()));
                None
            }
        }
    }
}
