//! The data helpers of `acl_base.h`: data buffers, float16 conversion and data type sizes.

use super::*;
use half::f16;

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

fn buffer(p: *const aclDataBuffer) -> Option<(usize, usize)> {
    crate::data_buffer::get(p as usize)
}

/// `aclCreateDataBuffer`: a buffer describing `size` bytes at `data` (NULL data is allowed, as
/// a placeholder to fill later with `aclUpdateDataBuffer`).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclCreateDataBuffer(data: *mut c_void, size: usize) -> *mut aclDataBuffer {
    catch_unwind(|| crate::data_buffer::create(data as usize, size) as *mut aclDataBuffer)
        .unwrap_or(std::ptr::null_mut())
}

acl! {
    /// `aclDestroyDataBuffer`: destroys the description (not the memory it describes).
    fn aclDestroyDataBuffer(dataBuffer: *const aclDataBuffer) {
        crate::data_buffer::destroy(dataBuffer as usize)
    }
}

acl! {
    /// `aclUpdateDataBuffer`: points the buffer at other memory.
    fn aclUpdateDataBuffer(dataBuffer: *mut aclDataBuffer, data: *mut c_void, size: usize) {
        crate::data_buffer::update(dataBuffer as usize, data as usize, size)
    }
}

/// `aclGetDataBufferAddr`: the buffer's address (NULL for anything but a live buffer).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetDataBufferAddr(dataBuffer: *const aclDataBuffer) -> *mut c_void {
    buffer(dataBuffer).map_or(std::ptr::null_mut(), |(data, _)| data as *mut c_void)
}

/// `aclGetDataBufferSizeV2`: the buffer's size (0 for anything but a live buffer).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetDataBufferSizeV2(dataBuffer: *const aclDataBuffer) -> usize {
    buffer(dataBuffer).map_or(0, |(_, size)| size)
}

/// `aclGetDataBufferSize`: the buffer's size as `u32` (truncated; use the V2 function).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetDataBufferSize(dataBuffer: *const aclDataBuffer) -> u32 {
    buffer(dataBuffer).map_or(0, |(_, size)| size as u32)
}
