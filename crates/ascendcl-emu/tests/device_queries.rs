//! Device queries and errors: capabilities and attributes from the SoC table, utilisation,
//! status, resource limits, error details, task ids and exception callbacks, with the codes of
//! every documented check.
// The exception-callback test is Linux-only (see it); its helpers are unused elsewhere.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::sync::{Mutex, MutexGuard};

/// Tests that change the configuration run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn capability(dev: u32, info: aclDeviceInfo) -> Result<i64, AclError> {
    let mut v = -7;
    match unsafe { aclGetDeviceCapability(dev, info, &mut v) } {
        0 => Ok(v),
        e => {
            take_msg();
            Err(AclError(e))
        }
    }
}

fn info(dev: u32, attr: aclrtDevAttr) -> Result<i64, AclError> {
    let mut v = -7;
    match unsafe { aclrtGetDeviceInfo(dev, attr, &mut v) } {
        0 => Ok(v),
        e => {
            take_msg();
            Err(AclError(e))
        }
    }
}

#[test]
fn capabilities_and_attributes_come_from_the_soc_table() {
    let _g = serial();
    let _d = Dev::new(0);
    // aclGetDeviceCapability: the ACL layer answers every bad input with 100000.
    err(
        unsafe { aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, null_mut()) },
        AclError::INVALID_PARAM,
    );
    assert_eq!(
        capability(99, ACL_DEVICE_INFO_AI_CORE_NUM),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(capability(0, 3), Err(AclError::INVALID_PARAM));
    assert_eq!(
        capability(0, ACL_DEVICE_INFO_UNDEFINED),
        Err(AclError::INVALID_PARAM)
    );
    // The default SoC, Ascend910B2: 24 AI cores, 48 vector cores, 192 MiB of L2.
    assert_eq!(capability(0, ACL_DEVICE_INFO_AI_CORE_NUM), Ok(24));
    assert_eq!(capability(1, ACL_DEVICE_INFO_VECTOR_CORE_NUM), Ok(48));
    assert_eq!(capability(0, ACL_DEVICE_INFO_L2_SIZE), Ok(192 << 20));
    // aclrtGetDeviceInfo: a device past the count is 107000 (not 107001), like an unknown
    // attribute.
    err(
        unsafe { aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, null_mut()) },
        AclError::INVALID_PARAM,
    );
    assert_eq!(
        info(99, ACL_DEV_ATTR_AICORE_CORE_NUM),
        Err(AclError::PARAM_INVALID)
    );
    assert_eq!(info(0, 999), Err(AclError::PARAM_INVALID));
    assert_eq!(info(0, 0), Err(AclError::PARAM_INVALID));
    assert_eq!(info(0, ACL_DEV_ATTR_AICPU_CORE_NUM), Ok(6));
    assert_eq!(info(0, ACL_DEV_ATTR_AICORE_CORE_NUM), Ok(24));
    assert_eq!(info(0, ACL_DEV_ATTR_CUBE_CORE_NUM), Ok(24));
    assert_eq!(info(0, ACL_DEV_ATTR_VECTOR_CORE_NUM), Ok(48));
    assert_eq!(
        info(0, ACL_DEV_ATTR_WARP_SIZE),
        Ok(0),
        "SIMT: Ascend 950 only"
    );
    assert_eq!(
        info(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE),
        Ok(ascendcl_emu::config().memory as i64)
    );
    assert_eq!(info(0, ACL_DEV_ATTR_L2_CACHE_SIZE), Ok(192 << 20));
    assert_eq!(info(1, ACL_DEV_ATTR_PHY_CHIP_ID), Ok(1));
    assert_eq!(info(0, ACL_DEV_ATTR_IS_VIRTUAL), Ok(0));
    assert_eq!(info(0, ACL_DEV_ATTR_NPU_ARCH), Ok(2201));
    // Another SoC of the table.
    let saved = ascendcl_emu::config();
    ascendcl_emu::set_config(ascendcl_emu::Config {
        soc: "Ascend910B4".to_string(),
        ..saved.clone()
    });
    let b4 = (
        capability(0, ACL_DEVICE_INFO_AI_CORE_NUM),
        info(0, ACL_DEV_ATTR_VECTOR_CORE_NUM),
        info(0, ACL_DEV_ATTR_L2_CACHE_SIZE),
    );
    ascendcl_emu::set_config(saved.clone());
    assert_eq!(b4, (Ok(20), Ok(40), Ok(96 << 20)));
    // aclrtGetDeviceCapability: feature type first (107000), then the device (107001).
    let mut v = -7;
    err(
        unsafe { aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetDeviceCapability(99, 2, &mut v) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtGetDeviceCapability(99, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &mut v) },
        AclError::INVALID_DEVICEID,
    );
    // Task updates of AI core and vector tasks: supported on the A2 part, as the cross-version
    // sample's README shows; the cross-device memory-queue events are not emulated.
    ok(unsafe {
        aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &mut v)
    });
    assert_eq!(v, ACL_DEV_FEATURE_SUPPORT as i32);
    ok(unsafe { aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &mut v) });
    assert_eq!(v, ACL_DEV_FEATURE_NOT_SUPPORT as i32);
    // IPV350 has no model runtime instances, so no task updates either.
    ascendcl_emu::set_config(ascendcl_emu::Config {
        soc: "IPV350".to_string(),
        ..saved.clone()
    });
    let r = unsafe {
        aclrtGetDeviceCapability(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, &mut v)
    };
    ascendcl_emu::set_config(saved);
    ok(r);
    assert_eq!(v, ACL_DEV_FEATURE_NOT_SUPPORT as i32);
}

fn compatible(name: &std::ffi::CStr) -> Result<i32, AclError> {
    let mut v = -7;
    match unsafe { aclrtCheckArchCompatibility(name.as_ptr(), &mut v) } {
        0 => Ok(v),
        e => {
            take_msg();
            Err(AclError(e))
        }
    }
}

#[test]
fn arch_compatibility_compares_npu_architectures() {
    let _g = serial();
    let _d = Dev::new(0);
    // The emulated SoC's own name, as the cross-version sample passes it: compatible.
    let own = unsafe { std::ffi::CStr::from_ptr(aclrtGetSocName()) }.to_owned();
    assert_eq!(compatible(&own), Ok(1));
    // Another SoC of the same architecture (dav-2201: A2 and A3) is compatible; others are not.
    assert_eq!(compatible(c"Ascend910B4"), Ok(1));
    assert_eq!(compatible(c"Ascend910_9392"), Ok(1));
    assert_eq!(compatible(c"Ascend310P3"), Ok(0));
    assert_eq!(compatible(c"Ascend910A"), Ok(0));
    assert_eq!(compatible(c"Ascend950PR_9579"), Ok(0));
    // A name no platform configuration describes, an empty name, NULL: 107000.
    assert_eq!(compatible(c"Ascend999"), Err(AclError::PARAM_INVALID));
    assert_eq!(compatible(c""), Err(AclError::PARAM_INVALID));
    err(
        unsafe { aclrtCheckArchCompatibility(null(), &mut 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtCheckArchCompatibility(c"Ascend910B3".as_ptr(), null_mut()) },
        AclError::PARAM_INVALID,
    );
    // On IPV350 (architecture 3505) the A2 parts are not compatible, the 035 parts are.
    let saved = ascendcl_emu::config();
    ascendcl_emu::set_config(ascendcl_emu::Config {
        soc: "IPV350".to_string(),
        ..saved.clone()
    });
    let on_ipv350 = (compatible(c"Ascend910B3"), compatible(c"Ascend035A"));
    ascendcl_emu::set_config(saved);
    assert_eq!(on_ipv350, (Ok(0), Ok(1)));
}

#[test]
fn utilisation_status_and_error_details() {
    let _d = Dev::new(0);
    let mut u = aclrtUtilizationInfo {
        cubeUtilization: 7,
        vectorUtilization: 7,
        aicpuUtilization: 7,
        memoryUtilization: 7,
        utilizationExtend: null_mut(),
    };
    err(
        unsafe { aclrtGetDeviceUtilizationRate(0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    let mut extended = u;
    extended.utilizationExtend = 8 as *mut aclrtUtilizationExtendInfo;
    err(
        unsafe { aclrtGetDeviceUtilizationRate(0, &mut extended) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtGetDeviceUtilizationRate(0, &mut u) });
    assert_eq!(
        (
            u.cubeUtilization,
            u.vectorUtilization,
            u.aicpuUtilization,
            u.memoryUtilization
        ),
        (0, 0, 0, -1)
    );
    // A query that fails is not an error: -1 everywhere.
    ok(unsafe { aclrtGetDeviceUtilizationRate(99, &mut u) });
    assert_eq!((u.cubeUtilization, u.memoryUtilization), (-1, -1));

    let mut st = 7;
    err(
        unsafe { aclrtQueryDeviceStatus(0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtQueryDeviceStatus(99, &mut st) },
        AclError::INVALID_DEVICEID,
    );
    ok(unsafe { aclrtQueryDeviceStatus(1, &mut st) });
    assert_eq!(st, ACL_RT_DEVICE_STATUS_NORMAL);

    let mut e: aclrtErrorInfo = unsafe { std::mem::zeroed() };
    e.errorType = 77;
    e.hasDetail = 1;
    err(
        unsafe { aclrtGetErrorVerbose(0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetErrorVerbose(99, &mut e) },
        AclError::INVALID_DEVICEID,
    );
    ok(unsafe { aclrtGetErrorVerbose(0, &mut e) });
    assert_eq!(
        (e.errorType, e.hasDetail, e.tryRepair),
        (ACL_RT_NO_ERROR, 0, 0)
    );
}

#[test]
fn resource_limits_per_device_stream_and_thread() {
    let _g = serial();
    // The checks in order: negative id 107001, type 107000, device 107001, device not open
    // 507033, value above the hardware 107000.
    err(
        unsafe { aclrtSetDeviceResLimit(-1, 5, 1) },
        AclError::INVALID_DEVICEID,
    );
    err(
        unsafe { aclrtSetDeviceResLimit(0, 2, 1) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtSetDeviceResLimit(99, 0, 1) },
        AclError::INVALID_DEVICEID,
    );
    let d1_open = ascendcl_emu::device_refs(1) > 0;
    if !d1_open {
        err(
            unsafe { aclrtSetDeviceResLimit(1, 0, 1) },
            AclError::DEV_SETUP_ERROR,
        );
    }
    let _d = Dev::new(0);
    err(
        unsafe { aclrtSetDeviceResLimit(0, 0, 25) },
        AclError::PARAM_INVALID,
    );
    let mut v = 0;
    err(
        unsafe { aclrtGetDeviceResLimit(0, 0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &mut v) });
    assert_eq!(v, 24, "the hardware count by default");
    ok(unsafe { aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, 8) });
    ok(unsafe { aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, 16) });
    ok(unsafe { aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &mut v) });
    assert_eq!(v, 8);
    // The calling thread: the device's limits ...
    err(
        unsafe { aclrtGetResInCurrentThread(0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetResInCurrentThread(2, &mut v) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &mut v) });
    assert_eq!(v, 16);
    // ... or those of the stream it uses.
    let s = stream();
    err(
        unsafe { aclrtSetStreamResLimit(s, 1, 49) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, 4) });
    ok(unsafe { aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, &mut v) });
    assert_eq!(v, 4);
    ok(unsafe { aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &mut v) });
    assert_eq!(v, 8, "no cube limit of its own: the device's");
    ok(unsafe { aclrtUseStreamResInCurrentThread(s) });
    ok(unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &mut v) });
    assert_eq!(v, 4);
    ok(unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &mut v) });
    assert_eq!(v, 8);
    ok(unsafe { aclrtUnuseStreamResInCurrentThread(s) });
    ok(unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &mut v) });
    assert_eq!(v, 16);
    ok(unsafe { aclrtResetStreamResLimit(s) });
    ok(unsafe { aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, &mut v) });
    assert_eq!(v, 16);
    ok(unsafe { aclrtDestroyStream(s) });
    err(
        unsafe { aclrtSetStreamResLimit(s, 0, 1) },
        AclError::INVALID_HANDLE,
    );
    // Without a context the thread has no device to ask.
    std::thread::spawn(|| {
        let mut v = 0;
        err(
            unsafe { aclrtGetResInCurrentThread(0, &mut v) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
    ok(unsafe { aclrtResetDeviceResLimit(0) });
    ok(unsafe { aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_VECTOR_CORE, &mut v) });
    assert_eq!(v, 48);
}

extern "C" fn nothing(_: *mut c_void) {}

#[test]
fn the_last_task_id_of_the_calling_thread() {
    // Not alongside the test whose task fails on device 0.
    let _g = serial();
    std::thread::spawn(|| {
        let _d = Dev::new(0);
        let mut id = 0;
        err(
            unsafe { aclrtGetThreadLastTaskId(null_mut()) },
            AclError::INVALID_PARAM,
        );
        err(
            unsafe { aclrtGetThreadLastTaskId(&mut id) },
            AclError::PARAM_INVALID,
        );
        let s = stream();
        for _ in 0..3 {
            ok(unsafe { aclrtLaunchHostFunc(s, Some(nothing), null_mut()) });
        }
        ok(unsafe { aclrtGetThreadLastTaskId(&mut id) });
        assert_eq!(id, 3);
        // The default stream is not a created stream.
        ok(unsafe { aclrtLaunchHostFunc(null_mut(), Some(nothing), null_mut()) });
        let mut again = 0;
        ok(unsafe { aclrtGetThreadLastTaskId(&mut again) });
        assert_eq!(again, 3);
        ok(unsafe { aclrtSynchronizeStream(null_mut()) });
        ok(unsafe { aclrtDestroyStream(s) });
    })
    .join()
    .unwrap();
}

/// One exception record: (task, stream, thread, device, code).
type Record = (u32, u32, u32, u32, u32);

/// What the exception callback saw.
static SEEN: Mutex<Vec<Record>> = Mutex::new(Vec::new());

extern "C" fn on_exception(info: *mut aclrtExceptionInfo) {
    let f = unsafe {
        (
            aclrtGetTaskIdFromExceptionInfo(info),
            aclrtGetStreamIdFromExceptionInfo(info),
            aclrtGetThreadIdFromExceptionInfo(info),
            aclrtGetDeviceIdFromExceptionInfo(info),
            aclrtGetErrorCodeFromExceptionInfo(info),
        )
    };
    SEEN.lock().unwrap().push(f);
}

extern "C" fn sleep_ms(arg: *mut c_void) {
    std::thread::sleep(std::time::Duration::from_millis(arg as u64));
}

// The thread id the record carries is the kernel's (gettid, Linux only).
#[cfg(target_os = "linux")]
#[test]
fn a_failed_task_is_reported_to_the_exception_callback() {
    let _g = serial();
    let _d = Dev::new(0);
    for f in [
        aclrtGetTaskIdFromExceptionInfo,
        aclrtGetStreamIdFromExceptionInfo,
        aclrtGetThreadIdFromExceptionInfo,
        aclrtGetDeviceIdFromExceptionInfo,
        aclrtGetErrorCodeFromExceptionInfo,
    ] {
        assert_eq!(unsafe { f(null()) }, u32::MAX);
    }
    ok(unsafe { aclrtSetExceptionInfoCallback(Some(on_exception)) });
    let s = stream();
    let d = malloc(64);
    let h = malloc_host(64);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), 30 as *mut c_void) });
    ok(unsafe { aclrtMemcpyAsync(d, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    let mut task = 0;
    ok(unsafe { aclrtGetThreadLastTaskId(&mut task) });
    // Freed before the copy runs: the copy fails on the device.
    free(d);
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::RT_INTERNAL_ERROR,
    );
    let mut sid = 0;
    ok(unsafe { aclrtStreamGetId(s, &mut sid) });
    let tid = unsafe { libc::gettid() } as u32;
    ok(unsafe { aclrtSetExceptionInfoCallback(None) });
    let seen = SEEN.lock().unwrap().clone();
    assert!(
        seen.contains(&(
            task,
            sid as u32,
            tid,
            0,
            AclError::RT_INTERNAL_ERROR.code() as u32
        )),
        "{seen:?} lacks task {task} of stream {sid} from thread {tid}"
    );
    free_host(h);
    ok(unsafe { aclrtDestroyStream(s) });
}
