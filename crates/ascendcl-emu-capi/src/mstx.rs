//! mstx (`mstx/ms_tools_ext.h` of the emulator root): marks and ranges, exported under their
//! names; the emulator root's `lib64/libmsprofiler.so` is a link to this library.

use ascendcl_emu::capi::mstx as m;
use ascendcl_sys::aclrtStream;
use std::ffi::{c_char, c_void};

/// `mstxMarkA`, run by the emulator.
///
/// # Safety
/// `message` is NULL or a NUL-terminated string; `stream` is NULL or a stream of this runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxMarkA(message: *const c_char, stream: aclrtStream) {
    // SAFETY: the emulator's function of this signature; the caller upholds the C contract.
    unsafe { m::mstxMarkA(message, stream) }
}

/// `mstxRangeStartA`, run by the emulator.
///
/// # Safety
/// As [`mstxMarkA`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxRangeStartA(message: *const c_char, stream: aclrtStream) -> u64 {
    // SAFETY: as above.
    unsafe { m::mstxRangeStartA(message, stream) }
}

/// `mstxRangeEnd`, run by the emulator.
#[unsafe(no_mangle)]
pub extern "C" fn mstxRangeEnd(id: u64) {
    m::mstxRangeEnd(id)
}

/// `mstxDomainCreateA`, run by the emulator.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxDomainCreateA(name: *const c_char) -> *mut c_void {
    // SAFETY: as above.
    unsafe { m::mstxDomainCreateA(name) }
}

/// `mstxDomainDestroy`, run by the emulator.
#[unsafe(no_mangle)]
pub extern "C" fn mstxDomainDestroy(domain: *mut c_void) {
    m::mstxDomainDestroy(domain)
}

/// `mstxDomainMarkA`, run by the emulator.
///
/// # Safety
/// As [`mstxMarkA`]; `domain` is NULL or a domain of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxDomainMarkA(
    domain: *mut c_void,
    message: *const c_char,
    stream: aclrtStream,
) {
    // SAFETY: as above.
    unsafe { m::mstxDomainMarkA(domain, message, stream) }
}

/// `mstxDomainRangeStartA`, run by the emulator.
///
/// # Safety
/// As [`mstxDomainMarkA`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxDomainRangeStartA(
    domain: *mut c_void,
    message: *const c_char,
    stream: aclrtStream,
) -> u64 {
    // SAFETY: as above.
    unsafe { m::mstxDomainRangeStartA(domain, message, stream) }
}

/// `mstxDomainRangeEnd`, run by the emulator.
#[unsafe(no_mangle)]
pub extern "C" fn mstxDomainRangeEnd(domain: *mut c_void, id: u64) {
    m::mstxDomainRangeEnd(domain, id)
}
