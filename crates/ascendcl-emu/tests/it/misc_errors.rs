//! Documented bad inputs not covered elsewhere.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

extern "C" fn sleep_ms(arg: *mut c_void) {
    std::thread::sleep(std::time::Duration::from_millis(arg as u64));
}

#[test]
fn calls_without_a_context() {
    let _device = whole_device();
    std::thread::spawn(|| {
        let mut p = null_mut();
        err(unsafe { aclrtCreateStream(&mut p) }, AclError::CONTEXT_NULL);
        err(
            unsafe { aclrtCreateStreamWithConfig(&mut p, 0, 0) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtGetCurrentContext(&mut p) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtCtxGetCurrentDefaultStream(&mut p) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtSynchronizeStream(null_mut()) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtSynchronizeDeviceWithTimeout(10) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtDeviceEnablePeerAccess(1, 0) },
            AclError::CONTEXT_NULL,
        );
        let mut b = [0u8; 8];
        err(
            unsafe { aclrtMemset(b.as_mut_ptr().cast(), 8, 0, 8) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtMemsetAsync(b.as_mut_ptr().cast(), 8, 0, 8, null_mut()) },
            AclError::CONTEXT_NULL,
        );
        let mut dp = null_mut();
        err(
            unsafe { aclrtHostRegister(b.as_mut_ptr().cast(), 8, 0, &mut dp) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtSubscribeReport(1, null_mut()) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
}

#[test]
fn device_sync_timeout_and_wait_event_handles() {
    let _device = whole_device();
    let _d = Dev::new(0);
    let s = stream();
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 80 as *mut c_void) });
    err(
        unsafe { aclrtSynchronizeDeviceWithTimeout(1) },
        AclError::STREAM_SYNC_TIMEOUT,
    );
    ok(unsafe { aclrtSynchronizeDevice() });
    err(
        unsafe { aclrtStreamWaitEvent(s, 0x4242 as aclrtEvent) },
        AclError::INVALID_HANDLE,
    );
    let e = event();
    err(
        unsafe { aclrtStreamWaitEvent(0x4343 as aclrtStream, e) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtResetEvent(e, 0x4343 as aclrtStream) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtRecordEvent(e, 0x4343 as aclrtStream) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtQueryEventStatus(0x4444 as aclrtEvent, &mut 0) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtSynchronizeEvent(0x4444 as aclrtEvent) },
        AclError::INVALID_HANDLE,
    );
    let mut ts = 0;
    err(
        unsafe { aclrtEventGetTimestamp(0x4444 as aclrtEvent, &mut ts) },
        AclError::INVALID_HANDLE,
    );
    let mut ms = 0.0;
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, e, 0x4444 as aclrtEvent) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtSetStreamFailureMode(0x4343 as aclrtStream, 0) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtStreamGetPriority(0x4343 as aclrtStream, &mut 0) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtStreamGetFlags(0x4343 as aclrtStream, &mut 0) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtSubscribeReport(1, 0x4343 as aclrtStream) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtUnSubscribeReport(1, 0x4343 as aclrtStream) },
        AclError::INVALID_HANDLE,
    );
    err(unsafe { aclrtProcessReport(-2) }, AclError::PARAM_INVALID);
    ok(unsafe { aclrtDestroyEvent(e) });
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn async_copy_order_no_context_after_stream_check() {
    // A destroyed stream handle is reported (107017) before the missing context (107002).
    let s = {
        let _d = Dev::new(0);
        let s = stream();
        ok(unsafe { aclrtDestroyStream(s) });
        s as usize
    };
    std::thread::spawn(move || {
        let b = [0u8; 8];
        let mut c = [0u8; 8];
        let s = s as aclrtStream;
        err(
            unsafe { aclrtMemcpyAsync(c.as_mut_ptr().cast(), 8, b.as_ptr().cast(), 8, 1, s) },
            AclError::INVALID_HANDLE,
        );
        err(
            unsafe {
                aclrtMemcpyAsync(
                    c.as_mut_ptr().cast(),
                    8,
                    b.as_ptr().cast(),
                    8,
                    1,
                    null_mut(),
                )
            },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
}
