//! Text that came from outside the runner (pulumi's lines and errors, a program's diagnostics,
//! a log), made safe for where it is shown: a terminal acts on control characters, GitHub
//! Actions on workflow commands.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character but the line break and the tab made visible, so that
/// nothing it holds can move the cursor, repaint the screen, retitle the window, ring the bell
/// or write the clipboard: `^[` for ESC (as `cat -v` shows it), `^G` for BEL, `^M` for a
/// carriage return, `^?` for DEL, `\u{9b}` for one of C1.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, is_control)
}

/// `text` with only the bidirectional controls made visible (`\u{202e}`): for text the runner
/// coloured itself (a rendered diagnostic), whose escape sequences are its own.
pub(crate) fn bidi_visible(text: &str) -> Cow<'_, str> {
    escaped(text, is_bidi)
}

fn escaped(text: &str, is_control: fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            _ if !is_control(c) => out.push(c),
            '\u{7f}' => out.push_str("^?"),
            '\0'..='\u{1f}' => {
                out.push('^');
                out.push(char::from(b'@' + u8::try_from(c).unwrap_or(0)));
            }
            _ => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    out.into()
}

/// A control character a terminal may act on (C0 but line break and tab, DEL, C1), or one
/// that reorders what is shown around it (the bidirectional embeddings, overrides and isolates,
/// and the two direction marks: text that reads as one thing and is another, CVE-2021-42574).
fn is_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi(c)
}

/// The bidirectional embeddings, overrides, isolates and marks.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// `text` that GitHub Actions reads as text only: its runner takes a line that starts with `::`
/// after any leading whitespace as a workflow command (`::add-mask::`, `::stop-commands::`,
/// `::error file=…::`), and the legacy form `##[…]` anywhere in a line. A zero-width space
/// after the first `:` and after `##` breaks each; the text reads the same.
pub(crate) fn inert_on_github(text: &str) -> Cow<'_, str> {
    let command = |l: &str| l.trim_start().starts_with("::") || l.contains("##[");
    if !text.lines().any(command) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut line = line.replace("##[", "##\u{200b}[");
        let lead = line.len() - line.trim_start().len();
        if line[lead..].starts_with("::") {
            line.insert(lead + 1, '\u{200b}');
        }
        out.push_str(&line);
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(visible("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(visible("\u{1b}]0;title\u{7}x\u{1b}[2J"), "^[]0;title^Gx^[[2J");
        assert_eq!(visible("a\rb\u{7f}\u{9b}"), "a^Mb^?\\u{9b}");
        assert_eq!(
            visible("admin\u{202e}nimda \u{2066}x\u{2069} \u{200f}é"),
            "admin\\u{202e}nimda \\u{2066}x\\u{2069} \\u{200f}é"
        );
    }

    #[test]
    fn workflow_commands_in_text_are_broken_the_text_kept() {
        let hostile = "cause\n  ::error title=x::fake\n::add-mask::secret\nok ##[error]legacy";
        let inert = inert_on_github(hostile);
        for line in inert.lines() {
            assert!(
                !line.trim_start().starts_with("::") && !line.contains("##["),
                "{line:?}"
            );
        }
        assert_eq!(inert.replace('\u{200b}', ""), hostile);
        assert_eq!(inert_on_github("no command: a::b"), "no command: a::b");
    }
}
