//! `config/pulumi/environment`: any text parses or is refused line by line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        runner::fuzzing::environment_file(text);
    }
});
