//! `check-programs`: the Pulumi YAML programs against the provider SDKs pinned in
//! `scripts/provider-versions`, as installed in the SDK cache by `scripts/install-test-tools`
//! (`<cache>/schema.json`). Run by `scripts/check-programs`:
//!
//!   check-programs                 every `projects/**/Pulumi.yaml`
//!   check-programs DIR|FILE …      only those (a directory: every Pulumi.yaml under it)
//!   check-programs --fix [PATH …]  first writes the pinned version into every resource and
//!                                  invoke whose `options.version` is missing or another
//!
//! Each program goes through the stand-in's type checker ([`pulumi_standin::check`]: what the
//! engine refuses, with its message), and through this tool's own checks: every resource and
//! invoke of a pinned package carries `options.version` equal to the pin, uses no package the
//! pins lack, and the program has no top-level key Pulumi YAML does not know. One line a
//! problem, `program:line: message — checked against <what>`, with the fix where there is one.
//! Exit 0, 1 (problems), 2 (cannot run).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::single_match_else)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::exit;

use pulumi_standin::check::schema::{Schema, package_of};
use pulumi_standin::check::{self, Against, Problem, closest, short_invoke};
use pulumi_standin::fsutil;
use pulumi_standin::program::diag::Severity;
use pulumi_standin::workspace::pins::{self, Pin};
use pulumi_standin::yaml::{self, Key, Node, Yaml};

/// The template's keys and the project file's own (`ast.TemplateDecl`, the CLI's
/// `project.json`): anything else is read by neither, so most likely a typo.
const TEMPLATE_KEYS: [&str; 23] = [
    "name",
    "namespace",
    "description",
    "version",
    "pulumi",
    "configuration",
    "config",
    "variables",
    "resources",
    "outputs",
    "packages",
    "components",
    "runtime",
    "main",
    "stackConfigDir",
    "backend",
    "options",
    "template",
    "plugins",
    "author",
    "website",
    "license",
    "requiredPulumiVersion",
];

fn die(message: &str) -> ! {
    eprintln!("check-programs: {message}");
    exit(2)
}

/// The repository (this crate is `tests/standin` in it).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The versions the schema was built from (its header's `pins`).
fn schema_pins(path: &Path) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    let head = text.lines().next().unwrap_or_default();
    head.find("\"pins\":")
        .and_then(|at| {
            serde_json::Deserializer::from_str(&head[at + 7..])
                .into_iter::<BTreeMap<String, String>>()
                .next()?
                .ok()
        })
        .unwrap_or_default()
}

/// The largest program read (the repository's biggest is 14 KB): a link to `/dev/zero` or a
/// huge file must not be read until memory runs out.
const LARGEST_PROGRAM: u64 = 4 << 20;

/// What the walk has seen, by device and inode: each directory entered once (a link to `..` or
/// a loop of links ends there) and each program counted and fixed once, however many names it
/// is reached by.
type Seen = std::collections::HashSet<(u64, u64)>;

/// `path` itself when it is a file, else every `Pulumi.yaml` under it, each real file once.
/// What is neither a file nor a directory (a FIFO, a device) is refused when named, and left
/// unread (said on standard error) when it is found as a `Pulumi.yaml`: reading it could block,
/// or never end.
/// `top` is the file system of the path named, for the directories found under it: the walk
/// stays on it.
fn programs_under(path: &Path, out: &mut Vec<PathBuf>, seen: &mut Seen, top: Option<u64>) {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).unwrap_or_else(|e| die(&format!("{}: {e}", path.display())));
    if meta.is_file() {
        if seen.insert((meta.dev(), meta.ino())) {
            out.push(path.to_path_buf());
        }
        return;
    }
    if !meta.is_dir() {
        die(&format!(
            "{}: not a file or a directory (a FIFO, a socket or a device): name a Pulumi.yaml or a directory holding some",
            path.display()
        ));
    }
    if !seen.insert((meta.dev(), meta.ino())) {
        return;
    }
    let mut entries: Vec<_> = match std::fs::read_dir(path) {
        Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
        // A directory found on the way is said and passed; one named is the user's mistake.
        Err(e) if top.is_some() => {
            eprintln!("check-programs: {}: {e}: left unread", path.display());
            return;
        }
        Err(e) => die(&format!("{}: {e}", path.display())),
    };
    let top = top.unwrap_or(meta.dev());
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A link that leads nowhere, or in a loop, is no program.
        let Ok(meta) = std::fs::metadata(&p) else { continue };
        if meta.is_dir() {
            if meta.dev() != top {
                // A link out to another file system (`/proc`, a mount, `/` itself through
                // `/proc/1/root`): no program lives there, and walking it may never end.
                eprintln!("check-programs: {}: on another file system: left unwalked", p.display());
            } else if !["node_modules", ".pulumi", "target"].contains(&name.as_str()) {
                programs_under(&p, out, seen, Some(top));
            }
        } else if name == "Pulumi.yaml" {
            if !meta.is_file() {
                eprintln!(
                    "check-programs: {}: not a regular file (a FIFO, a socket or a device): left unread",
                    p.display()
                );
            } else if seen.insert((meta.dev(), meta.ino())) {
                out.push(p);
            }
        }
    }
}

/// An edit `--fix` makes, by line (1-based).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Edit {
    /// On this line, the version after `version:` becomes the pin.
    Replace { line: usize, old: String, new: String },
    /// These lines go before this one (`text.lines().count() + 1` for the end).
    Insert { before: usize, text: String },
}

impl Edit {
    fn line(&self) -> usize {
        match self {
            Edit::Replace { line, .. } => *line,
            Edit::Insert { before, .. } => *before,
        }
    }
}

/// Applies edits to a text, leaving every other line as it was.
fn apply(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        let last = lines.pop().unwrap_or_default();
        lines.push(format!("{last}\n"));
    }
    let mut edits = edits.to_vec();
    edits.sort();
    edits.dedup();
    edits.sort_by_key(Edit::line);
    // From the bottom up, so that lines above keep their numbers.
    for e in edits.iter().rev() {
        match e {
            Edit::Replace { line, old, new } => {
                if let Some(l) = lines.get_mut(line - 1)
                    && let Some(at) = l.find("version:")
                    && let Some(pos) = l[at..].find(old.as_str())
                {
                    l.replace_range(at + pos..at + pos + old.len(), new);
                }
            }
            Edit::Insert { before, text } => {
                let at = (*before - 1).min(lines.len());
                lines.insert(at, text.clone());
            }
        }
    }
    lines.concat()
}

/// One program's own checks: the pins, the packages, the template's keys.
struct Own<'a> {
    text: &'a str,
    pins: &'a [Pin],
    problems: Vec<Problem>,
    edits: Vec<Edit>,
}

impl Own<'_> {
    fn problem(&mut self, line: usize, summary: String, against: Against, fix: Option<String>) {
        self.problems.push(Problem {
            severity: Severity::Error,
            line,
            summary,
            detail: String::new(),
            against,
            fix,
        });
    }

    fn pinned(&self) -> Against {
        Against::Package {
            what: "pins",
            sdk: format!(
                "scripts/provider-versions ({})",
                self.pins.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    fn check(&mut self, doc: &Node) {
        // The CLI's project schema requires both (`project.json`); without them the file is no
        // program at all, whatever else it holds.
        if !matches!(doc.value, Yaml::Map(_)) {
            self.problem(
                doc.line,
                "not a Pulumi project file: its top level is not a mapping".into(),
                Against::ProjectSchema,
                Some("a program starts with `name:` and `runtime: yaml`".into()),
            );
            return;
        }
        for required in ["name", "runtime"] {
            if doc.get(required).is_none() {
                self.problem(
                    doc.line,
                    format!("not a Pulumi project file: it has no `{required}:`"),
                    Against::ProjectSchema,
                    Some(format!("add `{required}:` (the CLI requires it)")),
                );
            }
        }
        for (k, _) in doc.entries() {
            if !TEMPLATE_KEYS.contains(&k.name.as_str()) {
                let fix = closest(TEMPLATE_KEYS, &k.name).map(|n| format!("did you mean `{n}`?"));
                self.problem(
                    k.line,
                    format!("unknown top-level key `{}`: Pulumi YAML reads no such key", k.name),
                    Against::Package {
                        what: "top-level keys",
                        sdk: "a Pulumi YAML program (pulumi-yaml ast/template.go TemplateDecl)".into(),
                    },
                    fix,
                );
            }
        }
        for (key, decl) in doc.get("resources").map(Node::entries).unwrap_or_default() {
            let Some((_, ty_node)) = decl.get_ci("type") else {
                continue;
            };
            let Some(ty) = ty_node.as_str() else { continue };
            if ty.starts_with("pulumi:") && !ty.starts_with("pulumi:providers:") {
                continue; // the engine's own resources
            }
            let opts = decl.get_ci("options").map(|(_, o)| o);
            self.pin(&format!("resource `{}`", key.name), ty, ty_node.line, decl, opts);
        }
        self.invokes(doc);
    }

    /// Every `fn::invoke` (and `fn::<package>:<module>:<name>`) in the document.
    fn invokes(&mut self, node: &Node) {
        match &node.value {
            Yaml::Map(entries) => {
                if let [(k, v)] = entries.as_slice() {
                    if k.name.eq_ignore_ascii_case("fn::invoke") {
                        if let Some((_, f)) = v.get_ci("function")
                            && let Some(function) = f.as_str()
                        {
                            let opts = v.get_ci("options").map(|(_, o)| o);
                            self.pin(&format!("fn::invoke of `{function}`"), function, f.line, v, opts);
                        }
                    } else if let Some(function) = short_invoke(&k.name) {
                        self.pin(&format!("fn::invoke of `{function}`"), function, k.line, v, None);
                    }
                }
                for (_, v) in entries {
                    self.invokes(v);
                }
            }
            Yaml::Seq(items) => items.iter().for_each(|i| self.invokes(i)),
            _ => {}
        }
    }

    /// `what` (a resource or an invoke of `token`, at `line`, declared by `owner`) must pin its
    /// package to the listed version in `options.version`.
    fn pin(&mut self, what: &str, token: &str, line: usize, owner: &Node, opts: Option<&Node>) {
        let pkg = package_of(token);
        let Some(pin) = self.pins.iter().find(|p| p.name == pkg).cloned() else {
            let against = self.pinned();
            self.problem(
                line,
                format!("{what} uses package `{pkg}`, which scripts/provider-versions does not pin"),
                against,
                Some("add it there (and run scripts/install-test-tools), or fix the type".into()),
            );
            return;
        };
        let against = Against::Package {
            what: "pin",
            sdk: format!("{pkg} {} (scripts/provider-versions:{})", pin.version, pin.line),
        };
        let version = opts.and_then(|o| o.get_ci("version")).map(|(_, v)| v);
        match version {
            None => {
                self.problem(
                    line,
                    format!("{what} does not pin {pkg}"),
                    against,
                    Some(format!(
                        "add `options: {{version: {}}}` (`scripts/check-programs --fix` does)",
                        pin.version
                    )),
                );
                self.insert_version(owner, opts, &pin.version);
            }
            Some(v) => {
                let got = v.scalar_text().unwrap_or_default();
                if got != pin.version {
                    self.problem(
                        v.line,
                        format!(
                            "{what} pins {pkg} {got}, scripts/provider-versions pins {}",
                            pin.version
                        ),
                        against,
                        Some(format!(
                            "set `version: {}` (`scripts/check-programs --fix` does)",
                            pin.version
                        )),
                    );
                    self.edits.push(Edit::Replace {
                        line: v.line,
                        old: got,
                        new: pin.version.clone(),
                    });
                }
            }
        }
    }

    /// Queues `version:` into a block mapping's `options`, or `options:` with it after the
    /// owner's last line (nothing for flow mappings: the pin is reported, not written).
    fn insert_version(&mut self, owner: &Node, opts: Option<&Node>, version: &str) {
        let block = |n: &Node| -> Option<Key> {
            let (first, _) = n.entries().first()?;
            ((first.line, first.column) == (n.line, n.column)).then(|| first.clone())
        };
        match opts {
            Some(o) => {
                if let Some(first) = block(o) {
                    let indent = " ".repeat(first.column - 1);
                    self.edits.push(Edit::Insert {
                        before: first.line,
                        text: format!("{indent}version: {version}\n"),
                    });
                }
            }
            None => {
                let Some(first) = block(owner) else { return };
                let indent = first.column - 1;
                // The owner's lines: to the next line indented less than its keys.
                let lines: Vec<&str> = self.text.lines().collect();
                let mut last = first.line;
                for (i, l) in lines.iter().enumerate().skip(first.line) {
                    let t = l.trim_start();
                    if t.is_empty() || t.starts_with('#') {
                        continue;
                    }
                    if l.len() - t.len() < indent {
                        break;
                    }
                    last = i + 1;
                }
                let pad = " ".repeat(indent);
                self.edits.push(Edit::Insert {
                    before: last + 1,
                    text: format!("{pad}options:\n{pad}  version: {version}\n"),
                });
            }
        }
    }
}

/// A problem in one line.
fn line_of(shown: &str, p: &Problem) -> String {
    let mut message = p.summary.replace("\n\t* ", ": ").replace(['\n', '\t'], " ");
    let mut prev_colon = false;
    for (i, l) in p.detail.lines().map(str::trim).filter(|l| !l.is_empty()).enumerate() {
        message.push_str(if i > 0 && prev_colon { " " } else { "; " });
        message.push_str(l);
        prev_colon = l.ends_with(':');
    }
    if p.severity == Severity::Warning {
        message.push_str(" (the engine warns)");
    }
    if let Some(fix) = &p.fix {
        message.push_str("; ");
        message.push_str(fix);
    }
    format!(
        "{shown}:{}: {} — checked against {}",
        p.line,
        message.trim_end(),
        p.against
    )
}

fn check(text: &str, schema: &Schema, pins: &[Pin]) -> (Vec<Problem>, Vec<Edit>) {
    let mut problems = check::program(text, Some(schema));
    let mut own = Own {
        text,
        pins,
        problems: Vec::new(),
        edits: Vec::new(),
    };
    if let Ok(doc) = yaml::parse(text) {
        own.check(&doc);
    }
    problems.append(&mut own.problems);
    problems.sort_by_key(|p| p.line);
    (problems, own.edits)
}

/// The programs the arguments name (every one under `projects/` when none).
fn files_to_check(repo: &Path, targets: &[&String]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut seen = Seen::new();
    if targets.is_empty() {
        programs_under(&repo.join("projects"), &mut files, &mut seen, None);
    }
    for t in targets {
        let p = Path::new(t.as_str());
        if !p.exists() {
            die(&format!("{t}: no such file or directory"));
        }
        programs_under(p, &mut files, &mut seen, None);
    }
    if files.is_empty() {
        let looked: Vec<&str> = targets.iter().map(|t| t.as_str()).collect();
        die(&format!(
            "no Pulumi.yaml under {}",
            if looked.is_empty() {
                "projects/".to_string()
            } else {
                looked.join(", ")
            }
        ));
    }
    files
}

fn read_program(file: &Path, shown: &str) -> String {
    if std::fs::metadata(file).is_ok_and(|m| m.len() > LARGEST_PROGRAM) {
        die(&format!(
            "{shown}: larger than {} MB, so no Pulumi YAML program this checks",
            LARGEST_PROGRAM >> 20
        ));
    }
    match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            die(&format!("{shown}: not UTF-8 text, so no Pulumi YAML program"))
        }
        Err(e) => die(&format!("{shown}: {e}")),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fix = args.iter().any(|a| a == "--fix");
    let targets: Vec<&String> = args.iter().filter(|a| *a != "--fix").collect();
    if let Some(other) = targets.iter().find(|a| a.starts_with('-')) {
        die(&format!(
            "unknown option {other}; usage: scripts/check-programs [--fix] [DIR|FILE …]"
        ));
    }
    let repo = repo();
    let pins =
        pins::read(&repo.join("scripts/provider-versions"), "scripts/provider-versions").unwrap_or_else(|e| die(&e));
    let schema_file = pins::sdk_cache().join("schema.json");
    if !schema_file.is_file() {
        die(&format!(
            "the provider SDKs are not installed (no {}): run scripts/install-test-tools",
            schema_file.display()
        ));
    }
    let installed = schema_pins(&schema_file);
    for pin in &pins {
        if installed.get(&pin.name) != Some(&pin.version) {
            die(&format!(
                "the SDK cache holds {} {} but scripts/provider-versions:{} pins {}: run scripts/install-test-tools",
                pin.name,
                installed.get(&pin.name).map_or("(none)", String::as_str),
                pin.line,
                pin.version
            ));
        }
    }
    let schema = Schema::load(&schema_file).unwrap_or_else(|e| die(&e));

    let cwd = std::env::current_dir().unwrap_or_default();
    let files = files_to_check(&repo, &targets);

    let mut total = 0;
    for file in &files {
        // As given, or relative to the current directory when found under it.
        let normal = file.canonicalize().unwrap_or_else(|_| file.clone());
        let shown = if file.is_relative() {
            file.display().to_string()
        } else {
            normal
                .strip_prefix(cwd.canonicalize().unwrap_or_else(|_| cwd.clone()))
                .map_or_else(|_| file.display().to_string(), |r| r.display().to_string())
        };
        let text = read_program(file, &shown);
        let (mut problems, edits) = check(&text, &schema, &pins);
        if fix && !edits.is_empty() {
            let fixed = apply(&text, &edits);
            // Beside it, then renamed over it (mode kept, a link written through).
            fsutil::write_atomic(file, fixed.as_bytes())
                .unwrap_or_else(|e| die(&format!("{shown}: cannot write the pins: {}", e.message)));
            let written = edits
                .iter()
                .map(Edit::line)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            eprintln!(
                "check-programs: {shown}: {written} pin{} written",
                if written == 1 { "" } else { "s" }
            );
            problems = check(&fixed, &schema, &pins).0;
        }
        for p in &problems {
            println!("{}", line_of(&shown, p));
        }
        total += problems.len();
    }
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if total > 0 {
        eprintln!(
            "check-programs: {} in {}",
            plural(total, "problem"),
            plural(files.len(), "program")
        );
        exit(1);
    }
    eprintln!(
        "check-programs: {} {} the pinned SDKs ({})",
        plural(files.len(), "program"),
        if files.len() == 1 { "matches" } else { "match" },
        pins.iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fix_edits_only_the_lines_of_the_pins() {
        let text = "name: p\nruntime: yaml\nresources:\n  a:\n    type: aws:s3/bucket:Bucket\n    properties:\n      x: 1\n\n  # next\n  b:\n    type: aws:s3/bucket:Bucket\n    options:\n      protect: true\n  c:\n    type: aws:s3/bucket:Bucket\n    options: {version: 6.0.0} # old\n";
        let pins = pins::parse("aws 7.48.0 npm:@pulumi/aws\n", "f").unwrap();
        let schema = Schema::new(String::new());
        let (problems, edits) = check(text, &schema, &pins);
        assert_eq!(problems.len(), 3, "{problems:#?}");
        let fixed = apply(text, &edits);
        assert_eq!(
            fixed,
            "name: p\nruntime: yaml\nresources:\n  a:\n    type: aws:s3/bucket:Bucket\n    properties:\n      x: 1\n    options:\n      version: 7.48.0\n\n  # next\n  b:\n    type: aws:s3/bucket:Bucket\n    options:\n      version: 7.48.0\n      protect: true\n  c:\n    type: aws:s3/bucket:Bucket\n    options: {version: 7.48.0} # old\n"
        );
        assert!(check(&fixed, &schema, &pins).0.is_empty());
    }
}
