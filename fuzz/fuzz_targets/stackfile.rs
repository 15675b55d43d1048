//! The stack file: read, then edited as a run edits it; an edit that is made reads back as the
//! file plus the new entries.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        runner::fuzzing::stack_file(text);
    }
});
