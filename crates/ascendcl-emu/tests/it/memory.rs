//! Memory: allocation, policies, free, memset, copies and their validation.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

#[test]
fn malloc_free_roundtrip() {
    let _d = Dev::new(0);
    let p = malloc(1000);
    assert_eq!(p as usize % 64, 0, "64-byte aligned");
    let src: Vec<u8> = (0..1000).map(|i| i as u8).collect();
    h2d(p, &src);
    let mut back = vec![0u8; 1000];
    d2h(&mut back, p);
    assert_eq!(src, back);
    free(p);
}

#[test]
fn malloc_bad_arguments() {
    let _d = Dev::new(0);
    let mut p = null_mut();
    err(
        unsafe { aclrtMalloc(null_mut(), 16, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMalloc(&mut p, 0, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocAlign32(&mut p, 0, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocCached(&mut p, 0, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocCached(&mut p, (1usize << 50) + 1, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMallocHost(null_mut(), 16) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocHost(&mut p, 0) },
        AclError::INVALID_PARAM,
    );
}

#[test]
fn malloc_needs_a_context() {
    std::thread::spawn(|| {
        let mut p = null_mut();
        err(
            unsafe { aclrtMalloc(&mut p, 16, 0) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtMallocHost(&mut p, 16) },
            AclError::CONTEXT_NULL,
        );
        let b = [0u8; 4];
        let mut c = [0u8; 4];
        err(
            unsafe { aclrtMemcpy(c.as_mut_ptr().cast(), 4, b.as_ptr().cast(), 4, 0) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
}

#[test]
fn policies_have_page_effects() {
    let _d = Dev::new(0);
    // HUGE_ONLY needs reserved huge pages; this machine (HugePages_Total 0) has none.
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let free_huge = meminfo
        .lines()
        .find(|l| l.starts_with("HugePages_Free:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let mut p = null_mut();
    let r = unsafe { aclrtMalloc(&mut p, 4 << 20, ACL_MEM_MALLOC_HUGE_ONLY) };
    if free_huge == 0 {
        err(r, AclError::MEMORY_ALLOCATION);
    } else {
        ok(r);
        free(p);
    }
    let mut attrs = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 9, type_: 9 },
        pageSize: 0,
        rsv: [0; 4],
    };
    // NORMAL_ONLY: 4 KiB pages.
    let n = malloc_policy(3 << 20, ACL_MEM_MALLOC_NORMAL_ONLY);
    ok(unsafe { aclrtPointerGetAttributes(n, &mut attrs) });
    assert_eq!(attrs.location.type_, ACL_MEM_LOCATION_TYPE_DEVICE);
    assert_eq!(attrs.location.id, 0);
    assert_eq!(attrs.pageSize, 4096);
    // HUGE_FIRST small: normal pages.
    let s = malloc_policy(4096, ACL_MEM_MALLOC_HUGE_FIRST);
    ok(unsafe { aclrtPointerGetAttributes(s, &mut attrs) });
    assert_eq!(attrs.pageSize, 4096);
    // HUGE_FIRST large: transparent huge pages where the kernel allows madvise.
    let h = malloc_policy(3 << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    assert_eq!(h as usize % (2 << 20), 0, "2 MiB aligned");
    ok(unsafe { aclrtPointerGetAttributes(h, &mut attrs) });
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|s| !s.contains("[never]"))
        .unwrap_or(false);
    assert_eq!(attrs.pageSize, if thp { 2 << 20 } else { 4096 });
    // Out-of-range policy behaves as HUGE_FIRST.
    let o = malloc_policy(64, 0x100);
    free(o);
    free(h);
    free(s);
    free(n);
}

#[test]
fn free_errors() {
    let _d = Dev::new(0);
    err(unsafe { aclrtFree(null_mut()) }, AclError::INVALID_PARAM);
    err(
        unsafe { aclrtFreeHost(null_mut()) },
        AclError::INVALID_PARAM,
    );
    let p = malloc(128);
    // Interior pointer.
    err(
        unsafe { aclrtFree(p.cast::<u8>().add(8).cast()) },
        AclError::MEMORY_FREE,
    );
    // FreeHost of a device pointer: 107000 (as the implementation does).
    err(unsafe { aclrtFreeHost(p) }, AclError::PARAM_INVALID);
    free(p);
    // Double free: detected (stricter than hardware), and the message says so.
    assert_eq!(unsafe { aclrtFree(p) }, AclError::MEMORY_FREE);
    let m = take_msg();
    assert!(m.contains("double free") && m.contains("aclrtFree"), "{m}");
    let h = malloc_host(100);
    err(unsafe { aclrtFree(h) }, AclError::PARAM_INVALID);
    free_host(h);
    let mut local = 0u64;
    err(
        unsafe { aclrtFree((&mut local as *mut u64).cast()) },
        AclError::MEMORY_FREE,
    );
}

#[test]
fn memcpy_checks_in_order() {
    let _d = Dev::new(0);
    let p = malloc(256);
    let buf = [7u8; 256];
    let mut out = [0u8; 256];
    let b = buf.as_ptr().cast::<c_void>();
    // count 0: success even with NULL pointers.
    ok(unsafe { aclrtMemcpy(null_mut(), 0, null(), 0, 99) });
    err(
        unsafe { aclrtMemcpy(null_mut(), 16, b, 16, 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy(p, 16, null(), 16, 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy(p, 16, b, 16, 6) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy(p, 16, b, 16, 7) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy(p, 0, b, 16, 1) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemcpy(p, 8, b, 16, 1) },
        AclError::PARAM_INVALID,
    );
    // dst == src: success.
    ok(unsafe { aclrtMemcpy(p, 16, p, 16, 3) });
    // The kind is reserved for the synchronous copy: a mismatch is not an error.
    ok(unsafe { aclrtMemcpy(p, 256, b, 256, ACL_MEMCPY_DEVICE_TO_HOST) });
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            256,
            p,
            256,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
    assert_eq!(out, buf);
    // H2H of pageable memory works synchronously.
    let mut o2 = [0u8; 16];
    ok(unsafe { aclrtMemcpy(o2.as_mut_ptr().cast(), 16, b, 16, ACL_MEMCPY_HOST_TO_HOST) });
    assert_eq!(o2, [7u8; 16]);
    free(p);
}

#[test]
fn memcpy_bounds_and_freed_memory() {
    let _d = Dev::new(0);
    let p = malloc(100);
    let buf = [1u8; 300];
    // Past the end, inside the hardware padding: an error whose message names the padding.
    assert_eq!(
        unsafe { aclrtMemcpy(p, 300, buf.as_ptr().cast(), 120, 1) },
        AclError::PARAM_INVALID
    );
    let m = take_msg();
    assert!(m.contains("ALIGN_UP") && m.contains("stricter"), "{m}");
    // Far past the end.
    err(
        unsafe { aclrtMemcpy(p, 300, buf.as_ptr().cast(), 300, 1) },
        AclError::PARAM_INVALID,
    );
    // Starting inside, running out.
    err(
        unsafe {
            aclrtMemcpy(
                p.cast::<u8>().add(90).cast(),
                20,
                buf.as_ptr().cast(),
                20,
                1,
            )
        },
        AclError::PARAM_INVALID,
    );
    // Source out of bounds.
    let mut out = [0u8; 300];
    err(
        unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), 300, p, 101, 2) },
        AclError::PARAM_INVALID,
    );
    free(p);
    // Use after free.
    assert_eq!(
        unsafe { aclrtMemcpy(p, 16, buf.as_ptr().cast(), 16, 1) },
        AclError::PARAM_INVALID
    );
    assert!(take_msg().contains("freed"));
}

#[test]
fn device_to_device_and_peer_access() {
    let _d0 = Dev::new(0);
    let a = malloc(64);
    let b = malloc(64);
    h2d(a, &[5u8; 64]);
    ok(unsafe { aclrtMemcpy(b, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE) });
    let mut out = [0u8; 64];
    d2h(&mut out, b);
    assert_eq!(out, [5u8; 64]);
    // A buffer on device 1.
    let c = std::thread::scope(|s| {
        s.spawn(|| {
            ok(unsafe { aclrtSetDevice(1) });
            let c = malloc(64);
            c as usize
        })
        .join()
        .unwrap()
    }) as *mut c_void;
    let mut can = 0;
    ok(unsafe { aclrtDeviceCanAccessPeer(&mut can, 0, 1) });
    assert_eq!(can, 1);
    err(
        unsafe { aclrtDeviceCanAccessPeer(&mut can, 0, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtDeviceCanAccessPeer(&mut can, 0, 9) },
        AclError::INVALID_DEVICEID,
    );
    err(
        unsafe { aclrtDeviceCanAccessPeer(null_mut(), 0, 1) },
        AclError::INVALID_PARAM,
    );
    // Without peer access the copy between devices fails...
    err(
        unsafe { aclrtMemcpy(c, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtDeviceEnablePeerAccess(1, 1) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtDeviceEnablePeerAccess(0, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtDeviceEnablePeerAccess(7, 0) },
        AclError::INVALID_DEVICEID,
    );
    ok(unsafe { aclrtDeviceEnablePeerAccess(1, 0) });
    ok(unsafe { aclrtMemcpy(c, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE) });
    ok(unsafe { aclrtDeviceDisablePeerAccess(1) });
    err(
        unsafe { aclrtDeviceDisablePeerAccess(1) },
        AclError::PARAM_INVALID,
    );
    free(c);
    free(b);
    free(a);
    ok(unsafe { aclrtResetDevice(1) });
}

#[test]
fn memset_checks() {
    let _d = Dev::new(0);
    let p = malloc(64);
    ok(unsafe { aclrtMemset(null_mut(), 0, 1, 0) });
    err(
        unsafe { aclrtMemset(null_mut(), 8, 1, 8) },
        AclError::INVALID_PARAM,
    );
    err(unsafe { aclrtMemset(p, 8, 1, 16) }, AclError::PARAM_INVALID);
    err(
        unsafe { aclrtMemset(p, 128, 1, 65) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMemset(p, 64, 0x1AB, 64) });
    let mut out = [0u8; 64];
    d2h(&mut out, p);
    assert_eq!(out, [0xAB; 64], "value truncated to 8 bits");
    free(p);
}

#[test]
fn memcpy_2d() {
    let _d = Dev::new(0);
    let (w, h, sp, dp) = (8usize, 4usize, 10usize, 16usize);
    let src: Vec<u8> = (0..sp * h).map(|i| i as u8).collect();
    let d = malloc(dp * h);
    ok(unsafe {
        aclrtMemcpy2d(
            d,
            dp,
            src.as_ptr().cast(),
            sp,
            w,
            h,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
    let mut back = vec![0u8; w * h];
    ok(unsafe {
        aclrtMemcpy2d(
            back.as_mut_ptr().cast(),
            w,
            d,
            dp,
            w,
            h,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    for r in 0..h {
        assert_eq!(&back[r * w..r * w + w], &src[r * sp..r * sp + w]);
    }
    let s = src.as_ptr().cast();
    ok(unsafe { aclrtMemcpy2d(null_mut(), 0, null(), 0, 0, 5, 1) });
    err(
        unsafe { aclrtMemcpy2d(null_mut(), dp, s, sp, w, h, 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy2d(d, dp, s, 4, w, h, 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy2d(d, 4, s, sp, w, h, 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy2d(d, dp, s, sp, w, h, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy2d(d, dp, s, sp, w, h, 5) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpy2d(d, dp, s, sp, w, 6_000_000, 1) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemcpy2d(d, dp, d, dp, w, h, ACL_MEMCPY_DEVICE_TO_DEVICE) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // Out of bounds on the device side.
    err(
        unsafe { aclrtMemcpy2d(d, dp, s, sp, w, h + 1, 1) },
        AclError::PARAM_INVALID,
    );
    free(d);
}

/// The arrays of one `aclrtMemcpyBatch` call (two copies, one attribute), kept so that a test
/// can change one field between calls.
struct Batch {
    dsts: [*mut c_void; 2],
    srcs: [*mut c_void; 2],
    maxs: [usize; 2],
    sizes: [usize; 2],
    attrs: [aclrtMemcpyBatchAttr; 1],
    idx: [usize; 1],
    fail_index: usize,
}

impl Batch {
    /// The call with every array, `sizes` and `failIndex` replaceable (NULL tests).
    fn call_with(&mut self, sizes: *mut usize, fail_index: *mut usize) -> aclError {
        // SAFETY: every pointer addresses one of this struct's arrays (or is NULL, which the
        // function must refuse), each holding the counts passed.
        unsafe {
            aclrtMemcpyBatch(
                self.dsts.as_mut_ptr(),
                self.maxs.as_mut_ptr(),
                self.srcs.as_mut_ptr(),
                sizes,
                2,
                self.attrs.as_mut_ptr(),
                self.idx.as_mut_ptr(),
                1,
                fail_index,
            )
        }
    }

    fn call(&mut self) -> aclError {
        let (sizes, fail) = (self.sizes.as_mut_ptr(), &raw mut self.fail_index);
        self.call_with(sizes, fail)
    }
}

#[test]
fn memcpy_batch() {
    let _d = Dev::new(0);
    let a = malloc(32);
    let b = malloc(32);
    let x = [1u8; 32];
    let y = [2u8; 32];
    let mut batch = Batch {
        dsts: [a, b],
        srcs: [x.as_ptr() as *mut c_void, y.as_ptr() as *mut c_void],
        maxs: [32, 32],
        sizes: [32, 16],
        attrs: [aclrtMemcpyBatchAttr {
            dstLoc: aclrtMemLocation {
                id: 0,
                type_: ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            srcLoc: aclrtMemLocation {
                id: 0,
                type_: ACL_MEM_LOCATION_TYPE_HOST,
            },
            rsv: [0; 16],
        }],
        idx: [0],
        fail_index: 0,
    };
    ok(batch.call());
    assert_eq!(batch.fail_index, usize::MAX);
    let mut out = [0u8; 32];
    d2h(&mut out, b);
    assert_eq!(&out[..16], &[2u8; 16]);
    // failIndex NULL, destMax too small, bad reserved bytes (the ACL layer: 100000); bad
    // indexes (the runtime: 107000).
    let sizes = batch.sizes.as_mut_ptr();
    err(batch.call_with(sizes, null_mut()), AclError::INVALID_PARAM);
    batch.maxs[1] = 8;
    err(batch.call(), AclError::INVALID_PARAM);
    assert_eq!(batch.fail_index, 1);
    batch.maxs[1] = 32;
    batch.attrs[0].rsv[3] = 1;
    err(batch.call(), AclError::INVALID_PARAM);
    batch.attrs[0].rsv[3] = 0;
    batch.idx[0] = 1;
    err(batch.call(), AclError::PARAM_INVALID);
    batch.idx[0] = 0;
    // Out of bounds in the second copy: failIndex names it.
    batch.sizes[1] = 33;
    batch.maxs[1] = 64;
    err(batch.call(), AclError::PARAM_INVALID);
    assert_eq!(batch.fail_index, 1);
    // All sizes 0: success.
    let mut zeros = [0usize, 0];
    let mut fail_index = 0usize;
    ok(batch.call_with(zeros.as_mut_ptr(), &mut fail_index));
    assert_eq!(fail_index, usize::MAX);
    // sizes NULL.
    err(
        batch.call_with(null_mut(), &mut fail_index),
        AclError::INVALID_PARAM,
    );
    free(a);
    free(b);
}

#[test]
fn mem_info_and_capacity() {
    let _d = Dev::new(1);
    let (mut f, mut t) = (0usize, 0usize);
    err(
        unsafe { aclrtGetMemInfo(ACL_HBM_MEM, null_mut(), &mut t) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetMemInfo(18, &mut f, &mut t) },
        AclError::INVALID_MEMORY_TYPE,
    );
    ok(unsafe { aclrtGetMemInfo(ACL_DDR_MEM, &mut f, &mut t) });
    assert_eq!((f, t), (0, 0));
    ok(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut f, &mut t) });
    assert_eq!(t as u64, ascendcl_emu::config().memory);
    let free_before = f;
    let p = malloc(1 << 20);
    ok(unsafe { aclrtGetMemInfo(ACL_MEM_NORMAL, &mut f, &mut t) });
    assert!(f < free_before - (1 << 19), "{f} vs {free_before}");
    // Beyond the capacity: 207001.
    let mut q = null_mut();
    err(
        unsafe { aclrtMalloc(&mut q, t + 1, 0) },
        AclError::MEMORY_ALLOCATION,
    );
    free(p);
    std::thread::spawn(|| {
        let (mut f, mut t) = (0usize, 0usize);
        err(
            unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut f, &mut t) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
}

#[test]
fn pointer_attributes() {
    let _d = Dev::new(0);
    let mut a = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 0, type_: 0 },
        pageSize: 0,
        rsv: [0; 4],
    };
    err(
        unsafe { aclrtPointerGetAttributes(null(), &mut a) },
        AclError::INVALID_PARAM,
    );
    let h = malloc_host(64);
    err(
        unsafe { aclrtPointerGetAttributes(h, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtPointerGetAttributes(h, &mut a) });
    assert_eq!(a.location.type_, ACL_MEM_LOCATION_TYPE_HOST);
    let local = [0u8; 8];
    ok(unsafe { aclrtPointerGetAttributes(local.as_ptr().cast(), &mut a) });
    assert_eq!(a.location.type_, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
    free_host(h);
}

#[test]
fn address_ranges() {
    let _d = Dev::new(0);
    let (mut base, mut size) = (null_mut(), 0usize);
    let p = malloc(1000);
    err(
        unsafe { aclrtMemGetAddressRange(null_mut(), &mut base, &mut size) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemGetAddressRange(p, null_mut(), &mut size) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemGetAddressRange(p, &mut base, null_mut()) },
        AclError::INVALID_PARAM,
    );
    // The start and size of the block, from any address inside it.
    for at in [0, 1, 999] {
        base = null_mut();
        ok(unsafe { aclrtMemGetAddressRange(p.cast::<u8>().add(at).cast(), &mut base, &mut size) });
        assert_eq!((base, size), (p, 1000));
    }
    let h = malloc_host(64);
    ok(unsafe { aclrtMemGetAddressRange(h, &mut base, &mut size) });
    assert_eq!((base, size), (h, 64));
    free_host(h);
    // Pageable memory and freed memory are in no block.
    let mut local = [0u8; 8];
    err(
        unsafe { aclrtMemGetAddressRange(local.as_mut_ptr().cast(), &mut base, &mut size) },
        AclError::PARAM_INVALID,
    );
    free(p);
    err(
        unsafe { aclrtMemGetAddressRange(p, &mut base, &mut size) },
        AclError::PARAM_INVALID,
    );
    // A mapping made by aclrtMapMem is one block.
    let prop = aclrtPhysicalMemProp {
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: ACL_HBM_MEM_HUGE,
        location: aclrtMemLocation {
            id: 0,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        reserve: 0,
    };
    let (mut ph, mut va) = (null_mut(), null_mut());
    ok(unsafe { aclrtMallocPhysical(&mut ph, 2 << 20, &prop, 0) });
    ok(unsafe { aclrtReserveMemAddress(&mut va, 4 << 20, 0, null_mut(), 0) });
    let at = unsafe { va.cast::<u8>().add(2 << 20) }.cast();
    err(
        unsafe { aclrtMemGetAddressRange(at, &mut base, &mut size) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMapMem(at, 2 << 20, 0, ph, 0) });
    ok(unsafe {
        aclrtMemGetAddressRange(
            at.cast::<u8>().wrapping_add(100).cast(),
            &mut base,
            &mut size,
        )
    });
    assert_eq!((base, size), (at, 2 << 20));
    ok(unsafe { aclrtUnmapMem(at) });
    ok(unsafe { aclrtReleaseMemAddress(va) });
    ok(unsafe { aclrtFreePhysical(ph) });
}

#[test]
fn host_register() {
    let _d = Dev::new(0);
    let mut buf = vec![0u8; 8192];
    let p = buf.as_mut_ptr().cast::<c_void>();
    let mut dp = null_mut();
    err(
        unsafe { aclrtHostRegister(null_mut(), 16, 0, &mut dp) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtHostRegister(p, 0, 0, &mut dp) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtHostRegister(p, 16, 0, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtHostRegister(p, 16, 0x1, &mut dp) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclrtHostRegister(p, 8192, ACL_HOST_REGISTER_MAPPED, &mut dp) });
    assert_eq!(dp, p);
    err(
        unsafe { aclrtHostRegister(p, 16, 0, &mut dp) },
        AclError::HOST_MEMORY_ALREADY_REGISTERED,
    );
    let mut a = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 0, type_: 9 },
        pageSize: 0,
        rsv: [0; 4],
    };
    ok(unsafe { aclrtPointerGetAttributes(p, &mut a) });
    assert_eq!(a.location.type_, ACL_MEM_LOCATION_TYPE_HOST);
    err(
        unsafe { aclrtHostUnregister(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtHostUnregister(p) });
    err(
        unsafe { aclrtHostUnregister(p) },
        AclError::HOST_MEMORY_NOT_REGISTERED,
    );
}

#[test]
fn many_threads_copy_concurrently() {
    let _d = Dev::new(0);
    std::thread::scope(|s| {
        for t in 0..8u8 {
            s.spawn(move || {
                let _d = Dev::new(0);
                let p = malloc(4096);
                for i in 0..200u32 {
                    let v = [t.wrapping_add(i as u8); 4096];
                    h2d(p, &v);
                    let mut o = [0u8; 4096];
                    d2h(&mut o, p);
                    assert_eq!(o, v);
                }
                free(p);
            });
        }
    });
}
