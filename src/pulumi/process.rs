//! How the runner starts a child (`pulumi`, a hook script) and follows it: one builder for all,
//! each child in its own process group (so Ctrl-C reaches it only through the runner), output
//! read line by line as events scrubbed of known secrets, signals passed to the whole group, and
//! one wording for a failure.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::redact::Redactor;
use crate::exec::{Control, Event, Failure, How, Stream};

/// Lines of output shown in a failure message.
const TAIL: usize = 15;
/// Lines of streamed output kept, to find the cause of a failure among them.
const TAIL_KEPT: usize = 200;

/// A child with no input and both outputs piped, in its own process group, run in `cwd`.
pub(crate) fn command(program: &Path, cwd: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(program);
    c.current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    c
}

/// How one child ended.
pub(crate) struct Ended {
    pub(crate) code: Option<i32>,
    /// The signal that killed it, when one did.
    pub(crate) signal: Option<i32>,
    /// Its process id (the lock a `pulumi` takes names it).
    pub(crate) pid: Option<u32>,
    /// Standard output when captured (never printed: it may hold secrets).
    pub(crate) captured: String,
    /// The last lines of standard output when it was streamed (scrubbed, as printed).
    pub(crate) stdout_tail: Vec<String>,
    pub(crate) stderr: String,
    pub(crate) interrupted: bool,
}

/// Why a child was not run to its end.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotRun {
    /// It could not be started, nor the files its output goes to made.
    #[error("cannot start {program}: {source}")]
    Start { program: String, source: std::io::Error },
    /// The files its output went to could not be followed.
    #[error("{0}")]
    Follow(std::io::Error),
    /// It could not be waited for.
    #[error("waiting for {program}: {source}")]
    Wait { program: String, source: std::io::Error },
}

impl NotRun {
    fn start(program: &str, source: std::io::Error) -> Self {
        NotRun::Start {
            program: program.to_string(),
            source,
        }
    }
}

/// Said in the runner's words.
impl From<NotRun> for Failure {
    fn from(e: NotRun) -> Self {
        Failure::said(e.to_string())
    }
}

impl Ended {
    /// How a child run to its end with `std::process` ended (its output captured).
    pub(crate) fn of(out: &std::process::Output) -> Self {
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&out.status);
        #[cfg(not(unix))]
        let signal = None;
        Ended {
            code: out.status.code(),
            signal,
            pid: None,
            captured: String::from_utf8_lossy(&out.stdout).into_owned(),
            stdout_tail: Vec::new(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            interrupted: false,
        }
    }
}

/// The project a child runs for: where its lines go and what stops it.
pub(crate) struct Step<'a> {
    pub(crate) project: &'a str,
    pub(crate) control: &'a Control,
    pub(crate) redactor: &'a Redactor,
    /// Where a streamed child writes its output (files the runner follows), so it never
    /// depends on the runner being alive to read it: a runner killed mid-update (OOM, `kill
    /// -9`, a CI's hard cancel) does not take its `pulumi` down with a broken pipe, halfway
    /// through changing the cloud and with its stack locked; it finishes.
    pub(crate) scratch: Option<PathBuf>,
}

impl Step<'_> {
    /// Runs `cmd`, streaming its lines unless `capture` (then both are kept, not shown),
    /// writing `input` to its standard input when given (a pipe, never argv or a file). Its
    /// group gets SIGINT, then SIGTERM, then SIGKILL, as the run's stop says (a further Ctrl-C
    /// or the grace period each); `pulumi` cancels an operation on the first and ends on the
    /// second. A captured command (a read, `stack select --create`) is short and not an
    /// operation: `pulumi` does not cancel those but dies at once, and one killed while it
    /// creates a stack leaves the stack locked, so it gets no SIGINT and finishes (SIGTERM and
    /// SIGKILL still end it).
    pub(crate) async fn run(
        &self,
        cmd: std::process::Command,
        capture: bool,
        input: Option<String>,
    ) -> Result<Ended, NotRun> {
        let program = cmd.get_program().to_string_lossy().into_owned();
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.kill_on_drop(true);
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        // A streamed operation writes to files (see `scratch`); a captured read is short and
        // keeps its pipes.
        let files = match self.scratch.as_deref().filter(|_| !capture) {
            Some(dir) => {
                Some(OutputFiles::create(dir, self.project).map_err(|source| NotRun::start(&program, source))?)
            }
            None => None,
        };
        if let Some(f) = &files {
            cmd.stdout(
                f.writer(Stream::Stdout)
                    .map_err(|source| NotRun::start(&program, source))?,
            );
            cmd.stderr(
                f.writer(Stream::Stderr)
                    .map_err(|source| NotRun::start(&program, source))?,
            );
        }
        let mut child = cmd.spawn().map_err(|source| NotRun::start(&program, source))?;
        if let Some(text) = input
            && let Some(mut stdin) = child.stdin.take()
        {
            let _ = stdin.write_all(text.as_bytes()).await;
            drop(stdin);
        }
        let pid = child.id();
        let ended = std::sync::Arc::new(ChildDone::default());
        // Captured stdout stays raw and unprinted (it may hold secrets, e.g. `stack output
        // --show-secrets`); everything printed is scrubbed, and stderr is kept for the error.
        // A captured command (a probe, a read) shows nothing: its failure says what it printed.
        let (out_task, err_task) = match &files {
            Some(f) => (
                self.pump(
                    f.follow(Stream::Stdout, &ended).map_err(NotRun::Follow)?,
                    Stream::Stdout,
                    true,
                    false,
                ),
                self.pump(
                    f.follow(Stream::Stderr, &ended).map_err(NotRun::Follow)?,
                    Stream::Stderr,
                    true,
                    true,
                ),
            ),
            None => (
                self.pump(child.stdout.take().expect("piped"), Stream::Stdout, !capture, capture),
                self.pump(child.stderr.take().expect("piped"), Stream::Stderr, !capture, true),
            ),
        };
        let control = self.control;
        let mut interrupted = false;
        let mut terminated = false;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                () = control.interrupt.cancelled(), if !interrupted && !capture => {
                    interrupted = true;
                    signal_group(pid, Signal::Interrupt);
                }
                () = control.terminate.cancelled(), if !terminated => {
                    interrupted = true;
                    terminated = true;
                    signal_group(pid, Signal::Terminate);
                }
                () = control.kill.cancelled() => {
                    signal_group(pid, Signal::Kill);
                    break child.wait().await;
                }
            }
        };
        let status = status.map_err(|source| NotRun::Wait { program, source })?;
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal: Option<i32> = None;
        if signal.is_some() {
            // Killed, it could not stop its language host and plugins: they would stay, holding
            // what the program opened (and the pipes the tasks below read to their end).
            signal_group(pid, Signal::Kill);
        }
        // Ended: what is left in its files is read to their end.
        ended.set();
        let (captured, stdout_tail) = out_task.await.unwrap_or_default();
        let (stderr, _) = err_task.await.unwrap_or_default();
        drop(files);
        Ok(Ended {
            code: status.code(),
            signal,
            pid,
            captured,
            stdout_tail: stdout_tail.into(),
            stderr,
            interrupted,
        })
    }

    /// Reads a child's pipe line by line: `forward` sends each line (scrubbed) as an event and
    /// keeps the last ones; `keep` collects every line, scrubbed when forwarded and raw when not.
    fn pump<R>(
        &self,
        pipe: R,
        stream: Stream,
        forward: bool,
        keep: bool,
    ) -> tokio::task::JoinHandle<(String, VecDeque<String>)>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
    {
        let events = self.control.events.clone();
        let redactor = self.redactor.clone();
        let name = self.project.to_string();
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            let mut kept = String::new();
            let mut tail = VecDeque::new();
            while let Ok(Some(line)) = lines.next_line().await {
                // Captured stdout stays raw for its reader; everything else is scrubbed, and
                // freed of terminal escapes: `pulumi` writes none into a pipe, but Pulumi YAML's
                // language host colours its diagnostics whatever it writes to, and they reach
                // logs, summaries and JUnit through here. What control characters are left (a
                // BEL, an escape that is no colour) are shown, never obeyed.
                let line = if forward || stream == Stream::Stderr {
                    redactor.scrub(&crate::report::text::visible(&without_escapes(&line)))
                } else {
                    line
                };
                if keep {
                    kept.push_str(&line);
                    kept.push('\n');
                }
                if forward {
                    if tail.len() == TAIL_KEPT {
                        tail.pop_front();
                    }
                    tail.push_back(line.clone());
                    let _ = events.send(Event::Line {
                        project: name.clone(),
                        stream,
                        text: line,
                    });
                }
            }
            (kept, tail)
        })
    }
}

/// The two files a streamed child writes its output to, in the run's scratch directory, owner
/// only (0600; what the runner shows of them is scrubbed of secrets), named as the temporaries
/// a killed runner leaves are found and removed by the next run; removed when dropped.
struct OutputFiles {
    stdout: PathBuf,
    stderr: PathBuf,
}

impl OutputFiles {
    fn create(dir: &Path, project: &str) -> std::io::Result<Self> {
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        std::fs::create_dir_all(dir)?;
        let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = |stream: &str| dir.join(format!(".{project}-{stream}-{n}.runner-{}.tmp", std::process::id()));
        Ok(OutputFiles {
            stdout: name("stdout"),
            stderr: name("stderr"),
        })
    }

    fn path(&self, stream: Stream) -> &Path {
        match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        }
    }

    /// The child's end: the file made new (a name taken is an error, never followed).
    fn writer(&self, stream: Stream) -> std::io::Result<std::fs::File> {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        opts.open(self.path(stream))
    }

    /// The runner's end: the file followed as it grows, to its end once `ended` is set.
    fn follow(&self, stream: Stream, ended: &std::sync::Arc<ChildDone>) -> std::io::Result<Follow> {
        Ok(Follow {
            file: std::fs::File::open(self.path(stream))?,
            ended: ended.clone(),
            wait: None,
        })
    }
}

impl Drop for OutputFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.stdout);
        let _ = std::fs::remove_file(&self.stderr);
    }
}

/// Set once a streamed child has ended; wakes the readers of its files at once, so that the
/// last read of a short command does not wait out a poll (a whole run's worth of them was most
/// of the runner's cost per project).
#[derive(Default)]
struct ChildDone {
    ended: std::sync::atomic::AtomicBool,
    wake: tokio::sync::Notify,
}

impl ChildDone {
    fn set(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
        self.wake.notify_waiters();
    }

    fn is_set(&self) -> bool {
        self.ended.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// A moment (`POLL`), or less when the child ends meanwhile.
    async fn pause(self: std::sync::Arc<Self>) {
        let woken = self.wake.notified();
        tokio::pin!(woken);
        // Registered before the flag is read: a `set` after this read still wakes it.
        woken.as_mut().enable();
        if self.is_set() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = woken => {}
        }
    }
}

/// How often a followed file is read again while its writer runs.
const POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// A file another process is writing, read as a stream: at its end it waits a moment and reads
/// again, until the writer has ended (then its end is the stream's).
struct Follow {
    /// Read directly: a regular file's read does not wait on anyone.
    file: std::fs::File,
    ended: std::sync::Arc<ChildDone>,
    wait: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
}

impl tokio::io::AsyncRead for Follow {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        loop {
            if let Some(wait) = self.wait.as_mut() {
                if wait.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.wait = None;
            }
            // Read after looking at `ended`: what was written before it ended is read.
            let ended = self.ended.is_set();
            let read = std::io::Read::read(&mut self.file, buf.initialize_unfilled());
            match read {
                Ok(0) if !ended => {
                    self.wait = Some(Box::pin(self.ended.clone().pause()));
                }
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

/// `line` without ANSI escape sequences (`ESC [ … final byte`, and a lone `ESC x`).
fn without_escapes(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.next_if_eq(&'[').is_some() {
            // Parameters and intermediates, up to the final byte (@ to ~).
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out.into()
}

/// `what exited with code N: <cause>`, and the rest of the cause on the lines after. The cause
/// is what the engine reported as errors (`diagnostics`) when it did; otherwise the last lines
/// of standard error and standard output that are not progress.
pub(crate) fn failure(what: &str, ended: &Ended, diagnostics: &[String]) -> Failure {
    let how = match (ended.code, ended.signal) {
        (Some(c), _) => How::Exited(c),
        (None, Some(s)) => How::Killed(match nix::sys::signal::Signal::try_from(s) {
            Ok(name) => name.to_string(),
            Err(_) => format!("signal {s}"),
        }),
        (None, None) => How::Killed("a signal".into()),
    };
    let cause: Vec<&str> = if diagnostics.is_empty() {
        let mut lines: Vec<&str> = ended.stderr.lines().filter(|l| !is_noise(l)).collect();
        lines.extend(ended.stdout_tail.iter().map(String::as_str).filter(|l| !is_noise(l)));
        let from = lines.len().saturating_sub(TAIL);
        lines.split_off(from)
    } else {
        diagnostics.iter().flat_map(|d| d.lines()).collect()
    };
    let cause = cause
        .into_iter()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect::<Vec<_>>();
    let at = super::messages::program_line(cause.iter().map(String::as_str))
        .map(|(file, line)| crate::exec::SourceLine { file, line });
    Failure {
        at,
        ..Failure::ended(what, how, cause)
    }
}

/// A line that says how far the work got, not what went wrong: blank lines, Pulumi's headings,
/// resource rows, counts and timings.
fn is_noise(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
        || t.starts_with('@')
        || [
            "Previewing ",
            "Updating (",
            "Destroying (",
            "Refreshing (",
            "View in Browser",
            "View Live",
            "Type ",
            "Resources:",
            "Outputs:",
            "Duration:",
            "Diagnostics:",
            "pulumi:pulumi:Stack",
        ]
        .iter()
        .any(|p| t.starts_with(p))
        || t.ends_with(" unchanged")
        || {
            // A resource row or a count: `+  aws:ec2:Vpc  vpc  created`, `+ 2 created`.
            let mut chars = t.chars();
            chars.next().is_some_and(|c| matches!(c, '+' | '-' | '~' | '±' | '=')) && chars.next() == Some(' ')
        }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Signal {
    Interrupt,
    Terminate,
    Kill,
}

/// Sends a signal to the child's whole process group (Pulumi's plugins and language hosts too).
fn signal_group(pid: Option<u32>, signal: Signal) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal as S, kill, killpg};
        use nix::unistd::Pid;
        let s = match signal {
            Signal::Interrupt => S::SIGINT,
            Signal::Terminate => S::SIGTERM,
            Signal::Kill => S::SIGKILL,
        };
        // Killed, the child cannot stop what it started in groups of their own (`pulumi`
        // starts its language host so): its descendants are found first, while they are still
        // its, and killed with it.
        let descendants = if signal == Signal::Kill {
            descendants(pid)
        } else {
            Vec::new()
        };
        let _ = killpg(Pid::from_raw(pid), s);
        for d in descendants {
            let _ = kill(Pid::from_raw(d), S::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = (pid, signal);
}

/// Every process below `pid` (children, theirs…), from `/proc`; none where there is no `/proc`.
#[cfg(unix)]
fn descendants(pid: i32) -> Vec<i32> {
    let mut children: std::collections::HashMap<i32, Vec<i32>> = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        // `pid (comm) state ppid …`: the comm may hold spaces and parentheses, so after its last `)`.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse::<i32>().ok());
        if let Some(parent) = parent {
            children.entry(parent).or_default().push(child);
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if !out.contains(&c) {
                out.push(c);
                todo.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::without_escapes;

    #[test]
    fn terminal_escapes_are_taken_out_of_a_line() {
        assert_eq!(
            without_escapes("\u{1b}[31mError\u{1b}[0m: Property x does not exist"),
            "Error: Property x does not exist"
        );
        assert_eq!(
            without_escapes("  18:       \u{1b}[1;4mretention_days\u{1b}[0m: 7"),
            "  18:       retention_days: 7"
        );
        assert_eq!(without_escapes("plain [31m text"), "plain [31m text");
        assert_eq!(without_escapes("cut \u{1b}["), "cut ");
    }
}
