//! Command-line parsing shaped like cobra's: persistent flags anywhere, `--flag=value`,
//! `--flag value`, `-f value`, bundled short bools, `--` ending flags, and cobra's messages for
//! unknown flags (`unknown flag: --x`, `unknown shorthand flag: 'z' in -z`).

use std::collections::HashMap;

use crate::fail::{Failure, fail};

#[derive(Clone, Copy)]
pub struct Spec {
    pub long: &'static str,
    pub short: Option<char>,
    pub kind: Kind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Value,
    /// A string flag with `NoOptDefVal`: bare `--refresh` means `true`, `--refresh=false` works.
    OptionalValue,
}

const fn flag(long: &'static str, short: Option<char>, kind: Kind) -> Spec {
    Spec { long, short, kind }
}

/// Root persistent flags (`pkg/cmd/pulumi/pulumi.go`).
const GLOBAL: &[Spec] = &[
    flag("cwd", Some('C'), Kind::Value),
    flag("non-interactive", None, Kind::Bool),
    flag("color", None, Kind::Value),
    flag("logtostderr", None, Kind::Bool),
    flag("logflow", None, Kind::Bool),
    flag("verbose", Some('v'), Kind::Value),
    flag("emoji", Some('e'), Kind::Bool),
    flag("fully-qualify-stack-names", Some('Q'), Kind::Bool),
    flag("disable-integrity-checking", None, Kind::Bool),
    flag("help", Some('h'), Kind::Bool),
];

const OPERATION: &[Spec] = &[
    flag("stack", Some('s'), Kind::Value),
    flag("config-file", None, Kind::Value),
    flag("config", Some('c'), Kind::Value),
    flag("json", Some('j'), Kind::Bool),
    flag("message", Some('m'), Kind::Value),
    flag("suppress-progress", None, Kind::Bool),
    flag("suppress-outputs", None, Kind::Bool),
    flag("suppress-permalink", None, Kind::OptionalValue),
    flag("diff", None, Kind::Bool),
    flag("parallel", Some('p'), Kind::Value),
    flag("target", Some('t'), Kind::Value),
    flag("debug", Some('d'), Kind::Bool),
    flag("skip-config-validation", None, Kind::Bool),
    flag("run-program", None, Kind::Bool),
];
// Not on `destroy` (operations/destroy.go); `refresh` has no `--refresh` (refresh.go).
const EXPECT_NO_CHANGES: &[Spec] = &[flag("expect-no-changes", None, Kind::Bool)];
const CONFIRM: &[Spec] = &[
    flag("yes", Some('y'), Kind::Bool),
    flag("skip-preview", Some('f'), Kind::Bool),
];
const REFRESH_OPT: &[Spec] = &[flag("refresh", Some('r'), Kind::OptionalValue)];
const PREVIEW_ONLY: &[Spec] = &[flag("preview-only", None, Kind::Bool)];
const EVENT_LOG: &[Spec] = &[flag("event-log", None, Kind::Value)];
const STACK: &[Spec] = &[flag("stack", Some('s'), Kind::Value)];
const CONFIG_FILE: &[Spec] = &[flag("config-file", None, Kind::Value)];
const JSON: &[Spec] = &[flag("json", Some('j'), Kind::Bool)];
const SHOW_SECRETS: &[Spec] = &[flag("show-secrets", None, Kind::Bool)];

/// The real CLI's top-level commands (`pulumi --help`), for what the stand-in does not imitate.
const REAL_COMMANDS: &[&str] = &[
    "about",
    "ai",
    "cancel",
    "config",
    "console",
    "convert",
    "deployment",
    "destroy",
    "env",
    "gen-completion",
    "import",
    "install",
    "login",
    "logout",
    "logs",
    "new",
    "org",
    "package",
    "plugin",
    "policy",
    "preview",
    "project",
    "refresh",
    "schema",
    "stack",
    "state",
    "up",
    "version",
    "watch",
    "whoami",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Version,
    Whoami,
    Login,
    Logout,
    StackSelect,
    StackInit,
    StackOutput,
    StackLs,
    StackHistory,
    StackRm,
    ConfigSet,
    ConfigGet,
    Config,
    Up,
    Preview,
    Refresh,
    Destroy,
    Cancel,
}

impl Command {
    fn specs(self) -> Vec<Spec> {
        let debug = std::env::var("PULUMI_DEBUG_COMMANDS").is_ok_and(|v| truthy(&v));
        // `--event-log` exists only when PULUMI_DEBUG_COMMANDS is set (up.go and friends).
        let log: &[Spec] = if debug { EVENT_LOG } else { &[] };
        match self {
            Command::Version | Command::Logout => Vec::new(),
            Command::Whoami => [JSON].concat(),
            Command::Login => vec![
                flag("local", Some('l'), Kind::Bool),
                flag("cloud-url", Some('c'), Kind::Value),
            ],
            Command::StackSelect => [
                STACK,
                &[
                    flag("create", Some('c'), Kind::Bool),
                    flag("secrets-provider", None, Kind::Value),
                ],
            ]
            .concat(),
            Command::StackInit => [
                STACK,
                &[
                    flag("secrets-provider", None, Kind::Value),
                    flag("no-select", None, Kind::Bool),
                    flag("copy-config-from", None, Kind::Value),
                ],
            ]
            .concat(),
            Command::StackOutput => [STACK, JSON, SHOW_SECRETS, &[flag("shell", None, Kind::Bool)]].concat(),
            // `--stack` is a persistent flag of `pulumi stack` (stack.go): its subcommands take it.
            Command::StackLs => [STACK, JSON, &[flag("all", Some('a'), Kind::Bool)]].concat(),
            Command::StackHistory => [
                STACK,
                JSON,
                SHOW_SECRETS,
                &[
                    flag("page-size", None, Kind::Value),
                    flag("page", None, Kind::Value),
                    flag("full-dates", None, Kind::Bool),
                ],
            ]
            .concat(),
            Command::StackRm => [
                STACK,
                &[
                    flag("yes", Some('y'), Kind::Bool),
                    flag("force", Some('f'), Kind::Bool),
                    flag("preserve-config", None, Kind::Bool),
                ],
            ]
            .concat(),
            Command::ConfigSet => [
                STACK,
                CONFIG_FILE,
                &[
                    flag("secret", None, Kind::Bool),
                    flag("plaintext", None, Kind::Bool),
                    flag("path", None, Kind::Bool),
                    flag("type", None, Kind::Value),
                    flag("raw", None, Kind::Bool),
                ],
            ]
            .concat(),
            Command::ConfigGet => [STACK, CONFIG_FILE, JSON, &[flag("path", None, Kind::Bool)]].concat(),
            Command::Config => [STACK, CONFIG_FILE, JSON, SHOW_SECRETS].concat(),
            // `--show-secrets` is on up and preview only (refresh.go and destroy.go have none).
            Command::Up => [OPERATION, SHOW_SECRETS, CONFIRM, REFRESH_OPT, EXPECT_NO_CHANGES, log].concat(),
            Command::Destroy => [OPERATION, CONFIRM, PREVIEW_ONLY, REFRESH_OPT, log].concat(),
            Command::Refresh => [OPERATION, CONFIRM, PREVIEW_ONLY, EXPECT_NO_CHANGES, log].concat(),
            Command::Preview => [OPERATION, SHOW_SECRETS, REFRESH_OPT, EXPECT_NO_CHANGES, log].concat(),
            Command::Cancel => [STACK, &[flag("yes", Some('y'), Kind::Bool)]].concat(),
        }
    }

    /// (required, at most) positional arguments, as each command's `constrictor.Arguments`
    /// says; `None` where the stand-in does not check.
    fn arity(self) -> Option<(usize, usize)> {
        Some(match self {
            Command::Version | Command::StackLs | Command::StackHistory | Command::Config => (0, 0),
            Command::Login
            | Command::Logout
            | Command::StackSelect
            | Command::StackInit
            | Command::StackOutput
            | Command::StackRm
            | Command::Cancel
            | Command::Up
            | Command::Preview
            | Command::Refresh
            | Command::Destroy => (0, 1),
            Command::ConfigGet => (1, 1),
            Command::ConfigSet => (1, 2),
            Command::Whoami => return None,
        })
    }
}

/// cobra's check of the positional arguments, with `constrictor`'s messages.
fn check_arity(command: Command, given: usize) -> Result<(), Failure> {
    let Some((required, most)) = command.arity() else {
        return Ok(());
    };
    if required == most && given != most {
        return Err(fail(format!("accepts {most} arg(s), received {given}")));
    }
    if given < required {
        return Err(fail(format!(
            "requires at least {required} arg(s), only received {given}"
        )));
    }
    if given > most {
        return Err(fail(format!("accepts at most {most} arg(s), received {given}")));
    }
    Ok(())
}

/// A boolean environment variable as Pulumi reads one (`env.BoolValue`): `1` or `true` in any
/// case; anything else is false.
pub fn truthy(v: &str) -> bool {
    v == "1" || v.eq_ignore_ascii_case("true")
}

/// A boolean flag's value as pflag reads it (`strconv.ParseBool`).
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// pflag's refusal of a value its flag cannot take.
fn invalid_bool(spec: &Spec, value: &str) -> Failure {
    let name = match spec.short {
        Some(c) => format!("-{c}, --{}", spec.long),
        None => format!("--{}", spec.long),
    };
    fail(format!(
        "invalid argument \"{value}\" for \"{name}\" flag: strconv.ParseBool: parsing \"{value}\": invalid syntax"
    ))
}

#[derive(Debug)]
pub struct Args {
    pub command: Command,
    pub positionals: Vec<String>,
    values: HashMap<&'static str, Vec<String>>,
}

impl Args {
    /// A boolean flag (checked as it was parsed) or an optional-value one read as a boolean.
    pub fn flag(&self, long: &str) -> bool {
        self.values
            .get(long)
            .and_then(|v| v.last())
            .is_some_and(|v| parse_bool(v) == Some(true))
    }

    /// `--refresh` of up, preview and destroy (`getRefreshOption`, operations/io.go): its
    /// value as a boolean, else the project's `options.refresh: always`.
    pub fn refresh(&self, project_always: bool) -> Result<bool, Failure> {
        match self.value("refresh") {
            Some(v) => parse_bool(v).ok_or_else(|| fail("unable to determine value for --refresh")),
            None => Ok(project_always),
        }
    }

    pub fn value(&self, long: &str) -> Option<&str> {
        self.values.get(long).and_then(|v| v.last()).map(String::as_str)
    }

    pub fn values(&self, long: &str) -> &[String] {
        self.values.get(long).map_or(&[], Vec::as_slice)
    }
}

/// Finds the command (skipping persistent flags and their values), then parses every flag.
#[expect(
    clippy::too_many_lines,
    reason = "cobra's flag parsing, rule by rule with its messages, so each can be checked against it"
)]
pub fn parse(argv: &[String]) -> Result<Args, Failure> {
    let mut words = Vec::new();
    let mut i = 0;
    while i < argv.len() && words.len() < 2 {
        let a = &argv[i];
        if a == "--" {
            break;
        }
        if a.starts_with('-') {
            if !a.contains('=') && takes_value(GLOBAL, a) {
                i += 1;
            }
        } else {
            words.push(a.as_str());
        }
        i += 1;
    }
    let (command, used) = match words.as_slice() {
        ["version", ..] => (Command::Version, 1),
        ["whoami", ..] => (Command::Whoami, 1),
        ["login", ..] => (Command::Login, 1),
        ["logout", ..] => (Command::Logout, 1),
        ["stack", "select", ..] => (Command::StackSelect, 2),
        ["stack", "init" | "new" | "create" | "setup", ..] => (Command::StackInit, 2),
        ["stack", "output", ..] => (Command::StackOutput, 2),
        ["stack", "ls" | "list", ..] => (Command::StackLs, 2),
        ["stack", "history" | "hist", ..] => (Command::StackHistory, 2),
        ["stack", "rm" | "remove" | "delete", ..] => (Command::StackRm, 2),
        ["config", "set", ..] => (Command::ConfigSet, 2),
        ["config", "get", ..] => (Command::ConfigGet, 2),
        ["config", ..] => (Command::Config, 1),
        ["up" | "update", ..] => (Command::Up, 1),
        ["preview" | "pre", ..] => (Command::Preview, 1),
        ["refresh", ..] => (Command::Refresh, 1),
        ["destroy" | "down" | "dn", ..] => (Command::Destroy, 1),
        ["cancel", ..] => (Command::Cancel, 1),
        [] => return Err(fail("this stand-in needs a command; see tests/standin/README.md")),
        // A command of the real CLI the stand-in does not imitate: say so, not "unknown".
        [w, ..] if REAL_COMMANDS.contains(w) => {
            let shown = words.join(" ");
            return Err(fail(format!(
                "the pulumi stand-in does not imitate `pulumi {shown}` (tests/standin/README.md lists what it does)"
            )));
        }
        [w, ..] => return Err(fail(format!("unknown command \"{w}\" for \"pulumi\""))),
    };
    let mut specs: Vec<Spec> = GLOBAL.to_vec();
    specs.extend(command.specs());
    let mut args = Args {
        command,
        positionals: Vec::new(),
        values: HashMap::new(),
    };
    let mut skip_words = used;
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        i += 1;
        if a == "--" {
            args.positionals.extend(argv[i..].iter().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(spec) = specs.iter().find(|s| s.long == name) else {
                return Err(fail(format!("unknown flag: --{name}")));
            };
            let value = match (spec.kind, inline) {
                (Kind::Bool, Some(v)) if parse_bool(&v).is_none() => return Err(invalid_bool(spec, &v)),
                (_, Some(v)) => v,
                (Kind::Bool, None) => "true".into(),
                (Kind::OptionalValue, None) => "true".into(),
                (Kind::Value, None) => {
                    let Some(v) = argv.get(i) else {
                        return Err(fail(format!("flag needs an argument: --{name}")));
                    };
                    i += 1;
                    v.clone()
                }
            };
            args.values.entry(spec.long).or_default().push(value);
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                let Some(spec) = specs.iter().find(|s| s.short == Some(c)) else {
                    return Err(fail(format!("unknown shorthand flag: '{c}' in {a}")));
                };
                if spec.kind == Kind::Value {
                    let rest: String = chars[k + 1..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest.trim_start_matches('=').to_string()
                    } else if let Some(v) = argv.get(i) {
                        i += 1;
                        v.clone()
                    } else {
                        return Err(fail(format!("flag needs an argument: '{c}' in {a}")));
                    };
                    args.values.entry(spec.long).or_default().push(value);
                    break;
                }
                args.values.entry(spec.long).or_default().push("true".into());
                k += 1;
            }
        } else if skip_words > 0 {
            skip_words -= 1;
        } else {
            args.positionals.push(a.clone());
        }
    }
    // cobra answers --help before it checks the arguments.
    if !args.flag("help") {
        check_arity(args.command, args.positionals.len())?;
    }
    Ok(args)
}

fn takes_value(specs: &[Spec], token: &str) -> bool {
    if let Some(long) = token.strip_prefix("--") {
        specs.iter().any(|s| s.long == long && s.kind == Kind::Value)
    } else {
        let last = token.chars().last();
        token.len() == 2 && specs.iter().any(|s| s.short == last && s.kind == Kind::Value)
    }
}
