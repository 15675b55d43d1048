//! `config/pulumi/environment`: `KEY=VALUE` lines (MARA also accepts `KEY: VALUE`), `#` and `;`
//! comment lines and blank lines ignored, whitespace around the delimiter trimmed; as in shell
//! and dotenv files, `export KEY=value`, quoted values taken literally and a ` # comment` after
//! an unquoted value. Its values overlay the process environment of every `pulumi` run. Parsed
//! into a map, never `set_var`.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diagnostic::{FileDiagnostic, SourceFile};
use crate::fs::{NewFile, write_atomic};

pub(crate) const ENVIRONMENT_FILE: &str = "config/pulumi/environment";

/// The file's variables in file order (a later line wins over an earlier one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EnvironmentFile {
    pub vars: BTreeMap<String, String>,
}

impl EnvironmentFile {
    /// Reads the file; a missing file is empty. Malformed lines are all reported, each with
    /// `file:line`.
    pub(crate) fn load(path: &Path, display: &str) -> Result<Self, Vec<FileDiagnostic>> {
        match crate::fs::read_text(path) {
            Ok(text) => parse(&SourceFile::new(display, text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(EnvironmentFile::default()),
            Err(e) => Err(vec![FileDiagnostic::whole_file(
                display,
                format!("cannot read the environment file: {e}"),
                Some("make it a readable UTF-8 text file of KEY=VALUE lines".into()),
            )]),
        }
    }
}

/// The longest line the file may hold: a variable longer than this could not reach `pulumi`
/// anyway (Linux takes at most 128 KiB for one), and a line is quoted in errors.
pub(crate) const LINE_LIMIT: usize = 64 * 1024;

pub(crate) fn parse(file: &SourceFile) -> Result<EnvironmentFile, Vec<FileDiagnostic>> {
    let mut vars = BTreeMap::new();
    let mut problems = Vec::new();
    // An editor's byte-order mark would be read as part of the first name.
    let mut offset = 0;
    if file.text.starts_with('\u{feff}') {
        offset = '\u{feff}'.len_utf8();
        problems.push(FileDiagnostic::new(
            file,
            0..offset,
            "the file starts with a byte-order mark (U+FEFF), an invisible character that would be read as part of the first name",
            "byte-order mark",
            Some("save the file as UTF-8 without a byte-order mark (\"UTF-8\", not \"UTF-8 with BOM\")".into()),
        ));
    }
    // Where `PULUMI_STACK` was first set (offset, value).
    let mut stack_at: Option<(usize, String)> = None;
    for line in file.text[offset..].split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        if content.len() > LINE_LIMIT {
            // Pointed at, not quoted: the frame would print the whole line.
            problems.push(FileDiagnostic::whole_file(
                &file.location(start),
                format!(
                    "this line is {} bytes long, more than a line may hold ({} KiB): no variable that long reaches `pulumi`",
                    content.len(),
                    LINE_LIMIT / 1024
                ),
                Some("put so long a value in a file, and give the file's path in the variable".into()),
            ));
            continue;
        }
        let trimmed = content.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        // The first `=` or `: ` splits (MARA's two delimiters); `=` wins when both appear.
        let split = content.find('=').or_else(|| content.find(':'));
        let lead = content.len() - content.trim_start().len();
        let Some(at) = split else {
            problems.push(FileDiagnostic::new(
                file,
                start + lead..start + content.len(),
                format!("`{trimmed}` is not a KEY=VALUE line"),
                "no `=` here",
                Some("write KEY=VALUE (or KEY: VALUE), or start the line with # to comment it out".into()),
            ));
            continue;
        };
        let key = bare_key(&content[..at]);
        if key.is_empty()
            || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || key.starts_with(|c: char| c.is_ascii_digit())
        {
            problems.push(FileDiagnostic::new(
                file,
                start + lead..start + at,
                format!("`{key}` is not a valid environment variable name"),
                "name",
                Some("use letters, digits and `_`, not starting with a digit".into()),
            ));
            continue;
        }
        match value(&content[at + 1..]) {
            Ok(v) => {
                if key == "PULUMI_STACK" {
                    if let Some((first, was)) = &stack_at {
                        problems.push(FileDiagnostic::new(
                            file,
                            start + lead..start + content.len(),
                            format!(
                                "PULUMI_STACK is set twice: `{was}` at {} and `{v}` here",
                                line_of(file, *first)
                            ),
                            "set again",
                            Some(
                                "keep one PULUMI_STACK line: it names the workspace's stack (`-s NAME --switch-stack` changes it)"
                                    .into(),
                            ),
                        ));
                        continue;
                    }
                    stack_at = Some((start + lead, v.to_string()));
                }
                vars.insert(key.to_string(), v.to_string());
            }
            Err(why) => problems.push(FileDiagnostic::new(
                file,
                start + at + 1..start + content.len(),
                format!("the value of `{key}` {why}"),
                "value",
                Some("write KEY=\"a value\" or KEY=value # a comment".into()),
            )),
        }
    }
    if problems.is_empty() {
        Ok(EnvironmentFile { vars })
    } else {
        Err(problems)
    }
}

/// `file:line` of an offset.
fn line_of(file: &SourceFile, offset: usize) -> String {
    format!("{}:{}", file.display, file.line_col(offset).0)
}

/// Records the stack in the file: creates it as `PULUMI_STACK=<stack>`, or appends that line,
/// on a line of its own even when the file does not end with a newline (MARA joins it to the
/// last line there).
pub(crate) fn add_stack(path: &Path, stack: &str) -> std::io::Result<()> {
    let mut text = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    text.extend_from_slice(format!("PULUMI_STACK={stack}\n").as_bytes());
    write_atomic(path, &text, NewFile::Default)
}

/// Makes `stack` the workspace's stack: every `PULUMI_STACK` line of the file (with or without
/// `export`) becomes `PULUMI_STACK=<stack>`; every other line is kept as it was.
pub(crate) fn set_stack(path: &Path, stack: &str) -> std::io::Result<()> {
    let text = crate::fs::read_text(path)?;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if bare_key(content.split(['=', ':']).next().unwrap_or("")) == "PULUMI_STACK" {
            out.push_str("PULUMI_STACK=");
            out.push_str(stack);
            out.push_str(&line[content.len()..]);
        } else {
            out.push_str(line);
        }
    }
    write_atomic(path, out.as_bytes(), NewFile::Default)
}

/// The name before the delimiter, trimmed, without a shell's `export `.
fn bare_key(raw: &str) -> &str {
    let key = raw.trim();
    key.strip_prefix("export")
        .filter(|k| k.starts_with([' ', '\t']))
        .map_or(key, str::trim_start)
}

/// A value as written after the delimiter: `"…"` or `'…'` taken literally between the quotes,
/// or unquoted up to a ` # comment` (a `#` with no blank before it is part of the value).
fn value(raw: &str) -> Result<&str, &'static str> {
    let v = raw.trim();
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q) {
            let Some(end) = inner.find(q) else {
                return Err("has no closing quote");
            };
            let rest = inner[end + 1..].trim_start();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err("goes on after its closing quote");
            }
            return Ok(&inner[..end]);
        }
    }
    let comment = raw
        .char_indices()
        .find(|&(i, c)| c == '#' && raw[..i].ends_with([' ', '\t']))
        .map_or(raw.len(), |(i, _)| i);
    Ok(raw[..comment].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_delimiters_comments_and_whitespace() {
        let f = SourceFile::new(
            "env",
            "# comment\n; also a comment\n\nPULUMI_STACK = dev\nAWS_PROFILE: admin\nURL=http://x:80/a=b\nQUOTED=\"a b\"\n",
        );
        let e = parse(&f).unwrap();
        assert_eq!(e.vars["PULUMI_STACK"], "dev");
        assert_eq!(e.vars["AWS_PROFILE"], "admin");
        assert_eq!(e.vars["URL"], "http://x:80/a=b");
        assert_eq!(e.vars["QUOTED"], "a b");
    }

    #[test]
    fn export_quotes_and_trailing_comments_as_shells_and_dotenv_files_have_them() {
        let f = SourceFile::new(
            "env",
            "export AWS_PROFILE=admin\nexport\tA=1\nURL=http://x/#anchor # where it lives\n\
             PASS='p # not a comment' # a comment\nEMPTY= # nothing\nexporter=2\n",
        );
        let e = parse(&f).unwrap();
        assert_eq!(e.vars["AWS_PROFILE"], "admin");
        assert_eq!(e.vars["A"], "1");
        assert_eq!(e.vars["URL"], "http://x/#anchor");
        assert_eq!(e.vars["PASS"], "p # not a comment");
        assert_eq!(e.vars["EMPTY"], "");
        assert_eq!(e.vars["exporter"], "2");
        let errs = parse(&SourceFile::new("env", "A=\"open\nB='x' y\n")).unwrap_err();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].message, "the value of `A` has no closing quote");
        assert_eq!(errs[1].message, "the value of `B` goes on after its closing quote");
    }

    #[test]
    fn a_second_pulumi_stack_a_byte_order_mark_and_a_huge_line_are_named() {
        let errs = parse(&SourceFile::new(
            "config/pulumi/environment",
            "PULUMI_STACK=dev\nA=1\nexport PULUMI_STACK=qa\n",
        ))
        .unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].location, "config/pulumi/environment:3:1");
        assert_eq!(
            errs[0].message,
            "PULUMI_STACK is set twice: `dev` at config/pulumi/environment:1 and `qa` here"
        );

        let errs = parse(&SourceFile::new("env", "\u{feff}PULUMI_STACK=dev\n")).unwrap_err();
        assert_eq!(errs.len(), 1, "the name after the mark is read: {errs:?}");
        assert!(errs[0].message.contains("byte-order mark"), "{}", errs[0].message);

        let long = format!("A=1\nB={}\n", "x".repeat(5 * 1024 * 1024));
        let errs = parse(&SourceFile::new("env", long)).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].location, "env:2:1");
        assert!(
            errs[0].message.starts_with("this line is 5242882 bytes long"),
            "{}",
            errs[0].message
        );
    }

    #[test]
    fn malformed_lines_name_their_line() {
        let f = SourceFile::new("config/pulumi/environment", "A=1\njust words\n9X=2\n");
        let errs = parse(&f).unwrap_err();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].location, "config/pulumi/environment:2:1");
        assert_eq!(errs[1].location, "config/pulumi/environment:3:1");
    }
}
