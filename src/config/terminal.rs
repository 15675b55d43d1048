//! Questions at a terminal (on standard error, answers from the keyboard), with `dialoguer`.

use dialoguer::theme::SimpleTheme;
use dialoguer::{Input, Password};

use super::questions::Ask;

/// Asks at the terminal. While it lives, Ctrl-C restores the terminal (a hidden prompt turns
/// echo off) and ends the runner with exit 130, before anything was written.
pub(crate) struct Terminal {
    stop: Option<std::sync::mpsc::Sender<()>>,
}

impl Terminal {
    pub(crate) fn new() -> Self {
        Terminal { stop: guard() }
    }
}

impl Default for Terminal {
    fn default() -> Self {
        Self::new()
    }
}

impl Terminal {
    /// Ctrl-C is the runner's own again (from here on, something may have been written).
    fn stop_guard(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.stop_guard();
    }
}

/// A thread that waits for Ctrl-C (or the end of the questions).
#[cfg(unix)]
fn guard() -> Option<std::sync::mpsc::Sender<()>> {
    use nix::sys::termios::{SetArg, tcgetattr, tcsetattr};
    let saved = tcgetattr(std::io::stdin()).ok()?;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let stopped = tokio::task::spawn_blocking(move || rx.recv());
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {
                    let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, &saved);
                    crate::report::info("\ninterrupted: nothing was written");
                    std::process::exit(crate::error::exit::INTERRUPTED);
                }
                _ = stopped => {}
            }
        });
    });
    Some(tx)
}

#[cfg(not(unix))]
fn guard() -> Option<std::sync::mpsc::Sender<()>> {
    None
}

fn io(e: dialoguer::Error) -> std::io::Error {
    match e {
        dialoguer::Error::IO(e) => e,
    }
}

impl Ask for Terminal {
    fn text(
        &mut self,
        question: &str,
        default: Option<&str>,
        check: &dyn Fn(&str) -> Result<(), String>,
    ) -> std::io::Result<String> {
        let mut input = Input::<String>::with_theme(&SimpleTheme)
            .with_prompt(question)
            .validate_with(|a: &String| check(a));
        if let Some(d) = default {
            input = input.default(d.to_string());
        }
        input.interact_text().map_err(io)
    }

    fn hidden(&mut self, question: &str, default: Option<&str>, confirm: bool) -> std::io::Result<String> {
        let prompt = match default {
            Some(d) => format!("{question} [{d}]"),
            None => question.to_string(),
        };
        let mut p = Password::with_theme(&SimpleTheme)
            .with_prompt(&prompt)
            .allow_empty_password(default.is_some());
        if confirm {
            p = p.with_confirmation(format!("{question} (again)"), "The two entries differ; enter it again.");
        }
        let answer = p.interact().map_err(io)?;
        Ok(match default {
            Some(d) if answer.is_empty() => d.to_string(),
            _ => answer,
        })
    }

    fn finished(&mut self) {
        self.stop_guard();
    }
}
