//! The documentation's files (its link check comes with the docs it checks).

use std::path::{Path, PathBuf};

use crate::support::REPO;

/// The documentation, relative to the repository, in a stable order: README.md,
/// CONTRIBUTING.md, BENCHMARKS.md, then every Markdown file under docs/.
pub(crate) fn markdown_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut docs = Vec::new();
    walk(&Path::new(REPO).join("docs"), &mut docs);
    docs.sort();
    let mut files: Vec<String> = ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"].map(String::from).into();
    files.extend(docs.iter().map(|p| {
        p.strip_prefix(REPO).unwrap().to_str().unwrap().replace('\\', "/")
    }));
    files
}
