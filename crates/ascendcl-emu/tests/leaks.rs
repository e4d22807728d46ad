//! Leak reports at device release, and the live query.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

#[test]
fn release_reports_what_was_left_alive() {
    let r = unsafe { aclInit(null()) };
    assert!(r == 0 || r == AclError::REPEAT_INITIALIZE);
    assert!(ascendcl_emu::leak_report().is_clean());
    ok(unsafe { aclrtSetDevice(1) });
    let p = malloc(100);
    let s = stream();
    let e = event();
    let live = ascendcl_emu::device_leak_report(1);
    assert_eq!(
        (
            live.allocations,
            live.allocation_bytes,
            live.streams,
            live.events
        ),
        (1, 100, 1, 1)
    );
    ok(unsafe { aclrtResetDevice(1) });
    let rep = ascendcl_emu::release_reports().pop().unwrap();
    assert_eq!(rep.device, Some(1));
    assert_eq!(
        (rep.allocations, rep.streams, rep.events),
        (1, 1, 1),
        "{rep}"
    );
    assert!(!rep.is_clean());
    // The device's resources were released with it. The thread has no current context now,
    // so aclrtFree (a memory call) answers 107002 first.
    err(unsafe { aclrtFree(p) }, AclError::CONTEXT_NULL);
    err(unsafe { aclrtDestroyStream(s) }, AclError::INVALID_HANDLE);
    err(unsafe { aclrtDestroyEvent(e) }, AclError::INVALID_HANDLE);
    // A clean cycle.
    ok(unsafe { aclrtSetDevice(1) });
    err(unsafe { aclrtFree(p) }, AclError::MEMORY_FREE);
    let p = malloc(100);
    let h = malloc_host(100);
    let s = stream();
    let e = event();
    ok(unsafe { aclrtDestroyEvent(e) });
    ok(unsafe { aclrtDestroyStream(s) });
    free_host(h);
    free(p);
    ok(unsafe { aclrtResetDevice(1) });
    assert!(ascendcl_emu::release_reports().pop().unwrap().is_clean());
    assert!(
        ascendcl_emu::leak_report().is_clean(),
        "{}",
        ascendcl_emu::leak_report()
    );
}
