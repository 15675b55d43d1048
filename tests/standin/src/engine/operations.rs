//! `up`, `preview`, `refresh`, `destroy`: confirmation rules, the per-stack lock, program
//! evaluation, the checkpoint, history and backups, the human display, `preview --json`, and
//! engine events (`--json` on updates, `--event-log` when `PULUMI_DEBUG_COMMANDS` is set).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::backend::Backend;
use crate::cli::args::Args;
use crate::cli::commands::{Scope, scope};
use crate::cli::signals::{CANCELLED_WHILE_EVALUATING, LAST_SIGNAL, SIGNALS, signal_name};
use crate::fail::{Failure, cancelled, config_error, fail, no_changes_expected};
use crate::program::{self, Context, Evaluator};
use crate::secrets::crypto::Crypter;
use crate::secrets::secret::{SIG_KEY, SIG_SECRET, deep_reveal, is_secret, reveal};
use crate::workspace::stackconfig::StackConfig;
use crate::{switches, time};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Up,
    Preview,
    Refresh,
    Destroy,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Up => "up",
            Op::Preview => "preview",
            Op::Refresh => "refresh",
            Op::Destroy => "destroy",
        }
    }

    /// What `CancelledError` and history call it.
    fn kind(self) -> &'static str {
        match self {
            Op::Up => "update",
            Op::Preview => "preview",
            Op::Refresh => "refresh",
            Op::Destroy => "destroy",
        }
    }

    /// `ActionLabel` in `pkg/backend/apply.go`.
    fn label(self, preview: bool) -> &'static str {
        match (self, preview) {
            (Op::Up | Op::Preview, true) => "Previewing update",
            (Op::Up | Op::Preview, false) => "Updating",
            (Op::Refresh, true) => "Previewing refresh",
            (Op::Refresh, false) => "Refreshing",
            (Op::Destroy, true) => "Previewing destroy",
            (Op::Destroy, false) => "Destroying",
        }
    }
}

/// One resource change.
struct Step {
    op: &'static str,
    urn: String,
    ty: String,
    name: String,
    old: Option<Value>,
    new: Option<Value>,
}

/// Engine events, numbered, for `--json` (stdout) and `--event-log` (file).
struct Events {
    sequence: usize,
    stdout: bool,
    file: Option<std::fs::File>,
}

impl Events {
    /// The event log is opened as the display starts, once the stack is locked; a log that
    /// cannot be created is logged at -v=7 and done without (`display.startEventLogger`).
    fn open(args: &Args, stdout: bool) -> Self {
        Events {
            sequence: 0,
            stdout,
            file: args.value("event-log").and_then(|p| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .truncate(true)
                    .open(p)
                    .ok()
            }),
        }
    }

    fn emit(&mut self, key: &str, payload: Value) {
        if !self.stdout && self.file.is_none() {
            return;
        }
        let line = json!({ "sequence": self.sequence, "timestamp": time::unix_seconds(), key: payload });
        self.sequence += 1;
        let text = serde_json::to_string(&line).expect("JSON") + "\n";
        if self.stdout {
            print!("{text}");
        }
        if let Some(f) = &mut self.file {
            let _ = f.write_all(text.as_bytes());
        }
    }
}

pub fn interactive(args: &Args) -> bool {
    use std::io::IsTerminal as _;
    !args.flag("non-interactive")
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
        && std::env::var("CI").is_err()
}

/// Waits `ms` (forever when `None`) unless a signal arrives: `Err(cancelled)` then. With
/// `slow_cancel`, the first signal is acknowledged but the work goes on (a cancellation that
/// takes long); the second one terminates it: the engine returns at once, without waiting for
/// the work (`pkg/engine/deployment.go`), and the operation ends as cancelled all the same
/// (`context.Canceled`, `pkg/cmd/pulumi/operations/up.go`).
fn work(ms: Option<u64>, op: Op, slow_cancel: bool) -> Result<(), Failure> {
    let start = Instant::now();
    let mut acknowledged = false;
    loop {
        let signals = SIGNALS.load(Ordering::SeqCst);
        if signals > 0 && !acknowledged {
            acknowledged = true;
            acknowledge(op);
        }
        if signals > 1 || (signals > 0 && !slow_cancel) {
            return Err(cancelled(op.kind()));
        }
        let tick = Duration::from_millis(10);
        match ms.map(|ms| Duration::from_millis(ms).saturating_sub(start.elapsed())) {
            Some(left) if left.is_zero() => return Ok(()),
            // Sleep exactly what is left (at most a tick), so delays do not overshoot.
            Some(left) => std::thread::sleep(left.min(tick)),
            None => std::thread::sleep(tick),
        }
    }
}

/// What the engine prints on the first SIGINT/SIGTERM of an operation.
fn acknowledge(op: Op) {
    let (name, again) = match signal_name(LAST_SIGNAL.load(Ordering::SeqCst)) {
        "SIGTERM" => ("SIGTERM", "send SIGTERM again"),
        _ => ("^C", "press ^C again"),
    };
    print!(
        "{name} received; cancelling. If you would like to terminate immediately, {again}.\n{}",
        if op == Op::Preview {
            ""
        } else {
            "Note that terminating immediately may lead to orphaned resources and other inconsistencies.\n"
        }
    );
    let _ = std::io::stdout().flush();
}

pub fn run(args: &Args, op: Op) -> Result<i32, Failure> {
    let started = Instant::now();
    let scope = scope(args)?;
    scope.require_stack()?;
    // A --refresh that is no boolean fails before anything runs; `options.refresh: always` in
    // Pulumi.yaml refreshes without the flag (`getRefreshOption`).
    let refresh_first = op != Op::Refresh && args.refresh(scope.project.doc["options"]["refresh"] == "always")?;
    let json_out = args.flag("json");
    if op != Op::Preview {
        confirmed(args, op)?;
    }

    let mut cfg = scope.stack_config(args)?;
    set_config_flags(args, &scope, &mut cfg)?;
    let (crypter, passphrase) = scope.crypter(&mut cfg, "getting stack configuration: get stack secrets manager: ")?;
    check_config(args, op, &scope, &cfg, &crypter)?;
    let preview_only = op == Op::Preview || args.flag("preview-only");
    let _lock = if preview_only {
        None
    } else {
        Some(scope.backend.lock(&scope.project.name, &scope.stack)?)
    };
    let mut events = Events::open(args, json_out && op != Op::Preview);

    let ctx = Context {
        project: &scope.project,
        stack: &scope.stack,
        config: &cfg.values,
        backend: &scope.backend,
        crypter: &crypter,
        passphrase: &passphrase,
    };
    let old = deployed(&scope)?;
    // A refresh reads every resource back from the cloud: `refresh` records what it read,
    // `up`/`preview --refresh` compare the program with it rather than with the state.
    let refreshes = op == Op::Refresh || (matches!(op, Op::Up | Op::Preview) && refresh_first);
    let cloud = refreshes.then(|| as_in_cloud(&scope.project.name, &old, &ctx));

    let human = !json_out;
    if human {
        // With --yes alone the real CLI previews first, then updates.
        let previews_first = op != Op::Preview && !args.flag("skip-preview") && !preview_only;
        print_header(op, preview_only, previews_first, &scope.stack);
    }

    events.emit("preludeEvent", json!({ "config": prelude(&cfg) }));
    let mut end = Ending {
        scope: &scope,
        op,
        cfg: &cfg,
        started,
        preview_only,
        human,
        events,
    };
    if let Some(code) = end.test_switches()? {
        return Ok(code);
    }

    let mut warnings: Vec<String> = Vec::new();
    let (steps, outputs) = match op {
        Op::Up | Op::Preview => {
            let evaluated = Evaluator::new(&ctx)?.run();
            if let Err(f) = &evaluated
                && f.code == CANCELLED_WHILE_EVALUATING
            {
                return Err(end.cancelled_while_evaluating()?);
            }
            let evaluated = evaluated.map_err(|f| end.evaluation_failed(f))?;
            warnings.clone_from(&evaluated.warnings);
            plan_update(&scope, cloud.as_deref().unwrap_or(&old), evaluated)
        }
        Op::Refresh => (refresh_steps(&old, cloud.as_deref().unwrap_or(&old)), None),
        Op::Destroy => (destroy_steps(&old), None),
    };
    for line in &warnings {
        end.events.emit(
            "diagnosticEvent",
            json!({ "urn": root_urn(&scope), "message": format!("{line}\n"), "color": "never", "severity": "info#err" }),
        );
    }
    let changes = counted(&steps);

    end.steps(&steps);

    if !preview_only {
        end.save(&steps, cloud, &crypter, &changes)?;
    }
    end.events.emit(
        "summaryEvent",
        summary_event(&changes, started, preview_only, "succeeded"),
    );
    end.events.emit("cancelEvent", json!({}));

    if json_out && op == Op::Preview {
        print_digest(&cfg, &steps, started, &changes);
    } else if human {
        print_human(
            op,
            preview_only,
            &scope,
            &steps,
            outputs.as_ref(),
            &changes,
            started,
            &warnings,
        );
    }
    // Checked once the operation is done and shown (`pkg/cmd/pulumi/operations/{up,preview,
    // refresh}.go`); destroy has no such flag.
    if args.flag("expect-no-changes") && op != Op::Destroy && has_changes(&changes) {
        return Err(no_changes_expected(if op == Op::Up { "update" } else { op.name() }));
    }
    Ok(0)
}

/// The resources of the stack's last checkpoint (none for a new stack).
fn deployed(scope: &Scope) -> Result<Vec<Value>, Failure> {
    let cp = scope
        .backend
        .checkpoint(&scope.project.name, &scope.stack)?
        .unwrap_or_default();
    Ok(cp["checkpoint"]["latest"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// What an update's events and its history need however it ends, and the ways it ends early.
struct Ending<'a> {
    scope: &'a Scope,
    op: Op,
    cfg: &'a StackConfig,
    started: Instant,
    preview_only: bool,
    human: bool,
    events: Events,
}

impl Ending<'_> {
    /// Ends having changed nothing: the summary (`result`) and cancel events, and in the history
    /// a failed update (`diyBackend.apply`); the lock is released on the way out.
    fn ended_with_nothing(&mut self, result: &str) -> Result<(), Failure> {
        let nothing = BTreeMap::new();
        self.events.emit(
            "summaryEvent",
            summary_event(&nothing, self.started, self.preview_only, result),
        );
        self.events.emit("cancelEvent", json!({}));
        if !self.preview_only {
            record(self.scope, self.op, self.cfg, self.started, "failed", &nothing)?;
        }
        Ok(())
    }

    /// The test switches: time spent in the operation, a hang (both cancellable), an injected
    /// failure. `Some(code)` when the operation ends here.
    fn test_switches(&mut self) -> Result<Option<i32>, Failure> {
        let project = self.scope.project.name.clone();
        let delay = switches::delay_ms(&project);
        let hang = switches::hangs(&project, self.op.name());
        let slow = switches::slow_cancel(&project);
        if let Err(f) = work(if hang { None } else { Some(delay) }, self.op, slow) {
            self.ended_with_nothing("canceled")?;
            return Err(f);
        }
        if !switches::fails(&project, self.op.name()) {
            return Ok(None);
        }
        let message = format!(
            "injected failure for {project} ({}) by PULUMI_STANDIN_FAIL",
            self.op.name()
        );
        self.events.emit(
            "diagnosticEvent",
            json!({ "urn": root_urn(self.scope), "prefix": "error: ", "message": format!("{message}\n"), "color": "never", "severity": "error" }),
        );
        if self.human {
            println!(
                "Diagnostics:\n  pulumi:pulumi:Stack ({project}-{}):\n    error: {message}\n",
                self.scope.stack
            );
            println!("Resources:\n\nDuration: {}s", self.started.elapsed().as_secs());
        }
        self.ended_with_nothing("failed")?;
        Ok(Some(1))
    }

    /// Cancelled while the program ran (its language host blocked in a call): the CLI (v3.274.1)
    /// fails the stack's resource with `update canceled` and exits 1, with no `error:` line of
    /// its own.
    fn cancelled_while_evaluating(&mut self) -> Result<Failure, Failure> {
        acknowledge(self.op);
        let canceled = format!("{} canceled", self.op.kind());
        self.events.emit(
            "diagnosticEvent",
            json!({ "urn": root_urn(self.scope), "prefix": "error: ", "message": format!("{canceled}\n"), "color": "never", "severity": "error" }),
        );
        if self.human {
            let (project, stack) = (&self.scope.project.name, &self.scope.stack);
            println!("\n    pulumi:pulumi:Stack {project}-{stack}  error: {canceled}");
            println!("    pulumi:pulumi:Stack {project}-{stack} **failed** 1 error");
            println!("Diagnostics:\n  pulumi:pulumi:Stack ({project}-{stack}):\n    error: {canceled}\n");
            println!(
                "Resources:\n    1 errored\n\nDuration: {}s",
                self.started.elapsed().as_secs()
            );
        }
        self.ended_with_nothing("canceled")?;
        Ok(Failure {
            message: String::new(),
            code: 1,
            diagnostics: Vec::new(),
        })
    }

    /// A program the language host refused or that failed as it ran: its diagnostics as events
    /// and as the language host prints them; the history keeps nothing of it.
    fn evaluation_failed(&mut self, f: Failure) -> Failure {
        let root = root_urn(self.scope);
        for line in &f.diagnostics {
            self.events.emit(
                "diagnosticEvent",
                json!({ "urn": root, "message": format!("{line}\n"), "color": "never", "severity": "info#err" }),
            );
        }
        if !f.message.is_empty() {
            self.events.emit(
                "diagnosticEvent",
                json!({ "urn": root, "prefix": "error: ", "message": format!("{}\n", f.message), "color": "never", "severity": "error" }),
            );
        }
        self.events.emit(
            "summaryEvent",
            summary_event(&BTreeMap::new(), self.started, self.preview_only, "failed"),
        );
        self.events.emit("cancelEvent", json!({}));
        if self.human {
            println!(
                "Diagnostics:\n  pulumi:pulumi:Stack ({}-{}):",
                self.scope.project.name, self.scope.stack
            );
            for line in &f.diagnostics {
                // Pulumi YAML colours its report whatever it writes to (its
                // `NewDiagnosticWriter(os.Stderr, 0, true)`); the event log has none.
                match line.strip_prefix("Error: ") {
                    Some(rest) => println!("    \u{1b}[31mError\u{1b}[0m: {rest}"),
                    None => println!("    {line}"),
                }
            }
            if !f.message.is_empty() {
                println!("    error: {}", f.message);
            }
            println!();
        }
        f
    }

    /// The new checkpoint (an up's resources, a refresh's reading) and its record in the history.
    fn save(
        &mut self,
        steps: &[Step],
        cloud: Option<Vec<Value>>,
        crypter: &Crypter,
        changes: &BTreeMap<String, u64>,
    ) -> Result<(), Failure> {
        let resources = match self.op {
            Op::Up => Some(
                steps
                    .iter()
                    .filter(|s| !matches!(s.op, "delete" | "discard"))
                    .filter_map(|s| s.new.as_ref().map(|v| encrypt_state(v, crypter)))
                    .collect(),
            ),
            Op::Refresh => cloud,
            _ => None,
        };
        let salt = self.cfg.salt.clone().expect("the crypter set the salt");
        let (project, stack) = (&self.scope.project.name, &self.scope.stack);
        self.scope
            .backend
            .save(project, stack, &Backend::deployment(&salt, resources))?;
        record(self.scope, self.op, self.cfg, self.started, "succeeded", changes)
    }

    /// Each step as the engine announces it: `resourcePreEvent`, then (an update that applies
    /// it) `resOutputsEvent`.
    fn steps(&mut self, steps: &[Step]) {
        for s in steps {
            let meta = |v: &Option<Value>| v.as_ref().map(event_state);
            // A refresh's events carry the step's own op; its summary counts what it found
            // (`RefreshStep.ResultOp`, pkg/engine/update.go).
            let metadata = json!({
                "op": if self.op == Op::Refresh { "refresh" } else { s.op }, "urn": s.urn, "type": s.ty,
                "old": meta(&s.old), "new": meta(&s.new),
                "detailedDiff": Value::Null, "provider": "",
            });
            let mut pre = json!({ "metadata": metadata.clone() });
            // The top-level input keys that differ, as the engine lists them for an update or a
            // replacement (`StepEventMetadata.Diffs`; absent otherwise).
            if matches!(s.op, "update" | "replace")
                && let (Some(old), Some(new)) = (&s.old, &s.new)
            {
                pre["metadata"]["diffs"] = json!(diff_keys(&old["inputs"], &new["inputs"]));
            }
            if self.preview_only {
                pre["planning"] = Value::Bool(true);
            }
            self.events.emit("resourcePreEvent", pre);
            if !self.preview_only {
                self.events.emit("resOutputsEvent", json!({ "metadata": metadata }));
            }
        }
    }
}

/// The stack's configuration as the prelude event shows it: secure values as `[secret]`.
fn prelude(cfg: &StackConfig) -> Map<String, Value> {
    cfg.values
        .iter()
        .map(|(k, v)| {
            let shown = if v.get("secure").is_some() {
                Value::String("[secret]".into())
            } else {
                v.clone()
            };
            (k.clone(), shown)
        })
        .collect()
}

/// The confirmation rules of an update (`updateFlagsToOptions`, operations/io.go): what
/// `--yes`, `--skip-preview`, `--preview-only` and `PULUMI_SKIP_CONFIRMATIONS` allow, and the
/// stand-in never prompts.
fn confirmed(args: &Args, op: Op) -> Result<(), Failure> {
    let yes = args.flag("yes")
        || args.flag("skip-preview")
        || std::env::var("PULUMI_SKIP_CONFIRMATIONS").is_ok_and(|v| crate::cli::args::truthy(&v));
    // After --skip-preview and PULUMI_SKIP_CONFIRMATIONS have made `yes` true.
    if args.flag("preview-only") {
        if args.flag("skip-preview") {
            return Err(fail("--skip-preview and --preview-only cannot be used together"));
        }
        if yes {
            return Err(fail("--yes and --preview-only cannot be used together"));
        }
    }
    if !interactive(args) && !yes && !args.flag("preview-only") {
        let message = "--yes or --skip-preview or --preview-only must be passed in to proceed when running in non-interactive mode";
        // `refresh` returns it as a plain error (exit 1); up and destroy as a configuration error (2).
        return Err(if op == Op::Refresh {
            fail(message)
        } else {
            config_error(message)
        });
    }
    if !yes && !args.flag("preview-only") {
        return Err(fail("the pulumi stand-in cannot prompt for confirmation: pass --yes"));
    }
    Ok(())
}

/// `--config key=value`: each written into the stack's configuration before the update (a
/// key without a namespace takes the project's).
fn set_config_flags(args: &Args, scope: &Scope, cfg: &mut StackConfig) -> Result<(), Failure> {
    for kv in args.values("config") {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(fail(format!(
                "could not parse --config value '{kv}': expected key=value"
            )));
        };
        let k = if k.contains(':') {
            k.to_string()
        } else {
            format!("{}:{k}", scope.project.name)
        };
        cfg.set(&k, v, false);
        cfg.save()?;
    }
    Ok(())
}

/// The stack's values against the project's `config:` block: `destroy` and `refresh` check
/// them only when they run the program (`--run-program`, `PULUMI_RUN_PROGRAM`); otherwise
/// project defaults apply, unchecked.
fn check_config(args: &Args, op: Op, scope: &Scope, cfg: &StackConfig, crypter: &Crypter) -> Result<(), Failure> {
    let runs_program = matches!(op, Op::Up | Op::Preview)
        || args.flag("run-program")
        || std::env::var("PULUMI_RUN_PROGRAM").is_ok_and(|v| crate::cli::args::truthy(&v));
    if runs_program && !args.flag("skip-config-validation") {
        crate::program::projconfig::check_stack(
            &scope.project.name,
            &scope.stack,
            &scope.project.config,
            &cfg.values,
            crypter,
        )?;
    }
    Ok(())
}

/// `Previewing update (dev):` and the like, as the display opens.
fn print_header(op: Op, preview_only: bool, previews_first: bool, stack: &str) {
    if previews_first {
        println!("{} ({stack}):\n", op.label(true));
    }
    println!("{} ({stack}):\n", op.label(preview_only));
    let _ = std::io::stdout().flush();
}

/// How many steps of each kind (create, update, same…).
fn counted(steps: &[Step]) -> BTreeMap<String, u64> {
    let mut changes: BTreeMap<String, u64> = BTreeMap::new();
    for s in steps {
        *changes.entry(s.op.to_string()).or_default() += 1;
    }
    changes
}

/// `engine.HasChanges`: any step but keeping, reading or discarding a read resource.
fn has_changes(changes: &BTreeMap<String, u64>) -> bool {
    changes
        .iter()
        .any(|(op, n)| *n > 0 && !matches!(op.as_str(), "same" | "read" | "discard" | "read-replacement"))
}

fn root_urn(scope: &Scope) -> String {
    let p = &scope.project.name;
    format!(
        "urn:pulumi:{}::{p}::pulumi:pulumi:Stack::{p}-{}",
        scope.stack, scope.stack
    )
}

/// Steps of an update: the root stack and every resource, compared with the old state.
fn plan_update(scope: &Scope, old: &[Value], ev: program::Evaluated) -> (Vec<Step>, Option<Map<String, Value>>) {
    let root = root_urn(scope);
    let old_by_urn: BTreeMap<String, &Value> = old
        .iter()
        .filter_map(|r| r["urn"].as_str().map(|u| (u.to_string(), r)))
        .collect();
    let mut steps = Vec::new();
    let root_state = json!({
        "urn": root, "custom": false, "type": "pulumi:pulumi:Stack",
        "outputs": Value::Object(ev.outputs.clone()),
        "created": time::rfc3339(time::now()), "modified": time::rfc3339(time::now()),
    });
    let root_old = old_by_urn.get(&root).map(|v| (*v).clone());
    steps.push(Step {
        op: if root_old.is_some() { "same" } else { "create" },
        urn: root.clone(),
        ty: "pulumi:pulumi:Stack".into(),
        name: format!("{}-{}", scope.project.name, scope.stack),
        old: root_old,
        new: Some(root_state),
    });
    let mut seen = vec![root.clone()];
    for (name, ty, inputs, outputs, read) in ev.resources {
        let urn = outputs["urn"].as_str().map_or_else(
            || format!("urn:pulumi:{}::{}::{ty}::{name}", scope.stack, scope.project.name),
            str::to_string,
        );
        let prior = old_by_urn.get(&urn).map(|v| (*v).clone());
        let op = match &prior {
            // Read again on every update, never created (`external` in the state).
            _ if read => "read",
            None => "create",
            Some(p)
                if deep_reveal(&p["inputs"]) != deep_reveal(&inputs) && !is_encrypted_equal(&p["inputs"], &inputs) =>
            {
                "update"
            }
            Some(_) => "same",
        };
        let id = outputs["id"].as_str().unwrap_or_default().to_string();
        let mut state = json!({
            "urn": urn, "custom": true, "id": id, "type": ty,
            "inputs": inputs, "outputs": outputs, "parent": root,
        });
        if read {
            state["external"] = Value::Bool(true);
        }
        seen.push(urn.clone());
        steps.push(Step {
            op,
            urn,
            ty,
            name,
            old: prior,
            new: Some(state),
        });
    }
    for (urn, r) in &old_by_urn {
        if !seen.contains(urn) {
            steps.push(Step {
                op: "delete",
                urn: urn.clone(),
                ty: r["type"].as_str().unwrap_or_default().to_string(),
                name: urn.rsplit("::").next().unwrap_or_default().to_string(),
                old: Some((*r).clone()),
                new: None,
            });
        }
    }
    (steps, Some(ev.outputs))
}

/// Old inputs are stored with secrets encrypted; new inputs hold them in plain text. Values
/// that only differ by encryption are the same: compare them as displayed, secrets masked.
fn is_encrypted_equal(old: &Value, new: &Value) -> bool {
    display_state(old) == display_state(new)
}

/// A step over a resource of the previous state: `same` (refresh keeps it) or `delete`.
fn step_on_old(r: &Value, op: &'static str) -> Step {
    let urn = r["urn"].as_str().unwrap_or_default();
    Step {
        op,
        urn: urn.to_string(),
        ty: r["type"].as_str().unwrap_or_default().to_string(),
        name: urn.rsplit("::").next().unwrap_or_default().to_string(),
        old: Some(r.clone()),
        new: (op != "delete").then(|| r.clone()),
    }
}

/// Each resource of the state against the cloud's copy: `update` where they differ.
fn refresh_steps(old: &[Value], cloud: &[Value]) -> Vec<Step> {
    old.iter()
        .zip(cloud)
        .map(|(r, now)| Step {
            new: Some(now.clone()),
            ..step_on_old(r, if r == now { "same" } else { "update" })
        })
        .collect()
}

/// The resources as the cloud holds them: those `PULUMI_STANDIN_DRIFT` names were changed by
/// hand (an input and an output `changedOutsidePulumi`). The stack resource and what was only
/// read are not this stack's to drift, but a stack reference reads its stack again: what the
/// referenced stack's outputs are now (`builtinProvider.Read`, `pkg/resource/deploy/builtins.go`).
fn as_in_cloud(project: &str, state: &[Value], ctx: &Context<'_>) -> Vec<Value> {
    state
        .iter()
        .map(|r| {
            if r["type"] == "pulumi:pulumi:StackReference" {
                return reference_now(r, ctx).unwrap_or_else(|| r.clone());
            }
            let name = r["urn"]
                .as_str()
                .unwrap_or_default()
                .rsplit("::")
                .next()
                .unwrap_or_default();
            let mut now = r.clone();
            if r["custom"] == true && r["external"] != true && switches::drifted(project, name) {
                now["inputs"]["changedOutsidePulumi"] = Value::Bool(true);
                now["outputs"]["changedOutsidePulumi"] = Value::Bool(true);
            }
            now
        })
        .collect()
}

/// A stack reference of the state as its stack's outputs are now: itself when they read the
/// same (secrets compared by their plaintext), else with the new outputs (encrypted as the
/// state keeps them). `None` when it cannot be read (then it stays as it was).
fn reference_now(r: &Value, ctx: &Context<'_>) -> Option<Value> {
    let name = r["urn"].as_str()?.rsplit("::").next()?;
    let now = Evaluator::new(ctx).ok()?.read_reference(name, &r["inputs"]).ok()?;
    let mut open = |ct: &str| Ok(crate::secrets::crypto::plaintext_value(ctx.crypter.decrypt(ct)?));
    let (was, _) = crate::secrets::crypto::open_secrets(&r["outputs"]["outputs"], &mut open).ok()?;
    if deep_reveal(&now["outputs"]) == was {
        return Some(r.clone());
    }
    let mut changed = r.clone();
    changed["outputs"]["outputs"] = encrypt_state(&now["outputs"], ctx.crypter);
    changed["outputs"]["secretOutputNames"] = now["secretOutputNames"].clone();
    Some(changed)
}

/// Dependents were registered after what they depend on: delete in reverse.
fn destroy_steps(old: &[Value]) -> Vec<Step> {
    // What was only read is dropped from the state, not deleted (`discard`).
    old.iter()
        .rev()
        .map(|r| step_on_old(r, if r["external"] == true { "discard" } else { "delete" }))
        .collect()
}

/// State as written to the checkpoint: every secret encrypted with the stack's key.
fn encrypt_state(v: &Value, crypter: &Crypter) -> Value {
    if is_secret(v) {
        let (plain, _) = reveal(v);
        let text = serde_json::to_string(&deep_reveal(&plain)).expect("JSON");
        return json!({ SIG_KEY: SIG_SECRET, "ciphertext": crypter.encrypt(&text) });
    }
    match v {
        Value::Array(a) => Value::Array(a.iter().map(|x| encrypt_state(x, crypter)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), encrypt_state(x, crypter))).collect()),
        other => other.clone(),
    }
}

/// State as engine events carry it: each secret kept as a secret (the signature key) with the
/// blinded ciphertext `[secret]`, so a reader knows which values are secret and none of them.
/// The real CLI converts events with `ConvertEngineEvent(e, false /* showSecrets */)`
/// (`pkg/backend/display/display.go` `logJSONEvent`), which serializes state through
/// `stack.SerializePropertyValue` with `config.BlindingCrypter` (`pkg/backend/display/events.go`
/// `convertStepEventStateMetadata`, `sdk/go/common/resource/config/crypt.go`).
/// The keys whose values differ between two input objects, sorted.
fn diff_keys(old: &Value, new: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let (old, new) = (old.as_object().unwrap_or(&empty), new.as_object().unwrap_or(&empty));
    let keys: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    keys.into_iter()
        .filter(|k| old.get(*k) != new.get(*k))
        .cloned()
        .collect()
}

fn event_state(v: &Value) -> Value {
    if is_secret(v) || v.get("ciphertext").is_some() {
        return json!({ SIG_KEY: SIG_SECRET, "ciphertext": "[secret]" });
    }
    match v {
        Value::Array(a) => Value::Array(a.iter().map(event_state).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), event_state(x))).collect()),
        other => other.clone(),
    }
}

/// State as shown in digests: secrets as `[secret]`.
fn display_state(v: &Value) -> Value {
    if is_secret(v) || v.get("ciphertext").is_some() {
        return Value::String("[secret]".into());
    }
    match v {
        Value::Array(a) => Value::Array(a.iter().map(display_state).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), display_state(x))).collect()),
        other => other.clone(),
    }
}

fn summary_event(changes: &BTreeMap<String, u64>, started: Instant, preview: bool, result: &str) -> Value {
    json!({
        "maybeCorrupt": false,
        "durationSeconds": started.elapsed().as_secs(),
        "resourceChanges": changes,
        "PolicyPacks": {},
        "isPreview": preview,
        "result": result,
    })
}

fn record(
    scope: &Scope,
    op: Op,
    cfg: &StackConfig,
    started: Instant,
    result: &str,
    changes: &BTreeMap<String, u64>,
) -> Result<(), Failure> {
    let config: Map<String, Value> = cfg
        .values
        .iter()
        .map(|(k, v)| {
            let entry = if v.get("secure").is_some() {
                json!({ "secret": true })
            } else {
                json!({ "value": crate::workspace::stackconfig::as_config_string(v), "secret": false })
            };
            (k.clone(), entry)
        })
        .collect();
    let now = time::unix_seconds();
    let start = now.saturating_sub(started.elapsed().as_secs());
    let info = json!({
        "kind": op.kind(), "startTime": start, "message": "",
        "environment": { "exec.kind": "cli" }, "config": config, "version": 0,
        "result": result, "endTime": now, "resourceChanges": changes,
    });
    scope.backend.record(&scope.project.name, &scope.stack, &info)
}

/// `preview --json`: one 4-space-indented digest (`pkg/display/json.go` `PreviewDigest`).
fn print_digest(cfg: &StackConfig, steps: &[Step], started: Instant, changes: &BTreeMap<String, u64>) {
    let config: Map<String, Value> = cfg
        .values
        .iter()
        .map(|(k, v)| {
            let shown = if v.get("secure").is_some() {
                Value::String("[secret]".into())
            } else {
                Value::String(crate::workspace::stackconfig::as_config_string(v))
            };
            (k.clone(), shown)
        })
        .collect();
    let steps: Vec<Value> = steps
        .iter()
        .map(|s| {
            let mut o = json!({ "op": s.op, "urn": s.urn });
            if let Some(v) = &s.old {
                o["oldState"] = display_state(v);
            }
            if let Some(v) = &s.new {
                let mut shown = display_state(v);
                // The digest keeps the root stack's pre-step state: outputs registered during
                // the run are not in it (pkg/display/json.go).
                if s.ty == "pulumi:pulumi:Stack"
                    && let Some(m) = shown.as_object_mut()
                {
                    m.remove("outputs");
                }
                o["newState"] = shown;
            }
            o["detailedDiff"] = Value::Null;
            o
        })
        .collect();
    let mut digest = Map::new();
    if !config.is_empty() {
        digest.insert("config".into(), Value::Object(config));
    }
    if !steps.is_empty() {
        digest.insert("steps".into(), Value::Array(steps));
    }
    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX).max(1);
    digest.insert("duration".into(), Value::from(nanos));
    if !changes.is_empty() {
        digest.insert("changeSummary".into(), json!(changes));
    }
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(&Value::Object(digest), &mut ser).expect("JSON");
    println!("{}", String::from_utf8_lossy(&buf));
}

#[allow(clippy::too_many_arguments)]
fn print_human(
    op: Op,
    preview: bool,
    scope: &Scope,
    steps: &[Step],
    outputs: Option<&Map<String, Value>>,
    changes: &BTreeMap<String, u64>,
    started: Instant,
    warnings: &[String],
) {
    if !steps.is_empty() {
        let tw = steps.iter().map(|s| s.ty.len()).max().unwrap_or(4).max(4);
        let nw = steps.iter().map(|s| s.name.len()).max().unwrap_or(4).max(4);
        println!("     {:<tw$}  {:<nw$}  Status", "Type", "Name");
        for (i, s) in steps.iter().enumerate() {
            let (sym, status) = match (s.op, preview) {
                ("create", true) => ("+ ", "create"),
                ("create", false) => ("+ ", "created"),
                ("update", true) => ("~ ", "update"),
                ("update", false) => ("~ ", "updated"),
                ("delete", true) => ("- ", "delete"),
                ("delete", false) => ("- ", "deleted"),
                _ => ("  ", ""),
            };
            let tree = if i == 0 {
                ""
            } else if i + 1 == steps.len() {
                "└─ "
            } else {
                "├─ "
            };
            let ty = format!("{tree}{}", s.ty);
            println!(" {sym}  {ty:<tw$}  {:<nw$}  {status}", s.name, tw = tw + 3);
        }
        println!();
    }
    if !warnings.is_empty() {
        println!(
            "Diagnostics:\n  pulumi:pulumi:Stack ({}-{}):",
            scope.project.name, scope.stack
        );
        for line in warnings {
            println!("    {line}");
        }
        println!();
    }
    if let Some(out) = outputs
        && !out.is_empty()
        && op == Op::Up
    {
        println!("Outputs:");
        let width = out.keys().map(String::len).max().unwrap_or(0);
        // Each secret `[secret]` where it is: the rest of a value secret in part is shown.
        for (k, v) in out {
            let shown = match display_state(v) {
                Value::String(s) if s == "[secret]" => s,
                other => other.to_string(),
            };
            println!("    {k:<width$}: {shown}");
        }
        println!();
    }
    println!("Resources:");
    let verb = |n: &str| -> String {
        match (n, preview) {
            ("create", true) => "to create".into(),
            ("create", false) => "created".into(),
            ("update", true) => "to update".into(),
            ("update", false) => "updated".into(),
            ("delete", true) => "to delete".into(),
            ("delete", false) => "deleted".into(),
            (other, _) => other.into(),
        }
    };
    let mut kinds = 0;
    let mut changed = 0;
    for (op_name, sym) in [("create", "+"), ("update", "~"), ("delete", "-")] {
        if let Some(n) = changes.get(op_name) {
            println!("    {sym} {n} {}", verb(op_name));
            kinds += 1;
            changed += n;
        }
    }
    let same = changes.get("same").copied().unwrap_or(0);
    if kinds >= 2 {
        println!("    {changed} changes. {same} unchanged");
    } else if same > 0 {
        println!("    {same} unchanged");
    }
    println!();
    if !preview {
        println!("Duration: {}s", started.elapsed().as_secs());
    }
    if op == Op::Destroy && !preview {
        println!(
            "\nThe resources in the stack have been deleted, but the history and configuration associated with the stack are still maintained. \nIf you want to remove the stack completely, run `pulumi stack rm {}`.",
            scope.stack
        );
    }
    let _ = std::io::stdout().flush();
}
