//! `config/pulumi/environment`: `KEY=VALUE` lines (MARA also accepts `KEY: VALUE`), `#` and `;`
//! comment lines and blank lines ignored, whitespace around the delimiter trimmed. Its values
//! overlay the process environment of every `pulumi` run. Parsed into a map, never `set_var`.

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
        match std::fs::read_to_string(path) {
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

pub(crate) fn parse(file: &SourceFile) -> Result<EnvironmentFile, Vec<FileDiagnostic>> {
    let mut vars = BTreeMap::new();
    let mut problems = Vec::new();
    let mut offset = 0;
    for line in file.text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
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
        let key = content[..at].trim();
        let value = content[at + 1..].trim();
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
        vars.insert(key.to_string(), unquote(value).to_string());
    }
    if problems.is_empty() {
        Ok(EnvironmentFile { vars })
    } else {
        Err(problems)
    }
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

/// `"x"` and `'x'` around a whole value are quotes, not part of it.
fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
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
    fn malformed_lines_name_their_line() {
        let f = SourceFile::new("config/pulumi/environment", "A=1\njust words\n9X=2\n");
        let errs = parse(&f).unwrap_err();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].location, "config/pulumi/environment:2:1");
        assert_eq!(errs[1].location, "config/pulumi/environment:3:1");
    }
}
