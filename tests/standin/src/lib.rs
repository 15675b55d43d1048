//! `pulumi` stand-in: a test double of the Pulumi CLI v3.259.0 and its file backend, so the
//! runner's tests drive real processes with the real CLI's flags, JSON shapes, messages, exit
//! codes and state layout. See README.md beside this crate for every behaviour and its source.
//!
//! A library with one binary, `pulumi` (the stand-in, [`pulumi_main`]); its type checker of
//! Pulumi YAML programs ([`check`]) and its reader of `scripts/provider-versions`
//! ([`workspace::pins`]) are also what `check-programs` (`tests/check-programs`) checks the
//! programs under `projects/` with.
#![allow(clippy::print_stderr, unreachable_pub)]
// A test double that follows the real CLI's Go code closely (its names, its cases in order).
#![allow(
    clippy::similar_names,
    clippy::format_collect,
    clippy::match_same_arms,
    clippy::needless_pass_by_value,
    clippy::needless_range_loop,
    clippy::single_match_else
)]

// Laid out as Pulumi's own packages: the command line (`pkg/cmd/pulumi`), the engine's update
// operations (`pkg/engine`), the file backend (`pkg/backend/diy`), the passphrase secrets
// manager (`pkg/secrets`), a project's workspace files (`sdk/go/common/workspace`), and the YAML
// language host's programs and type checker (`pulumi-yaml`).
pub mod backend;
pub mod check;
mod cli;
mod engine;
pub mod fail;
pub mod fsutil;
pub mod program;
mod secrets;
mod switches;
mod time;
pub mod workspace;
pub mod yaml;

use std::sync::atomic::Ordering;

use cli::args::{self, Command};
use cli::signals::{LAST_SIGNAL, SIGNALS, signal_name};
use engine::operations::{self, Op};
use fail::Failure;

/// The `pulumi` stand-in's entry: runs the command line and exits with its code.
pub fn pulumi_main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let start = time::now();
    let cwd_at_start = std::env::current_dir().unwrap_or_default().display().to_string();
    install_signal_handlers();
    let code = match run(&argv) {
        Ok(code) => code,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("error: {}", f.message);
            }
            f.code
        }
    };
    let cwd = std::env::current_dir().map_or(cwd_at_start, |d| d.display().to_string());
    switches::log(&argv, &cwd, start, code);
    std::process::exit(code);
}

/// First SIGINT/SIGTERM: the running operation cancels itself; second: it is terminated, no
/// longer waited for (see `operations::work`). Either way it ends as cancelled and releases
/// its lock, as the real CLI's cancellation scope does (`pkg/backend/cancellation_scope.go`).
#[allow(clippy::print_stdout)] // the CLI's engine prints it as a stdout event
fn install_signal_handlers() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    // Registered before anything else runs: a signal that comes while the thread below starts
    // is counted, not the default death at random (the CLI's own window, between its lock and
    // its cancellation, is not imitated: see the README).
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            LAST_SIGNAL.store(signal, Ordering::SeqCst);
            if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
                println!("{} received; terminating", signal_name(signal));
                let _ = std::io::Write::flush(&mut std::io::stdout());
            }
        }
    });
}

fn run(argv: &[String]) -> Result<i32, Failure> {
    let args = args::parse(argv)?;
    if args.flag("help") {
        println_help();
        return Ok(0);
    }
    if let Some(dir) = args.value("cwd") {
        std::env::set_current_dir(dir).map_err(|e| fail::fail(format!("unable to change to {dir}: {e}")))?;
    }
    if let Some(c) = args.value("color")
        && !["auto", "always", "never", "raw"].contains(&c)
    {
        return Err(fail::fail(format!(
            "unsupported color option: '{c}'.  Supported values are: auto, always, never, raw"
        )));
    }
    let interactive = operations::interactive(&args);
    match args.command {
        Command::Version => Ok(cli::commands::version()),
        Command::Whoami => cli::commands::whoami(&args),
        Command::Login => cli::commands::login(&args),
        Command::Logout => cli::commands::logout(),
        Command::StackSelect => cli::commands::stack_select(&args),
        Command::StackInit => cli::commands::stack_init(&args),
        Command::StackOutput => cli::commands::stack_output(&args),
        Command::StackLs => cli::commands::stack_ls(&args),
        Command::StackHistory => cli::commands::stack_history(&args),
        Command::StackRm => cli::commands::stack_rm(&args, interactive),
        Command::ConfigSet => cli::commands::config_set(&args),
        Command::ConfigGet => cli::commands::config_get(&args),
        Command::Config => cli::commands::config_list(&args),
        Command::Cancel => cli::commands::cancel(&args),
        Command::Up => operations::run(&args, Op::Up),
        Command::Preview => operations::run(&args, Op::Preview),
        Command::Refresh => operations::run(&args, Op::Refresh),
        Command::Destroy => operations::run(&args, Op::Destroy),
    }
}

#[allow(clippy::print_stdout)]
fn println_help() {
    println!(
        "pulumi stand-in (imitates the Pulumi CLI {}) for the runner's tests.\n\
         Commands: version, whoami, login, logout, stack select|init|output|ls|rm, config [set|get],\n\
         up, preview, refresh, destroy, cancel. See tests/standin/README.md.",
        backend::VERSION
    );
}
