//! The extension interface for libraries layered on the emulator: external tasks run in stream
//! order and their errors are the stream's; ranges are checked as copies check them; messages
//! reach `aclGetRecentErrMsg`.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use ascendcl_emu::extension::{self, AclFailure, MemoryLocation};
use std::sync::{Arc, Mutex};

#[test]
fn external_tasks_run_in_order_and_fail_their_stream() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let mut s = null_mut();
    ok(unsafe { aclrtCreateStream(&mut s) });
    let st = extension::stream(s as usize).unwrap();
    assert_eq!(st.device(), 0);
    st.check_current_context().unwrap();
    let mut dev = null_mut();
    ok(unsafe { aclrtMalloc(&mut dev, 4, 0) });
    let src = [9u8; 4];
    // A copy, then a task that reads what the copy wrote.
    let mut host = null_mut();
    ok(unsafe { aclrtMallocHost(&mut host, 4) });
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), host.cast::<u8>(), 4) };
    ok(unsafe { aclrtMemcpyAsync(dev, 4, host, 4, 1, s) });
    let range = extension::check_range("dev", dev as usize, 4).unwrap();
    assert_eq!(range.location(), MemoryLocation::Device(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    st.enqueue(move || {
        let v = range
            .with_live(|p| unsafe { std::slice::from_raw_parts(p, 4) }.to_vec())
            .unwrap();
        *seen2.lock().unwrap() = v;
        Ok(())
    })
    .unwrap();
    st.enqueue(|| {
        Err(AclFailure::new(
            AclError::AICPU_TIMEOUT.code(),
            "the peers never came",
        ))
    })
    .unwrap();
    let e = unsafe { aclrtSynchronizeStream(s) };
    let m = take_msg();
    assert_eq!(e, AclError::AICPU_TIMEOUT, "{m}");
    assert!(m.contains("the peers never came"), "{m}");
    assert_eq!(*seen.lock().unwrap(), vec![9u8; 4]);
    // An overrun is refused as a copy's would be.
    let f = extension::check_range("buf", dev as usize, 5).unwrap_err();
    assert_eq!(f.code, AclError::PARAM_INVALID);
    extension::record_message("[layered] SomeCall: a message");
    assert!(take_msg().contains("[layered] SomeCall: a message"));
    assert_eq!(extension::current_device().unwrap(), 0);
    ok(unsafe { aclrtFree(dev) });
    ok(unsafe { aclrtFreeHost(host) });
    ok(unsafe { aclrtDestroyStream(s) });
}
