//! What planning a big graph looks at ahead of need: each program's `stat`, taken on other
//! threads, and the reads of the programs shared out among the cores.

/// `stat`s of project programs (`<dir>/Pulumi.yaml`, links followed) taken ahead of need, by
/// project directory relative to the workspace root: planning a big graph looks at thousands of
/// them, and a thread that knows last time's directories can look while the provider file is
/// still being parsed. A directory not in it is looked at when asked.
pub(crate) trait ProgramStats: Sync {
    fn taken(&self, dir: &str) -> Taken;
}

/// What a `stat` taken ahead saw.
pub(crate) enum Taken {
    /// None was taken: look now.
    Not,
    /// There was no file (or it could not be looked at).
    Absent,
    Stat(std::fs::Metadata),
}

/// No `stat` taken ahead.
pub(crate) struct NoStats;

impl ProgramStats for NoStats {
    fn taken(&self, _: &str) -> Taken {
        Taken::Not
    }
}

/// `f` over every item, the items shared out among the cores; results in the items' order.
/// For work that waits on the file system item by item (big graphs have thousands of files).
pub(crate) fn on_all_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len().max(1));
    let chunk = items.len().div_ceil(threads).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("work on files does not panic"))
            .collect()
    })
}
