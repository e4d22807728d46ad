//! Copies and memsets: synchronous, asynchronous, 2D and batched.

use super::*;

acl! {
    /// `aclrtMemset`: fills `count` bytes with the low 8 bits of `value`.
    fn aclrtMemset(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize) {
        // SAFETY: C contract: pageable memory passed here is valid for `count` bytes.
        unsafe { copy::memset(devPtr as usize, maxCount, value, count) }
    }
}

acl! {
    /// `aclrtMemsetAsync`: queued on the stream (pageable memory is set before returning).
    fn aclrtMemsetAsync(devPtr: *mut c_void, maxCount: usize, value: i32, count: usize, stream: aclrtStream) {
        // SAFETY: C contract: the memory stays valid until the task ran.
        unsafe { copy::memset_async(devPtr as usize, maxCount, value, count, handle(stream)) }
    }
}

acl! {
    /// `aclrtMemcpy`: synchronous copy; the direction is taken from the pointers.
    fn aclrtMemcpy(dst: *mut c_void, destMax: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind) {
        // SAFETY: C contract: pageable ranges are valid for the copy.
        unsafe { copy::memcpy(dst as usize, destMax, src as usize, count, kind) }
    }
}

acl! {
    /// `aclrtMemcpyAsync`: queued copy with the runtime's location/kind rules; from pageable
    /// memory it completes before returning.
    fn aclrtMemcpyAsync(dst: *mut c_void, destMax: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream) {
        // SAFETY: C contract: ranges stay valid until the copy ran.
        unsafe { copy::memcpy_async(dst as usize, destMax, src as usize, count, kind, handle(stream)) }
    }
}

acl! {
    /// `aclrtMemcpy2d`: synchronous pitched copy, H2D or D2H.
    fn aclrtMemcpy2d(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind) {
        let c = Copy2d { dst: dst as usize, dpitch, src: src as usize, spitch, width, height, kind };
        // SAFETY: C contract: pageable ranges are valid for the pitched copy.
        unsafe { copy::memcpy_2d(c) }
    }
}

acl! {
    /// `aclrtMemcpy2dAsync`: queued pitched copy, H2D, D2H or D2D.
    fn aclrtMemcpy2dAsync(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: aclrtMemcpyKind, stream: aclrtStream) {
        let c = Copy2d { dst: dst as usize, dpitch, src: src as usize, spitch, width, height, kind };
        // SAFETY: C contract: ranges stay valid until the copy ran.
        unsafe { copy::memcpy_2d_async(c, handle(stream)) }
    }
}

/// # Safety
/// `p` is NULL or valid for reading `n` values.
unsafe fn slice<'a, T>(p: *const T, n: usize, name: &str) -> R<&'a [T]> {
    if p.is_null() {
        return fail(INVALID_PARAM, format!("{name} is NULL"));
    }
    // SAFETY: non-NULL and valid for n reads (the caller's contract).
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

acl! {
    /// `aclrtMemcpyBatch`: synchronous batch of H2D or D2H copies; `failIndex` is SIZE_MAX on
    /// success or names the copy that failed.
    fn aclrtMemcpyBatch(dsts: *mut *mut c_void, destMaxs: *mut usize, srcs: *mut *mut c_void, sizes: *mut usize, numBatches: usize, attrs: *mut aclrtMemcpyBatchAttr, attrsIndexes: *mut usize, numAttrs: usize, failIndex: *mut usize) {
        // SAFETY: C contract (NULL or valid).
        let fi = unsafe { Out::new(failIndex, "failIndex") }?;
        if sizes.is_null() {
            return fail(INVALID_PARAM, "sizes is NULL");
        }
        if numBatches == 0 {
            return fail(INVALID_PARAM, "numBatches is 0");
        }
        if numAttrs == 0 {
            return fail(INVALID_PARAM, "numAttrs is 0");
        }
        if numAttrs > numBatches {
            return fail(INVALID_PARAM, format!("numAttrs {numAttrs} is larger than numBatches {numBatches}"));
        }
        // SAFETY: each array is NULL or holds numBatches (numAttrs) elements (C contract).
        let (d, m, s, z, a, ai) = unsafe {
            (
                slice(dsts.cast::<usize>(), numBatches, "dsts")?,
                slice(destMaxs, numBatches, "destMaxs")?,
                slice(srcs.cast::<usize>(), numBatches, "srcs")?,
                slice(sizes, numBatches, "sizes")?,
                slice(attrs, numAttrs, "attrs")?,
                slice(attrsIndexes, numAttrs, "attrsIndexes")?,
            )
        };
        let attrs: Vec<BatchAttr> = a
            .iter()
            .map(|x| BatchAttr {
                dst_type: x.dstLoc.type_,
                src_type: x.srcLoc.type_,
                rsv_zero: x.rsv.iter().all(|b| *b == 0),
            })
            .collect();
        // SAFETY: C contract: pageable ranges are valid for the copies.
        match unsafe { copy::memcpy_batch(d, m, s, z, &attrs, ai) } {
            Ok(()) => {
                fi.set(usize::MAX);
                Ok(())
            }
            Err((i, f)) => {
                fi.set(i.unwrap_or(usize::MAX));
                Err(f)
            }
        }
    }
}
