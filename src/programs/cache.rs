//! What each program reads and declares, kept between runs in `.runner/cache/programs.json` (a
//! header line, then one line per program), so
//! planning a big graph again reads no program it already knows. An entry is used only while its
//! file is the very same: same device, inode, size, and modification and change times to the
//! nanosecond. Any write to a file changes its change time (which no user can set), so no edit
//! can be missed, provided the change time recorded had already passed when the file was
//! looked at: a file changed less than [`SETTLE`] before is read every time until it settles,
//! as timestamps tick more coarsely than nanoseconds on many file systems (git's "racy" rule).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::Program;
use crate::fs::{NewFile, write_atomic};

/// How long after its last change a file's timestamps can be trusted to tell the next change.
const SETTLE: Duration = Duration::from_secs(2);

/// Bumped whenever what is read from a program changes; the runner's version counts too.
const FORMAT: u32 = 6;

/// The identity of a file's content, from one `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FileKey {
    dev: u64,
    ino: u64,
    size: u64,
    /// Nanoseconds since the epoch.
    mtime: i128,
    ctime: i128,
}

impl FileKey {
    /// The key of `path`, and whether it changed long enough before `now` to be cached.
    #[cfg(test)]
    pub(super) fn of(path: &Path, now: SystemTime) -> Option<(Self, bool)> {
        Self::from_stat(&std::fs::metadata(path).ok()?, now)
    }

    /// The key of the file `m` is the `stat` of, and whether it changed long enough before
    /// `now` to be cached.
    #[cfg(unix)]
    #[allow(clippy::unnecessary_wraps)] // `None` where files have no inode (below)
    pub(super) fn from_stat(m: &std::fs::Metadata, now: SystemTime) -> Option<(Self, bool)> {
        use std::os::unix::fs::MetadataExt as _;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        let key = FileKey {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: ns(m.mtime(), m.mtime_nsec()),
            ctime: ns(m.ctime(), m.ctime_nsec()),
        };
        let horizon = now
            .checked_sub(SETTLE)
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        Some((key, key.mtime < horizon && key.ctime < horizon))
    }

    /// Without inode and change time the identity of a file cannot be told: nothing is cached.
    #[cfg(not(unix))]
    pub(super) fn from_stat(_: &std::fs::Metadata, _: SystemTime) -> Option<(Self, bool)> {
        None
    }
}

/// The first line of the file: which reading of programs the entries hold.
#[derive(Serialize, Deserialize, PartialEq)]
struct Header<'a> {
    format: u32,
    runner: &'a str,
}

const HEADER: Header<'static> = Header {
    format: FORMAT,
    runner: env!("CARGO_PKG_VERSION"),
};

/// Every other line: one program (a line cut short loses that one alone).
#[derive(Deserialize)]
struct Line {
    dir: String,
    key: FileKey,
    program: Program,
}

#[derive(Serialize)]
struct LineRef<'a> {
    dir: &'a str,
    key: &'a FileKey,
    program: &'a Program,
}

/// A cached program, with the key of the file it was read from.
pub(super) struct Cached {
    key: FileKey,
    program: Program,
}

/// The cached programs, by project directory (relative to the workspace root).
#[derive(Default)]
pub(super) struct Cache {
    entries: foldhash::HashMap<String, Cached>,
}

impl Cache {
    /// The cache at `path`; empty when there is none or it is of another version. A line that
    /// cannot be read (a file cut short) is left out.
    pub(super) fn load(path: &Path) -> Self {
        // Not a file (a pipe would hang the read, a device never end), or larger than any
        // graph's: no cache.
        let Ok(bytes) = crate::fs::read_bytes(path, crate::fs::STATE_LIMIT) else {
            return Cache::default();
        };
        let mut lines = bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty());
        let current = lines
            .next()
            .and_then(|h| serde_json::from_slice::<Header<'_>>(h).ok())
            .is_some_and(|h| h == HEADER);
        if !current {
            return Cache::default();
        }
        let entries = lines
            .filter_map(|l| serde_json::from_slice::<Line>(l).ok())
            .map(|l| {
                let entry = Cached {
                    key: l.key,
                    program: l.program,
                };
                (l.dir, entry)
            })
            .collect();
        Cache { entries }
    }

    /// The project directories it holds.
    pub(super) fn dirs(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The program of `dir` if its file is still the one cached (the entry is handed over).
    pub(super) fn take(&mut self, dir: &str, key: &FileKey) -> Option<Program> {
        let entry = self.entries.remove(dir)?;
        (entry.key == *key).then_some(entry.program)
    }

    /// Writes the cache: the entries not taken (other providers' projects) and `fresh`.
    pub(super) fn save<'a>(
        &'a self,
        path: &Path,
        fresh: impl Iterator<Item = (&'a str, &'a FileKey, &'a Program)>,
    ) -> std::io::Result<()> {
        let mut entries: BTreeMap<&str, (&FileKey, &Program)> = self
            .entries
            .iter()
            .map(|(d, e)| (d.as_str(), (&e.key, &e.program)))
            .collect();
        entries.extend(fresh.map(|(d, key, program)| (d, (key, program))));
        let mut bytes = serde_json::to_vec(&HEADER).expect("the header serializes");
        for (dir, (key, program)) in entries {
            bytes.push(b'\n');
            serde_json::to_writer(&mut bytes, &LineRef { dir, key, program }).expect("an entry serializes");
        }
        bytes.push(b'\n');
        // What is there and no file (a link to a device, say) is left alone: the write would
        // go through it.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Ok(());
        }
        write_atomic(path, &bytes, NewFile::Default)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        Program::parse(text).unwrap()
    }

    #[test]
    fn an_entry_serves_only_the_same_settled_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("Pulumi.yaml");
        std::fs::write(&file, "name: a\noutputs:\n  x: 1\n").unwrap();
        let (key, settled) = FileKey::of(&file, SystemTime::now()).unwrap();
        assert!(!settled, "a file changed a moment ago is not cached yet");
        let later = SystemTime::now() + SETTLE + Duration::from_millis(10);
        let (same, settled) = FileKey::of(&file, later).unwrap();
        assert!(settled && same == key);

        let path = dir.path().join("cache/programs.json");
        let a = program("name: a\noutputs:\n  x: 1\n");
        Cache::default().save(&path, [("p/a", &key, &a)].into_iter()).unwrap();
        let mut cache = Cache::load(&path);
        assert_eq!(cache.take("p/a", &key), Some(a.clone()));

        // Another content of the same size is another file to the cache (a tick of the
        // coarsest file-system clock later, as any edit the cache may miss would be).
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(&file, "name: a\noutputs:\n  y: 1\n").unwrap();
        let (edited, _) = FileKey::of(&file, later).unwrap();
        assert_ne!(edited, key, "a write changes the change time");
        let mut cache = Cache::load(&path);
        assert_eq!(cache.take("p/a", &edited), None);
        assert_eq!(cache.take("p/a", &key), None, "a stale entry is dropped");

        // A cache of another format is not read; a line cut short is left out.
        let text = std::fs::read_to_string(&path).unwrap();
        let other = text.replace(&format!("\"format\":{FORMAT}"), &format!("\"format\":{}", FORMAT + 1));
        std::fs::write(&path, other).unwrap();
        assert!(Cache::load(&path).entries.is_empty());
        std::fs::write(&path, &text[..text.len() - 20]).unwrap();
        assert!(Cache::load(&path).entries.is_empty());
        std::fs::write(&path, &text).unwrap();
        assert_eq!(Cache::load(&path).entries.len(), 1);
    }
}
