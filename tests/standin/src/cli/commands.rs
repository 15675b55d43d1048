//! The commands: `version`, `whoami`, `login`, `stack …`, `config …`, `cancel`.
//! The update operations (`up`, `preview`, `refresh`, `destroy`) are in `operations`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal as _, Read as _};
use std::path::PathBuf;

use serde_json::{Map, Value, json};
use sha1::Digest as _;

use crate::backend::{self, Backend, VERSION};
use crate::cli::args::Args;
use crate::fail::{Failure, fail, stack_not_found};
use crate::program::{self, Project};
use crate::secrets::crypto::{self, Crypter};
use crate::workspace::stackconfig::{StackConfig, as_config_string, parse_key};

/// Everything a stack-level command works with.
pub struct Scope {
    pub project: Project,
    pub backend: Backend,
    pub stack: String,
}

impl Scope {
    pub fn config_path(&self, args: &Args) -> PathBuf {
        if let Some(f) = args.value("config-file") {
            return std::env::current_dir().unwrap_or_default().join(f);
        }
        let dir = match self.project.doc["stackConfigDir"].as_str() {
            Some(d) => self.project.dir.join(d),
            None => self.project.dir.clone(),
        };
        dir.join(format!("Pulumi.{}.yaml", self.stack.replace('/', "-")))
    }

    /// The stack's configuration as the CLI reads it: bare keys in the project's namespace.
    pub fn stack_config(&self, args: &Args) -> Result<StackConfig, Failure> {
        Ok(StackConfig::load(&self.config_path(args))?.namespaced(&self.project.name))
    }

    pub fn require_stack(&self) -> Result<(), Failure> {
        if self.backend.exists(&self.project.name, &self.stack) {
            Ok(())
        } else {
            Err(stack_not_found(format!("no stack named '{}' found", self.stack)))
        }
    }

    /// The secrets manager for this stack: the config file's salt; without one a new salt, or the
    /// one in state when `PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER` is true — then written into
    /// the config file, as `getAndSaveSecretsManager` does.
    pub fn crypter(&self, cfg: &mut StackConfig, context: &str) -> Result<(Crypter, String), Failure> {
        let had_salt = cfg.salt.is_some();
        let made = self.secrets_manager(cfg, context)?;
        if !had_salt {
            cfg.save()?;
        }
        Ok(made)
    }

    /// [`Scope::crypter`] with the new salt only in `cfg`: a new stack's is written once the
    /// stack exists (`stack.CreateStack` saves the config after the backend's `CreateStack`).
    fn secrets_manager(&self, cfg: &mut StackConfig, context: &str) -> Result<(Crypter, String), Failure> {
        let passphrase = crypto::passphrase().map_err(|f| fail(format!("{context}{}", f.message)))?;
        if let Some(salt) = cfg.salt.clone() {
            return Ok((Crypter::open(&passphrase, &salt)?, passphrase));
        }
        // No salt in the stack's config file: a new secrets manager (a new salt), unless
        // PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER asks for the one recorded in the state
        // (pkg/cmd/pulumi/stack/secrets.go `GetSecretsManager`, sdk/go/common/env/env.go).
        let fallback =
            std::env::var("PULUMI_FALLBACK_TO_STATE_SECRETS_MANAGER").is_ok_and(|v| crate::cli::args::truthy(&v));
        let cp = if fallback {
            self.backend.checkpoint(&self.project.name, &self.stack)?
        } else {
            None
        };
        let salt = cp
            .as_ref()
            .and_then(|c| c["checkpoint"]["latest"]["secrets_providers"]["state"]["salt"].as_str())
            .map(str::to_string);
        let (crypter, salt) = match salt {
            Some(s) => (Crypter::open(&passphrase, &s)?, s),
            None => Crypter::new_salt(&passphrase),
        };
        cfg.set_salt(&salt);
        Ok((crypter, passphrase))
    }
}

pub fn version() -> i32 {
    println!("{VERSION}");
    0
}

fn open_backend(project: Option<&Project>) -> Result<Backend, Failure> {
    let from_project = project.and_then(|p| p.doc["backend"]["url"].as_str());
    match backend::url(from_project) {
        Some(u) => Backend::open(&u),
        None => Err(fail(
            "PULUMI_ACCESS_TOKEN must be set for login during non-interactive CLI sessions (the stand-in has no Pulumi Cloud: set PULUMI_BACKEND_URL=file://<dir>)",
        )
        .with_code(3)),
    }
}

pub fn whoami(args: &Args) -> Result<i32, Failure> {
    let project = program::find_project().ok();
    let b = open_backend(project.as_ref())?;
    let user = backend::username();
    if args.flag("json") {
        let v = json!({ "user": user, "organizations": [], "url": b.url });
        println!("{}", serde_json::to_string_pretty(&v).expect("JSON"));
    } else {
        println!("{user}");
    }
    Ok(0)
}

pub fn login(args: &Args) -> Result<i32, Failure> {
    let url = if args.flag("local") {
        "file://~".to_string()
    } else if let Some(u) = args.value("cloud-url").or(args.positionals.first().map(String::as_str)) {
        u.to_string()
    } else {
        return Err(fail(
            "the pulumi stand-in logs in only to file:// backends: pulumi login file://<dir>",
        ));
    };
    let b = Backend::open(&url)?;
    let creds = backend::home().join("credentials.json");
    let mut v: Value = std::fs::read_to_string(&creds)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    v["current"] = Value::String(url);
    crate::fsutil::write_atomic(&creds, serde_json::to_string_pretty(&v).expect("JSON").as_bytes())?;
    println!(
        "Logged in to {} as {} ({})",
        backend::hostname(),
        backend::username(),
        b.url
    );
    Ok(0)
}

pub fn logout() -> Result<i32, Failure> {
    let creds = backend::home().join("credentials.json");
    if let Ok(text) = std::fs::read_to_string(&creds)
        && let Ok(mut v) = serde_json::from_str::<Value>(&text)
    {
        if let Some(m) = v.as_object_mut() {
            m.remove("current");
        }
        crate::fsutil::write_atomic(&creds, serde_json::to_string_pretty(&v).expect("JSON").as_bytes())?;
    }
    println!("Logged out of file backend");
    Ok(0)
}

/// `a stack name may only contain …` (`sdk/go/common/tokens/stack_name.go`).
fn check_stack_name(name: &str) -> Result<(), Failure> {
    if name.is_empty() {
        return Err(fail("a stack name may not be empty"));
    }
    if name.len() > 100 {
        return Err(fail("a stack name cannot exceed 100 characters"));
    }
    if let Some((i, c)) = name
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || "-_.".contains(*c)))
    {
        return Err(fail(format!(
            "a stack name may only contain alphanumeric, hyphens, underscores, or periods: invalid character {c:?} at position {i}"
        )));
    }
    Ok(())
}

/// `dev`, `organization/dev` or `organization/<project>/dev` → `dev`, checking org and project.
fn parse_stack_ref(project: &Project, given: &str) -> Result<String, Failure> {
    let parts: Vec<&str> = given.split('/').collect();
    let name = match parts.as_slice() {
        [s] => *s,
        [org, s] => {
            if *org != "organization" {
                return Err(fail("organization name must be 'organization'"));
            }
            s
        }
        [org, p, s] => {
            if *org != "organization" {
                return Err(fail("organization name must be 'organization'"));
            }
            if *p != project.name {
                return Err(fail(format!("provided project name \"{p}\" doesn't match Pulumi.yaml")));
            }
            s
        }
        _ => return Err(fail(format!("could not parse stack reference '{given}'"))),
    };
    check_stack_name(name)?;
    Ok(name.to_string())
}

fn workspace_file(project: &Project) -> PathBuf {
    let abs = std::fs::canonicalize(&project.file).unwrap_or_else(|_| project.file.clone());
    let hash: String = sha1::Sha1::digest(abs.display().to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    backend::home()
        .join("workspaces")
        .join(format!("{}-{hash}-workspace.json", project.name))
}

fn selected(project: &Project, b: &Backend) -> Option<String> {
    let text = std::fs::read_to_string(workspace_file(project)).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let full = v["stacks"][&b.url].as_str()?;
    full.rsplit('/').next().map(str::to_string)
}

fn select(project: &Project, b: &Backend, stack: &str) -> Result<(), Failure> {
    let path = workspace_file(project);
    let mut v: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    if !v["stacks"].is_object() {
        v["stacks"] = json!({});
    }
    v["stacks"][&b.url] = Value::String(format!("organization/{}/{stack}", project.name));
    crate::fsutil::write_atomic(&path, serde_json::to_string_pretty(&v).expect("JSON").as_bytes())
}

/// The stack a command works on: `--stack`, else `PULUMI_STACK`, else the selected one.
pub fn scope(args: &Args) -> Result<Scope, Failure> {
    let project = program::find_project()?;
    let backend = open_backend(Some(&project))?;
    let given = args
        .value("stack")
        .map(str::to_string)
        .or_else(|| std::env::var("PULUMI_STACK").ok().filter(|s| !s.is_empty()));
    let stack = match given {
        Some(s) => parse_stack_ref(&project, &s)?,
        None => selected(&project, &backend).ok_or_else(|| {
            fail("no stack selected; please use `pulumi stack select` or `pulumi stack init` to choose one")
        })?,
    };
    Ok(Scope {
        project,
        backend,
        stack,
    })
}

fn named_scope(args: &Args, missing: &str) -> Result<Scope, Failure> {
    if args.value("stack").is_some() && !args.positionals.is_empty() {
        return Err(fail(
            "only one of --stack or argument stack name may be specified, not both",
        ));
    }
    let project = program::find_project()?;
    let backend = open_backend(Some(&project))?;
    let Some(given) = args.value("stack").or(args.positionals.first().map(String::as_str)) else {
        return Err(fail(missing.to_string()));
    };
    let stack = parse_stack_ref(&project, given)?;
    Ok(Scope {
        project,
        backend,
        stack,
    })
}

pub fn stack_init(args: &Args) -> Result<i32, Failure> {
    let scope = named_scope(args, "missing stack name")?;
    create(&scope, args)?;
    if !args.flag("no-select") {
        select(&scope.project, &scope.backend, &scope.stack)?;
    }
    Ok(0)
}

fn create(scope: &Scope, args: &Args) -> Result<(), Failure> {
    if let Some(p) = args.value("secrets-provider")
        && p != "default"
        && p != "passphrase"
    {
        return Err(fail(format!(
            "the pulumi stand-in supports only the passphrase secrets provider, not {p}"
        )));
    }
    let mut cfg = scope.stack_config(args)?;
    let had_salt = cfg.salt.is_some();
    scope.secrets_manager(&mut cfg, "could not create secrets manager for new stack: ")?;
    let salt = cfg.salt.clone().expect("the secrets manager set the salt");
    // `diyBackend.CreateStack`: the stack's lock first, then the check that it is new.
    let lock = scope
        .backend
        .lock(&scope.project.name, &scope.stack)
        .map_err(|f| fail(format!("could not create stack: {}", f.message)))?;
    if scope.backend.exists(&scope.project.name, &scope.stack) {
        return Err(fail(format!(
            "stack 'organization/{}/{}' already exists",
            scope.project.name, scope.stack
        )));
    }
    scope
        .backend
        .save(&scope.project.name, &scope.stack, &Backend::deployment(&salt, None))?;
    drop(lock);
    eprintln!("Created stack '{}'", scope.stack);
    if !had_salt {
        cfg.save()?;
    }
    Ok(())
}

pub fn stack_select(args: &Args) -> Result<i32, Failure> {
    let scope = named_scope(args, "no stack selected; specify a stack name with --stack").map_err(|f| {
        if f.message.starts_with("no stack selected") {
            f.with_code(6)
        } else {
            f
        }
    })?;
    if !scope.backend.exists(&scope.project.name, &scope.stack) {
        if args.flag("create") {
            create(&scope, args)?;
        } else {
            return Err(stack_not_found(format!("no stack named '{}' found", scope.stack)));
        }
    }
    select(&scope.project, &scope.backend, &scope.stack)?;
    Ok(0)
}

/// The root stack resource's outputs as stored (secrets encrypted) and the stack's salt; no
/// outputs and no salt when there is no root stack resource (never updated, or destroyed).
fn root_outputs(scope: &Scope) -> Result<(Map<String, Value>, String), Failure> {
    scope.require_stack()?;
    let cp = scope
        .backend
        .checkpoint(&scope.project.name, &scope.stack)?
        .unwrap_or_default();
    let latest = &cp["checkpoint"]["latest"];
    let salt = latest["secrets_providers"]["state"]["salt"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let root = latest["resources"]
        .as_array()
        .and_then(|rs| {
            rs.iter()
                .find(|r| r["type"] == "pulumi:pulumi:Stack" && r["parent"].as_str().unwrap_or_default().is_empty())
        })
        .map(|r| (r["outputs"].as_object().cloned().unwrap_or_default(), salt));
    Ok(root.unwrap_or_default())
}

pub fn stack_output(args: &Args) -> Result<i32, Failure> {
    if args.flag("json") && args.flag("shell") {
        return Err(fail("only one of --json and --shell may be set"));
    }
    let scope = scope(args)?;
    let (raw, salt) = root_outputs(&scope)?;
    // Secrets, however deep, read `[secret]`; with --show-secrets their values. Showing opens
    // the stack's secrets manager (the passphrase) as soon as there is a root stack resource,
    // secret or not (`SnapshotStackOutputs` with the default provider).
    let crypter = if args.flag("show-secrets") && !salt.is_empty() {
        Some(Crypter::open(&crypto::passphrase()?, &salt)?)
    } else {
        None
    };
    let mut open = |ct: &str| match &crypter {
        Some(c) => Ok(crypto::plaintext_value(c.decrypt(ct)?)),
        None => Ok(Value::String("[secret]".into())),
    };
    let mut outputs = Map::new();
    for (k, v) in raw {
        outputs.insert(k, crypto::open_secrets(&v, &mut open)?.0);
    }
    if let Some(name) = args.positionals.first() {
        let Some(v) = outputs.get(name) else {
            return Err(fail(format!("current stack does not have output property '{name}'")));
        };
        if args.flag("json") {
            println!("{}", serde_json::to_string_pretty(v).expect("JSON"));
        } else {
            println!("{}", v.as_str().map_or_else(|| v.to_string(), str::to_string));
        }
        return Ok(0);
    }
    if args.flag("json") {
        println!(
            "{}",
            serde_json::to_string_pretty(&Value::Object(outputs)).expect("JSON")
        );
    } else {
        println!("Current stack outputs ({}):", outputs.len());
        if outputs.is_empty() {
            println!("    No output values currently in this stack");
        } else {
            let width = outputs.keys().map(String::len).max().unwrap_or(0).max(6);
            println!("    {:<width$}  VALUE", "OUTPUT");
            for (k, v) in &outputs {
                println!(
                    "    {k:<width$}  {}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                );
            }
        }
    }
    Ok(0)
}

pub fn stack_ls(args: &Args) -> Result<i32, Failure> {
    let project = program::find_project()
        .map_err(|_| fail("no Pulumi.yaml found; please run this command in a project directory"))?;
    let b = open_backend(Some(&project))?;
    let current = selected(&project, &b);
    let dir = b.dir.join(format!(".pulumi/stacks/{}", project.name));
    // `ListReferences`: the files the backend lists there named `<stack>.json` (not `.bak`);
    // sorted by stack name (`stack_list.go`).
    let mut names: Vec<String> = crate::backend::list(&dir)
        .iter()
        .filter_map(|p| p.file_name()?.to_str()?.strip_suffix(".json").map(str::to_string))
        .collect();
    names.sort();
    let mut list = Vec::new();
    for n in names {
        let cp = b.checkpoint(&project.name, &n)?.unwrap_or_default();
        let latest = &cp["checkpoint"]["latest"];
        let mut e = json!({ "name": n, "current": current.as_deref() == Some(n.as_str()) });
        if let Some(t) = latest["manifest"]["time"].as_str() {
            e["lastUpdate"] = Value::String(t.to_string());
        }
        e["resourceCount"] = Value::from(latest["resources"].as_array().map_or(0, Vec::len));
        list.push(e);
    }
    if args.flag("json") {
        println!("{}", serde_json::to_string_pretty(&Value::Array(list)).expect("JSON"));
    } else {
        println!("NAME  LAST UPDATE  RESOURCE COUNT");
        for e in list {
            let star = if e["current"] == true { "*" } else { "" };
            println!(
                "{}{star}  {}  {}",
                e["name"].as_str().unwrap_or_default(),
                e["lastUpdate"].as_str().unwrap_or("n/a"),
                e["resourceCount"]
            );
        }
    }
    Ok(0)
}

/// `stack history [--json] [--page-size N] [--page N]`: the stack's updates, newest first, from
/// the backend's history files (`pkg/cmd/pulumi/stack/stack_history.go`, the DIY backend's
/// `GetHistory`, whose versions are all 0). Secret config values are shown as secret without a
/// value (the history keeps them encrypted; the stand-in does not decrypt them).
pub fn stack_history(args: &Args) -> Result<i32, Failure> {
    let scope = scope(args)?;
    scope.require_stack()?;
    let number = |k: &str, default: usize| -> Result<usize, Failure> {
        args.value(k).map_or(Ok(default), |v| {
            v.parse().map_err(|_| {
                fail(format!(
                    "invalid argument \"{v}\" for \"--{k}\" flag: strconv.ParseInt: parsing \"{v}\": invalid syntax"
                ))
            })
        })
    };
    let (page_size, page) = (number("page-size", 10)?, number("page", 1)?.max(1));
    let dir = scope
        .backend
        .dir
        .join(format!(".pulumi/history/{}/{}", scope.project.name, scope.stack));
    // `getHistory`: the files the backend lists there, named `<stack>-<nanoseconds>`, newest
    // first, but for the checkpoints beside them.
    let mut files = crate::backend::list(&dir);
    files.retain(|p| p.to_string_lossy().ends_with(".history.json"));
    files.reverse();
    let updates: Vec<Value> = files
        .iter()
        .skip(page_size * (page - 1))
        .take(page_size)
        .filter_map(|p| serde_json::from_slice::<Value>(&std::fs::read(p).ok()?).ok())
        .collect();
    if args.flag("json") {
        let shown: Vec<Value> = updates
            .iter()
            .map(|u| {
                let mut u = u.clone();
                for k in ["startTime", "endTime"] {
                    if let Some(t) = u[k].as_u64() {
                        u[k] = Value::String(crate::time::rfc3339(
                            std::time::UNIX_EPOCH + std::time::Duration::from_secs(t),
                        ));
                    }
                }
                u
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&Value::Array(shown)).expect("JSON"));
    } else if updates.is_empty() {
        println!("Stack has never been updated");
    } else {
        for u in updates {
            println!("Version: {}", u["version"]);
            println!("UpdateKind: {}", u["kind"].as_str().unwrap_or_default());
            println!("Status: {}", u["result"].as_str().unwrap_or_default());
            println!("Message: {}", u["message"].as_str().unwrap_or_default());
            println!();
        }
    }
    Ok(0)
}

pub fn stack_rm(args: &Args, interactive: bool) -> Result<i32, Failure> {
    let scope = named_scope(args, "no stack selected; specify a stack name with --stack")?;
    scope.require_stack()?;
    if !interactive && !args.flag("yes") {
        return Err(fail("non-interactive mode requires --yes flag"));
    }
    let cp = scope
        .backend
        .checkpoint(&scope.project.name, &scope.stack)?
        .unwrap_or_default();
    let real = cp["checkpoint"]["latest"]["resources"]
        .as_array()
        .is_some_and(|rs| rs.iter().any(|r| r["type"] != "pulumi:pulumi:Stack"));
    let r = &scope.stack;
    if real && !args.flag("force") {
        return Err(fail(format!(
            "'{r}' still has resources; removal rejected. Possible actions:\n- Make sure that '{r}' is the stack that you want to destroy\n- Run `pulumi destroy` to delete the resources, then run `pulumi stack rm`\n- Run `pulumi stack rm --force` to override this error"
        )));
    }
    let _lock = scope.backend.lock(&scope.project.name, &scope.stack)?;
    let file = scope.backend.stack_file(&scope.project.name, &scope.stack);
    std::fs::rename(&file, file.with_extension("json.bak")).map_err(|e| fail(e.to_string()))?;
    if !args.flag("preserve-config") && args.value("config-file").is_none() {
        let _ = std::fs::remove_file(scope.config_path(args));
    }
    println!("Stack '{r}' has been removed!");
    Ok(0)
}

/// `cancel [stack]`: the stack named, else the current one (`--stack` beside a name is refused).
pub fn cancel(args: &Args) -> Result<i32, Failure> {
    let scope = if args.positionals.is_empty() {
        scope(args)?
    } else {
        named_scope(args, "")?
    };
    scope.require_stack()?;
    scope.backend.unlock_all(&scope.project.name, &scope.stack);
    println!("The currently running update for '{}' has been canceled!", scope.stack);
    Ok(0)
}

/// `<project>:key` for a bare key; else the key as `config.ParseKey` reads it: one `:`, or the
/// old `ns:config:name` form, which is `ns:name` (`parseConfigKey`,
/// `sdk/go/common/resource/config/key.go`).
fn full_key(project: &Project, key: &str) -> Result<String, Failure> {
    if key.contains(':') {
        parse_key(key)
    } else {
        Ok(format!("{}:{key}", project.name))
    }
}

/// The key as messages show it: without the current project's namespace.
fn pretty_key(project: &Project, key: &str) -> String {
    key.strip_prefix(&format!("{}:", project.name))
        .unwrap_or(key)
        .to_string()
}

/// The real plaintext guard uses zxcvbn; this keeps its spirit: a secret-looking key with a
/// value of mixed character classes must be stored with --secret (or --plaintext on purpose).
fn looks_like_secret(key: &str, value: &str) -> bool {
    let k = key.to_ascii_lowercase();
    let named = ["passwd", "pass", "password", "pwd", "secret", "token"]
        .iter()
        .any(|w| k.contains(w));
    let classes = [
        value.chars().any(|c| c.is_ascii_lowercase()),
        value.chars().any(|c| c.is_ascii_uppercase()),
        value.chars().any(|c| c.is_ascii_digit()),
        value.chars().any(|c| !c.is_ascii_alphanumeric()),
    ];
    named && value.len() >= 10 && classes.iter().filter(|c| **c).count() >= 3
}

pub fn config_set(args: &Args) -> Result<i32, Failure> {
    let exclusive =
        ["secret", "plaintext"].iter().filter(|f| args.flag(f)).count() + usize::from(args.value("type").is_some());
    if exclusive > 1 {
        return Err(fail("only one of --secret, --plaintext and --type may be set"));
    }
    let scope = scope(args)?;
    scope.require_stack()?;
    let Some(key) = args.positionals.first() else {
        return Err(fail("requires at least 1 arg(s), only received 0"));
    };
    let key = full_key(&scope.project, key)?;
    let value = match args.positionals.get(1) {
        Some(v) => v.clone(),
        None if !std::io::stdin().is_terminal() => {
            let mut v = String::new();
            std::io::stdin()
                .read_to_string(&mut v)
                .map_err(|e| fail(e.to_string()))?;
            // One trailing newline goes (`cmdutil.RemoveTrailingNewline`; `\r` too on Windows
            // only), unless --raw: a value's own line ends are kept.
            if !args.flag("raw") && v.ends_with('\n') {
                v.pop();
            }
            v
        }
        None => return Err(fail("config value must be specified in non-interactive mode")),
    };
    let mut cfg = scope.stack_config(args)?;
    if args.flag("path") {
        let (top, path) = split_path(&key)?;
        let leaf = if args.flag("secret") {
            let (crypter, _) = scope.crypter(&mut cfg, "")?;
            json!({ "secure": crypter.encrypt(&value) })
        } else if value == "true" || value == "false" {
            Value::Bool(value == "true")
        } else if let Ok(n) = value.parse::<i64>() {
            Value::from(n)
        } else {
            Value::String(value)
        };
        let mut root = cfg.values.get(&top).cloned().unwrap_or(Value::Null);
        set_at(&mut root, &path, leaf)?;
        cfg.set_structured(&top, &root);
        cfg.save()?;
        return Ok(0);
    }
    if args.flag("secret") {
        let (crypter, _) = scope.crypter(&mut cfg, "")?;
        cfg.set(&key, &crypter.encrypt(&value), true);
    } else {
        if !args.flag("plaintext") && looks_like_secret(&key, &value) {
            return Err(fail(format!(
                "config value for '{}' looks like a secret; rerun with --secret to encrypt it, or --plaintext if you meant to store in plaintext",
                pretty_key(&scope.project, &key)
            )));
        }
        cfg.set(&key, &value, false);
    }
    cfg.save()?;
    Ok(0)
}

/// The stack's configuration with project defaults, secrets decrypted only when `reveal`.
fn config_map(scope: &Scope, args: &Args, reveal: bool) -> Result<Map<String, Value>, Failure> {
    let mut cfg = scope.stack_config(args)?;
    let has_secret = cfg.values.values().any(|v| v.get("secure").is_some());
    let crypter = if reveal && has_secret {
        Some(scope.crypter(&mut cfg, "")?.0)
    } else {
        None
    };
    let mut out = Map::new();
    for (k, v) in &cfg.values {
        let entry = match (v.get("secure").and_then(Value::as_str), &crypter) {
            (Some(ct), Some(c)) => json!({ "value": c.decrypt(ct)?, "secret": true }),
            (Some(_), None) => json!({ "secret": true }),
            (None, _) => match v {
                Value::Object(_) | Value::Array(_) => {
                    json!({ "value": serde_json::to_string(v).expect("JSON"), "objectValue": v, "secret": false })
                }
                other => json!({ "value": as_config_string(other), "secret": false }),
            },
        };
        out.insert(k.clone(), entry);
    }
    // `ApplyProjectConfig`: the project's values and defaults fill in, unchecked.
    for d in &scope.project.config {
        if out.contains_key(&d.full) {
            continue;
        }
        if let Some(v) = d.value.as_ref().or(d.default.as_ref()) {
            out.insert(d.full.clone(), json!({ "value": as_config_string(v), "secret": false }));
        }
    }
    Ok(out)
}

pub fn config_get(args: &Args) -> Result<i32, Failure> {
    let scope = scope(args)?;
    scope.require_stack()?;
    let Some(key) = args.positionals.first() else {
        return Err(fail("accepts 1 arg(s), received 0"));
    };
    let full = full_key(&scope.project, key)?;
    if args.flag("path") {
        let (top, path) = split_path(&full)?;
        let map = config_map(&scope, args, true)?;
        let found = map.get(&top).and_then(|e| {
            let mut at = e.get("objectValue")?;
            for seg in &path {
                at = match seg {
                    Seg::Key(k) => at.get(k)?,
                    Seg::Index(i) => at.get(*i)?,
                };
            }
            Some(at.clone())
        });
        let Some(v) = found else {
            return Err(fail(format!(
                "configuration key '{}' not found for stack '{}'",
                pretty_key(&scope.project, &full),
                scope.stack
            )));
        };
        println!("{}", v.as_str().map_or_else(|| v.to_string(), str::to_string));
        return Ok(0);
    }
    // Only a secret value needs the passphrase (plain keys read without it, as the real CLI).
    let wanted_secret = scope
        .stack_config(args)?
        .values
        .get(&full)
        .is_some_and(|v| v.get("secure").is_some());
    let map = config_map(&scope, args, wanted_secret)?;
    let Some(entry) = map.get(&full) else {
        return Err(fail(format!(
            "configuration key '{}' not found for stack '{}'",
            pretty_key(&scope.project, &full),
            scope.stack
        )));
    };
    if args.flag("json") {
        println!("{}", serde_json::to_string_pretty(entry).expect("JSON"));
    } else {
        println!("{}", entry["value"].as_str().unwrap_or_default());
    }
    Ok(0)
}

pub fn config_list(args: &Args) -> Result<i32, Failure> {
    let scope = scope(args)?;
    scope.require_stack()?;
    let map = config_map(&scope, args, args.flag("show-secrets"))?;
    if args.flag("json") {
        println!("{}", serde_json::to_string_pretty(&Value::Object(map)).expect("JSON"));
    } else {
        println!("KEY  VALUE");
        for (k, v) in &map {
            let shown = if v["secret"] == true && v.get("value").is_none() {
                "[secret]".to_string()
            } else {
                v["value"].as_str().unwrap_or_default().to_string()
            };
            println!("{}  {shown}", pretty_key(&scope.project, k));
        }
    }
    Ok(0)
}

/// One step of a `--path` key: `.name`, `["name"]` or `[0]`.
enum Seg {
    Key(String),
    Index(usize),
}

/// `ns:top.a[0]["b.c"]` → (`ns:top`, [a, 0, b.c]); only the top segment carries the namespace.
fn split_path(key: &str) -> Result<(String, Vec<Seg>), Failure> {
    let bad = || fail(format!("invalid --path key: {key}"));
    let top_end = key.find(['.', '[']).unwrap_or(key.len());
    let top = key[..top_end].to_string();
    let mut rest = &key[top_end..];
    let mut segs = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            segs.push(Seg::Key(r[..end].to_string()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("[\"") {
            let end = r.find("\"]").ok_or_else(bad)?;
            segs.push(Seg::Key(r[..end].to_string()));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(bad)?;
            segs.push(Seg::Index(r[..end].parse().map_err(|_| bad())?));
            rest = &r[end + 1..];
        } else {
            return Err(bad());
        }
    }
    Ok((top, segs))
}

fn set_at(root: &mut Value, path: &[Seg], leaf: Value) -> Result<(), Failure> {
    let Some((first, rest)) = path.split_first() else {
        *root = leaf;
        return Ok(());
    };
    match first {
        Seg::Key(k) => {
            if !root.is_object() {
                *root = json!({});
            }
            let slot = root
                .as_object_mut()
                .expect("an object")
                .entry(k.clone())
                .or_insert(Value::Null);
            set_at(slot, rest, leaf)
        }
        Seg::Index(i) => {
            if !root.is_array() {
                *root = json!([]);
            }
            let a = root.as_array_mut().expect("an array");
            if *i > a.len() {
                return Err(fail(format!("array index {i} out of range")));
            }
            if *i == a.len() {
                a.push(Value::Null);
            }
            set_at(&mut a[*i], rest, leaf)
        }
    }
}
