//! Managed-memory hints and queries (`aclrtMemManagedAdvise`, `aclrtMemManagedGetAttr[s]`,
//! `aclrtMemManagedPrefetch[Batch]Async`): one test per documented check and code, and the
//! recorded hints reported back per 2 MiB page.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

const INVALID_PARAM: aclError = AclError::INVALID_PARAM.0;
const PARAM_INVALID: aclError = AclError::PARAM_INVALID.0;
const CONTEXT_NULL: aclError = AclError::CONTEXT_NULL.0;
const INVALID_HANDLE: aclError = AclError::INVALID_HANDLE.0;
const INTERNAL_ERROR: aclError = AclError::RT_INTERNAL_ERROR.0;

const MIB2: usize = 2 << 20;

fn loc(type_: aclrtMemManagedLocationType, id: i32) -> aclrtMemManagedLocation {
    aclrtMemManagedLocation { type_, id }
}

fn host() -> aclrtMemManagedLocation {
    loc(ACL_MEM_LOCATIONTYPE_HOST, 0)
}

fn device(id: i32) -> aclrtMemManagedLocation {
    loc(ACL_MEM_LOCATIONTYPE_DEVICE, id)
}

/// Managed memory of `pages` 2 MiB pages.
fn managed(pages: usize) -> *mut c_void {
    let mut p = null_mut();
    ok(unsafe { aclrtMemAllocManaged(&mut p, (pages * MIB2) as u64, ACL_RT_MEM_ATTACH_GLOBAL) });
    p
}

/// `attr` of `[p, p + size)` as one i32.
fn attr(p: *mut c_void, size: usize, attr: aclrtMemManagedRangeAttribute) -> i32 {
    let mut v = 77i32;
    ok(unsafe { aclrtMemManagedGetAttr(attr, p, size, (&raw mut v).cast(), 4) });
    v
}

fn advise(p: *mut c_void, size: usize, a: aclrtMemManagedAdviseType, l: aclrtMemManagedLocation) {
    ok(unsafe { aclrtMemManagedAdvise(p, size as u64, a, l) });
}

#[test]
fn advise_checks_in_order() {
    let _d = Dev::new(0);
    let p = managed(1);
    let size = MIB2 as u64;
    let a = ACL_MEM_ADVISE_SET_READ_MOSTLY;
    // ACL layer: NULL pointer, zero size.
    err(
        unsafe { aclrtMemManagedAdvise(null(), size, a, host()) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedAdvise(p, 0, a, host()) },
        INVALID_PARAM,
    );
    // Runtime: the advice type (0-5), a device location's id.
    err(
        unsafe { aclrtMemManagedAdvise(p, size, 6, host()) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedAdvise(p, size, a, device(2)) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedAdvise(p, size, a, device(-1)) },
        PARAM_INVALID,
    );
    // A thread without a context.
    let addr = p as usize;
    std::thread::spawn(move || {
        err(
            unsafe { aclrtMemManagedAdvise(addr as *const c_void, size, a, host()) },
            CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
    // Memory that is not managed, a range past the allocation's pages.
    let d = malloc(64);
    err(
        unsafe { aclrtMemManagedAdvise(d, 64, a, host()) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedAdvise(p, size + 1, a, host()) },
        PARAM_INVALID,
    );
    // Advice that names a location: INVALID, unknown types and NUMA ids out of range.
    let pref = ACL_MEM_ADVISE_SET_PREFERRED_LOCATION;
    err(
        unsafe { aclrtMemManagedAdvise(p, size, pref, loc(ACL_MEM_LOCATIONTYPE_INVALID, 0)) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedAdvise(p, size, pref, loc(9, 0)) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedAdvise(p, size, pref, loc(ACL_MEM_LOCATIONTYPE_HOST_NUMA, 64)) },
        PARAM_INVALID,
    );
    // Read-mostly ignores the location.
    ok(unsafe { aclrtMemManagedAdvise(p, size, a, loc(ACL_MEM_LOCATIONTYPE_INVALID, 0)) });
    free(p);
    free(d);
}

#[test]
fn advice_is_reported_per_page() {
    let _d = Dev::new(0);
    let p = managed(2);
    let second = p.cast::<u8>().wrapping_add(MIB2).cast::<c_void>();
    let both = 2 * MIB2;
    // Nothing advised.
    assert_eq!(attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 0);
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION),
        -2
    );
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE),
        ACL_MEM_LOCATIONTYPE_INVALID as i32
    );
    // Read-mostly on the first page only: the range answers 0, the page 1.
    advise(p, MIB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host());
    assert_eq!(attr(p, MIB2, ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 1);
    assert_eq!(attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 0);
    // A sub-page range counts its page.
    assert_eq!(attr(p, 100, ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 1);
    advise(second, MIB2, ACL_MEM_ADVISE_SET_READ_MOSTLY, host());
    assert_eq!(attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 1);
    advise(p, both, ACL_MEM_ADVISE_UNSET_READ_MOSTLY, host());
    assert_eq!(attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 0);

    // Preferred location: device 1 on both pages, then the host on the second.
    advise(p, both, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device(1));
    assert_eq!(attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION), 1);
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE),
        ACL_MEM_LOCATIONTYPE_DEVICE as i32
    );
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID),
        1
    );
    advise(second, MIB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, host());
    assert_eq!(
        attr(second, MIB2, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION),
        -1
    );
    assert_eq!(
        attr(
            second,
            MIB2,
            ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE
        ),
        ACL_MEM_LOCATIONTYPE_HOST as i32
    );
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION),
        -2
    );
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE),
        ACL_MEM_LOCATIONTYPE_INVALID as i32
    );
    // The current NUMA node is node 0.
    advise(
        p,
        both,
        ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
        loc(ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT, 5),
    );
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE),
        ACL_MEM_LOCATIONTYPE_HOST_NUMA as i32
    );
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID),
        0
    );
    advise(p, both, ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION, host());
    assert_eq!(
        attr(p, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION),
        -2
    );

    // Accessed by: the ids of the whole range, the rest of the buffer -2.
    advise(p, both, ACL_MEM_ADVISE_SET_ACCESSED_BY, device(1));
    advise(p, both, ACL_MEM_ADVISE_SET_ACCESSED_BY, host());
    advise(p, MIB2, ACL_MEM_ADVISE_SET_ACCESSED_BY, device(0));
    let mut ids = [9i32; 4];
    ok(unsafe {
        aclrtMemManagedGetAttr(
            ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
            p,
            both,
            ids.as_mut_ptr().cast(),
            16,
        )
    });
    assert_eq!(ids, [-1, 1, -2, -2]);
    ok(unsafe {
        aclrtMemManagedGetAttr(
            ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
            p,
            MIB2,
            ids.as_mut_ptr().cast(),
            16,
        )
    });
    assert_eq!(ids, [-1, 0, 1, -2]);
    advise(p, both, ACL_MEM_ADVISE_UNSET_ACCESSED_BY, host());
    ok(unsafe {
        aclrtMemManagedGetAttr(
            ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
            p,
            both,
            ids.as_mut_ptr().cast(),
            8,
        )
    });
    assert_eq!(&ids[..2], &[1, -2]);
    free(p);
    // A new allocation starts without hints, even at the same address.
    let q = managed(2);
    assert_eq!(
        attr(q, both, ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION),
        -2
    );
    free(q);
}

#[test]
fn get_attr_checks_in_order() {
    let _d = Dev::new(0);
    let p = managed(1);
    let mut v = 0i32;
    let data: *mut c_void = (&raw mut v).cast();
    let ra = ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY;
    err(
        unsafe { aclrtMemManagedGetAttr(ra, null(), 4, data, 4) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedGetAttr(ra, p, 4, null_mut(), 4) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedGetAttr(ra, p, 0, data, 4) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedGetAttr(0, p, 4, data, 4) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedGetAttr(9, p, 4, data, 4) },
        PARAM_INVALID,
    );
    let d = malloc(64);
    err(
        unsafe { aclrtMemManagedGetAttr(ra, d, 4, data, 4) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedGetAttr(ra, p, MIB2 + 1, data, 4) },
        PARAM_INVALID,
    );
    // Integer attributes take 4 bytes; the accessed-by list a non-zero multiple of 4.
    err(
        unsafe { aclrtMemManagedGetAttr(ra, p, 4, data, 8) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedGetAttr(ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, 4, data, 6) },
        PARAM_INVALID,
    );
    // Queries need no context.
    let addr = p as usize;
    std::thread::spawn(move || {
        let mut v = 5i32;
        ok(unsafe { aclrtMemManagedGetAttr(ra, addr as *const c_void, 4, (&raw mut v).cast(), 4) });
        assert_eq!(v, 0);
    })
    .join()
    .unwrap();
    free(p);
    free(d);
}

#[test]
fn get_attrs_answers_all_or_nothing() {
    let _d = Dev::new(0);
    let p = managed(1);
    advise(p, MIB2, ACL_MEM_ADVISE_SET_PREFERRED_LOCATION, device(1));
    let mut attrs = [
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
        ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
    ];
    let (mut t, mut id) = (0i32, 0i32);
    let mut data: [*mut c_void; 2] = [(&raw mut t).cast(), (&raw mut id).cast()];
    let mut sizes = [4usize, 4];
    ok(unsafe {
        aclrtMemManagedGetAttrs(
            attrs.as_mut_ptr(),
            2,
            p,
            MIB2,
            data.as_mut_ptr(),
            sizes.as_mut_ptr(),
        )
    });
    assert_eq!((t, id), (ACL_MEM_LOCATIONTYPE_DEVICE as i32, 1));
    let call = |attrs: &mut [u32],
                ptr: *const c_void,
                size: usize,
                data: &mut [*mut c_void],
                sizes: &mut [usize]| unsafe {
        aclrtMemManagedGetAttrs(
            attrs.as_mut_ptr(),
            attrs.len(),
            ptr,
            size,
            data.as_mut_ptr(),
            sizes.as_mut_ptr(),
        )
    };
    let (a, dp, sp) = (attrs.as_mut_ptr(), data.as_mut_ptr(), sizes.as_mut_ptr());
    err(
        unsafe { aclrtMemManagedGetAttrs(a, 2, null(), MIB2, dp, sp) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedGetAttrs(null_mut(), 2, p, MIB2, dp, sp) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedGetAttrs(a, 2, p, MIB2, null_mut(), sp) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedGetAttrs(a, 2, p, MIB2, dp, null_mut()) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedGetAttrs(a, 2, p, 0, dp, sp) },
        INVALID_PARAM,
    );
    // An attribute out of range, a NULL output, a wrong size: 107000, nothing written.
    (t, id) = (55, 55);
    let mut data: [*mut c_void; 2] = [(&raw mut t).cast(), (&raw mut id).cast()];
    err(
        call(&mut [attrs[0], 0], p, MIB2, &mut data, &mut [4, 4]),
        PARAM_INVALID,
    );
    err(
        call(&mut attrs, p, MIB2, &mut [data[0], null_mut()], &mut [4, 4]),
        PARAM_INVALID,
    );
    err(
        call(&mut attrs, p, MIB2, &mut data, &mut [4, 2]),
        PARAM_INVALID,
    );
    assert_eq!(
        (t, id),
        (55, 55),
        "nothing is written when one attribute fails"
    );
    // No attributes: nothing to answer.
    ok(call(&mut [], p, MIB2, &mut [], &mut []));
    free(p);
}

#[test]
fn prefetch_is_a_stream_task_and_recorded() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let p = managed(2);
    let second = p.cast::<u8>().wrapping_add(MIB2).cast::<c_void>();
    ok(unsafe { aclrtMemManagedPrefetchAsync(p, 2 * MIB2, device(0), 0, s) });
    ok(unsafe { aclrtMemManagedPrefetchAsync(second, MIB2, host(), 0, null_mut()) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(
        attr(p, MIB2, ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION),
        0
    );
    assert_eq!(
        attr(second, MIB2, ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION),
        -1
    );
    assert_eq!(
        attr(
            second,
            MIB2,
            ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE
        ),
        ACL_MEM_LOCATIONTYPE_HOST as i32
    );
    assert_eq!(
        attr(p, 2 * MIB2, ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION),
        -2
    );
    assert_eq!(
        attr(p, MIB2, ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID),
        0
    );

    // Checks: NULL, size 0, reserved flags (ACL layer), a bad stream, a device id, the location.
    let s2 = MIB2;
    err(
        unsafe { aclrtMemManagedPrefetchAsync(null(), s2, host(), 0, s) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedPrefetchAsync(p, 0, host(), 0, s) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedPrefetchAsync(p, s2, host(), 1, s) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedPrefetchAsync(p, s2, host(), 0, 0x9999usize as aclrtStream) },
        INVALID_HANDLE,
    );
    err(
        unsafe { aclrtMemManagedPrefetchAsync(p, s2, device(7), 0, s) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemManagedPrefetchAsync(p, s2, loc(ACL_MEM_LOCATIONTYPE_INVALID, 0), 0, s) },
        PARAM_INVALID,
    );
    let d = malloc(64);
    err(
        unsafe { aclrtMemManagedPrefetchAsync(d, 64, host(), 0, s) },
        PARAM_INVALID,
    );
    // The default stream needs a context.
    let addr = p as usize;
    std::thread::spawn(move || {
        err(
            unsafe {
                aclrtMemManagedPrefetchAsync(addr as *const c_void, s2, host(), 0, null_mut())
            },
            CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();

    // A prefetch whose memory is freed before it runs fails the stream.
    let block = block_stream(s);
    ok(unsafe { aclrtMemManagedPrefetchAsync(p, s2, host(), 0, s) });
    free(p);
    block.release();
    err(unsafe { aclrtSynchronizeStream(s) }, INTERNAL_ERROR);
    drop(block);
    free(d);
    ok(unsafe { aclrtDestroyStream(s) });
}

/// Holds a stream's worker in a host function until released.
struct Blocked(Box<std::sync::Barrier>);

impl Blocked {
    /// Lets the host function return; drop the value only after the stream was synchronised.
    fn release(&self) {
        self.0.wait();
    }
}

fn block_stream(s: aclrtStream) -> Blocked {
    unsafe extern "C" fn wait(arg: *mut c_void) {
        unsafe { &*arg.cast::<std::sync::Barrier>() }.wait();
    }
    let b = Box::new(std::sync::Barrier::new(2));
    let arg = (&raw const *b).cast_mut().cast();
    ok(unsafe { aclrtLaunchHostFunc(s, Some(wait), arg) });
    Blocked(b)
}

#[test]
fn prefetch_batch_checks_and_groups() {
    let _d = Dev::new(0);
    let s = stream();
    let p = managed(3);
    let page = |i: usize| {
        p.cast::<u8>()
            .wrapping_add(i * MIB2)
            .cast_const()
            .cast::<c_void>()
    };
    let mut ptrs = [page(0), page(1), page(2)];
    let mut sizes = [MIB2; 3];
    let mut locs = [device(1), host()];
    let mut idx = [0usize, 2];
    let call = |ptrs: &mut [*const c_void],
                sizes: &mut [usize],
                locs: &mut [aclrtMemManagedLocation],
                idx: &mut [usize],
                count: usize,
                n: usize,
                flags: u64| unsafe {
        aclrtMemManagedPrefetchBatchAsync(
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            count,
            locs.as_mut_ptr(),
            idx.as_mut_ptr(),
            n,
            flags,
            s,
        )
    };
    ok(call(&mut ptrs, &mut sizes, &mut locs, &mut idx, 3, 2, 0));
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(
        attr(p, 2 * MIB2, ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION),
        1
    );
    assert_eq!(
        attr(
            page(2).cast_mut(),
            MIB2,
            ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION
        ),
        -1
    );

    // ACL layer: NULL arrays, zero counts, more locations than entries.
    let (pp, sp, lp, ip) = (
        ptrs.as_mut_ptr(),
        sizes.as_mut_ptr(),
        locs.as_mut_ptr(),
        idx.as_mut_ptr(),
    );
    err(
        unsafe { aclrtMemManagedPrefetchBatchAsync(null_mut(), sp, 3, lp, ip, 2, 0, s) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedPrefetchBatchAsync(pp, null_mut(), 3, lp, ip, 2, 0, s) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedPrefetchBatchAsync(pp, sp, 3, null_mut(), ip, 2, 0, s) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemManagedPrefetchBatchAsync(pp, sp, 3, lp, null_mut(), 2, 0, s) },
        INVALID_PARAM,
    );
    err(
        call(&mut ptrs, &mut sizes, &mut locs, &mut idx, 0, 2, 0),
        INVALID_PARAM,
    );
    err(
        call(&mut ptrs, &mut sizes, &mut locs, &mut idx, 3, 0, 0),
        INVALID_PARAM,
    );
    err(
        call(&mut ptrs, &mut sizes, &mut locs, &mut idx, 1, 2, 0),
        INVALID_PARAM,
    );
    // Runtime: flags, the first index, NULL entries, unsorted or too large indexes, device ids.
    err(
        call(&mut ptrs, &mut sizes, &mut locs, &mut idx, 3, 2, 1),
        PARAM_INVALID,
    );
    err(
        call(&mut ptrs, &mut sizes, &mut locs, &mut [1, 2], 3, 2, 0),
        PARAM_INVALID,
    );
    err(
        call(
            &mut [page(0), null(), page(2)],
            &mut sizes,
            &mut locs,
            &mut idx,
            3,
            2,
            0,
        ),
        PARAM_INVALID,
    );
    err(
        call(&mut ptrs, &mut sizes, &mut locs, &mut [0, 3], 3, 2, 0),
        PARAM_INVALID,
    );
    err(
        call(
            &mut ptrs,
            &mut sizes,
            &mut [device(0), host(), host()],
            &mut [0, 2, 1],
            3,
            3,
            0,
        ),
        PARAM_INVALID,
    );
    err(
        call(
            &mut ptrs,
            &mut sizes,
            &mut [device(4), host()],
            &mut idx,
            3,
            2,
            0,
        ),
        PARAM_INVALID,
    );
    // Per entry: a zero size, memory that is not managed. Nothing is recorded on failure.
    err(
        call(
            &mut ptrs,
            &mut [MIB2, 0, MIB2],
            &mut locs,
            &mut idx,
            3,
            2,
            0,
        ),
        PARAM_INVALID,
    );
    let d = malloc(64);
    err(
        call(
            &mut [page(0), d.cast_const(), page(2)],
            &mut sizes,
            &mut [host(), host()],
            &mut idx,
            3,
            2,
            0,
        ),
        PARAM_INVALID,
    );
    assert_eq!(
        attr(p, MIB2, ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION),
        1
    );
    ok(unsafe { aclrtSynchronizeStream(s) });
    free(p);
    free(d);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn managed_allocations_are_whole_aligned_pages() {
    let _d = Dev::new(0);
    // The first allocation may take the documented base address; the others land elsewhere,
    // aligned all the same.
    let ps: Vec<*mut c_void> = (0..4).map(|_| managed(1)).collect();
    for &p in &ps {
        assert_eq!(p as usize % MIB2, 0, "{p:p} is not 2 MiB aligned");
    }
    for p in ps {
        free(p);
    }
}
