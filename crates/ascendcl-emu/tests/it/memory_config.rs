//! Allocation with a configuration (`aclrtMallocWithCfg`, `aclrtMallocForTaskScheduler`,
//! `aclrtMallocHostWithCfg`), the batch copies without a failing index (`aclrtMemcpyBatchV2`,
//! `aclrtMemcpyBatchAsyncV2`) and the host-mapping capabilities: the codes of every documented
//! check.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

const INVALID_PARAM: aclError = AclError::INVALID_PARAM.0;
const PARAM_INVALID: aclError = AclError::PARAM_INVALID.0;
const CONTEXT_NULL: aclError = AclError::CONTEXT_NULL.0;

fn attribute(attr: aclrtMallocAttrType, value: u32) -> aclrtMallocAttribute {
    let mut v = aclrtMallocAttrValue::default();
    v.deviceId = value;
    aclrtMallocAttribute { attr, value: v }
}

fn pointer_location(p: *mut c_void) -> (u32, u32) {
    let mut a = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 9, type_: 9 },
        pageSize: 0,
        rsv: [0; 4],
    };
    ok(unsafe { aclrtPointerGetAttributes(p, &mut a) });
    (a.location.type_, a.location.id)
}

type DeviceMalloc = unsafe extern "C" fn(
    *mut *mut c_void,
    usize,
    aclrtMemMallocPolicy,
    *mut aclrtMallocConfig,
) -> aclError;

fn device_malloc_with_cfg(f: DeviceMalloc) {
    let _d = Dev::new(1);
    let mut p = null_mut();
    let policy = ACL_MEM_MALLOC_HUGE_FIRST;
    // No configuration, an empty one, a module id and the current device: device memory.
    ok(unsafe { f(&mut p, 100, policy, null_mut()) });
    assert_eq!(pointer_location(p), (ACL_MEM_LOCATION_TYPE_DEVICE, 1));
    free(p);
    let mut attrs = [
        attribute(ACL_RT_MEM_ATTR_RSV, 0),
        attribute(ACL_RT_MEM_ATTR_MODULE_ID, 7),
        attribute(ACL_RT_MEM_ATTR_DEVICE_ID, 1),
    ];
    let mut cfg = aclrtMallocConfig {
        attrs: attrs.as_mut_ptr(),
        numAttrs: 3,
    };
    ok(unsafe { f(&mut p, 100, policy, &mut cfg) });
    // The bounds are the size asked for, as for every allocation.
    let mut buf = [0u8; 101];
    ok(unsafe {
        aclrtMemcpy(
            buf.as_mut_ptr().cast(),
            100,
            p,
            100,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    err(
        unsafe {
            aclrtMemcpy(
                buf.as_mut_ptr().cast(),
                129,
                p,
                129,
                ACL_MEMCPY_DEVICE_TO_HOST,
            )
        },
        PARAM_INVALID,
    );
    free(p);
    let mut empty = aclrtMallocConfig {
        attrs: null_mut(),
        numAttrs: 0,
    };
    ok(unsafe { f(&mut p, 8, policy, &mut empty) });
    free(p);
    // ACL layer: devPtr NULL, attrs NULL with a count, size 0 (in that order).
    let mut broken = aclrtMallocConfig {
        attrs: null_mut(),
        numAttrs: 1,
    };
    err(
        unsafe { f(null_mut(), 8, policy, null_mut()) },
        INVALID_PARAM,
    );
    err(unsafe { f(&mut p, 0, policy, &mut broken) }, INVALID_PARAM);
    err(unsafe { f(&mut p, 0, policy, null_mut()) }, INVALID_PARAM);
    // Runtime: another device's id, an attribute not accepted here.
    let mut other = [attribute(ACL_RT_MEM_ATTR_DEVICE_ID, 0)];
    let mut cfg = aclrtMallocConfig {
        attrs: other.as_mut_ptr(),
        numAttrs: 1,
    };
    err(unsafe { f(&mut p, 8, policy, &mut cfg) }, PARAM_INVALID);
    let mut va = [attribute(ACL_RT_MEM_ATTR_VA_FLAG, 1)];
    let mut cfg = aclrtMallocConfig {
        attrs: va.as_mut_ptr(),
        numAttrs: 1,
    };
    err(unsafe { f(&mut p, 8, policy, &mut cfg) }, PARAM_INVALID);
    // A thread without a context.
    std::thread::spawn(move || {
        let mut p = null_mut();
        err(unsafe { f(&mut p, 8, policy, null_mut()) }, CONTEXT_NULL);
    })
    .join()
    .unwrap();
}

#[test]
fn malloc_with_cfg() {
    device_malloc_with_cfg(aclrtMallocWithCfg);
}

#[test]
fn malloc_for_task_scheduler() {
    device_malloc_with_cfg(aclrtMallocForTaskScheduler);
}

#[test]
fn malloc_host_with_cfg() {
    let _d = Dev::new(0);
    let mut p = null_mut();
    let mut attrs = [
        attribute(ACL_RT_MEM_ATTR_MODULE_ID, 3),
        attribute(ACL_RT_MEM_ATTR_DEVICE_ID, 1),
    ];
    let mut cfg = aclrtMallocConfig {
        attrs: attrs.as_mut_ptr(),
        numAttrs: 2,
    };
    ok(unsafe { aclrtMallocHostWithCfg(&mut p, 4096, &mut cfg) });
    assert_eq!(pointer_location(p).0, ACL_MEM_LOCATION_TYPE_HOST);
    unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0x5a, 4096) };
    free_host(p);
    ok(unsafe { aclrtMallocHostWithCfg(&mut p, 16, null_mut()) });
    free_host(p);
    err(
        unsafe { aclrtMallocHostWithCfg(null_mut(), 16, null_mut()) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocHostWithCfg(&mut p, 0, null_mut()) },
        INVALID_PARAM,
    );
    // The runtime's checks: attrs NULL with a count, a device id past the count, other attributes.
    let mut broken = aclrtMallocConfig {
        attrs: null_mut(),
        numAttrs: 2,
    };
    err(
        unsafe { aclrtMallocHostWithCfg(&mut p, 16, &mut broken) },
        PARAM_INVALID,
    );
    let mut bad = [attribute(ACL_RT_MEM_ATTR_DEVICE_ID, 2)];
    let mut cfg = aclrtMallocConfig {
        attrs: bad.as_mut_ptr(),
        numAttrs: 1,
    };
    err(
        unsafe { aclrtMallocHostWithCfg(&mut p, 16, &mut cfg) },
        PARAM_INVALID,
    );
    let mut va = [attribute(ACL_RT_MEM_ATTR_VA_FLAG, 0)];
    let mut cfg = aclrtMallocConfig {
        attrs: va.as_mut_ptr(),
        numAttrs: 1,
    };
    err(
        unsafe { aclrtMallocHostWithCfg(&mut p, 16, &mut cfg) },
        PARAM_INVALID,
    );
    std::thread::spawn(|| {
        let mut p = null_mut();
        err(
            unsafe { aclrtMallocHostWithCfg(&mut p, 16, null_mut()) },
            CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
}

fn batch_attr(src: u32, dst: u32) -> aclrtMemcpyBatchAttr {
    aclrtMemcpyBatchAttr {
        dstLoc: aclrtMemLocation { id: 0, type_: dst },
        srcLoc: aclrtMemLocation { id: 0, type_: src },
        rsv: [0; 16],
    }
}

#[test]
fn batch_copies_without_fail_index() {
    let _d = Dev::new(0);
    let s = stream();
    let (a, b) = (malloc(64), malloc(64));
    let (host_a, host_b) = (malloc_host(64), malloc_host(64));
    unsafe {
        std::ptr::write_bytes(host_a.cast::<u8>(), 1, 64);
        std::ptr::write_bytes(host_b.cast::<u8>(), 2, 64);
    }
    let h2d = batch_attr(ACL_MEM_LOCATION_TYPE_HOST, ACL_MEM_LOCATION_TYPE_DEVICE);
    let d2h = batch_attr(ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_HOST);
    // Synchronous: two host-to-device copies.
    let (mut dsts, mut maxs, mut srcs, mut sizes) =
        (vec![a, b], vec![64, 64], vec![host_a, host_b], vec![64, 32]);
    let (mut attrs, mut idx) = (vec![h2d], vec![0usize]);
    ok(unsafe {
        aclrtMemcpyBatchV2(
            dsts.as_mut_ptr(),
            maxs.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            2,
            attrs.as_mut_ptr(),
            idx.as_mut_ptr(),
            1,
        )
    });
    let mut out = [0u8; 64];
    d2h_bytes(&mut out, b);
    assert_eq!((&out[..32], out[32]), (&[2u8; 32][..], 0));
    // The same checks as aclrtMemcpyBatch, without an index to report: sizes NULL, no batches,
    // destMax below size (100000); a device-to-device pair (107000).
    err(
        unsafe {
            aclrtMemcpyBatchV2(
                dsts.as_mut_ptr(),
                maxs.as_mut_ptr(),
                srcs.as_mut_ptr(),
                null_mut(),
                2,
                attrs.as_mut_ptr(),
                idx.as_mut_ptr(),
                1,
            )
        },
        INVALID_PARAM,
    );
    err(
        unsafe {
            aclrtMemcpyBatchV2(
                dsts.as_mut_ptr(),
                maxs.as_mut_ptr(),
                srcs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                0,
                attrs.as_mut_ptr(),
                idx.as_mut_ptr(),
                1,
            )
        },
        INVALID_PARAM,
    );
    maxs[1] = 8;
    err(
        unsafe {
            aclrtMemcpyBatchV2(
                dsts.as_mut_ptr(),
                maxs.as_mut_ptr(),
                srcs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                2,
                attrs.as_mut_ptr(),
                idx.as_mut_ptr(),
                1,
            )
        },
        INVALID_PARAM,
    );
    maxs[1] = 64;
    srcs[1] = a;
    err(
        unsafe {
            aclrtMemcpyBatchV2(
                dsts.as_mut_ptr(),
                maxs.as_mut_ptr(),
                srcs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                2,
                attrs.as_mut_ptr(),
                idx.as_mut_ptr(),
                1,
            )
        },
        PARAM_INVALID,
    );

    // Asynchronous: device to host, queued (pinned memory) and waited for.
    let (mut dsts, mut srcs, mut sizes) = (vec![host_a, host_b], vec![b, a], vec![64, 64]);
    let mut maxs = vec![64, 64];
    let mut attrs = vec![d2h];
    ok(unsafe {
        aclrtMemcpyBatchAsyncV2(
            dsts.as_mut_ptr(),
            maxs.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            2,
            attrs.as_mut_ptr(),
            idx.as_mut_ptr(),
            1,
            s,
        )
    });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(unsafe { *host_a.cast::<u8>() }, 2);
    assert_eq!(unsafe { *host_b.cast::<u8>() }, 1);
    let run = |sizes: &mut [usize],
               attrs: &mut [aclrtMemcpyBatchAttr],
               idx: &mut [usize],
               n: usize,
               stream: aclrtStream| unsafe {
        aclrtMemcpyBatchAsyncV2(
            dsts.clone().as_mut_ptr(),
            maxs.clone().as_mut_ptr(),
            srcs.clone().as_mut_ptr(),
            sizes.as_mut_ptr(),
            2,
            attrs.as_mut_ptr(),
            idx.as_mut_ptr(),
            n,
            stream,
        )
    };
    // All sizes 0: nothing to do. A size above destMax: 100000. A bad attribute index: 107000. A
    // location the attribute does not describe: 107000. A dead stream: 107017.
    ok(run(&mut [0, 0], &mut attrs, &mut idx, 1, s));
    err(
        run(&mut [65, 64], &mut attrs, &mut idx, 1, s),
        INVALID_PARAM,
    );
    err(
        run(&mut sizes, &mut [d2h, d2h], &mut [0, 0], 2, s),
        PARAM_INVALID,
    );
    err(run(&mut sizes, &mut [h2d], &mut idx, 1, s), PARAM_INVALID);
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    err(
        run(&mut sizes, &mut attrs, &mut idx, 1, dead),
        AclError::INVALID_HANDLE.0,
    );
    ok(unsafe { aclrtSynchronizeStream(s) });
    free(a);
    free(b);
    free_host(host_a);
    free_host(host_b);
    ok(unsafe { aclrtDestroyStream(s) });
}

fn d2h_bytes(out: &mut [u8], src: *mut c_void) {
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            out.len(),
            src,
            out.len(),
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
}

#[test]
fn host_mem_map_capabilities() {
    let _d = Dev::new(0);
    let mut cap = 9u32;
    for engine in ACL_RT_HAC_TYPE_STARS..=ACL_RT_HAC_TYPE_CCU {
        ok(unsafe { aclrtHostMemMapCapabilities(0, engine, &mut cap) });
        assert_eq!(cap, ACL_RT_HOST_MEM_MAP_SUPPORTED);
    }
    ok(unsafe { aclrtHostMemMapCapabilities(1, ACL_RT_HAC_TYPE_AIV, &mut cap) });
    err(
        unsafe { aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_AIV, null_mut()) },
        INVALID_PARAM,
    );
    err(
        unsafe { aclrtHostMemMapCapabilities(2, ACL_RT_HAC_TYPE_AIV, &mut cap) },
        PARAM_INVALID,
    );
    err(
        unsafe { aclrtHostMemMapCapabilities(0, ACL_RT_HAC_TYPE_CCU + 1, &mut cap) },
        PARAM_INVALID,
    );
}
