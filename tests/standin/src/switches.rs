//! Test switches (environment variables only the stand-in reads) and the invocation log.
//!
//! - `PULUMI_STANDIN_FAIL=proj[:op],…`   fail that project's operation (`*` for every project)
//! - `PULUMI_STANDIN_DELAY_MS=proj=ms,…` spend that long in the operation (`*=ms` for all)
//! - `PULUMI_STANDIN_HANG=proj[:op],…`   never finish the operation until interrupted
//! - `PULUMI_STANDIN_SLOW_CANCEL=proj,…` the first SIGINT/SIGTERM is acknowledged, not obeyed
//! - `PULUMI_STANDIN_DRIFT=proj[:name],…` that resource (every one of the project without a
//!   name) was changed outside Pulumi: a refresh reads it changed
//! - `PULUMI_STANDIN_LOG=FILE`            append one JSON line per invocation
//! - `PULUMI_STANDIN_LOG_ENV=A,B`         extra environment variables to record in the log
//! - `PULUMI_STANDIN_KDF_ITERATIONS=N`    PBKDF2 rounds (the real CLI: 1,000,000)

use std::io::Write as _;
use std::time::SystemTime;

use serde_json::{Map, Value, json};

use crate::time;

fn entries(var: &str) -> Vec<String> {
    std::env::var(var)
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Does `proj[:op]` in the list match this project and operation?
fn matches(list: &[String], project: &str, op: &str) -> bool {
    list.iter().any(|e| {
        let (p, o) = e.split_once(':').map_or((e.as_str(), None), |(p, o)| (p, Some(o)));
        (p == project || p == "*") && o.is_none_or(|o| o == op)
    })
}

pub fn fails(project: &str, op: &str) -> bool {
    matches(&entries("PULUMI_STANDIN_FAIL"), project, op)
}

pub fn hangs(project: &str, op: &str) -> bool {
    matches(&entries("PULUMI_STANDIN_HANG"), project, op)
}

/// `PULUMI_STANDIN_DRIFT=proj[:name],…`: the cloud's copy of this resource differs from the
/// state's, as if someone changed it by hand.
pub fn drifted(project: &str, resource: &str) -> bool {
    matches(&entries("PULUMI_STANDIN_DRIFT"), project, resource)
}

/// `PULUMI_STANDIN_SLOW_CANCEL=proj,…`: the first SIGINT does not stop the operation.
pub fn slow_cancel(project: &str) -> bool {
    matches(&entries("PULUMI_STANDIN_SLOW_CANCEL"), project, "")
}

/// `PULUMI_STANDIN_KDF_ITERATIONS=N`: the key derivation's rounds, fewer than the real CLI's so
/// that hundreds of processes stay fast; salts made with them open only with the same count
/// (which a test build of the runner reads too, for its passphrase check).
pub fn kdf_rounds() -> u32 {
    std::env::var("PULUMI_STANDIN_KDF_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(pulumi_passphrase::ROUNDS)
}

pub fn delay_ms(project: &str) -> u64 {
    let mut any = 0;
    for e in entries("PULUMI_STANDIN_DELAY_MS") {
        if let Some((p, ms)) = e.split_once('=') {
            let ms = ms.trim().parse().unwrap_or(0);
            if p == project {
                return ms;
            }
            if p == "*" {
                any = ms;
            }
        }
    }
    any
}

/// Variables recorded by name; secret-looking ones only as "<set>", never their value.
const RECORDED: &[&str] = &[
    "PULUMI_BACKEND_URL",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "PULUMI_SKIP_UPDATE_CHECK",
    "PULUMI_STACK",
    "PULUMI_DEBUG_COMMANDS",
    "PULUMI_HOME",
    "KUBECONFIG",
    "CI",
];

fn sensitive(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["PASS", "SECRET", "TOKEN", "KEY"].iter().any(|w| n.contains(w))
}

/// Appends `{argv, cwd, env, start, end, exit, pid}` as one line (one `write`, `O_APPEND`, so
/// concurrent stand-ins do not interleave).
pub fn log(argv: &[String], cwd: &str, start: SystemTime, code: i32) {
    let Ok(path) = std::env::var("PULUMI_STANDIN_LOG") else {
        return;
    };
    let mut env = Map::new();
    let extra = entries("PULUMI_STANDIN_LOG_ENV");
    for name in RECORDED.iter().map(|s| (*s).to_string()).chain(extra) {
        if let Ok(v) = std::env::var(&name) {
            let shown = if sensitive(&name) { "<set>".to_string() } else { v };
            env.insert(name, Value::String(shown));
        }
    }
    let line = json!({
        "argv": argv,
        "cwd": cwd,
        "env": env,
        "start": start.duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()),
        "end": time::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()),
        "exit": code,
        "pid": std::process::id(),
    });
    let mut text = serde_json::to_string(&line).expect("JSON");
    text.push('\n');
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = f.write_all(text.as_bytes());
    }
}
