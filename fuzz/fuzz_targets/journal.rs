//! `.runner/<stack>/journal.jsonl`: any bytes are read line by line, each line taken or named,
//! and what is taken folds into a run state the runner can hold, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    runner::fuzzing::journal(data);
});
