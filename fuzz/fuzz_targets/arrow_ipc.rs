#![no_main]
// The harness lives in the library (boostlab::fuzzing::arrow_ipc) so that the stable test suite
// replays the corpus through the same code (crates/boostlab/tests/fuzz_corpus.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| boostlab::fuzzing::arrow_ipc(data));
