//! Compile-fail tests: the ownership and threading rules the type system enforces.
//!
//! Handles own what they depend on (reference counting), so some rules of the borrow-based
//! design hold by construction now and are checked at run time instead (`tests/it/owned.rs`):
//! a buffer, stream or peer-access token that outlives a dropped `Device` handle keeps the device
//! open and works (`buffer_outlives_device`, `stream_outlives_device`,
//! `peer_access_outlives_device`); finalising a `Runtime` handle while a device is open releases
//! that handle only (`finalize_while_device_open`); devices and streams move to and are shared
//! with other threads (`device_sent_to_thread`, `stream_shared_across_threads`).
//!
//! Its own binary: `cargo xtask test` runs it once more from the build without default features
//! (no embedded emulator, no `half`), because one case's expected output depends on `half`, and
//! none of the cases needs a backend.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
    // The element types a refused one is listed beside depend on the `half` feature (f16 and
    // bf16 join them), which a workspace build turns on when any member asks for it: the case
    // is kept once per setting (`cargo xtask test` runs both).
    let elements = if cfg!(feature = "half") {
        "with_half"
    } else {
        "without_half"
    };
    t.compile_fail(format!("tests/compile_fail_elements/{elements}/*.rs"));
}
