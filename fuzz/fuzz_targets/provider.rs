//! The provider loader: the input is the provider file `fuzz.toml`, then, after each NUL byte,
//! a layer file (`l1.toml`, `l2.toml`, `l3.toml`), written to a scratch workspace (in memory
//! where there is a tmpfs) and loaded.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

static ROOT: OnceLock<tempfile::TempDir> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let root = ROOT.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm)
        } else {
            tempfile::tempdir()
        };
        dir.expect("a scratch workspace")
    });
    let files: Vec<(String, String)> = text
        .splitn(4, '\0')
        .enumerate()
        .map(|(i, part)| {
            (
                if i == 0 { "fuzz".to_string() } else { format!("l{i}") },
                part.to_string(),
            )
        })
        .collect();
    runner::fuzzing::provider_files(root.path(), &files);
});
