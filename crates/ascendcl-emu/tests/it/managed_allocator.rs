//! Managed memory (`aclrtMemAllocManaged`) and the allocator registry (`aclrtAllocator*`), with
//! the codes of every documented check.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;

#[test]
fn managed_memory() {
    let _d = Dev::new(0);
    let mut p = null_mut();
    err(
        unsafe { aclrtMemAllocManaged(null_mut(), 64, 1) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemAllocManaged(&mut p, 64, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemAllocManaged(&mut p, 64, 2) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemAllocManaged(&mut p, 0, 1) },
        AclError::PARAM_INVALID,
    );
    std::thread::spawn(|| {
        let mut p = null_mut();
        err(
            unsafe { aclrtMemAllocManaged(&mut p, 64, 1) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
    ok(unsafe { aclrtMemAllocManaged(&mut p, 100, ACL_RT_MEM_ATTACH_GLOBAL) });
    assert_eq!(p as usize % (2 << 20), 0);
    // Host and device both use it: written from the host, copied on the device.
    unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0x11, 100) };
    let d = malloc(100);
    ok(unsafe { aclrtMemcpy(d, 100, p, 100, ACL_MEMCPY_DEVICE_TO_DEVICE) });
    let mut out = [0u8; 100];
    d2h(&mut out, d);
    assert_eq!(out, [0x11; 100]);
    let mut attr = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 9, type_: 9 },
        pageSize: 0,
        rsv: [0; 4],
    };
    ok(unsafe { aclrtPointerGetAttributes(p, &mut attr) });
    assert_eq!(
        (attr.location.type_, attr.pageSize),
        (3, 2 << 20),
        "MANAGED, 2 MiB pages"
    );
    free(p);
    free(d);
}

unsafe extern "C" fn alloc(_: aclrtAllocator, _: usize) -> *mut c_void {
    null_mut()
}
unsafe extern "C" fn release(_: aclrtAllocator, _: aclrtAllocatorBlock) {}
unsafe extern "C" fn advise(_: aclrtAllocator, _: usize, _: aclrtAllocatorAddr) -> *mut c_void {
    null_mut()
}
unsafe extern "C" fn addr(_: aclrtAllocatorBlock) -> *mut c_void {
    null_mut()
}

#[test]
fn allocator_registry() {
    let _d = Dev::new(0);
    let s = stream();
    let desc = unsafe { aclrtAllocatorCreateDesc() };
    assert!(!desc.is_null());
    let obj = 0x1234usize as aclrtAllocator;
    err(
        unsafe { aclrtAllocatorSetObjToDesc(null_mut(), obj) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtAllocatorSetObjToDesc(desc, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtAllocatorSetAllocFuncToDesc(desc, None) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtAllocatorSetObjToDesc(desc, obj) });
    ok(unsafe { aclrtAllocatorSetAllocFuncToDesc(desc, Some(alloc)) });
    // Free and get-address functions missing: registration is refused.
    err(
        unsafe { aclrtAllocatorRegister(s, desc) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtAllocatorSetFreeFuncToDesc(desc, Some(release)) });
    ok(unsafe { aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, Some(addr)) });
    err(
        unsafe { aclrtAllocatorRegister(null_mut(), desc) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtAllocatorRegister(s, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtAllocatorRegister(s, desc) });
    // The registration is a copy: changing the descriptor afterwards does not change it.
    ok(unsafe { aclrtAllocatorSetAllocAdviseFuncToDesc(desc, Some(advise)) });
    let mut got_desc = null_mut();
    let mut got_obj = null_mut();
    let mut got_alloc: aclrtAllocatorAllocFunc = None;
    let mut got_advise: aclrtAllocatorAllocAdviseFunc = Some(advise);
    err(
        unsafe {
            aclrtAllocatorGetByStream(
                s,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            )
        },
        AclError::INVALID_PARAM,
    );
    ok(unsafe {
        aclrtAllocatorGetByStream(
            s,
            &mut got_desc,
            &mut got_obj,
            &mut got_alloc,
            null_mut(),
            &mut got_advise,
            null_mut(),
        )
    });
    assert_eq!((got_desc, got_obj), (desc, obj));
    assert!(got_alloc.is_some() && got_advise.is_none());
    err(
        unsafe { aclrtAllocatorUnregister(null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtAllocatorUnregister(s) });
    ok(unsafe { aclrtAllocatorUnregister(s) });
    err(
        unsafe {
            aclrtAllocatorGetByStream(
                s,
                &mut got_desc,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            )
        },
        AclError::INVALID_PARAM,
    );
    // A destroyed stream forgets its registration.
    ok(unsafe { aclrtAllocatorRegister(s, desc) });
    ok(unsafe { aclrtAllocatorDestroyDesc(desc) });
    err(
        unsafe { aclrtAllocatorDestroyDesc(desc) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtDestroyStream(s) });
    err(
        unsafe {
            aclrtAllocatorGetByStream(
                s,
                &mut got_desc,
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
                null_mut(),
            )
        },
        AclError::INVALID_PARAM,
    );
}
