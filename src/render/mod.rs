//! Renderings of a plan for `show-plan`: pure functions from a [`Plan`](crate::plan::Plan) to
//! text, deterministic so they can be diffed and snapshot-tested.

mod dot;
mod json;
#[cfg(test)]
pub(crate) use json::schema as plan_schema;
mod mermaid;
mod svg;
mod tree;
mod xml;

pub(crate) use dot::dot;
pub(crate) use json::json;
pub(crate) use mermaid::mermaid;
pub(crate) use svg::{Mark, svg, svg_of};
pub(crate) use tree::tree;
pub(crate) use xml::xml_text;

/// The renderings `show-plan --format` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rendering {
    /// Projects grouped by layer, with waves and the critical path
    Tree,
    /// Graphviz DOT (render with `dot -Tsvg`)
    Dot,
    /// Mermaid flowchart
    Mermaid,
    /// SVG, drawn by the runner (no Graphviz needed)
    Svg,
    /// JSON (schema: schemas/plan.schema.json)
    Json,
}

/// Outputs read along each edge: (upstream project, downstream project) → output names.
/// Borrowed from the programs: a plan of thousands of edges looks each up without allocating.
pub(crate) type EdgeLabels<'p> = foldhash::HashMap<(&'p str, &'p str), Vec<&'p str>>;

/// The outputs that flow along the edge `a → b` (in run order, so on destroy the reverse).
fn flows<'l>(labels: &'l EdgeLabels<'_>, a: &'l str, b: &'l str) -> &'l [&'l str] {
    labels
        .get(&(a, b))
        .or_else(|| labels.get(&(b, a)))
        .map_or(&[], Vec::as_slice)
}

/// `n` and `noun`, plural when `n` is not 1: "1 project", "3 projects" (a noun whose plural
/// is its name and an `s`). Every count a person reads goes through here.
pub(crate) fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// `line` cut to `width` characters, its end an ellipsis, as kubectl and gh fit a row to the
/// terminal; `None` (not a terminal): whole.
pub(crate) fn fit(line: &str, width: Option<usize>) -> std::borrow::Cow<'_, str> {
    match width {
        Some(w) if line.chars().count() > w => {
            let mut cut: String = line.chars().take(w.saturating_sub(1)).collect();
            cut.push('…');
            cut.into()
        }
        _ => line.into(),
    }
}

/// `pieces` joined by spaces into lines of at most `width` characters, never breaking a piece
/// (a word, a path, an exit code with its meaning): a piece longer than `width` gets a line of
/// its own.
pub(crate) fn wrap<S: AsRef<str>>(pieces: impl IntoIterator<Item = S>, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for piece in pieces {
        let piece = piece.as_ref();
        let n = piece.chars().count();
        if len > 0 && len + 1 + n > width {
            lines.push(std::mem::take(&mut line));
            len = 0;
        } else if len > 0 {
            line.push(' ');
            len += 1;
        }
        line.push_str(piece);
        len += n;
    }
    if len > 0 {
        lines.push(line);
    }
    lines
}

/// `a, b, c`
fn list(items: &[&str]) -> String {
    items.join(", ")
}

#[cfg(test)]
mod tests {
    use super::{fit, wrap};

    #[test]
    fn words_wrap_at_the_width_and_a_long_word_stays_whole() {
        assert_eq!(wrap("a bb ccc dddd".split(' '), 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(
            wrap("a path/longer/than/six b".split(' '), 6),
            ["a", "path/longer/than/six", "b"]
        );
        assert!(wrap(std::iter::empty::<&str>(), 6).is_empty());
    }

    #[test]
    fn a_row_too_wide_for_the_terminal_ends_in_an_ellipsis() {
        assert_eq!(fit("  eks  run: its file changed", Some(12)), "  eks  run:…");
        assert_eq!(fit("  eks", Some(12)), "  eks");
        // Not a terminal: the whole line.
        assert_eq!(
            fit("  eks  run: its file changed", None),
            "  eks  run: its file changed"
        );
    }
}
