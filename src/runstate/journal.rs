//! The run state's journal, `.runner/<stack>/journal.jsonl`: one line per project start or end,
//! appended as it happens (one write, so a killed runner loses no line it wrote) and flushed to
//! disk by a thread of its own, which syncs whatever was appended since its last sync (group
//! commit: one sync serves many lines when they come fast). Writing the state so costs the same
//! for every project however big the graph (rewriting `state.json` each time cost N² bytes). The lines are
//! folded into `state.json` at the end of the run, or, after a crash, when the next run starts.
//! A last line cut short by a crash is ignored with a warning: the event it would have recorded
//! had not been made durable, as with a `state.json` that was never renamed into place.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use serde::de::{DeserializeOwned, IntoDeserializer as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::exec::Outcome;
use crate::plan::Operation;

/// What one event changes in the run state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Record {
    Started {
        project: String,
        operation: Word<Operation>,
        at: String,
    },
    Finished(Box<Finish>),
}

/// A project's end, as the state keeps it (outputs already redacted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Finish {
    pub(crate) project: String,
    pub(crate) operation: Word<Operation>,
    pub(crate) status: Word<Outcome>,
    /// `None`: settled without running (skipped, unchanged, not started, waits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) started: Option<String>,
    pub(crate) ended: String,
    /// `inputs_digest` in the journals of runners that kept text (see [`super::legacy`]).
    #[serde(
        default,
        alias = "inputs_digest",
        deserialize_with = "super::legacy::inputs",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) inputs: Option<crate::exec::Inputs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) outputs_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) outputs: Option<Map<String, Value>>,
    /// Its summary counted a change (for a refresh: changes made outside Pulumi, now in the
    /// state).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) changed: bool,
    /// Not a run of the runner's: `runner pulumi P -- destroy` (the command, as said), which
    /// changed the stack behind the run state's back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) by: Option<String>,
}

/// A word of a journal line: one the runner writes, or another a line names (kept, so that the
/// line is refused with a warning that quotes it rather than unreadable).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Word<T> {
    Known(T),
    Unknown(String),
}

impl<T> From<T> for Word<T> {
    fn from(known: T) -> Self {
        Word::Known(known)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Word<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A string first: anything else is a line that cannot be read, as before.
        let word = String::deserialize(d)?;
        let known: Result<T, serde::de::value::Error> = T::deserialize(word.as_str().into_deserializer());
        Ok(known.map_or(Word::Unknown(word), Word::Known))
    }
}

/// The records of a journal, and a warning for each line that could not be read or is not one
/// the runner writes; `known` says which projects the graph has.
pub(crate) fn read(
    path: &Path,
    shown: &str,
    known: &dyn Fn(&str) -> bool,
) -> std::io::Result<(Vec<Record>, Vec<String>)> {
    match crate::fs::read_bytes(path, crate::fs::STATE_LIMIT) {
        Ok(bytes) => Ok(parse(&bytes, shown, known)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Vec::new(), Vec::new())),
        Err(e) => Err(e),
    }
}

/// [`read`] of the journal's bytes. Each line is trusted only once checked: a project the graph
/// has, an operation and a status the runner records, times and digests as it writes them. A
/// line that fails is named, with why, and left out; so is a last line cut short by a crash.
pub(crate) fn parse(bytes: &[u8], shown: &str, known: &dyn Fn(&str) -> bool) -> (Vec<Record>, Vec<String>) {
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    let complete = bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_slice::<Record>(line) {
            Ok(r) => match check(&r, known) {
                Ok(()) => records.push(r),
                Err(why) => warnings.push(format!("ignored line {} of {shown}: {why}", i + 1)),
            },
            Err(_) if i + 1 == lines.len() && !complete => warnings.push(format!(
                "ignored the last line of {shown}: it was cut short (the runner was stopped while writing it)"
            )),
            Err(e) => warnings.push(format!("ignored line {} of {shown}, which cannot be read: {e}", i + 1)),
        }
    }
    (records, warnings)
}

/// Why a journal line is not trusted: what it holds that the runner never writes.
#[derive(Debug, thiserror::Error)]
enum Untrusted<'a> {
    #[error("its status `{}` is none the runner records ({})", quoted(.0), known_words(&Outcome::ALL.iter().map(ToString::to_string).collect::<Vec<_>>()))]
    Status(&'a str),
    #[error("it names project `{}`, which the graph does not have", quoted(.0))]
    Project(&'a str),
    #[error("its operation `{}` is none of {}", quoted(.0), known_words(&Operation::ALL.iter().map(|o| o.as_str().to_string()).collect::<Vec<_>>()))]
    Operation(&'a str),
    #[error("its time `{}` is not one the runner writes", quoted(.0))]
    Time(&'a str),
    #[error("its digest `{}` is not one the runner writes", quoted(.0))]
    Digest(&'a str),
}

/// The words the runner writes, as a list to read.
fn known_words(words: &[String]) -> String {
    words.join(", ")
}

/// Whether `record` is one the runner could have written for this graph; why not otherwise.
fn check<'a>(record: &'a Record, known: &dyn Fn(&str) -> bool) -> Result<(), Untrusted<'a>> {
    let (project, operation, times, bad_digest) = match record {
        Record::Started { project, operation, at } => (project, operation, vec![Some(at)], None),
        Record::Finished(end) => {
            if let Word::Unknown(status) = &end.status {
                return Err(Untrusted::Status(status));
            }
            (
                &end.project,
                &end.operation,
                vec![end.started.as_ref(), Some(&end.ended)],
                end.inputs
                    .as_ref()
                    .and_then(super::digests::malformed)
                    .or_else(|| end.outputs_digest.as_deref().filter(|d| !super::digests::is_hex(d, 64))),
            )
        }
    };
    if !known(project) {
        return Err(Untrusted::Project(project));
    }
    if let Word::Unknown(operation) = operation {
        return Err(Untrusted::Operation(operation));
    }
    if let Some(t) = times.into_iter().flatten().find(|t| !is_timestamp(t)) {
        return Err(Untrusted::Time(t));
    }
    if let Some(d) = bad_digest {
        return Err(Untrusted::Digest(d));
    }
    Ok(())
}

/// `2026-11-22T14:06:03.881Z`, as [`super::timestamp`] writes it.
fn is_timestamp(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            23 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// What a line said, safe to print: control characters escaped, at most 60 characters.
fn quoted(text: &str) -> String {
    let mut out: String = text.chars().take(60).flat_map(char::escape_debug).collect();
    if text.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// The journal being written: each record one line, appended at once, synced by [`Syncer`].
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    open: Option<(Arc<std::fs::File>, Syncer)>,
}

impl Journal {
    pub(crate) fn new(path: PathBuf) -> Self {
        Journal { path, open: None }
    }

    /// Appends `record` as one line (one write); the syncer flushes it to disk soon after. A
    /// journal whose last line was cut short gets a line break first, so the new line stays
    /// whole. A failed sync is reported by the next append.
    pub(crate) fn append(&mut self, record: &Record) -> std::io::Result<()> {
        if self.open.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .read(true)
                .open(&self.path)?;
            if !ends_with_newline(&mut file)? {
                file.write_all(b"\n")?;
            }
            let file = Arc::new(file);
            let syncer = Syncer::start(file.clone());
            self.open = Some((file, syncer));
        }
        let (file, syncer) = self.open.as_ref().expect("opened above");
        let mut line = serde_json::to_vec(record).expect("records serialize");
        line.push(b'\n');
        (&**file).write_all(&line)?;
        syncer.written()
    }

    /// Waits until every line appended is on disk.
    pub(crate) fn sync(&mut self) -> std::io::Result<()> {
        match self.open.take() {
            Some((_, syncer)) => syncer.finish(),
            None => Ok(()),
        }
    }

    /// Removes the journal once `state.json` holds all of it.
    pub(crate) fn remove(&mut self) -> std::io::Result<()> {
        let _ = self.sync();
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        let _ = self.sync();
    }
}

/// The thread that flushes the journal to disk: after each wake-up, one `fdatasync` covers
/// every line appended until then.
#[derive(Debug)]
struct Syncer {
    shared: Arc<(Mutex<Progress>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Progress {
    appended: u64,
    synced: u64,
    stop: bool,
    error: Option<String>,
}

impl Syncer {
    fn start(file: Arc<std::fs::File>) -> Self {
        let shared = Arc::new((Mutex::new(Progress::default()), Condvar::new()));
        let theirs = shared.clone();
        let thread = std::thread::spawn(move || {
            let (lock, wake) = &*theirs;
            let mut p = lock.lock().expect("the syncer's lock");
            loop {
                while p.appended == p.synced && !p.stop {
                    p = wake.wait(p).expect("the syncer's lock");
                }
                if p.appended == p.synced {
                    return;
                }
                let target = p.appended;
                drop(p);
                let result = file.sync_data();
                p = lock.lock().expect("the syncer's lock");
                p.synced = target;
                if let Err(e) = result {
                    p.error.get_or_insert_with(|| e.to_string());
                }
            }
        });
        Syncer {
            shared,
            thread: Some(thread),
        }
    }

    /// One more line to sync; the error of an earlier sync, if one failed.
    fn written(&self) -> std::io::Result<()> {
        let (lock, wake) = &*self.shared;
        let mut p = lock.lock().expect("the syncer's lock");
        p.appended += 1;
        wake.notify_one();
        match &p.error {
            Some(e) => Err(std::io::Error::other(format!("syncing the journal: {e}"))),
            None => Ok(()),
        }
    }

    /// Syncs what is left and stops the thread.
    fn finish(mut self) -> std::io::Result<()> {
        let (lock, wake) = &*self.shared;
        lock.lock().expect("the syncer's lock").stop = true;
        wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        match lock.lock().expect("the syncer's lock").error.take() {
            Some(e) => Err(std::io::Error::other(format!("syncing the journal: {e}"))),
            None => Ok(()),
        }
    }
}

fn ends_with_newline(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(p: &str) -> Record {
        Record::Started {
            project: p.into(),
            operation: Operation::Up.into(),
            at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    #[test]
    fn lines_are_appended_and_a_line_cut_short_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev/journal.jsonl");
        let mut j = Journal::new(path.clone());
        j.append(&started("a")).unwrap();
        j.append(&started("b")).unwrap();
        let (records, warnings) = read(&path, "journal", &|_| true).unwrap();
        assert_eq!(records, [started("a"), started("b")]);
        assert!(warnings.is_empty());

        // A crash in the middle of a write leaves half a line.
        let text = std::fs::read_to_string(&path).unwrap();
        let cut = text.len() - 10;
        std::fs::write(&path, &text[..cut]).unwrap();
        let (records, warnings) = read(&path, "journal", &|_| true).unwrap();
        assert_eq!(records, [started("a")]);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("cut short"), "{warnings:?}");

        // The next writer starts on a line of its own.
        let mut j = Journal::new(path.clone());
        j.append(&started("c")).unwrap();
        let (records, warnings) = read(&path, "journal", &|_| true).unwrap();
        assert_eq!(records, [started("a"), started("c")]);
        assert!(warnings[0].contains("line 2"), "{warnings:?}");
        j.remove().unwrap();
        assert!(!path.exists());
        assert_eq!(read(&path, "journal", &|_| true).unwrap(), (Vec::new(), Vec::new()));
    }
}
