//! What is wrong, and where: problems that point into a file (`file:line:column`, a code frame
//! and the fix) and problems that say what and how to fix it.

use std::fmt;
use std::sync::OnceLock;

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceSpan};

/// A source file the runner read, kept so errors can quote it.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as shown to the user (relative to the current directory when possible).
    pub display: String,
    pub text: String,
    /// Byte offset of the start of every line, worked out once on the first lookup: a big
    /// provider file has thousands of lines and may have a problem on each.
    line_starts: OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(display: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            display: display.into(),
            text: text.into(),
            line_starts: OnceLock::new(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        // The last line starting at or before the offset.
        let line = starts.partition_point(|&s| s <= offset);
        let col = self.text[starts[line - 1]..offset].chars().count() + 1;
        (line, col)
    }

    /// `file:line:column` of a byte offset.
    pub fn location(&self, offset: usize) -> String {
        let (line, col) = self.line_col(offset);
        format!("{}:{line}:{col}", self.display)
    }
}

/// One problem in one file.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{location}: {message}")]
pub struct FileDiagnostic {
    pub location: String,
    /// The file and line `location` names, as data.
    pub place: Place,
    pub message: String,
    src: NamedSource<String>,
    labels: Vec<LabeledSpan>,
    pub help: Option<String>,
}

impl FileDiagnostic {
    /// A problem at `start..end` of `file`, with a short label under the code and the fix.
    pub fn new(
        file: &SourceFile,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
        help: Option<String>,
    ) -> Self {
        // A span that cuts into a character (a caller's guess from another parser's line and
        // column) widens to whole characters.
        let mut start = span.start.min(file.text.len());
        while !file.text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = span.end.clamp(start, file.text.len());
        while !file.text.is_char_boundary(end) {
            end += 1;
        }
        let len = end - start;
        FileDiagnostic {
            location: file.location(start),
            place: Place {
                file: file.display.clone(),
                line: u32::try_from(file.line_col(start).0).ok(),
            },
            message: message.into(),
            src: NamedSource::new(&file.display, file.text.clone()).with_language("toml"),
            labels: vec![LabeledSpan::new_with_span(
                Some(label.into()),
                SourceSpan::new(start.into(), len),
            )],
            help,
        }
    }

    /// A problem about a whole file that has no better place to point at.
    pub fn whole_file(display: &str, message: impl Into<String>, help: Option<String>) -> Self {
        FileDiagnostic {
            location: display.to_string(),
            place: Place {
                file: display.to_string(),
                line: None,
            },
            message: message.into(),
            src: NamedSource::new(display, String::new()),
            labels: Vec::new(),
            help,
        }
    }
}

impl Diagnostic for FileDiagnostic {
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        if self.labels.is_empty() { None } else { Some(&self.src) }
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            None
        } else {
            Some(Box::new(self.labels.iter().cloned()))
        }
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
}

/// Where a problem is: a file, as shown to the user, and its line when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: Option<u32>,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.file),
            None => f.write_str(&self.file),
        }
    }
}

/// One thing that is wrong, and how to put it right (`what` begins with the file and line when
/// there is one, and `at` holds them as data: for what points at them, a CI annotation, and
/// for telling two problems of one value apart from two values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub what: String,
    pub fix: String,
    pub at: Option<Place>,
}

impl Problem {
    pub(crate) fn new(what: impl Into<String>, fix: impl Into<String>) -> Self {
        Problem {
            what: what.into(),
            fix: fix.into(),
            at: None,
        }
    }

    /// A problem at `place` of a file: said as `file:line: what`.
    pub(crate) fn at(place: Place, what: impl fmt::Display, fix: impl Into<String>) -> Self {
        Problem {
            what: format!("{place}: {what}"),
            fix: fix.into(),
            at: Some(place),
        }
    }
}

/// A YAML error as a person reads it: the library's first line, without the advice it gives
/// the programs that use it ("set `DuplicateKeyPolicy` in Options").
pub(crate) fn yaml_message(error: &serde_saphyr::Error) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or("invalid YAML");
    match first.split_once("duplicate mapping key").map(|(_, rest)| rest) {
        Some(rest) => {
            let key = rest.split(", set DuplicateKeyPolicy").next().unwrap_or_default();
            match key.trim_start_matches(':').trim() {
                "" => "a key appears twice in one mapping (keep one)".into(),
                key => format!("the key `{key}` appears twice in one mapping (keep one)"),
            }
        }
        None => first.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_characters() {
        let f = SourceFile::new("a.toml", "x = 1\ny = \"→é\"\nz");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(6), (2, 1));
        let z = f.text.find('z').unwrap();
        assert_eq!(f.location(z), "a.toml:3:1");
        let close = f.text.rfind('"').unwrap();
        assert_eq!(f.line_col(close), (2, 8));
        assert_eq!(f.line_col(f.text.len() + 5), (3, 2), "past the end: the end");
        assert_eq!(f.line_col(5), (1, 6), "the newline itself ends its line");
    }

    /// Found by fuzzing the stack file: a YAML error's guessed offset inside a byte-order mark
    /// panicked.
    #[test]
    fn an_offset_inside_a_character_points_at_the_character() {
        let f = SourceFile::new("a.yaml", "x\n\u{feff}");
        assert_eq!(f.line_col(3), (2, 1));
        let d = FileDiagnostic::new(&f, 3..4, "bad", "here", None);
        assert_eq!(d.location, "a.yaml:2:1");
        assert_eq!(d.labels[0].len(), 3);
    }
}
