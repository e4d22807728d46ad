//! Copies the newer headers add: batched asynchronous copies and copies described by
//! descriptors in device memory, with the codes of every documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

fn attr(src: u32, dst: u32) -> aclrtMemcpyBatchAttr {
    aclrtMemcpyBatchAttr {
        dstLoc: aclrtMemLocation { id: 0, type_: dst },
        srcLoc: aclrtMemLocation { id: 0, type_: src },
        rsv: [0; 16],
    }
}

const HOST: u32 = ACL_MEM_LOCATION_TYPE_HOST;
const DEVICE: u32 = ACL_MEM_LOCATION_TYPE_DEVICE;

/// Arguments of one batch call.
struct Batch {
    dsts: Vec<*mut c_void>,
    maxs: Vec<usize>,
    srcs: Vec<*mut c_void>,
    sizes: Vec<usize>,
    attrs: Vec<aclrtMemcpyBatchAttr>,
    idx: Vec<usize>,
}

impl Batch {
    fn run(&mut self, stream: aclrtStream) -> (aclError, usize) {
        let mut fi = 7usize;
        let r = unsafe {
            aclrtMemcpyBatchAsync(
                self.dsts.as_mut_ptr(),
                self.maxs.as_mut_ptr(),
                self.srcs.as_mut_ptr(),
                self.sizes.as_mut_ptr(),
                self.sizes.len(),
                self.attrs.as_mut_ptr(),
                self.idx.as_mut_ptr(),
                self.attrs.len(),
                &mut fi,
                stream,
            )
        };
        take_msg();
        (r, fi)
    }
}

#[test]
fn batch_async_copies() {
    let _d = Dev::new(0);
    let s = stream();
    let (a, b) = (malloc(64), malloc(64));
    let (pa, pb) = (malloc_host(64), malloc_host(64));
    unsafe {
        std::ptr::write_bytes(pa.cast::<u8>(), 1, 64);
        std::ptr::write_bytes(pb.cast::<u8>(), 2, 64);
    }
    let mut pageable = vec![3u8; 64];
    // Three H2D copies: two from pinned memory (queued), one from pageable memory (done at
    // once after the stream is synchronised).
    let mut batch = Batch {
        dsts: vec![a, b, a.cast::<u8>().wrapping_add(32).cast()],
        maxs: vec![64, 64, 32],
        srcs: vec![pa, pb, pageable.as_mut_ptr().cast()],
        sizes: vec![32, 64, 32],
        attrs: vec![attr(HOST, DEVICE)],
        idx: vec![0],
    };
    assert_eq!(batch.run(s), (0, usize::MAX));
    ok(unsafe { aclrtSynchronizeStream(s) });
    let mut out = [0u8; 64];
    d2h(&mut out, a);
    assert_eq!(&out[..32], &[1u8; 32]);
    assert_eq!(&out[32..], &[3u8; 32]);
    d2h(&mut out, b);
    assert_eq!(out, [2u8; 64]);
    // D2H with two attributes.
    let mut back = Batch {
        dsts: vec![pa, pb],
        maxs: vec![64, 64],
        srcs: vec![b, a],
        sizes: vec![64, 64],
        attrs: vec![attr(DEVICE, HOST), attr(DEVICE, HOST)],
        idx: vec![0, 1],
    };
    assert_eq!(back.run(s), (0, usize::MAX));
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(unsafe { *pa.cast::<u8>() }, 2);
    assert_eq!(unsafe { *pb.cast::<u8>().add(40) }, 3);

    // The checks. failIndex NULL, sizes NULL, numBatches 0: 100000.
    let mut fi = 0usize;
    let z = &mut batch;
    err(
        unsafe {
            aclrtMemcpyBatchAsync(
                z.dsts.as_mut_ptr(),
                z.maxs.as_mut_ptr(),
                z.srcs.as_mut_ptr(),
                z.sizes.as_mut_ptr(),
                3,
                z.attrs.as_mut_ptr(),
                z.idx.as_mut_ptr(),
                1,
                null_mut(),
                s,
            )
        },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe {
            aclrtMemcpyBatchAsync(
                z.dsts.as_mut_ptr(),
                z.maxs.as_mut_ptr(),
                z.srcs.as_mut_ptr(),
                null_mut(),
                3,
                z.attrs.as_mut_ptr(),
                z.idx.as_mut_ptr(),
                1,
                &mut fi,
                s,
            )
        },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe {
            aclrtMemcpyBatchAsync(
                z.dsts.as_mut_ptr(),
                z.maxs.as_mut_ptr(),
                z.srcs.as_mut_ptr(),
                z.sizes.as_mut_ptr(),
                0,
                z.attrs.as_mut_ptr(),
                z.idx.as_mut_ptr(),
                1,
                &mut fi,
                s,
            )
        },
        AclError::INVALID_PARAM,
    );
    // All sizes 0: success before anything else is looked at.
    let mut zero = vec![0usize; 3];
    ok(unsafe {
        aclrtMemcpyBatchAsync(
            null_mut(),
            null_mut(),
            null_mut(),
            zero.as_mut_ptr(),
            3,
            null_mut(),
            null_mut(),
            0,
            &mut fi,
            s,
        )
    });
    assert_eq!(fi, usize::MAX);
    // Other arrays NULL: 100000.
    err(
        unsafe {
            aclrtMemcpyBatchAsync(
                null_mut(),
                z.maxs.as_mut_ptr(),
                z.srcs.as_mut_ptr(),
                z.sizes.as_mut_ptr(),
                3,
                z.attrs.as_mut_ptr(),
                z.idx.as_mut_ptr(),
                1,
                &mut fi,
                s,
            )
        },
        AclError::INVALID_PARAM,
    );
    let case = |f: &dyn Fn(&mut Batch)| {
        let mut c = Batch {
            dsts: vec![a, b],
            maxs: vec![64, 64],
            srcs: vec![pa, pb],
            sizes: vec![16, 16],
            attrs: vec![attr(HOST, DEVICE)],
            idx: vec![0],
        };
        f(&mut c);
        let (code, index) = c.run(s);
        (AclError(code), index)
    };
    // destMax below size: 100000 naming the entry; reserved bytes: 100000.
    assert_eq!(case(&|c| c.maxs[1] = 8), (AclError::INVALID_PARAM, 1));
    assert_eq!(case(&|c| c.attrs[0].rsv[3] = 1).0, AclError::INVALID_PARAM);
    // numAttrs above numBatches, attrsIndexes not starting at 0 / not increasing / too big: 107000.
    assert_eq!(
        case(&|c| {
            c.attrs = vec![attr(HOST, DEVICE); 3];
            c.idx = vec![0, 1, 2]
        })
        .0,
        AclError::PARAM_INVALID
    );
    assert_eq!(case(&|c| c.idx[0] = 1).0, AclError::PARAM_INVALID);
    assert_eq!(
        case(&|c| {
            c.attrs = vec![attr(HOST, DEVICE); 2];
            c.idx = vec![0, 0]
        })
        .0,
        AclError::PARAM_INVALID
    );
    assert_eq!(
        case(&|c| {
            c.attrs = vec![attr(HOST, DEVICE); 2];
            c.idx = vec![0, 5]
        })
        .0,
        AclError::PARAM_INVALID
    );
    // Per entry: a zero size among others, a NULL, a location the attribute does not describe,
    // a device-to-device copy: 107000 naming the entry.
    assert_eq!(case(&|c| c.sizes[1] = 0), (AclError::PARAM_INVALID, 1));
    assert_eq!(
        case(&|c| c.srcs[1] = null_mut()),
        (AclError::PARAM_INVALID, 1)
    );
    assert_eq!(case(&|c| c.srcs[0] = b), (AclError::PARAM_INVALID, 0));
    assert_eq!(
        case(&|c| {
            c.srcs[1] = a;
            c.attrs = vec![attr(HOST, DEVICE), attr(DEVICE, DEVICE)];
            c.idx = vec![0, 1]
        }),
        (AclError::PARAM_INVALID, 1)
    );
    let dead = stream();
    ok(unsafe { aclrtDestroyStream(dead) });
    let mut c = Batch {
        dsts: vec![a],
        maxs: vec![64],
        srcs: vec![pa],
        sizes: vec![8],
        attrs: vec![attr(HOST, DEVICE)],
        idx: vec![0],
    };
    assert_eq!(c.run(dead).0, AclError::INVALID_HANDLE);
    free(a);
    free(b);
    free_host(pa);
    free_host(pb);
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn descriptor_copies() {
    let _device = failing_tasks();
    let _d = Dev::new(0);
    let s = stream();
    let inner = ACL_MEMCPY_INNER_DEVICE_TO_DEVICE;
    let mut size = 0usize;
    err(
        unsafe { aclrtGetMemcpyDescSize(inner, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetMemcpyDescSize(8, &mut size) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetMemcpyDescSize(ACL_MEMCPY_DEVICE_TO_DEVICE, &mut size) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclrtGetMemcpyDescSize(inner, &mut size) });
    assert_eq!(size, 32);
    let desc = malloc(64);
    let (src, dst) = (malloc(256), malloc(256));
    h2d(src, &[0x42u8; 256]);
    h2d(dst, &[0u8; 256]);
    let set = |d: *mut c_void,
               kind: u32,
               s: *mut c_void,
               t: *mut c_void,
               n: usize,
               cfg: *mut c_void| unsafe { aclrtSetMemcpyDesc(d, kind, s, t, n, cfg) };
    err(
        set(null_mut(), inner, src, dst, 8, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(
        set(desc, 9, src, dst, 8, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(
        set(desc, inner, null_mut(), dst, 8, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(
        set(desc, inner, src, dst, 0, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(set(desc, inner, src, dst, 8, desc), AclError::INVALID_PARAM);
    err(
        set(desc, ACL_MEMCPY_DEVICE_TO_DEVICE, src, dst, 8, null_mut()),
        AclError::FEATURE_NOT_SUPPORT,
    );
    err(
        set(desc, inner, src, dst, (4 << 30) + 1, null_mut()),
        AclError::PARAM_INVALID,
    );
    err(
        set(
            desc.cast::<u8>().wrapping_add(8).cast(),
            inner,
            src,
            dst,
            8,
            null_mut(),
        ),
        AclError::PARAM_INVALID,
    );
    let mut host = [0u8; 64];
    err(
        set(desc, inner, host.as_mut_ptr().cast(), dst, 8, null_mut()),
        AclError::PARAM_INVALID,
    );
    err(
        set(desc, inner, src, dst, 512, null_mut()),
        AclError::PARAM_INVALID,
    );
    ok(set(desc, inner, src, dst, 100, null_mut()));
    err(
        unsafe { aclrtMemcpyAsyncWithDesc(null_mut(), inner, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpyAsyncWithDesc(desc, 8, s) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpyAsyncWithDesc(desc, inner, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpyAsyncWithDesc(desc, ACL_MEMCPY_DEVICE_TO_DEVICE, s) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    err(
        unsafe { aclrtMemcpyAsyncWithDesc(host.as_mut_ptr().cast(), inner, s) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtMemcpyAsyncWithDesc(desc, inner, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    let mut out = [0u8; 256];
    d2h(&mut out, dst);
    assert!(out[..100].iter().all(|b| *b == 0x42) && out[100..].iter().all(|b| *b == 0));
    // The descriptor is read when the task runs: rewritten after the launch, before the run.
    extern "C" fn pause(_: *mut c_void) {
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    h2d(dst, &[0u8; 256]);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(pause), null_mut()) });
    ok(unsafe { aclrtMemcpyAsyncWithDesc(desc, inner, s) });
    ok(set(desc, inner, src, dst, 200, null_mut()));
    ok(unsafe { aclrtSynchronizeStream(s) });
    d2h(&mut out, dst);
    assert!(out[..200].iter().all(|b| *b == 0x42) && out[200..].iter().all(|b| *b == 0));
    // A descriptor naming freed memory fails the task.
    free(src);
    ok(unsafe { aclrtMemcpyAsyncWithDesc(desc, inner, s) });
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::RT_INTERNAL_ERROR,
    );
    free(dst);
    free(desc);
    ok(unsafe { aclrtDestroyStream(s) });
}
