//! A failure in words, the one place it is worded: the headline (the closing table, CI
//! annotations, `JUnit`'s message, the HTML report's cause) and the whole text (the `Failed:`
//! block, the summary's `error`, `JUnit`'s body, the HTML report).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::exec::{Failure, How};

/// The whole failure: `pulumi up exited with code 1: <first cause line>`, the other cause lines
/// and the runner's notes each on an indented line of their own.
pub(crate) fn text(f: &Failure) -> String {
    super::text::visible(&raw_text(f)).into_owned()
}

fn raw_text(f: &Failure) -> String {
    if let Some(How::TimedOut { after, left }) = &f.how {
        let left = left.as_deref().map_or_else(|| "it ended".to_string(), text);
        return with_notes(
            format!(
                "timed out after {}: stopped ({left})",
                humantime::format_duration(*after)
            ),
            f,
        );
    }
    let head = match (&f.step, &f.how) {
        (Some(step), Some(how)) => format!("{step} {}", how_words(how)),
        (Some(step), None) => step.clone(),
        (None, _) => String::new(),
    };
    let lines: Vec<&str> = f.cause.iter().map(String::as_str).collect();
    let body = if head.is_empty() {
        lines.join("\n")
    } else {
        match lines.split_first() {
            Some((first, rest)) => {
                let mut t = format!("{head}: {first}");
                for line in rest {
                    t.push_str("\n  ");
                    t.push_str(line);
                }
                t
            }
            None => head,
        }
    };
    with_notes(body, f)
}

/// [`text`], or `none` when there is no failure to tell.
pub(crate) fn text_or(f: Option<&Failure>, none: &str) -> String {
    f.map_or_else(|| none.to_string(), text)
}

/// [`headline`], or `none` when there is no failure to tell.
pub(crate) fn headline_or(f: Option<&Failure>, none: &str) -> String {
    f.map_or_else(|| none.to_string(), headline)
}

/// The first line of [`text`].
pub(crate) fn headline(f: &Failure) -> String {
    headline_of(&text(f))
}

/// The headline of a failure's whole text: its first line.
fn headline_of(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// A failure as a run's record keeps it: the whole text (the summary's `error`, all the file
/// holds) and its headline, which a record read back takes from the text as [`headline`] does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kept {
    pub(crate) headline: String,
    pub(crate) text: String,
}

impl Kept {
    pub(crate) fn of(f: &Failure) -> Self {
        Kept {
            headline: headline(f),
            text: text(f),
        }
    }
}

impl Serialize for Kept {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Kept {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Kept {
            headline: headline_of(&text),
            text,
        })
    }
}

fn with_notes(mut text: String, f: &Failure) -> String {
    for note in &f.notes {
        text.push_str("\n  ");
        text.push_str(note);
    }
    text
}

fn how_words(how: &How) -> String {
    match how {
        How::Exited(code) => format!("exited with code {code}"),
        How::Killed(signal) => format!("was killed by {signal}"),
        How::Interrupted => "was interrupted".to_string(),
        How::TimedOut { after, .. } => format!("timed out after {}", humantime::format_duration(*after)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn each_kind_of_failure_reads_as_one_text_with_its_headline_first() {
        let exited = Failure::ended(
            "pulumi up",
            How::Exited(1),
            vec!["error: quota".into(), "  at line 3".into()],
        )
        .noted(["locked by pid 7 of this host".to_string()]);
        assert_eq!(
            text(&exited),
            "pulumi up exited with code 1: error: quota\n    at line 3\n  locked by pid 7 of this host"
        );
        assert_eq!(headline(&exited), "pulumi up exited with code 1: error: quota");
        let read: Kept = serde_json::from_value(serde_json::to_value(Kept::of(&exited)).unwrap()).unwrap();
        assert_eq!(read, Kept::of(&exited), "a record read back has the same headline");
        assert_eq!(
            text(&Failure::ended("pulumi up", How::Killed("SIGKILL".into()), vec![])),
            "pulumi up was killed by SIGKILL"
        );
        assert_eq!(text(&Failure::of("hook x.sh", "not found")), "hook x.sh: not found");
        assert_eq!(text(&Failure::said("two\nlines")), "two\nlines");
        let stopped = Failure::timed_out(
            Duration::from_secs(1800),
            Some(Failure::ended("pulumi up", How::Interrupted, vec![])),
        );
        assert_eq!(
            text(&stopped),
            "timed out after 30m: stopped (pulumi up was interrupted)"
        );
        assert_eq!(
            text(&Failure::timed_out(Duration::from_secs(60), None)),
            "timed out after 1m: stopped (it ended)"
        );
    }
}
