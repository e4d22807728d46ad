//! Functions the emulated SoCs (Atlas A2/A3) do not have, answered as the runtime does there:
//! counting notifies (`aclrtCntNotify*`, Atlas 350 only: the checks that come first, then
//! 207000) and stream configuration handles (no Atlas product: 207000, NULL for the handle),
//! each with a message that says so.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

fn code(e: AclError) -> aclError {
    e.code()
}

#[test]
fn counting_notifies_check_their_arguments_then_are_not_supported() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let mut c: aclrtCntNotify = null_mut();
    let invalid = code(AclError::PARAM_INVALID);
    // Create: the flag, a current device, the output, then 207000.
    err(unsafe { aclrtCntNotifyCreate(&mut c, 1) }, invalid);
    err(unsafe { aclrtCntNotifyCreate(null_mut(), 0) }, invalid);
    let r = unsafe { aclrtCntNotifyCreate(&mut c, 0) };
    let msg = take_msg();
    assert_eq!(r, code(AclError::FEATURE_NOT_SUPPORT));
    assert!(
        msg.contains("Atlas 350") && msg.contains("Ascend910B2"),
        "{msg}"
    );
    assert!(c.is_null());
    let r = std::thread::spawn(|| {
        let mut c: aclrtCntNotify = null_mut();
        unsafe { aclrtCntNotifyCreate(&mut c, 0) }
    })
    .join()
    .unwrap();
    assert_eq!(r, code(AclError::CONTEXT_NULL));
    // No counting notify can exist: any handle is 107017, NULL is 107000.
    let mut n: aclrtNotify = null_mut();
    ok(unsafe { aclrtCreateNotify(&mut n, 0) });
    let handle = code(AclError::INVALID_HANDLE);
    err(unsafe { aclrtCntNotifyDestroy(n) }, handle);
    err(unsafe { aclrtCntNotifyDestroy(null_mut()) }, invalid);
    let mut rec = aclrtCntNotifyRecordInfo {
        mode: ACL_RT_CNT_NOTIFY_RECORD_ADD_MODE,
        value: 1,
    };
    let mut wait = aclrtCntNotifyWaitInfo {
        mode: ACL_RT_CNT_NOTIFY_WAIT_EQUAL_MODE,
        value: 1,
        timeout: 0,
        isClear: 0,
        rsv: [0; 3],
    };
    // Record and wait: `info` first (the ACL layer), then the handles, then a NULL notify.
    let null_param = code(AclError::INVALID_PARAM);
    err(
        unsafe { aclrtCntNotifyRecord(null_mut(), s, null_mut()) },
        null_param,
    );
    err(
        unsafe { aclrtCntNotifyWaitWithTimeout(null_mut(), s, null_mut()) },
        null_param,
    );
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(unsafe { aclrtCntNotifyRecord(n, dead, &mut rec) }, handle);
    err(
        unsafe { aclrtCntNotifyRecord(null_mut(), dead, &mut rec) },
        handle,
    );
    err(
        unsafe { aclrtCntNotifyRecord(null_mut(), s, &mut rec) },
        invalid,
    );
    err(
        unsafe { aclrtCntNotifyWaitWithTimeout(n, s, &mut wait) },
        handle,
    );
    err(
        unsafe { aclrtCntNotifyWaitWithTimeout(null_mut(), dead, &mut wait) },
        handle,
    );
    err(
        unsafe { aclrtCntNotifyWaitWithTimeout(null_mut(), s, &mut wait) },
        invalid,
    );
    err(unsafe { aclrtCntNotifyReset(n, s) }, handle);
    err(unsafe { aclrtCntNotifyReset(null_mut(), dead) }, handle);
    err(unsafe { aclrtCntNotifyReset(null_mut(), s) }, invalid);
    let mut id = 0u32;
    err(unsafe { aclrtCntNotifyGetId(n, &mut id) }, handle);
    err(
        unsafe { aclrtCntNotifyGetId(null_mut(), null_mut()) },
        invalid,
    );
    err(unsafe { aclrtCntNotifyGetId(null_mut(), &mut id) }, invalid);
    ok(unsafe { aclrtDestroyNotify(n) });
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn stream_configuration_handles_are_supported_on_no_atlas_product() {
    let _d = Dev::new(0);
    let h = unsafe { aclrtCreateStreamConfigHandle() };
    assert!(h.is_null());
    let msg = take_msg();
    assert!(msg.contains("not supported on any Atlas product"), "{msg}");
    assert_eq!(
        unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) },
        code(AclError::FEATURE_NOT_SUPPORT)
    );
    let unsupported = code(AclError::FEATURE_NOT_SUPPORT);
    let mut cfg = aclrtStreamConfigHandle::default();
    let flags = 0u32;
    let r = unsafe {
        aclrtSetStreamConfigOpt(
            &mut cfg,
            ACL_RT_STREAM_FLAG,
            (&flags as *const u32).cast(),
            4,
        )
    };
    assert_eq!(r, unsupported);
    assert!(take_msg().contains("aclrtCreateStreamWithConfig"));
    let mut s: aclrtStream = null_mut();
    err(unsafe { aclrtCreateStreamV2(&mut s, &cfg) }, unsupported);
    assert!(s.is_null());
    err(
        unsafe { aclrtDestroyStreamConfigHandle(&mut cfg) },
        unsupported,
    );
}
