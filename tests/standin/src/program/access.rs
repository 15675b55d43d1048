//! A `${…}` read, `a.b[0]["c"]`: its root name, then its steps, parsed one at a time, as the
//! evaluator follows them (a read that ends early never reaches what follows) and as the type
//! checker reads them all. Pulumi YAML's `ast.PropertyAccess`.

/// One step of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `.name`
    Name(String),
    /// `["key"]`
    Key(String),
    /// `[0]`
    Index(u64),
}

/// What stops a read from being parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadAccess {
    /// A `[` never closed, or a step that starts with neither `.` nor `[`.
    Expression,
    /// `[x]`: neither a quoted key nor a number.
    Index(String),
}

/// The steps after the root of a read, parsed as they are asked for.
pub struct Steps<'a> {
    rest: &'a str,
}

/// `expr` trimmed: its root (empty when the read starts with `.` or `[`) and its steps.
pub fn parse(expr: &str) -> (&str, Steps<'_>) {
    let expr = expr.trim();
    let end = expr.find(['.', '[']).unwrap_or(expr.len());
    (&expr[..end], Steps { rest: &expr[end..] })
}

impl Iterator for Steps<'_> {
    type Item = Result<Step, BadAccess>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let step = if let Some(r) = self.rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            self.rest = &r[end..];
            Ok(Step::Name(r[..end].to_string()))
        } else if let Some(r) = self.rest.strip_prefix('[') {
            match r.find(']') {
                None => Err(BadAccess::Expression),
                Some(end) => {
                    let inner = r[..end].trim();
                    self.rest = &r[end + 1..];
                    match inner.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                        Some(key) => Ok(Step::Key(key.to_string())),
                        None => inner
                            .parse::<u64>()
                            .map(Step::Index)
                            .map_err(|_| BadAccess::Index(inner.to_string())),
                    }
                }
            }
        } else {
            Err(BadAccess::Expression)
        };
        if step.is_err() {
            self.rest = "";
        }
        Some(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_its_root_and_its_steps_in_order() {
        let (root, steps) = parse(r#" a.b[0]["c"].d "#);
        assert_eq!(root, "a");
        assert_eq!(
            steps.collect::<Result<Vec<_>, _>>(),
            Ok(vec![
                Step::Name("b".into()),
                Step::Index(0),
                Step::Key("c".into()),
                Step::Name("d".into())
            ])
        );
        let (_, steps) = parse("a.b[x].c");
        assert_eq!(
            steps.collect::<Vec<_>>(),
            [Ok(Step::Name("b".into())), Err(BadAccess::Index("x".into()))]
        );
        assert_eq!(parse("a[0").1.collect::<Vec<_>>(), [Err(BadAccess::Expression)]);
        assert_eq!(parse("[0]").0, "");
    }
}
