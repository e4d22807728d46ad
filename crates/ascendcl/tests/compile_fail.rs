//! Compile-fail tests: the ownership and threading rules the type system enforces.
//!
//! Handles own what they depend on (reference counting), so some rules of the borrow-based
//! design hold by construction now and are checked at run time instead (`tests/owned.rs`):
//! a buffer, stream or peer-access token that outlives a dropped `Device` handle keeps the device
//! open and works (`buffer_outlives_device`, `stream_outlives_device`,
//! `peer_access_outlives_device`); finalising a `Runtime` handle while a device is open releases
//! that handle only (`finalize_while_device_open`); devices and streams move to and are shared
//! with other threads (`device_sent_to_thread`, `stream_shared_across_threads`).

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
