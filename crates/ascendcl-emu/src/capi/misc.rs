//! Small helpers of the headers: float16 conversion, data type sizes, data buffers, package
//! versions, frees that synchronise the device first, event and peer queries, device UUIDs.

use super::*;
use half::f16;
use std::collections::HashMap;
use std::sync::LazyLock;

/// `aclFloat16ToFloat`: an IEEE half-precision value as `f32` (exact).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclFloat16ToFloat(value: aclFloat16) -> f32 {
    f16::from_bits(value).to_f32()
}

/// `aclFloatToFloat16`: an `f32` rounded to the nearest IEEE half-precision value (ties to
/// even; overflow to infinity, NaN stays NaN).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclFloatToFloat16(value: f32) -> aclFloat16 {
    f16::from_f32(value).to_bits()
}

/// `aclDataTypeSize`: the size in bytes of one element of `dataType`; 0 for strings, sub-byte
/// and unknown types.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclDataTypeSize(dataType: aclDataType) -> usize {
    match dataType {
        ACL_INT8 | ACL_UINT8 | ACL_BOOL | ACL_HIFLOAT8 | ACL_FLOAT8_E5M2 | ACL_FLOAT8_E4M3FN
        | ACL_FLOAT8_E8M0 => 1,
        ACL_FLOAT16 | ACL_BF16 | ACL_INT16 | ACL_UINT16 => 2,
        ACL_FLOAT | ACL_INT32 | ACL_UINT32 | ACL_COMPLEX32 => 4,
        ACL_INT64 | ACL_UINT64 | ACL_DOUBLE | ACL_COMPLEX64 => 8,
        ACL_COMPLEX128 => 16,
        _ => 0,
    }
}

/// A data buffer: an address and a size.
#[derive(Debug, Clone, Copy)]
struct DataBuffer {
    data: usize,
    size: usize,
}

/// The live data buffers, so that a pointer that is not one is refused rather than read.
static BUFFERS: LazyLock<Mutex<HashMap<usize, DataBuffer>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn buffer(p: *const aclDataBuffer) -> Option<DataBuffer> {
    crate::sync::lock(&BUFFERS).get(&(p as usize)).copied()
}

/// `aclCreateDataBuffer`: a buffer describing `size` bytes at `data` (NULL data is allowed, as
/// a placeholder to fill later with `aclUpdateDataBuffer`).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclCreateDataBuffer(data: *mut c_void, size: usize) -> *mut aclDataBuffer {
    catch_unwind(|| {
        let h = state::new_handle();
        crate::sync::lock(&BUFFERS).insert(
            h,
            DataBuffer {
                data: data as usize,
                size,
            },
        );
        h as *mut aclDataBuffer
    })
    .unwrap_or(std::ptr::null_mut())
}

acl! {
    /// `aclDestroyDataBuffer`: destroys the description (not the memory it describes).
    fn aclDestroyDataBuffer(dataBuffer: *const aclDataBuffer) {
        match crate::sync::lock(&BUFFERS).remove(&(dataBuffer as usize)) {
            Some(_) => Ok(()),
            None => fail(INVALID_PARAM, "dataBuffer is NULL or not a live data buffer"),
        }
    }
}

acl! {
    /// `aclUpdateDataBuffer`: points the buffer at other memory.
    fn aclUpdateDataBuffer(dataBuffer: *mut aclDataBuffer, data: *mut c_void, size: usize) {
        match crate::sync::lock(&BUFFERS).get_mut(&(dataBuffer as usize)) {
            Some(b) => {
                *b = DataBuffer { data: data as usize, size };
                Ok(())
            }
            None => fail(INVALID_PARAM, "dataBuffer is NULL or not a live data buffer"),
        }
    }
}

/// `aclGetDataBufferAddr`: the buffer's address (NULL for anything but a live buffer).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetDataBufferAddr(dataBuffer: *const aclDataBuffer) -> *mut c_void {
    buffer(dataBuffer).map_or(std::ptr::null_mut(), |b| b.data as *mut c_void)
}

/// `aclGetDataBufferSizeV2`: the buffer's size (0 for anything but a live buffer).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetDataBufferSizeV2(dataBuffer: *const aclDataBuffer) -> usize {
    buffer(dataBuffer).map_or(0, |b| b.size)
}

/// `aclGetDataBufferSize`: the buffer's size as `u32` (truncated; use the V2 function).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetDataBufferSize(dataBuffer: *const aclDataBuffer) -> u32 {
    buffer(dataBuffer).map_or(0, |b| b.size as u32)
}

acl! {
    /// `aclsysGetCANNVersion`: "9.0.0" (major "9", minor "0", patch "0") for the CANN, runtime,
    /// compiler, HCCL and toolkit packages; 100000 for other names.
    fn aclsysGetCANNVersion(name: aclCANNPackageName, version: *mut aclCANNPackageVersion) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(version, "version") }?;
        if name > ACL_PKG_NAME_TOOLKIT {
            return fail(INVALID_PARAM, format!("name {name} is not a CANN package"));
        }
        // SAFETY: all-zero bytes are a valid aclCANNPackageVersion (arrays of chars).
        let mut v: aclCANNPackageVersion = unsafe { std::mem::zeroed() };
        let put = |dst: &mut [c_char], s: &str| {
            for (d, b) in dst.iter_mut().zip(s.bytes()) {
                *d = b as c_char;
            }
        };
        put(&mut v.version, "9.0.0");
        put(&mut v.majorVersion, "9");
        put(&mut v.minorVersion, "0");
        put(&mut v.patchVersion, "0");
        out.set(v);
        Ok(())
    }
}

acl! {
    /// `aclrtFreeWithDevSync`: synchronises the current device, then frees device memory.
    fn aclrtFreeWithDevSync(devPtr: *mut c_void) {
        if devPtr.is_null() {
            return fail(INVALID_PARAM, "devPtr is NULL");
        }
        state::synchronize_device(None)?;
        memory::write().free(devPtr as usize, Kind::Device(0))
    }
}

acl! {
    /// `aclrtFreeHostWithDevSync`: synchronises the current device, then frees pinned memory.
    fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) {
        if hostPtr.is_null() {
            return fail(INVALID_PARAM, "hostPtr is NULL");
        }
        state::synchronize_device(None)?;
        memory::write().free(hostPtr as usize, Kind::Pinned)
    }
}

acl! {
    /// `aclrtQueryEvent`: `ACL_EVENT_STATUS_COMPLETE` (0) once the latest record was reached,
    /// else `ACL_EVENT_STATUS_NOT_READY` (1) (the numbering opposite to
    /// `aclrtQueryEventStatus`).
    fn aclrtQueryEvent(event: aclrtEvent, status: *mut aclrtEventStatus) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        let ev = state::event(handle(event))?;
        out.set(if ev.is_complete() { ACL_EVENT_STATUS_COMPLETE } else { ACL_EVENT_STATUS_NOT_READY });
        Ok(())
    }
}

acl! {
    /// `aclrtDevicePeerAccessStatus`: 1 when `deviceId` enabled access to `peerDeviceId`.
    fn aclrtDevicePeerAccessStatus(deviceId: i32, peerDeviceId: i32, status: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(status, "status") }?;
        state::check_device(deviceId)?;
        state::check_device(peerDeviceId)?;
        out.set(i32::from(state::peer_enabled(deviceId, peerDeviceId)));
        Ok(())
    }
}

acl! {
    /// `aclrtDeviceGetUuid`: a UUID of the emulated device, stable across processes and runs
    /// (derived from the device id and the SoC name).
    fn aclrtDeviceGetUuid(deviceId: i32, uuid: *mut aclrtUuid) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(uuid, "uuid") }?;
        state::check_device(deviceId)?;
        let soc = config::with(|c| c.soc.clone());
        // FNV-1a over the SoC name, then the device id, into 16 bytes.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in soc.bytes().chain(deviceId.to_le_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut bytes = [0 as c_char; 16];
        for (i, b) in h.to_le_bytes().iter().chain((h.rotate_left(29) ^ 0x6163_6c65_6d75).to_le_bytes().iter()).enumerate() {
            bytes[i] = *b as c_char;
        }
        out.set(aclrtUuid { bytes });
        Ok(())
    }
}

acl! {
    /// `aclrtGetEventId`: a small number identifying the event in the process.
    fn aclrtGetEventId(event: aclrtEvent, eventId: *mut u32) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(eventId, "eventId") }?;
        out.set(state::event(handle(event))?.id);
        Ok(())
    }
}

acl! {
    /// `aclrtMemsetD32`: fills `N` 32-bit words with `value` (`4 * N` at most `memSize`, else
    /// 107000); `N` 0 succeeds at once.
    fn aclrtMemsetD32(ptr: *mut c_void, memSize: usize, value: u32, N: usize) {
        // SAFETY: C contract: pageable memory is valid for the fill.
        unsafe { copy::memset_d32(ptr as usize, memSize, value, N, None) }
    }
}

acl! {
    /// `aclrtMemsetD32Async`: as `aclrtMemsetD32`, queued on the stream (pageable memory is
    /// filled before returning, after the stream is synchronised).
    fn aclrtMemsetD32Async(ptr: *mut c_void, memSize: usize, value: u32, N: usize, stream: aclrtStream) {
        // SAFETY: C contract: the memory stays valid until the task ran.
        unsafe { copy::memset_d32(ptr as usize, memSize, value, N, Some(handle(stream))) }
    }
}

acl! {
    /// `aclrtGetStreamAttribute`: `ACL_STREAM_ATTR_FAILURE_MODE` (the stream's failure mode),
    /// `FLOAT_OVERFLOW_CHECK`, `USER_CUSTOM_TAG`, `CACHE_OP_INFO` (as set, 0 by default); other
    /// attributes 107000.
    fn aclrtGetStreamAttribute(stream: aclrtStream, stmAttrType: aclrtStreamAttr, value: *mut aclrtStreamAttrValue) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        let s = state::stream(handle(stream))?;
        // SAFETY: all-zero bytes are a valid value of the union.
        let mut v: aclrtStreamAttrValue = unsafe { std::mem::zeroed() };
        match stmAttrType {
            ACL_STREAM_ATTR_FAILURE_MODE => v.failureMode = s.failure_mode(),
            ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK => v.overflowSwitch = s.attr(stmAttrType),
            ACL_STREAM_ATTR_USER_CUSTOM_TAG => v.userCustomTag = s.attr(stmAttrType),
            ACL_STREAM_ATTR_CACHE_OP_INFO => v.cacheOpInfoSwitch = s.attr(stmAttrType),
            other => return fail(RT_PARAM_INVALID, format!("stmAttrType {other} is not a stream attribute")),
        }
        out.set(v);
        Ok(())
    }
}

acl! {
    /// `aclrtSetStreamAttribute`: the failure mode (the rules of `aclrtSetStreamFailureMode`),
    /// the float-overflow check and cache switches (0 or 1, else 107000), the user tag.
    fn aclrtSetStreamAttribute(stream: aclrtStream, stmAttrType: aclrtStreamAttr, value: *mut aclrtStreamAttrValue) {
        if value.is_null() {
            return fail(INVALID_PARAM, "value is NULL");
        }
        let s = state::stream(handle(stream))?;
        // SAFETY: non-NULL and valid for reading the union (C contract); every member is plain
        // integers, so any bytes are a valid value.
        let v = unsafe { *value };
        match stmAttrType {
            ACL_STREAM_ATTR_FAILURE_MODE => {
                // SAFETY: reading the member this attribute uses.
                let mode = unsafe { v.failureMode };
                if mode > 1 {
                    return fail(INVALID_PARAM, format!("failure mode {mode} is not 0 or 1"));
                }
                state::current_ids()?;
                s.set_failure_mode(mode, || state::check_stream_context(&s))
            }
            ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK | ACL_STREAM_ATTR_CACHE_OP_INFO => {
                // SAFETY: reading a u32 member of the union.
                let on = unsafe { v.overflowSwitch };
                if on > 1 {
                    return fail(RT_PARAM_INVALID, format!("switch {on} is not 0 or 1"));
                }
                s.set_attr(stmAttrType, on);
                Ok(())
            }
            ACL_STREAM_ATTR_USER_CUSTOM_TAG => {
                // SAFETY: reading a u32 member of the union.
                s.set_attr(stmAttrType, unsafe { v.userCustomTag });
                Ok(())
            }
            other => fail(RT_PARAM_INVALID, format!("stmAttrType {other} is not a stream attribute")),
        }
    }
}
