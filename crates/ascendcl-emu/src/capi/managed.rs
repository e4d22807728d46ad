//! Managed-memory hints and queries: advice, prefetches (single and batched) and range
//! attributes. The checks run in the runtime's order: the ACL layer's (NULL pointers, zero
//! sizes, reserved flags: 100000), then the runtime's (values, device ids: 107000), then the
//! context and the range itself.

use super::*;
use crate::memory::managed::{self, Advice};

acl! {
    /// `aclrtMemManagedAdvise`: records a usage hint for every 2 MiB page the range touches.
    fn aclrtMemManagedAdvise(ptr: *const c_void, size: u64, advise: aclrtMemManagedAdviseType, location: aclrtMemManagedLocation) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        if advise > ACL_MEM_ADVISE_UNSET_ACCESSED_BY {
            return fail(RT_PARAM_INVALID, format!("advise {advise} is not an aclrtMemManagedAdviseType (0-5)"));
        }
        managed::check_device_id(&location, "location")?;
        crate::device::context::current_ids()?;
        let size = usize::try_from(size).map_err(|_| Fail { code: RT_PARAM_INVALID, msg: format!("size {size} does not fit the address space") })?;
        let r = managed::range("ptr", ptr as usize, size)?;
        let advice = match advise {
            ACL_MEM_ADVISE_SET_READ_MOSTLY => Advice::ReadMostly(true),
            ACL_MEM_ADVISE_UNSET_READ_MOSTLY => Advice::ReadMostly(false),
            ACL_MEM_ADVISE_SET_PREFERRED_LOCATION => Advice::Preferred(Some(managed::place(&location, "location")?)),
            ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION => Advice::Preferred(None),
            ACL_MEM_ADVISE_SET_ACCESSED_BY => Advice::AccessedBy(managed::place(&location, "location")?, true),
            _ => Advice::AccessedBy(managed::place(&location, "location")?, false),
        };
        managed::advise(&r, advice);
        Ok(())
    }
}

acl! {
    /// `aclrtMemManagedGetAttr`: one attribute of a managed range, written to `data`
    /// (`dataSize` bytes, as the attribute requires).
    fn aclrtMemManagedGetAttr(attribute: aclrtMemManagedRangeAttribute, ptr: *const c_void, size: usize, data: *mut c_void, dataSize: usize) {
        if ptr.is_null() || data.is_null() {
            return fail(INVALID_PARAM, "ptr or data is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        managed::check_attribute(attribute)?;
        let r = managed::range("ptr", ptr as usize, size)?;
        let bytes = managed::query(&r, attribute, dataSize)?;
        // SAFETY: C contract: `data` holds `dataSize` bytes, which is `bytes.len()`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()) };
        Ok(())
    }
}

acl! {
    /// `aclrtMemManagedGetAttrs`: several attributes of a managed range at once; nothing is
    /// written unless every attribute can be answered.
    fn aclrtMemManagedGetAttrs(attributes: *mut aclrtMemManagedRangeAttribute, numAttributes: usize, ptr: *const c_void, size: usize, data: *mut *mut c_void, dataSizes: *mut usize) {
        if ptr.is_null() || attributes.is_null() || data.is_null() || dataSizes.is_null() {
            return fail(INVALID_PARAM, "ptr, attributes, data or dataSizes is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        // SAFETY: C contract: the three arrays hold numAttributes elements.
        let (attrs, outs, sizes) = unsafe {
            (
                std::slice::from_raw_parts(attributes, numAttributes),
                std::slice::from_raw_parts(data, numAttributes),
                std::slice::from_raw_parts(dataSizes, numAttributes),
            )
        };
        for &a in attrs {
            managed::check_attribute(a)?;
        }
        let r = managed::range("ptr", ptr as usize, size)?;
        let mut answers = Vec::with_capacity(numAttributes);
        for (i, (&a, &n)) in attrs.iter().zip(sizes).enumerate() {
            if outs[i].is_null() {
                return fail(RT_PARAM_INVALID, format!("data[{i}] is NULL"));
            }
            answers.push(managed::query(&r, a, n).map_err(|mut f| {
                f.msg = format!("attributes[{i}]: {}", f.msg);
                f
            })?);
        }
        for (out, bytes) in outs.iter().zip(&answers) {
            // SAFETY: C contract: data[i] holds dataSizes[i] bytes, which is bytes.len().
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len()) };
        }
        Ok(())
    }
}

acl! {
    /// `aclrtMemManagedPrefetchAsync`: a stream task prefetching a managed range to a location;
    /// the location is recorded as the range's last prefetch location when the call returns.
    fn aclrtMemManagedPrefetchAsync(ptr: *const c_void, size: usize, location: aclrtMemManagedLocation, flags: u32, stream: aclrtStream) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        if flags != 0 {
            return fail(INVALID_PARAM, format!("flags {flags:#x} must be 0 (reserved)"));
        }
        let s = crate::stream::get(handle(stream))?;
        managed::check_device_id(&location, "location")?;
        crate::stream::check_context(&s)?;
        let to = managed::place(&location, "location")?;
        let r = managed::range("ptr", ptr as usize, size)?;
        managed::prefetched(&r, to);
        s.enqueue(crate::memory::work::Prefetch { sides: vec![r.side()] })
    }
}

acl! {
    /// `aclrtMemManagedPrefetchBatchAsync`: prefetches `count` managed ranges on one stream;
    /// `prefetchLocs[k]` applies to the entries from `prefetchLocIdxs[k]` up to the next index.
    fn aclrtMemManagedPrefetchBatchAsync(ptrs: *mut *const c_void, sizes: *mut usize, count: usize, prefetchLocs: *mut aclrtMemManagedLocation, prefetchLocIdxs: *mut usize, numPrefetchLocs: usize, flags: u64, stream: aclrtStream) {
        if ptrs.is_null() || sizes.is_null() || prefetchLocs.is_null() || prefetchLocIdxs.is_null() {
            return fail(INVALID_PARAM, "ptrs, sizes, prefetchLocs or prefetchLocIdxs is NULL");
        }
        if count == 0 || numPrefetchLocs == 0 {
            return fail(INVALID_PARAM, "count or numPrefetchLocs is 0");
        }
        if numPrefetchLocs > count {
            return fail(INVALID_PARAM, format!("numPrefetchLocs {numPrefetchLocs} is larger than count {count}"));
        }
        if flags != 0 {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} must be 0 (reserved)"));
        }
        // SAFETY: C contract: ptrs and sizes hold count elements, the location arrays
        // numPrefetchLocs.
        let (p, z, locs, idx) = unsafe {
            (
                std::slice::from_raw_parts(ptrs, count),
                std::slice::from_raw_parts(sizes, count),
                std::slice::from_raw_parts(prefetchLocs, numPrefetchLocs),
                std::slice::from_raw_parts(prefetchLocIdxs, numPrefetchLocs),
            )
        };
        if idx[0] != 0 {
            return fail(RT_PARAM_INVALID, format!("prefetchLocIdxs[0] is {}, not 0", idx[0]));
        }
        if let Some(i) = p.iter().position(|x| x.is_null()) {
            return fail(RT_PARAM_INVALID, format!("ptrs[{i}] is NULL"));
        }
        if let Some(k) = idx.iter().position(|&i| i >= count) {
            return fail(RT_PARAM_INVALID, format!("prefetchLocIdxs[{k}] = {} is not below count {count}", idx[k]));
        }
        if let Some(k) = idx.windows(2).position(|w| w[1] <= w[0]) {
            return fail(RT_PARAM_INVALID, format!("prefetchLocIdxs must increase strictly (index {})", k + 1));
        }
        for (k, l) in locs.iter().enumerate() {
            managed::check_device_id(l, &format!("prefetchLocs[{k}]"))?;
        }
        let s = crate::stream::get(handle(stream))?;
        crate::stream::check_context(&s)?;
        let mut plan = Vec::with_capacity(count);
        for i in 0..count {
            let k = idx.partition_point(|&j| j <= i) - 1;
            let to = managed::place(&locs[k], &format!("prefetchLocs[{k}]"))?;
            if z[i] == 0 {
                return fail(RT_PARAM_INVALID, format!("sizes[{i}] is 0"));
            }
            plan.push((managed::range(&format!("ptrs[{i}]"), p[i] as usize, z[i])?, to));
        }
        for (r, to) in &plan {
            managed::prefetched(r, *to);
        }
        s.enqueue(crate::memory::work::Prefetch { sides: plan.iter().map(|(r, _)| r.side()).collect() })
    }
}
