//! The headers' small helpers: float16 conversion, data type sizes, data buffers, package
//! versions, frees that synchronise first, event and peer queries, device UUIDs.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::time::Duration;

#[test]
fn float16_and_type_sizes() {
    unsafe {
        assert_eq!(aclFloatToFloat16(1.0), 0x3c00);
        assert_eq!(aclFloatToFloat16(-2.5), 0xc100);
        assert_eq!(
            aclFloatToFloat16(65520.0),
            0x7c00,
            "overflow rounds to infinity"
        );
        assert_eq!(aclFloat16ToFloat(0x3555), 0.333_251_95);
        assert!(aclFloat16ToFloat(aclFloatToFloat16(f32::NAN)).is_nan());
        // Ties to even: 1 + 2^-11 lies halfway between 1 and the next half.
        assert_eq!(aclFloatToFloat16(1.0 + 1.0 / 2048.0), 0x3c00);
        assert_eq!(aclDataTypeSize(ACL_FLOAT), 4);
        assert_eq!(aclDataTypeSize(ACL_FLOAT16), 2);
        assert_eq!(aclDataTypeSize(ACL_BF16), 2);
        assert_eq!(aclDataTypeSize(ACL_INT64), 8);
        assert_eq!(aclDataTypeSize(ACL_COMPLEX128), 16);
        assert_eq!(aclDataTypeSize(ACL_BOOL), 1);
        assert_eq!(aclDataTypeSize(ACL_DT_UNDEFINED), 0);
        assert_eq!(aclDataTypeSize(ACL_STRING), 0);
    }
}

#[test]
fn data_buffers() {
    let mut bytes = [0u8; 16];
    let b = unsafe { aclCreateDataBuffer(bytes.as_mut_ptr().cast(), 16) };
    assert!(!b.is_null());
    unsafe {
        assert_eq!(aclGetDataBufferAddr(b), bytes.as_mut_ptr().cast());
        assert_eq!(aclGetDataBufferSizeV2(b), 16);
        assert_eq!(aclGetDataBufferSize(b), 16);
        ok(aclUpdateDataBuffer(b, null_mut(), 0));
        assert!(aclGetDataBufferAddr(b).is_null());
        assert_eq!(aclGetDataBufferSizeV2(b), 0);
        // Anything but a live buffer: NULL, 0, 100000 — never read.
        let bogus = 0x40 as *const aclDataBuffer;
        assert!(aclGetDataBufferAddr(bogus).is_null());
        assert_eq!(aclGetDataBufferSizeV2(null()), 0);
        err(
            aclUpdateDataBuffer(null_mut(), null_mut(), 0),
            AclError::INVALID_PARAM,
        );
        ok(aclDestroyDataBuffer(b));
        err(aclDestroyDataBuffer(b), AclError::INVALID_PARAM);
        assert_eq!(aclGetDataBufferSizeV2(b), 0);
    }
}

fn text(c: &[std::ffi::c_char]) -> String {
    unsafe { std::ffi::CStr::from_ptr(c.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn package_versions() {
    let mut v: aclCANNPackageVersion = unsafe { std::mem::zeroed() };
    err(
        unsafe { aclsysGetCANNVersion(ACL_PKG_NAME_CANN, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclsysGetCANNVersion(99, &mut v) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclsysGetCANNVersion(ACL_PKG_NAME_RUNTIME, &mut v) });
    assert_eq!(
        (
            text(&v.version),
            text(&v.majorVersion),
            text(&v.minorVersion),
            text(&v.patchVersion)
        ),
        ("9.0.0".into(), "9".into(), "0".into(), "0".into())
    );
}

extern "C" fn pause(arg: *mut c_void) {
    std::thread::sleep(Duration::from_millis(arg as u64));
}

#[test]
fn frees_that_synchronise_and_event_and_peer_queries() {
    let _device = whole_device();
    let _d = Dev::new(0);
    let s = stream();
    let d = malloc(64);
    let h = malloc_host(64);
    err(
        unsafe { aclrtFreeWithDevSync(null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtFreeHostWithDevSync(null_mut()) },
        AclError::INVALID_PARAM,
    );
    // The queued copy runs before the memory goes: no task fails.
    ok(unsafe { aclrtLaunchHostFunc(s, Some(pause), 30 as *mut c_void) });
    ok(unsafe { aclrtMemcpyAsync(d, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    ok(unsafe { aclrtFreeWithDevSync(d) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtFreeHostWithDevSync(h) });
    err(
        unsafe { aclrtFreeHostWithDevSync(h) },
        AclError::MEMORY_FREE,
    );

    // aclrtQueryEvent numbers COMPLETE 0 and NOT_READY 1.
    let e = event();
    let mut st = 9;
    err(
        unsafe { aclrtQueryEvent(null_mut(), &mut st) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtQueryEvent(e, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtLaunchHostFunc(s, Some(pause), 50 as *mut c_void) });
    ok(unsafe { aclrtRecordEvent(e, s) });
    ok(unsafe { aclrtQueryEvent(e, &mut st) });
    assert_eq!(st, ACL_EVENT_STATUS_NOT_READY);
    ok(unsafe { aclrtSynchronizeEvent(e) });
    ok(unsafe { aclrtQueryEvent(e, &mut st) });
    assert_eq!(st, ACL_EVENT_STATUS_COMPLETE);
    ok(unsafe { aclrtDestroyEvent(e) });
    ok(unsafe { aclrtDestroyStream(s) });

    let mut p = 9;
    err(
        unsafe { aclrtDevicePeerAccessStatus(0, 1, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtDevicePeerAccessStatus(0, 99, &mut p) },
        AclError::INVALID_DEVICEID,
    );
    ok(unsafe { aclrtDeviceEnablePeerAccess(1, 0) });
    ok(unsafe { aclrtDevicePeerAccessStatus(0, 1, &mut p) });
    assert_eq!(p, 1);
    ok(unsafe { aclrtDevicePeerAccessStatus(1, 0, &mut p) });
    assert_eq!(p, 0, "one-way");
    ok(unsafe { aclrtDeviceDisablePeerAccess(1) });
    ok(unsafe { aclrtDevicePeerAccessStatus(0, 1, &mut p) });
    assert_eq!(p, 0);

    let (mut a, mut b) = (aclrtUuid::default(), aclrtUuid::default());
    err(
        unsafe { aclrtDeviceGetUuid(0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtDeviceGetUuid(99, &mut a) },
        AclError::INVALID_DEVICEID,
    );
    ok(unsafe { aclrtDeviceGetUuid(0, &mut a) });
    ok(unsafe { aclrtDeviceGetUuid(1, &mut b) });
    assert_ne!(a.bytes, b.bytes);
    let mut again = aclrtUuid::default();
    ok(unsafe { aclrtDeviceGetUuid(0, &mut again) });
    assert_eq!(a.bytes, again.bytes, "stable");
}

#[test]
fn event_ids_word_fills_and_stream_attributes() {
    let _d = Dev::new(0);
    let (a, b) = (event(), event());
    let (mut ia, mut ib) = (0, 0);
    err(
        unsafe { aclrtGetEventId(null_mut(), &mut ia) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetEventId(a, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtGetEventId(a, &mut ia) });
    ok(unsafe { aclrtGetEventId(b, &mut ib) });
    assert_ne!(ia, ib);
    ok(unsafe { aclrtDestroyEvent(a) });
    ok(unsafe { aclrtDestroyEvent(b) });
    err(
        unsafe { aclrtGetEventId(a, &mut ia) },
        AclError::INVALID_HANDLE,
    );

    // 32-bit fills, synchronous and queued.
    let d = malloc(64);
    ok(unsafe { aclrtMemsetD32(d, 64, 0, 0) });
    err(
        unsafe { aclrtMemsetD32(null_mut(), 64, 1, 4) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemsetD32(d, 15, 1, 4) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemsetD32(d, 128, 1, 32) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMemsetD32(d, 64, 0xdead_beef, 16) });
    let mut out = [0u8; 64];
    d2h(&mut out, d);
    assert!(
        out.chunks(4)
            .all(|w| u32::from_ne_bytes(w.try_into().unwrap()) == 0xdead_beef)
    );
    let s = stream();
    ok(unsafe { aclrtMemsetD32Async(d.cast::<u8>().wrapping_add(4).cast(), 60, 7, 2, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    d2h(&mut out, d);
    let words: Vec<u32> = out
        .chunks(4)
        .map(|w| u32::from_ne_bytes(w.try_into().unwrap()))
        .collect();
    assert_eq!(&words[..4], &[0xdead_beef, 7, 7, 0xdead_beef]);
    free(d);

    // Stream attributes.
    let mut v: aclrtStreamAttrValue = unsafe { std::mem::zeroed() };
    err(
        unsafe { aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetStreamAttribute(s, 99, &mut v) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, &mut v) });
    assert_eq!(unsafe { v.failureMode }, 0);
    v.userCustomTag = 42;
    ok(unsafe { aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &mut v) });
    let mut got: aclrtStreamAttrValue = unsafe { std::mem::zeroed() };
    ok(unsafe { aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &mut got) });
    assert_eq!(unsafe { got.userCustomTag }, 42);
    v.overflowSwitch = 2;
    err(
        unsafe { aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &mut v) },
        AclError::PARAM_INVALID,
    );
    v.overflowSwitch = 1;
    ok(unsafe { aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &mut v) });
    ok(unsafe { aclrtGetStreamAttribute(s, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &mut got) });
    assert_eq!(unsafe { got.overflowSwitch }, 1);
    err(
        unsafe { aclrtSetStreamAttribute(s, 99, &mut v) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtSetStreamAttribute(s, ACL_STREAM_ATTR_FAILURE_MODE, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtDestroyStream(s) });
    // The failure mode through the attribute, on a stream of a context of its own (STOP
    // switches the whole context).
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut ctx = null_mut();
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    let t = stream();
    v.failureMode = 1;
    ok(unsafe { aclrtSetStreamAttribute(t, ACL_STREAM_ATTR_FAILURE_MODE, &mut v) });
    ok(unsafe { aclrtGetStreamAttribute(t, ACL_STREAM_ATTR_FAILURE_MODE, &mut got) });
    assert_eq!(unsafe { got.failureMode }, 1);
    v.failureMode = 0;
    err(
        unsafe { aclrtSetStreamAttribute(t, ACL_STREAM_ATTR_FAILURE_MODE, &mut v) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclrtDestroyContext(ctx) });
    ok(unsafe { aclrtSetCurrentContext(cur) });
}
