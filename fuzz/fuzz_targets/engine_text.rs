//! Text the engine writes (a cause, a diagnostic, a project's line) as the runner shows it at a
//! terminal and in GitHub Actions, and the field conflicts it reads from it: never a control
//! character obeyed, never a workflow command, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        runner::fuzzing::engine_text(text);
    }
});
