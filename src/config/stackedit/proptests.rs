//! Property test of the stack-file edits: any valid stack file, in any of the styles people
//! and tools write (indentation widths, block and flow mappings, quoted keys, comments
//! everywhere, `---`/`...` markers, `%YAML`, a byte-order mark, CRLF, trailing spaces, nested
//! values, multi-line strings, keys before and after `config`, `config` missing, empty, null
//! or `{}`), edited, reads back as the old mapping plus the new entries, with every comment.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::{add_config, add_salt, top_level};

#[derive(Debug, Clone)]
enum Key {
    Plain(String),
    Single(String),
    Double(String),
}

impl Key {
    fn name(&self) -> &str {
        match self {
            Key::Plain(s) | Key::Single(s) | Key::Double(s) => s,
        }
    }

    fn render(&self) -> String {
        match self {
            Key::Plain(s) => s.clone(),
            Key::Single(s) => format!("'{s}'"),
            Key::Double(s) => format!("\"{s}\""),
        }
    }
}

#[derive(Debug, Clone)]
enum Val {
    Plain(String),
    Single(String),
    Double(String),
    /// A double-quoted string over several lines (folded to spaces).
    DoubleLines(Vec<String>),
    Int(i64),
    Bool(bool),
    Null,
    /// `|`, `|-` or `>` and the lines.
    Block(&'static str, Vec<String>),
    Map(BlockMap),
    /// Items, and whether they are indented under their key.
    Seq(Vec<Val>, bool),
    /// Entries, and whether they go one a line.
    FlowMap(Vec<(Key, Val)>, bool),
    FlowSeq(Vec<Val>),
}

#[derive(Debug, Clone)]
struct Entry {
    key: Key,
    val: Val,
    /// Comment lines before the entry, each at a column up to this one.
    before: Vec<usize>,
    trailing: bool,
    blank_before: bool,
}

#[derive(Debug, Clone)]
struct BlockMap {
    indent: usize,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
enum Config {
    Absent,
    Empty,
    Null(&'static str),
    EmptyFlow,
    Block(BlockMap),
    Flow(Vec<(Key, Val)>, bool),
}

#[derive(Debug, Clone)]
#[allow(clippy::struct_excessive_bools)]
struct Doc {
    bom: bool,
    crlf: bool,
    start: bool,
    end: bool,
    directive: bool,
    trailing_spaces: bool,
    head: usize,
    tail: usize,
    config_key: Key,
    config: Config,
    config_comment: bool,
    before: Vec<Entry>,
    after: Vec<Entry>,
    flow_top: bool,
}

/// The lines being written, and the comments numbered so each can be looked for.
struct Out {
    lines: Vec<String>,
    comments: usize,
    trailing_spaces: bool,
}

impl Out {
    fn comment(&mut self) -> String {
        self.comments += 1;
        format!("# c{} note: x", self.comments)
    }

    /// A line; trailing spaces go where they change nothing (not in a block scalar).
    fn line(&mut self, s: String, spaces_ok: bool) {
        if spaces_ok && self.trailing_spaces {
            self.lines.push(format!("{s}  "));
        } else {
            self.lines.push(s);
        }
    }
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("us-east-1".to_string()),
        Just("a b c".to_string()),
        Just("v1:AbC+/=".to_string()),
        "[a-z][a-z0-9-]{0,8}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("it's".to_string()),
        Just("a: b # not a comment".to_string()),
        Just("yes".to_string()),
        Just("~".to_string()),
        Just(String::new()),
        Just("ünï".to_string()),
        "[a-z ]{0,10}",
    ]
}

fn scalar() -> impl Strategy<Value = Val> {
    prop_oneof![
        word().prop_map(Val::Plain),
        text().prop_map(Val::Single),
        text().prop_map(Val::Double),
        prop::collection::vec("[a-z]{1,5}", 2..4).prop_map(Val::DoubleLines),
        any::<i32>().prop_map(|i| Val::Int(i.into())),
        any::<bool>().prop_map(Val::Bool),
        Just(Val::Null),
        (
            prop_oneof![Just("|"), Just("|-"), Just(">")],
            prop::collection::vec("[a-z][a-z #:]{0,12}[a-z]", 1..4)
        )
            .prop_map(|(s, l)| Val::Block(s, l)),
    ]
}

fn flow_value() -> impl Strategy<Value = Val> {
    let leaf = prop_oneof![
        "[a-z][a-z0-9-]{0,8}".prop_map(Val::Plain),
        text().prop_map(Val::Single),
        text().prop_map(Val::Double),
        any::<i32>().prop_map(|i| Val::Int(i.into())),
        any::<bool>().prop_map(Val::Bool),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Val::FlowSeq),
            prop::collection::vec((key(), inner), 0..3).prop_map(|e| Val::FlowMap(unique(e), false)),
        ]
    })
}

fn key() -> impl Strategy<Value = Key> {
    ("[a-z]{1,4}", "[a-z_]{1,6}", 0..3u8).prop_map(|(ns, k, quotes)| {
        let s = format!("{ns}:{k}");
        match quotes {
            0 => Key::Plain(s),
            1 => Key::Single(s),
            _ => Key::Double(s),
        }
    })
}

fn unique<T>(v: Vec<(Key, T)>) -> Vec<(Key, T)> {
    let mut seen = BTreeSet::new();
    v.into_iter()
        .filter(|(k, _)| seen.insert(k.name().to_string()))
        .collect()
}

fn unique_entries(v: Vec<Entry>, seen: &mut BTreeSet<String>) -> Vec<Entry> {
    v.into_iter()
        .filter(|e| seen.insert(e.key.name().to_string()))
        .collect()
}

fn entry(val: impl Strategy<Value = Val>) -> impl Strategy<Value = Entry> {
    (
        key(),
        val,
        prop::collection::vec(0..4usize, 0..2),
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(key, val, before, trailing, blank_before)| Entry {
            key,
            val,
            before,
            trailing,
            blank_before,
        })
}

fn block_map(
    indent: std::ops::Range<usize>,
    val: BoxedStrategy<Val>,
    n: std::ops::Range<usize>,
) -> impl Strategy<Value = BlockMap> {
    (indent, prop::collection::vec(entry(val), n)).prop_map(|(indent, e)| BlockMap {
        indent,
        entries: unique_entries(e, &mut BTreeSet::new()),
    })
}

fn value() -> BoxedStrategy<Val> {
    scalar()
        .prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                block_map(1..6, inner.clone(), 1..4).prop_map(Val::Map),
                (prop::collection::vec(inner, 1..3), any::<bool>()).prop_map(|(v, i)| Val::Seq(v, i)),
                flow_value(),
            ]
        })
        .boxed()
}

fn top_entry() -> impl Strategy<Value = Entry> {
    (
        prop_oneof![
            Just("encryptionsalt"),
            Just("secretsprovider"),
            Just("environment"),
            Just("other")
        ],
        value(),
        prop::collection::vec(0..1usize, 0..2),
        any::<bool>(),
        0..5u8,
    )
        .prop_map(|(k, val, before, trailing, quotes)| Entry {
            key: match quotes {
                0 => Key::Double(k.into()),
                1 => Key::Single(k.into()),
                _ => Key::Plain(k.into()),
            },
            val,
            before,
            trailing,
            blank_before: false,
        })
}

fn config() -> impl Strategy<Value = Config> {
    prop_oneof![
        1 => Just(Config::Absent),
        1 => Just(Config::Empty),
        1 => Just(Config::Null("null")),
        1 => Just(Config::Null("~")),
        1 => Just(Config::EmptyFlow),
        4 => block_map(1..9, value(), 1..6).prop_map(Config::Block),
        2 => (prop::collection::vec((key(), flow_value()), 1..4), any::<bool>())
            .prop_map(|(e, lines)| Config::Flow(unique(e), lines)),
    ]
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            prop::bool::weighted(0.1),
            any::<bool>(),
            0..3usize,
            0..3usize,
        ),
        (
            prop_oneof![
                4 => Just(Key::Plain("config".into())),
                1 => Just(Key::Double("config".into())),
                1 => Just(Key::Single("config".into())),
            ],
            config(),
            any::<bool>(),
        ),
        (
            prop::collection::vec(top_entry(), 0..3),
            prop::collection::vec(top_entry(), 0..3),
            prop::bool::weighted(0.05),
        ),
    )
        .prop_map(
            |(
                (bom, crlf, start, end, directive, trailing_spaces, head, tail),
                (config_key, config, config_comment),
                (before, after, flow_top),
            )| {
                let mut seen = BTreeSet::from(["config".to_string()]);
                let before = unique_entries(before, &mut seen);
                let after = unique_entries(after, &mut seen);
                Doc {
                    bom,
                    crlf,
                    start,
                    end,
                    directive,
                    trailing_spaces,
                    head,
                    tail,
                    config_key,
                    config,
                    config_comment,
                    before,
                    after,
                    flow_top,
                }
            },
        )
}

/// A value on one line, in flow style; `None` for a block-only value.
fn flow(v: &Val) -> Option<String> {
    Some(match v {
        Val::Plain(s) => s.clone(),
        Val::Single(s) => format!("'{}'", s.replace('\'', "''")),
        Val::Double(s) => format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
        Val::Int(i) => i.to_string(),
        Val::Bool(b) => b.to_string(),
        Val::Null => "null".into(),
        Val::FlowSeq(items) => {
            let items: Option<Vec<String>> = items.iter().map(flow).collect();
            format!("[{}]", items?.join(", "))
        }
        Val::FlowMap(e, _) => {
            let items: Option<Vec<String>> = e
                .iter()
                .map(|(k, v)| Some(format!("{}: {}", k.render(), flow(v)?)))
                .collect();
            format!("{{{}}}", items?.join(", "))
        }
        Val::DoubleLines(..) | Val::Block(..) | Val::Map(_) | Val::Seq(..) => return None,
    })
}

/// `key: value` at column `col`, with the comments before it.
fn render_entry(out: &mut Out, col: usize, e: &Entry) {
    if e.blank_before {
        out.line(String::new(), false);
    }
    for c in &e.before {
        let text = out.comment();
        out.line(format!("{}{text}", " ".repeat((*c).min(col))), true);
    }
    let head = format!("{}{}:", " ".repeat(col), e.key.render());
    render_value(out, col, &head, &e.val, e.trailing);
}

/// `head` (a key and its colon, or a dash) followed by `v`, whose block content goes deeper
/// than `col`.
fn render_value(out: &mut Out, col: usize, head: &str, v: &Val, trailing: bool) {
    let trailing = |out: &mut Out| {
        if trailing {
            format!(" {}", out.comment())
        } else {
            String::new()
        }
    };
    match v {
        Val::Map(m) => {
            let c = trailing(out);
            out.line(format!("{head}{c}"), true);
            for e in &m.entries {
                render_entry(out, col + m.indent, e);
            }
        }
        Val::Seq(items, indented) => {
            let c = trailing(out);
            out.line(format!("{head}{c}"), true);
            let at = if *indented { col + 2 } else { col };
            for item in items {
                let dash = format!("{}-", " ".repeat(at));
                match item {
                    // `- k: v`, the other entries aligned after the dash.
                    Val::Map(m) => {
                        for (n, e) in m.entries.iter().enumerate() {
                            if n == 0 {
                                let head = format!("{dash} {}:", e.key.render());
                                render_value(out, at + 2, &head, &e.val, e.trailing);
                            } else {
                                let e = Entry {
                                    before: Vec::new(),
                                    blank_before: false,
                                    ..e.clone()
                                };
                                render_entry(out, at + 2, &e);
                            }
                        }
                    }
                    _ => render_value(out, at + 2, &dash, item, false),
                }
            }
        }
        Val::Block(style, lines) => {
            let c = trailing(out);
            out.line(format!("{head} {style}{c}"), false);
            for l in lines {
                out.line(format!("{}  {l}", " ".repeat(col)), false);
            }
        }
        Val::DoubleLines(words) => {
            let c = trailing(out);
            out.line(format!("{head} \"{}", words[0]), false);
            for (n, w) in words[1..].iter().enumerate() {
                let last = n + 2 == words.len();
                let end = if last { format!("\"{c}") } else { String::new() };
                out.line(format!("{} {w}{end}", " ".repeat(col + 1)), last);
            }
        }
        Val::FlowMap(e, true) if !e.is_empty() => {
            let c = trailing(out);
            out.line(format!("{head} {{{c}"), true);
            for (k, v) in e {
                let c = out.comment();
                let v = flow(v).expect("flow content");
                out.line(format!("{}{}: {v}, {c}", " ".repeat(col + 2), k.render()), true);
            }
            out.line(format!("{}}}", " ".repeat(col + 1)), true);
        }
        other => {
            let c = trailing(out);
            let v = flow(other).expect("flow content");
            out.line(format!("{head} {v}{c}"), true);
        }
    }
}

impl Doc {
    /// The text, and how many comments it has.
    fn render(&self) -> (String, usize) {
        let mut out = Out {
            lines: Vec::new(),
            comments: 0,
            trailing_spaces: self.trailing_spaces,
        };
        for _ in 0..self.head {
            let c = out.comment();
            out.line(c, true);
        }
        if self.directive {
            out.line("%YAML 1.2".into(), false);
        }
        if self.start || self.directive {
            let c = if self.head > 0 {
                format!(" {}", out.comment())
            } else {
                String::new()
            };
            out.line(format!("---{c}"), true);
        }
        if self.flow_top {
            self.render_flow(&mut out);
        } else {
            for e in &self.before {
                render_entry(&mut out, 0, e);
            }
            let key = format!("{}:", self.config_key.render());
            let comment = |out: &mut Out| {
                if self.config_comment {
                    format!(" {}", out.comment())
                } else {
                    String::new()
                }
            };
            match &self.config {
                Config::Absent => {}
                Config::Empty => {
                    let c = comment(&mut out);
                    out.line(format!("{key}{c}"), true);
                }
                Config::Null(n) => {
                    let c = comment(&mut out);
                    out.line(format!("{key} {n}{c}"), true);
                }
                Config::EmptyFlow => {
                    let c = comment(&mut out);
                    out.line(format!("{key} {{}}{c}"), true);
                }
                Config::Block(m) => render_value(&mut out, 0, &key, &Val::Map(m.clone()), self.config_comment),
                Config::Flow(e, lines) => {
                    render_value(&mut out, 0, &key, &Val::FlowMap(e.clone(), *lines), self.config_comment);
                }
            }
            for e in &self.after {
                render_entry(&mut out, 0, e);
            }
        }
        if self.end {
            out.line("...".into(), true);
        }
        for _ in 0..self.tail {
            let c = out.comment();
            out.line(c, true);
        }
        let newline = if self.crlf { "\r\n" } else { "\n" };
        let mut text = out.lines.join(newline);
        if !text.is_empty() {
            text.push_str(newline);
        }
        if self.bom {
            text.insert(0, '\u{feff}');
        }
        (text, out.comments)
    }

    /// The whole document as one flow mapping (values that have no flow form left out).
    fn render_flow(&self, out: &mut Out) {
        let pair = |k: &Key, v: &Val| flow(v).map(|f| format!("{}: {f}", k.render()));
        let mut parts: Vec<String> = self
            .before
            .iter()
            .chain(&self.after)
            .filter_map(|e| pair(&e.key, &e.val))
            .collect();
        let key = self.config_key.render();
        match &self.config {
            Config::Absent => {}
            Config::Empty | Config::Null(_) => parts.push(format!("{key}: null")),
            Config::EmptyFlow => parts.push(format!("{key}: {{}}")),
            Config::Block(m) => {
                let inner: Vec<String> = m.entries.iter().filter_map(|e| pair(&e.key, &e.val)).collect();
                parts.push(format!("{key}: {{{}}}", inner.join(", ")));
            }
            Config::Flow(e, _) => parts.push(format!(
                "{key}: {}",
                flow(&Val::FlowMap(e.clone(), false)).expect("flow")
            )),
        }
        out.line(format!("{{{}}}", parts.join(", ")), true);
    }
}

fn new_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop_oneof![
            Just("yes"),
            Just("1.31"),
            Just("~/.kube/config"),
            Just("it's: x"),
            Just(""),
            Just("#x"),
            Just("a b"),
            Just("ünï"),
            Just("- x"),
            Just("{a}"),
            Just("@x"),
            Just("null"),
            Just("two\nlines"),
        ]
        .prop_map(Value::from),
        "[ -~]{0,12}".prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        prop::collection::vec("[a-z0-9 :#-]{0,6}", 0..3).prop_map(Value::from),
    ]
}

fn new_entries() -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec(("[a-z]{1,5}", new_value()), 1..4).prop_map(|v| {
        let mut seen = BTreeSet::new();
        v.into_iter()
            .filter(|(k, _)| seen.insert(k.clone()))
            .map(|(k, v)| (format!("zz{k}:key"), v))
            .collect()
    })
}

proptest! {
    #![proptest_config(crate::proptest_config(1000))]

    #[test]
    fn an_edited_stack_file_reads_back_as_before_plus_the_new_entries(doc in doc(), entries in new_entries()) {
        let (text, comments) = doc.render();
        let before = top_level(&text);
        prop_assert!(before.is_ok(), "the generator made a file that does not parse: {before:?}\n{text}");
        let mut expected = before.unwrap();
        let mut config = match expected.remove("config") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        config.extend(entries.iter().cloned());
        expected.insert("config".into(), Value::Object(config));

        let edited = add_config(&text, "# header\n", &entries);
        prop_assert!(edited.is_ok(), "refused: {edited:?}\n{text}");
        let edited = edited.unwrap();
        prop_assert_eq!(top_level(&edited).unwrap(), expected.clone(), "{}\n=>\n{}", text, edited);
        for n in 1..=comments {
            prop_assert!(edited.contains(&format!("# c{n} note: x")), "lost comment {n}:\n{text}\n=>\n{edited}");
        }

        // The salt goes in once, first, and keeps everything else.
        if !expected.contains_key("encryptionsalt") {
            let salted = add_salt(&edited, "v1:c2FsdA==:v1:Ab+/cd==");
            prop_assert!(matches!(salted, Ok(Some(_))), "refused: {salted:?}\n{edited}");
            let salted = salted.unwrap().unwrap();
            let mut with_salt = Map::new();
            with_salt.insert("encryptionsalt".into(), Value::from("v1:c2FsdA==:v1:Ab+/cd=="));
            with_salt.extend(expected);
            prop_assert_eq!(top_level(&salted).unwrap(), with_salt, "{}\n=>\n{}", edited, salted);
            for n in 1..=comments {
                prop_assert!(salted.contains(&format!("# c{n} note: x")), "lost comment {n}:\n{edited}\n=>\n{salted}");
            }
            prop_assert_eq!(add_salt(&salted, "v1:other"), Ok(None));
        }
    }
}
