//! Copies and memsets: synchronous, asynchronous, 2D, batched and described copies, and the
//! 32-bit fills.

use super::*;
use crate::memory;
use crate::memory::copy;

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

/// Writes a batch's failing index when the caller asked for it (the V2 functions do not).
fn put_fail(fi: Option<&Out<usize>>, i: usize) {
    if let Some(f) = fi {
        f.put(i);
    }
}

/// The arrays of a copy batch as `aclrtMemcpyBatch[Async][V2]` take them.
struct Batch {
    dsts: *mut *mut c_void,
    destMaxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    numBatches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrsIndexes: *mut usize,
    numAttrs: usize,
}

impl Batch {
    /// The checks every batch function makes first: `sizes` is not NULL, the batch not empty.
    fn check_counts(&self) -> R {
        if self.sizes.is_null() {
            return fail(INVALID_PARAM, "sizes is NULL");
        }
        if self.numBatches == 0 {
            return fail(INVALID_PARAM, "numBatches is 0");
        }
        Ok(())
    }
}

/// The attributes as the copy layer takes them.
fn batch_attrs(a: &[aclrtMemcpyBatchAttr]) -> Vec<BatchAttr> {
    a.iter()
        .map(|x| BatchAttr {
            dst_type: x.dstLoc.type_,
            src_type: x.srcLoc.type_,
            rsv_zero: x.rsv.iter().all(|b| *b == 0),
        })
        .collect()
}

/// `aclrtMemcpyBatch[V2]` after the failIndex check.
///
/// # Safety
/// The C contract of `aclrtMemcpyBatch`.
unsafe fn batch_sync(b: Batch, fi: Option<&Out<usize>>) -> R {
    b.check_counts()?;
    let n = b.numBatches;
    // SAFETY: each array is NULL or holds numBatches (numAttrs) elements (C contract).
    let (d, m, s, z, a, ai) = unsafe {
        (
            slice(b.dsts.cast::<usize>(), n, "dsts")?,
            slice(b.destMaxs, n, "destMaxs")?,
            slice(b.srcs.cast::<usize>(), n, "srcs")?,
            slice(b.sizes, n, "sizes")?,
            slice(b.attrs, b.numAttrs, "attrs")?,
            slice(b.attrsIndexes, b.numAttrs, "attrsIndexes")?,
        )
    };
    // SAFETY: C contract: pageable ranges are valid for the copies.
    match unsafe { copy::memcpy_batch(d, m, s, z, &batch_attrs(a), ai) } {
        Ok(()) => {
            put_fail(fi, usize::MAX);
            Ok(())
        }
        Err((i, f)) => {
            put_fail(fi, i.unwrap_or(usize::MAX));
            Err(f)
        }
    }
}

acl! {
    /// `aclrtMemcpyBatch`: synchronous batch of H2D or D2H copies; `failIndex` is SIZE_MAX on
    /// success or names the copy that failed.
    fn aclrtMemcpyBatch(dsts: *mut *mut c_void, destMaxs: *mut usize, srcs: *mut *mut c_void, sizes: *mut usize, numBatches: usize, attrs: *mut aclrtMemcpyBatchAttr, attrsIndexes: *mut usize, numAttrs: usize, failIndex: *mut usize) {
        // SAFETY: C contract (NULL or valid).
        let fi = unsafe { Out::new(failIndex, "failIndex") }?;
        let b = Batch { dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs };
        // SAFETY: the caller's C contract.
        unsafe { batch_sync(b, Some(&fi)) }
    }
}

acl! {
    /// `aclrtMemcpyBatchV2`: `aclrtMemcpyBatch` without the failing index.
    fn aclrtMemcpyBatchV2(dsts: *mut *mut c_void, destMaxs: *mut usize, srcs: *mut *mut c_void, sizes: *mut usize, numBatches: usize, attrs: *mut aclrtMemcpyBatchAttr, attrsIndexes: *mut usize, numAttrs: usize) {
        let b = Batch { dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs };
        // SAFETY: the caller's C contract.
        unsafe { batch_sync(b, None) }
    }
}

/// `aclrtMemcpyBatchAsync[V2]` after the failIndex check.
///
/// # Safety
/// The C contract of `aclrtMemcpyBatchAsync`.
unsafe fn batch_async(b: Batch, fi: Option<&Out<usize>>, stream: aclrtStream) -> R {
    b.check_counts()?;
    let n = b.numBatches;
    // SAFETY: sizes holds numBatches elements (C contract).
    let z = unsafe { slice(b.sizes, n, "sizes") }?;
    if z.iter().all(|&s| s == 0) {
        put_fail(fi, usize::MAX);
        return Ok(());
    }
    // SAFETY: each array is NULL or holds numBatches (numAttrs) elements (C contract).
    let (d, m, s, a, ai) = unsafe {
        (
            slice(b.dsts.cast::<usize>(), n, "dsts")?,
            slice(b.destMaxs, n, "destMaxs")?,
            slice(b.srcs.cast::<usize>(), n, "srcs")?,
            slice(b.attrs, b.numAttrs, "attrs")?,
            slice(b.attrsIndexes, b.numAttrs, "attrsIndexes")?,
        )
    };
    if let Some(i) = (0..n).find(|&i| m[i] < z[i]) {
        put_fail(fi, i);
        return fail(
            INVALID_PARAM,
            format!(
                "destMaxs[{i}] = {} is smaller than sizes[{i}] = {}",
                m[i], z[i]
            ),
        );
    }
    if let Some(j) = a.iter().position(|x| x.rsv.iter().any(|b| *b != 0)) {
        return fail(INVALID_PARAM, format!("attrs[{j}].rsv has non-zero bytes"));
    }
    put_fail(fi, usize::MAX);
    let st = crate::stream::get(handle(stream))?;
    crate::stream::check_context(&st)?;
    // SAFETY: C contract: pageable ranges are valid now, pinned ones until the copies ran.
    match unsafe { copy::memcpy_batch_async(d, m, s, z, &batch_attrs(a), ai, &st) } {
        Ok(()) => Ok(()),
        Err((i, f)) => {
            put_fail(fi, i.unwrap_or(usize::MAX));
            Err(f)
        }
    }
}

acl! {
    /// `aclrtMemcpyBatchAsync`: a batch of host-to-device or device-to-host copies on a stream;
    /// entries with pageable host memory are done before the call returns (the stream is
    /// synchronised first), the others are queued. `failIndex` is SIZE_MAX on success or names
    /// the entry that failed.
    fn aclrtMemcpyBatchAsync(dsts: *mut *mut c_void, destMaxs: *mut usize, srcs: *mut *mut c_void, sizes: *mut usize, numBatches: usize, attrs: *mut aclrtMemcpyBatchAttr, attrsIndexes: *mut usize, numAttrs: usize, failIndex: *mut usize, stream: aclrtStream) {
        // SAFETY: C contract (NULL or valid).
        let fi = unsafe { Out::new(failIndex, "failIndex") }?;
        let b = Batch { dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs };
        // SAFETY: the caller's C contract.
        unsafe { batch_async(b, Some(&fi), stream) }
    }
}

acl! {
    /// `aclrtMemcpyBatchAsyncV2`: `aclrtMemcpyBatchAsync` without the failing index.
    fn aclrtMemcpyBatchAsyncV2(dsts: *mut *mut c_void, destMaxs: *mut usize, srcs: *mut *mut c_void, sizes: *mut usize, numBatches: usize, attrs: *mut aclrtMemcpyBatchAttr, attrsIndexes: *mut usize, numAttrs: usize, stream: aclrtStream) {
        let b = Batch { dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs };
        // SAFETY: the caller's C contract.
        unsafe { batch_async(b, None, stream) }
    }
}

/// The descriptor size on Atlas A2/A3.
const DESC_SIZE: usize = 32;

/// The kind checks of the descriptor functions: 100000 for a value outside the enum, 207000 for
/// any kind but `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` (6).
fn desc_kind(kind: aclrtMemcpyKind, then: impl FnOnce() -> R) -> R {
    if kind >= 8 {
        return fail(
            INVALID_PARAM,
            format!("kind {kind} is not an aclrtMemcpyKind"),
        );
    }
    then()?;
    if kind != ACL_MEMCPY_INNER_DEVICE_TO_DEVICE {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            format!(
                "kind {kind}: descriptors describe ACL_MEMCPY_INNER_DEVICE_TO_DEVICE (6) copies only"
            ),
        );
    }
    Ok(())
}

acl! {
    /// `aclrtGetMemcpyDescSize`: 32 bytes for `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`.
    fn aclrtGetMemcpyDescSize(kind: aclrtMemcpyKind, descSize: *mut usize) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(descSize, "descSize") }?;
        desc_kind(kind, || Ok(()))?;
        out.set(DESC_SIZE);
        Ok(())
    }
}

acl! {
    /// `aclrtSetMemcpyDesc`: writes a copy of `count` bytes from `srcAddr` to `dstAddr` (device
    /// memory of one device) into the descriptor `desc` (64-byte aligned device memory) at once:
    /// the length as a u32 at offset 0, the source at 8, the destination at 16.
    fn aclrtSetMemcpyDesc(desc: *mut c_void, kind: aclrtMemcpyKind, srcAddr: *mut c_void, dstAddr: *mut c_void, count: usize, config: *mut c_void) {
        desc_kind(kind, || {
            if desc.is_null() || srcAddr.is_null() || dstAddr.is_null() {
                return fail(INVALID_PARAM, "desc, srcAddr or dstAddr is NULL");
            }
            if count == 0 {
                return fail(INVALID_PARAM, "count is 0");
            }
            if !config.is_null() {
                return fail(INVALID_PARAM, "config is reserved and must be NULL");
            }
            Ok(())
        })?;
        if count > 4 << 30 {
            return fail(RT_PARAM_INVALID, format!("count {count} exceeds 4 GiB"));
        }
        if !(desc as usize).is_multiple_of(64) {
            return fail(RT_PARAM_INVALID, format!("desc {desc:p} is not 64-byte aligned"));
        }
        let desc_side = {
            let t = memory::read();
            let sides = [
                t.check("desc", desc as usize, DESC_SIZE)?,
                t.check("srcAddr", srcAddr as usize, count)?,
                t.check("dstAddr", dstAddr as usize, count)?,
            ];
            let dev = match sides[0].loc {
                Loc::Device(d) => d,
                _ => return fail(RT_PARAM_INVALID, "desc is not device memory"),
            };
            if sides.iter().any(|s| s.loc != Loc::Device(dev)) {
                return fail(RT_PARAM_INVALID, "desc, srcAddr and dstAddr must be device memory of one device");
            }
            sides[0]
        };
        let mut bytes = [0u8; DESC_SIZE];
        bytes[..4].copy_from_slice(&(count as u32).to_ne_bytes());
        bytes[8..16].copy_from_slice(&(srcAddr as u64).to_ne_bytes());
        bytes[16..24].copy_from_slice(&(dstAddr as u64).to_ne_bytes());
        // SAFETY: the descriptor was validated as 32 bytes of device memory.
        unsafe { memory::access::write(desc as usize, desc_side, &bytes) };
        Ok(())
    }
}

acl! {
    /// `aclrtMemcpyAsyncWithDesc`: a stream task doing the copy a descriptor describes, read
    /// when the task runs (a descriptor rewritten before then describes the new copy). The
    /// stream is required (NULL is 100000).
    fn aclrtMemcpyAsyncWithDesc(desc: *mut c_void, kind: aclrtMemcpyKind, stream: aclrtStream) {
        desc_kind(kind, || {
            if desc.is_null() {
                return fail(INVALID_PARAM, "desc is NULL");
            }
            if stream.is_null() {
                return fail(INVALID_PARAM, "stream is NULL (this copy has no default stream)");
            }
            Ok(())
        })?;
        let side = memory::read().check("desc", desc as usize, DESC_SIZE)?;
        if !matches!(side.loc, Loc::Device(_)) {
            return fail(RT_PARAM_INVALID, "desc is not device memory");
        }
        let s = crate::stream::get(handle(stream))?;
        crate::stream::check_context(&s)?;
        s.enqueue(crate::memory::work::DescribedCopy { desc: desc as usize, side })
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
