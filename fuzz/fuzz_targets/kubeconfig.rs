//! The kubeconfig merge: the input is the existing file, a NUL byte, then the incoming
//! kubeconfig (YAML, JSON or base64).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (existing, incoming) = text.split_once('\0').unwrap_or(("", text));
    runner::fuzzing::kubeconfig_merge(existing, incoming);
});
