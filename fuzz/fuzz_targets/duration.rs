//! A duration as `--timeout`, `--grace` or a project's `timeout` gives it: any text is refused
//! or read as a duration a deadline can be set with, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        runner::fuzzing::duration(text);
    }
});
