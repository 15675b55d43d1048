//! The values a run needs and the stack configuration lacks: the provider's prompts (declared in
//! its file) and the secrets of the planned projects. Each comes from the environment
//! (`MARA_CONFIG_<KEY>`, `MARA_SECRET_<KEY>`), from a person at a terminal, or is reported
//! missing with how to supply it: a CI job can run the whole `up` with no file edited.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::stackfile::parse_bool;
use super::{CONFIG_PREFIX, SECRET_PREFIX, env_name};
use crate::diagnostic::Problem;
use crate::provider::{Prompt, PromptDefault, PromptType, Secret};

/// A check of a typed answer: why it is refused, in words for the person who typed it.
pub(crate) type AnswerCheck<'a> = dyn Fn(&str) -> Result<(), String> + 'a;

/// How the runner asks a person (a terminal in the binary, a script in tests).
pub(crate) trait Ask {
    /// A visible answer; an empty answer takes `default`. `check` refuses an answer with the
    /// reason, and the question is asked again.
    fn text(&mut self, question: &str, default: Option<&str>, check: &AnswerCheck<'_>) -> std::io::Result<String>;

    /// A hidden answer, entered twice when `confirm`; an empty answer takes `default`.
    fn hidden(&mut self, question: &str, default: Option<&str>, confirm: bool) -> std::io::Result<String>;

    /// Yes or no, no being the default.
    fn confirm(&mut self, question: &str) -> std::io::Result<bool>;

    /// No more questions: the answers are about to be written.
    fn finished(&mut self) {}
}

/// What the questions see: variables (environment file over process), the example file's
/// values, and whether a person can be asked.
pub(crate) struct Context<'a> {
    pub var: &'a dyn Fn(&str) -> Option<String>,
    pub example: &'a Map<String, Value>,
    pub file_shown: &'a str,
    /// The command that asks at a terminal for what is missing and stores it (`runner validate
    /// -p P -s S`): the short fix of a secret nobody could be asked for.
    pub asks: &'a str,
    pub interactive: bool,
    /// Nobody to ask: a question's default answers it (a run), or it is missing (`validate
    /// --check`, which reports what a run would still ask).
    pub defaults: bool,
}

/// The answers: plain values for the stack file, secrets for `pulumi config set --secret`.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    pub config: Vec<(String, Value)>,
    /// Prompted secrets that belong in the shared stack file (provider tokens).
    pub shared_secrets: Vec<(String, String)>,
    /// The planned projects' secrets, for the secrets store's own stack.
    pub secrets: Vec<(String, String)>,
    pub problems: Vec<Problem>,
    /// Keys nobody could be asked for, answered with their defaults (key, value as typed).
    pub defaulted: Vec<(String, String)>,
    /// What the environment gave that differs from what is kept, and what was done about it.
    pub notes: Vec<String>,
    /// Secrets the runner made (`generate`), said once.
    pub made: Vec<String>,
}

/// Where the answer to one prompt comes from.
enum Source {
    /// The configuration has it, or its tool's own variable stands in (`DIGITALOCEAN_TOKEN`).
    Known,
    /// `MARA_CONFIG_<KEY>` / `MARA_SECRET_<KEY>`: the variable and its value.
    Variable(String, String),
    /// A person at the terminal.
    Person,
    /// Nobody to ask: its default, or nothing (optional), or it is missing.
    Nobody,
}

fn source(cx: &Context<'_>, p: &Prompt, config: &Map<String, Value>, new_file: bool) -> Source {
    if config.contains_key(&p.key) || p.skip_if_env.as_deref().is_some_and(|v| (cx.var)(v).is_some()) {
        return Source::Known;
    }
    let var = env_name(if p.secret { SECRET_PREFIX } else { CONFIG_PREFIX }, &p.key);
    if let Some(given) = (cx.var)(&var) {
        return Source::Variable(var, given);
    }
    if p.only_if_in_example && !cx.example.contains_key(&p.key) {
        return Source::Known;
    }
    // Optional prompts (those with a `none_value`) are asked only for a new file.
    if cx.interactive && (new_file || p.none_value.is_none()) {
        Source::Person
    } else {
        Source::Nobody
    }
}

/// What a question can offer beyond its default: the contexts of the kubeconfig chosen for a
/// `context` prompt.
#[derive(Default)]
struct Offer {
    contexts: Vec<String>,
    /// The kubeconfig's `current-context`, the default for a context prompt.
    current: Option<String>,
    file: String,
}

impl Offer {
    fn of(p: &Prompt, known: &BTreeMap<String, Value>) -> Self {
        let Some(file) = p
            .kubeconfig
            .as_ref()
            .filter(|_| p.kind == PromptType::Context)
            .and_then(|k| known.get(k)?.as_str().map(str::to_string))
        else {
            return Offer::default();
        };
        let doc: Value = crate::fs::read_text(&file)
            .ok()
            .and_then(|t| serde_saphyr::from_str(&t).ok())
            .unwrap_or_default();
        let contexts = doc["contexts"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|e| e["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let current = doc["current-context"]
            .as_str()
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        Offer {
            contexts,
            current,
            file,
        }
    }

    fn question(&self, question: &str) -> String {
        if self.contexts.is_empty() {
            question.to_string()
        } else {
            format!("{question} ({})", self.contexts.join(", "))
        }
    }

    /// A path must exist; a context must be one of the file's (when it could be read).
    fn accepts(&self, p: &Prompt, value: Option<&Value>) -> Result<(), String> {
        let Some(text) = value.and_then(Value::as_str) else {
            return Ok(());
        };
        match p.kind {
            PromptType::Path if !std::path::Path::new(text).exists() => Err(format!("{text} does not exist")),
            PromptType::Context if !self.contexts.is_empty() && !self.contexts.iter().any(|c| c == text) => {
                Err(format!(
                    "{} has no context `{text}`: one of {}",
                    self.file,
                    self.contexts.join(", ")
                ))
            }
            _ => Ok(()),
        }
    }
}

/// How many of `prompts` a person will be asked.
pub(crate) fn pending(cx: &Context<'_>, prompts: &[Prompt], config: &Map<String, Value>, new_file: bool) -> usize {
    prompts
        .iter()
        .filter(|p| matches!(source(cx, p, config, new_file), Source::Person))
        .count()
}

/// Fills in every prompt the configuration lacks. `new_file`: optional prompts (those with a
/// `none_value`) are asked only when the file is being written for the first time.
pub(crate) fn prompts(
    cx: &Context<'_>,
    prompts: &[Prompt],
    config: &Map<String, Value>,
    new_file: bool,
    ask: &mut dyn Ask,
    answers: &mut Answers,
) -> std::io::Result<()> {
    // Earlier answers feed `${ns:key}` defaults of later prompts.
    let mut known: BTreeMap<String, Value> = config.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for p in prompts {
        if let Some(kept) = config.get(&p.key).filter(|_| !p.secret) {
            let var = env_name(CONFIG_PREFIX, &p.key);
            if let Some(given) = (cx.var)(&var)
                && let Ok(Some(v)) = parse(p, &given)
                && &v != kept
            {
                answers.notes.push(format!(
                    "{var}={given} differs from `{}` in {} ({kept}), which is used: remove the key from that file \
                     for the variable to be taken",
                    p.key, cx.file_shown
                ));
            }
        }
        let answer = match source(cx, p, config, new_file) {
            Source::Known => continue,
            Source::Variable(var, given) => match parse(p, &given) {
                Ok(v) => v,
                Err(why) => {
                    answers.problems.push(Problem::new(
                        format!("{var}: {why}"),
                        format!("set {var} to {}", p.kind.answer_shape()),
                    ));
                    continue;
                }
            },
            Source::Person => {
                let offer = Offer::of(p, &known);
                // A kubeconfig's own current-context comes before any written default.
                let default = offer.current.clone().or_else(|| default_text(cx, p, &known));
                let v = if p.secret {
                    ask.hidden(&p.question, default.as_deref(), true)?
                } else {
                    let check = |a: &str| parse(p, a).and_then(|v| offer.accepts(p, v.as_ref()));
                    ask.text(&offer.question(&p.question), default.as_deref(), &check)?
                };
                parse(p, &v).ok().flatten()
            }
            // Optional and nobody to ask: nothing to write, nothing missing (the tool's own
            // environment, e.g. AWS_PROFILE, still applies).
            Source::Nobody if p.none_value.is_some() => None,
            Source::Nobody if !cx.defaults => {
                let var = env_name(if p.secret { SECRET_PREFIX } else { CONFIG_PREFIX }, &p.key);
                answers.problems.push(missing(cx, p, &var));
                continue;
            }
            Source::Nobody => {
                // A default a person would most likely accept is used, said and written, so
                // the next run is explicit; a default that still refers to an unanswered key is
                // no default. Secrets are never defaulted.
                let default = (!p.secret)
                    .then(|| default_text(cx, p, &known))
                    .flatten()
                    .filter(|d| !d.contains("${"))
                    .and_then(|d| parse(p, &d).ok().flatten().map(|v| (d, v)));
                let Some((text, value)) = default else {
                    let var = env_name(if p.secret { SECRET_PREFIX } else { CONFIG_PREFIX }, &p.key);
                    answers.problems.push(missing(cx, p, &var));
                    continue;
                };
                answers.defaulted.push((p.key.clone(), text));
                Some(value)
            }
        };
        let Some(value) = answer else { continue };
        known.insert(p.key.clone(), value.clone());
        if p.secret {
            let text = value.as_str().map_or_else(|| value.to_string(), str::to_string);
            answers.shared_secrets.push((p.key.clone(), text));
        } else {
            answers.config.push((p.key.clone(), value));
        }
    }
    Ok(())
}

/// How many of the `needed` secrets a person will be asked.
pub(crate) fn pending_secrets<'s>(
    cx: &Context<'_>,
    needed: impl IntoIterator<Item = &'s Secret>,
    stored: &dyn Fn(&str) -> bool,
) -> usize {
    if !cx.interactive {
        return 0;
    }
    let mut keys: Vec<&str> = needed
        .into_iter()
        .filter(|s| s.generate.is_none() && !stored(&s.key) && (cx.var)(&env_name(SECRET_PREFIX, &s.key)).is_none())
        .map(|s| s.key.as_str())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.len()
}

/// Asks for (or takes from the environment) each secret not already stored. A stored one the
/// environment gives another value for (a secret rotated in the CI's store) takes the new
/// value, said; `stored_value` opens a stored one (`Some(None)`: it cannot be; `None`: there is
/// no key to open it with, a passphrase missing or unreadable, which is said on its own, so no
/// comparison is spoken of).
pub(crate) fn secrets<'s>(
    cx: &Context<'_>,
    needed: impl IntoIterator<Item = &'s Secret>,
    stored: &dyn Fn(&str) -> bool,
    stored_value: &dyn Fn(&str) -> Option<Option<String>>,
    store: &dyn Fn(&str) -> String,
    ask: &mut dyn Ask,
    answers: &mut Answers,
) -> std::io::Result<()> {
    for s in needed {
        if answers.secrets.iter().any(|(k, _)| k == &s.key) {
            continue;
        }
        if s.generate.is_some() {
            generated(cx, s, stored, store, answers);
            continue;
        }
        let var = env_name(SECRET_PREFIX, &s.key);
        if stored(&s.key) {
            if let Some(given) = (cx.var)(&var) {
                match stored_value(&s.key) {
                    Some(Some(old)) if old == given => {}
                    Some(Some(_)) => {
                        answers.notes.push(format!(
                            "{var} differs from the stored `{}`: the new value is stored",
                            s.key
                        ));
                        answers.secrets.push((s.key.clone(), given));
                    }
                    None => {}
                    Some(None) => answers.notes.push(format!(
                        "{var} is set, and `{}` is stored already and could not be compared with it: the \
                         stored value is used; to change it, run `{}`",
                        s.key,
                        store(&s.key)
                    )),
                }
            }
            continue;
        }
        let value = if let Some(v) = (cx.var)(&var) {
            v
        } else if cx.interactive && !s.hidden {
            // A user name is not hidden: seeing it typed is what catches a mistake.
            ask.text(&s.question, s.default.as_deref(), &|_| Ok(()))?
        } else if cx.interactive {
            ask.hidden(&s.question, s.default.as_deref(), true)?
        } else {
            answers.problems.push(Problem::new(
                format!("the secret `{}` ({}) is not stored", s.key, s.question),
                format!("set {var} in the environment, or {}", asks_and_stores(cx)),
            ));
            continue;
        };
        answers.secrets.push((s.key.clone(), value));
    }
    Ok(())
}

/// A secret the runner makes (`generate`), nobody is asked for: each of its keys stored, or
/// all given in the environment (a key pair made elsewhere), or made now. A run stores what it
/// made; `validate --check` (no defaults) makes nothing, a run would.
fn generated(
    cx: &Context<'_>,
    s: &Secret,
    stored: &dyn Fn(&str) -> bool,
    store: &dyn Fn(&str) -> String,
    answers: &mut Answers,
) {
    let keys: Vec<String> = s.keys().collect();
    if keys.iter().all(|k| stored(k)) {
        return;
    }
    let vars: Vec<String> = keys.iter().map(|k| env_name(SECRET_PREFIX, k)).collect();
    let given: Vec<Option<String>> = vars.iter().map(|v| (cx.var)(v)).collect();
    if given.iter().all(Option::is_some) {
        answers
            .secrets
            .extend(keys.into_iter().zip(given.into_iter().flatten()));
        return;
    }
    if given.iter().any(Option::is_some) {
        answers.problems.push(Problem::new(
            format!("only part of `{}` ({}) is given in the environment", s.key, s.question),
            format!(
                "set all of {} (one key pair), or none and the runner makes one",
                vars.join(", ")
            ),
        ));
        return;
    }
    if !cx.defaults {
        return;
    }
    match super::generate::rsa_key_pair() {
        Ok((private, public)) => {
            let mut made = keys.into_iter();
            answers.secrets.extend(made.next().map(|k| (k, private)));
            answers.secrets.extend(made.next().map(|k| (k, public)));
            answers.made.push(format!(
                "made a new RSA key pair for `{}` ({}): stored encrypted with the other secrets, never shown",
                s.key, s.question
            ));
        }
        Err(why) => answers.problems.push(Problem::new(
            format!("`{}` ({}): {why}", s.key, s.question),
            format!(
                "make one elsewhere and give it as {}, or run `{}`",
                vars.join(" and "),
                store(&s.key)
            ),
        )),
    }
}

/// The other way to give a secret nobody could be asked for: one command, at a terminal.
fn asks_and_stores(cx: &Context<'_>) -> String {
    format!(
        "run `{}` at a terminal: it asks for it and stores it encrypted",
        cx.asks
    )
}

fn missing(cx: &Context<'_>, p: &Prompt, var: &str) -> Problem {
    let how = if p.secret {
        format!(
            "set {var}{} in the environment, or {}",
            p.skip_if_env.as_deref().map(|e| format!(" or {e}")).unwrap_or_default(),
            asks_and_stores(cx)
        )
    } else {
        format!(
            "set {var} in the environment, or add `{}: <{}>` under `config:` in {}",
            p.key,
            p.kind.answer_shape(),
            cx.file_shown
        )
    };
    Problem::new(format!("{} lacks `{}` ({})", cx.file_shown, p.key, p.question), how)
}

/// An answer as the value to store; `None` for the prompt's `none_value`. Errors say why.
pub(crate) fn parse(p: &Prompt, answer: &str) -> Result<Option<Value>, String> {
    let a = answer.trim();
    if p.none_value.as_deref().is_some_and(|n| n.eq_ignore_ascii_case(a)) {
        return Ok(None);
    }
    if a.is_empty() && !p.secret {
        return Err("an answer is needed".into());
    }
    match p.kind {
        PromptType::String | PromptType::Context => Ok(Some(Value::from(if p.secret { answer } else { a }))),
        PromptType::Url | PromptType::Cidr | PromptType::Duration => match p.kind.text_problem(a) {
            None => Ok(Some(Value::from(a))),
            Some(why) => Err(format!("`{}` is {why}", crate::charts::fetch::hide_credentials(a))),
        },
        PromptType::Path => Ok(Some(Value::from(expand_home(a).to_string_lossy()))),
        PromptType::Int => a
            .parse::<i64>()
            .map(|n| Some(Value::from(n)))
            .map_err(|_| format!("`{a}` is not a whole number")),
        PromptType::Bool => parse_bool(a)
            .map(|b| Some(Value::from(b)))
            .ok_or_else(|| format!("`{a}` is not yes or no")),
        PromptType::List => {
            let items: Vec<Value> = a
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(Value::from)
                .collect();
            if items.is_empty() {
                Err("give at least one value (separate them with commas)".into())
            } else {
                Ok(Some(Value::Array(items)))
            }
        }
    }
}

/// A path answer with `~` as the runner's home directory.
fn expand_home(path: &str) -> std::path::PathBuf {
    crate::fs::expand_home(path, crate::fs::home().as_deref())
}

/// The default shown with a question: one that refers to an earlier answer (`${ns:key}`) wins,
/// then the `default_env` variable, then the example file, then the provider's default.
pub(crate) fn default_text(cx: &Context<'_>, p: &Prompt, known: &BTreeMap<String, Value>) -> Option<String> {
    let refers = matches!(&p.default, Some(PromptDefault::Text(t)) if t.contains("${"))
        || matches!(&p.default, Some(PromptDefault::List(l)) if l.iter().any(|t| t.contains("${")));
    // A path variable may hold a list (`KUBECONFIG=a:b`): the first file that exists is the
    // default, else the first path.
    let from_env = || {
        let value = p.default_env.as_deref().and_then(|e| (cx.var)(e))?;
        if p.kind != PromptType::Path || !value.contains(':') {
            return Some(value);
        }
        let paths: Vec<&str> = value.split(':').filter(|s| !s.is_empty()).collect();
        let first = paths.first().map(|s| (*s).to_string());
        paths
            .iter()
            .find(|s| expand_home(s).exists())
            .map(|s| (*s).to_string())
            .or(first)
    };
    let from_example = || {
        (!p.secret && p.none_value.is_none())
            .then(|| cx.example.get(&p.key).map(display))
            .flatten()
    };
    let declared = || {
        p.default.as_ref().map(|d| match d {
            PromptDefault::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
            PromptDefault::Int(n) => n.to_string(),
            PromptDefault::Text(t) => substitute(t, known),
            PromptDefault::List(l) => l.iter().map(|t| substitute(t, known)).collect::<Vec<_>>().join(", "),
        })
    };
    if refers {
        declared()
    } else {
        from_env().or_else(from_example).or_else(declared)
    }
}

/// A stored value as a person would type it.
fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Array(items) => items.iter().map(display).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// `${ns:key}` replaced by the value known for that key (left as written when unknown).
fn substitute(text: &str, known: &BTreeMap<String, Value>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let key = &rest[start + 2..start + len];
        match known.get(key) {
            Some(v) => out.push_str(&display(v)),
            None => out.push_str(&rest[start..=start + len]),
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(key: &str, kind: PromptType, default: Option<PromptDefault>) -> Prompt {
        Prompt {
            default,
            ..Prompt::plain(key, kind)
        }
    }

    /// Answers from a script; records what was asked with which default.
    struct Script(Vec<&'static str>, Vec<String>);

    impl Ask for Script {
        fn text(&mut self, q: &str, default: Option<&str>, check: &AnswerCheck<'_>) -> std::io::Result<String> {
            loop {
                let a = self.0.remove(0);
                let a = if a.is_empty() {
                    default.unwrap_or("").to_string()
                } else {
                    a.into()
                };
                self.1.push(format!("{q} [{}] {a}", default.unwrap_or("")));
                if check(&a).is_ok() {
                    return Ok(a);
                }
            }
        }

        fn confirm(&mut self, q: &str) -> std::io::Result<bool> {
            let a = self.0.remove(0);
            self.1.push(format!("{q} [y/N] {a}"));
            Ok(a == "y")
        }

        fn hidden(&mut self, q: &str, default: Option<&str>, _confirm: bool) -> std::io::Result<String> {
            let a = self.0.remove(0);
            self.1.push(format!("{q} (hidden)"));
            Ok(if a.is_empty() {
                default.unwrap_or("").into()
            } else {
                a.into()
            })
        }
    }

    /// The variables `var`, the example's values, the stack file `f`, at a terminal; a question
    /// nobody answers takes its default.
    fn context<'a>(var: &'a dyn Fn(&str) -> Option<String>, example: &'a Map<String, Value>) -> Context<'a> {
        Context {
            var,
            example,
            file_shown: "f",
            asks: "runner validate -p p -s s",
            interactive: true,
            defaults: true,
        }
    }

    #[test]
    fn integers_are_asked_again_and_defaults_follow_earlier_answers() {
        let ps = vec![
            prompt("eks:min_size", PromptType::Int, Some(PromptDefault::Int(3))),
            prompt(
                "eks:desired_capacity",
                PromptType::Int,
                Some(PromptDefault::Text("${eks:min_size}".into())),
            ),
            prompt(
                "vpc:azs",
                PromptType::List,
                Some(PromptDefault::List(vec![
                    "${aws:region}a".into(),
                    "${aws:region}b".into(),
                ])),
            ),
        ];
        let example: Map<String, Value> = serde_json::from_str(r#"{"eks:min_size": 4}"#).unwrap();
        let var = |_: &str| None;
        let cx = context(&var, &example);
        let mut config = Map::new();
        config.insert("aws:region".into(), Value::from("eu-west-1"));
        let mut ask = Script(vec!["three", "", "", "eu-west-1a, eu-west-1c"], Vec::new());
        let mut answers = Answers::default();
        prompts(&cx, &ps, &config, true, &mut ask, &mut answers).unwrap();
        assert_eq!(
            ask.1,
            [
                "eks:min_size? [4] three",
                "eks:min_size? [4] 4",
                "eks:desired_capacity? [4] 4",
                "vpc:azs? [eu-west-1a, eu-west-1b] eu-west-1a, eu-west-1c"
            ]
        );
        assert_eq!(
            answers.config,
            [
                ("eks:min_size".to_string(), Value::from(4)),
                ("eks:desired_capacity".to_string(), Value::from(4)),
                ("vpc:azs".to_string(), serde_json::json!(["eu-west-1a", "eu-west-1c"])),
            ]
        );
    }

    #[test]
    fn without_a_person_every_missing_value_is_listed_and_the_environment_fills_in() {
        let mut token = prompt("digitalocean:token", PromptType::String, None);
        token.secret = true;
        token.skip_if_env = Some("DIGITALOCEAN_TOKEN".into());
        let mut profile = prompt(
            "aws:profile",
            PromptType::String,
            Some(PromptDefault::Text("none".into())),
        );
        profile.none_value = Some("none".into());
        let ps = vec![
            token,
            prompt("kic-helm:fqdn", PromptType::String, None),
            prompt("docean:node_count", PromptType::Int, Some(PromptDefault::Int(3))),
            profile,
        ];
        let env: BTreeMap<&str, &str> = [("MARA_CONFIG_DOCEAN_NODE_COUNT", "5")].into();
        let var = |k: &str| env.get(k).map(|v| (*v).to_string());
        let example = Map::new();
        let cx = Context {
            file_shown: "Pulumi.dev.yaml",
            interactive: false,
            ..context(&var, &example)
        };
        let mut answers = Answers::default();
        prompts(&cx, &ps, &Map::new(), true, &mut Script(vec![], vec![]), &mut answers).unwrap();
        let what: Vec<&str> = answers.problems.iter().map(|p| p.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "Pulumi.dev.yaml lacks `digitalocean:token` (digitalocean:token?)",
                "Pulumi.dev.yaml lacks `kic-helm:fqdn` (kic-helm:fqdn?)"
            ]
        );
        assert!(
            answers.problems[0]
                .fix
                .contains("MARA_SECRET_DIGITALOCEAN_TOKEN or DIGITALOCEAN_TOKEN")
        );
        assert!(answers.problems[1].fix.contains("MARA_CONFIG_KIC_HELM_FQDN"));
        assert_eq!(answers.config, [("docean:node_count".to_string(), Value::from(5))]);
    }

    #[test]
    fn a_bad_value_from_the_environment_names_the_variable() {
        let ps = vec![prompt("linode:k8s_ha", PromptType::Bool, None)];
        let var = |k: &str| (k == "MARA_CONFIG_LINODE_K8S_HA").then(|| "maybe".to_string());
        let example = Map::new();
        let cx = context(&var, &example);
        let mut answers = Answers::default();
        prompts(&cx, &ps, &Map::new(), true, &mut Script(vec![], vec![]), &mut answers).unwrap();
        assert_eq!(
            answers.problems[0].what,
            "MARA_CONFIG_LINODE_K8S_HA: `maybe` is not yes or no"
        );
    }
}
