//! `mstx/ms_tools_ext.h` (the `profiling` concept's mstx): marks and ranges, in domains. Not
//! part of the runtime's function table: the C library exports them under their names (the
//! emulator root's `libmsprofiler.so` links to it). The functions return nothing (range starts
//! an id, 0 for none), so a bad argument (a NULL message, a stream that is not live) records a
//! message for `aclGetRecentErrMsg` and the call does nothing.

use super::*;
use crate::profiling::mstx;

/// Runs a call that returns a value, `none` when it fails (its message recorded) or panics.
fn quietly<T>(api: &'static str, none: T, f: impl FnOnce() -> R<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            record(api, e);
            none
        }
        Err(p) => {
            panicked(api, p.as_ref());
            none
        }
    }
}

/// The message argument (100000 for NULL).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn message(p: *const c_char) -> R<String> {
    if p.is_null() {
        return fail(INVALID_PARAM, "message is NULL");
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The stream of a mark: NULL marks the host only.
fn stream_of(stream: aclrtStream) -> R<Option<Arc<crate::engine::stream::Stream>>> {
    if stream.is_null() {
        Ok(None)
    } else {
        crate::stream::get(stream as usize).map(Some)
    }
}

/// `mstxMarkA`: an instant of the default domain (and a marker task of `stream`, unless NULL).
///
/// # Safety
/// `message` is NULL or a NUL-terminated string; `stream` is NULL or a stream of this runtime.
pub unsafe extern "C" fn mstxMarkA(message: *const c_char, stream: aclrtStream) {
    quietly("mstxMarkA", (), || {
        // SAFETY: the C contract.
        let m = unsafe { self::message(message) }?;
        mstx::mark(0, &m, stream_of(stream)?);
        Ok(())
    })
}

/// `mstxRangeStartA`: a range of the default domain; its id, 0 when nothing collects.
///
/// # Safety
/// As [`mstxMarkA`].
pub unsafe extern "C" fn mstxRangeStartA(message: *const c_char, stream: aclrtStream) -> u64 {
    quietly("mstxRangeStartA", 0, || {
        // SAFETY: the C contract.
        let m = unsafe { self::message(message) }?;
        stream_of(stream)?;
        Ok(mstx::range_start(0, &m))
    })
}

/// `mstxRangeEnd`: ends a range of the default domain.
pub extern "C" fn mstxRangeEnd(id: u64) {
    quietly("mstxRangeEnd", (), || {
        mstx::range_end(0, id);
        Ok(())
    })
}

/// `mstxDomainCreateA`: a domain named `name` (NULL for a NULL name).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
pub unsafe extern "C" fn mstxDomainCreateA(name: *const c_char) -> *mut c_void {
    quietly("mstxDomainCreateA", std::ptr::null_mut(), || {
        if name.is_null() {
            return fail(INVALID_PARAM, "name is NULL");
        }
        // SAFETY: the C contract.
        let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        Ok(mstx::create_domain(&n) as *mut c_void)
    })
}

/// `mstxDomainDestroy` (NULL and unknown domains are ignored).
pub extern "C" fn mstxDomainDestroy(domain: *mut c_void) {
    quietly("mstxDomainDestroy", (), || {
        mstx::destroy_domain(domain as usize);
        Ok(())
    })
}

/// `mstxDomainMarkA`: an instant of `domain` (nothing for a domain that is not live).
///
/// # Safety
/// As [`mstxMarkA`].
pub unsafe extern "C" fn mstxDomainMarkA(
    domain: *mut c_void,
    message: *const c_char,
    stream: aclrtStream,
) {
    quietly("mstxDomainMarkA", (), || {
        // SAFETY: the C contract.
        let m = unsafe { self::message(message) }?;
        if !domain.is_null() {
            mstx::mark(domain as usize, &m, stream_of(stream)?);
        }
        Ok(())
    })
}

/// `mstxDomainRangeStartA`: a range of `domain`; 0 for a domain that is not live or when
/// nothing collects.
///
/// # Safety
/// As [`mstxMarkA`].
pub unsafe extern "C" fn mstxDomainRangeStartA(
    domain: *mut c_void,
    message: *const c_char,
    stream: aclrtStream,
) -> u64 {
    quietly("mstxDomainRangeStartA", 0, || {
        // SAFETY: the C contract.
        let m = unsafe { self::message(message) }?;
        stream_of(stream)?;
        if domain.is_null() {
            return Ok(0);
        }
        Ok(mstx::range_start(domain as usize, &m))
    })
}

/// `mstxDomainRangeEnd`: ends a range of `domain`.
pub extern "C" fn mstxDomainRangeEnd(domain: *mut c_void, id: u64) {
    quietly("mstxDomainRangeEnd", (), || {
        if !domain.is_null() {
            mstx::range_end(domain as usize, id);
        }
        Ok(())
    })
}
