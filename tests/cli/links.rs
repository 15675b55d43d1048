//! The documentation's relative links lead somewhere: every `[text](target)` and
//! `![alt](target)` of README.md, CONTRIBUTING.md, BENCHMARKS.md and docs/ that is not a URL
//! names a file or directory of the repository, and its `#anchor`, when it has one, a heading
//! of that Markdown file (or of the same file, for a bare `#anchor`), by GitHub's rules.
//! Links inside code (fenced blocks, `code spans`) are text, not links.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

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
    let mut files: Vec<String> = ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"]
        .map(String::from)
        .into();
    files.extend(
        docs.iter()
            .map(|p| p.strip_prefix(REPO).unwrap().to_str().unwrap().replace('\\', "/")),
    );
    files
}

/// For each line of a Markdown file, whether it belongs to a fenced code block (its fences
/// included).
fn in_fences(text: &str) -> Vec<bool> {
    let mut fence: Option<String> = None;
    text.split_inclusive('\n')
        .map(|line| {
            let marker: String = line
                .trim_start()
                .chars()
                .take_while(|c| *c == '`' || *c == '~')
                .collect();
            let same = |m: &str| m.chars().all(|c| m.starts_with(c));
            match &fence {
                Some(open) if marker.len() >= open.len() && marker.starts_with(&open[..1]) && same(&marker) => {
                    fence = None;
                }
                Some(_) => {}
                None if marker.len() >= 3 && same(&marker) => fence = Some(marker),
                None => return false,
            }
            true
        })
        .collect()
}

/// The text with every fenced block and code span blanked (newlines kept, so offsets still
/// fall on their lines).
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (line, fenced) in text.split_inclusive('\n').zip(in_fences(text)) {
        out.push_str(if !fenced {
            line
        } else if line.ends_with('\n') {
            "\n"
        } else {
            ""
        });
    }
    // Code spans: a run of backticks up to the next run of the same length.
    let chars: Vec<char> = out.chars().collect();
    let mut blanked = String::with_capacity(out.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            blanked.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let r = chars[j..].iter().take_while(|c| **c == '`').count();
                if r == run {
                    close = Some(j + r);
                    break;
                }
                j += r;
            } else {
                j += 1;
            }
        }
        let end = close.unwrap_or(i + run);
        for c in &chars[i..end] {
            blanked.push(if *c == '\n' { '\n' } else { ' ' });
        }
        i = end;
    }
    blanked
}

/// GitHub's anchor of a heading: lower-cased, each space a `-`, every character but letters,
/// digits, `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (a repeated one gets `-1`, `-2`… as on GitHub).
/// A heading's anchor is made from its text as written, backticks dropped with the rest of the
/// punctuation.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (line, fenced) in text.split_inclusive('\n').zip(in_fences(text)) {
        let level = line.chars().take_while(|c| *c == '#').count();
        let Some(rest) = line
            .get(level..)
            .filter(|r| !fenced && (1..=6).contains(&level) && r.starts_with(' '))
        else {
            continue;
        };
        let base = slug(rest.trim().trim_end_matches('#'));
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// Every link target of a file's prose, with its line (1-based).
fn links(text: &str) -> Vec<(usize, String)> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = prose[from..].find("](") {
        let start = from + at + 2;
        let rest = &prose[start..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].trim();
        let target = target
            .strip_prefix('<')
            .and_then(|t| t.split_once('>'))
            .map_or_else(|| target.split_whitespace().next().unwrap_or_default(), |(t, _)| t);
        let line = prose[..start].matches('\n').count() + 1;
        out.push((line, target.to_string()));
        from = start + end;
    }
    out
}

/// `base/rel` with `.` and `..` resolved, without touching the file system.
fn join(base: &Path, rel: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(rel).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_docs_reaches_a_file_and_a_heading() {
    let root = Path::new(REPO);
    let mut problems = Vec::new();
    let mut checked = 0;
    for doc in markdown_files() {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let dir = Path::new(&doc).parent().unwrap_or(Path::new(""));
        for (line, target) in links(&text) {
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target
                .split_once('#')
                .map_or((target.as_str(), None), |(p, a)| (p, Some(a)));
            let file = if path.is_empty() {
                PathBuf::from(&doc)
            } else {
                join(dir, path)
            };
            if file.components().next() == Some(Component::ParentDir) || !root.join(&file).exists() {
                problems.push(format!("{doc}:{line}: {target}: no file {}", file.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if file.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let linked = std::fs::read_to_string(root.join(&file)).unwrap();
            if !anchors(&linked).contains(anchor) {
                problems.push(format!(
                    "{doc}:{line}: {target}: no heading of {} has the anchor #{anchor}",
                    file.display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} broken links:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(
        checked > 50,
        "only {checked} relative links found: is the parser still reading them?"
    );
}

#[test]
fn anchors_follow_githubs_rules() {
    assert_eq!(
        slug("A run as a picture (`--report FILE`, `runner report`, `status --format gantt`)"),
        "a-run-as-a-picture---report-file-runner-report-status---format-gantt"
    );
    assert_eq!(
        slug("`runner up` · `destroy` (`down`) · `refresh` · `preview`"),
        "runner-up--destroy-down--refresh--preview"
    );
    assert_eq!(slug("The `MARA_` prefix"), "the-mara_-prefix");
    let doc = "# Title\n## Again\n```sh\n# not a heading\n```\n## Again\n";
    assert_eq!(
        anchors(doc),
        ["title", "again", "again-1"].map(String::from).into_iter().collect()
    );
    let text = "[a](x.md) `[b](code.md)` and\n```\n[c](fenced.md)\n```\n![d](e.png \"title\") [f](<g h.md>)\n";
    assert_eq!(
        links(text),
        vec![(1, "x.md".into()), (5, "e.png".into()), (5, "g h.md".into())]
    );
}
