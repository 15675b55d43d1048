//! Text made safe inside XML and HTML, the one escaper of the SVG pictures, the `JUnit` report
//! and the HTML report: a project's log tail may hold escape codes, which XML 1.0 forbids even
//! as character references, so a document with one would not parse.

/// `text` as XML or HTML character data or an attribute value: the five special characters
/// escaped, and the characters XML 1.0 forbids (control characters other than tab and line
/// ends, U+FFFE, U+FFFF) left out.
pub(crate) fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Not `&apos;`, which HTML before 5 does not know.
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::xml_text;

    #[test]
    fn text_is_escaped_and_what_xml_forbids_left_out() {
        assert_eq!(
            xml_text("a<b & \"c\" 'd'>\u{1b}[31m\u{7}\t\u{ffff}é\n"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;[31m\té\n"
        );
    }
}
