//! Conformance with the project's digest of the runtime's behaviour (docs/runtime-behaviour.md), section by section: every documented check,
//! order-of-checks rule and lifecycle rule, asserted with its exact code through the C ABI
//! functions. Tests that tear the runtime down (aclFinalize) or count device memory take the gate
//! exclusively; the others share it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

static GATE: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    GATE.read().unwrap_or_else(|e| e.into_inner())
}

fn exclusive() -> RwLockWriteGuard<'static, ()> {
    GATE.write().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on a fresh thread, which has no current context.
fn no_ctx(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(f)
        .join()
        .expect("thread without context");
}

extern "C" fn sleep_ms(arg: *mut c_void) {
    std::thread::sleep(Duration::from_millis(arg as u64));
}

fn sleep_on(s: aclrtStream, ms: u64) {
    ok(unsafe { aclrtLaunchHostFunc(s, Some(sleep_ms), ms as *mut c_void) });
}

/// A stream handle that was destroyed.
fn dead_stream() -> aclrtStream {
    let s = stream();
    ok(unsafe { aclrtDestroyStream(s) });
    s
}

/// A stream of another context (made on this thread, then the previous context is restored).
fn foreign_stream() -> (aclrtContext, aclrtStream) {
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    let mut other = null_mut();
    ok(unsafe { aclrtCreateContext(&mut other, 0) });
    let s = stream();
    ok(unsafe { aclrtSetCurrentContext(cur) });
    (other, s)
}

fn drop_foreign(ctx: aclrtContext) {
    ok(unsafe { aclrtDestroyContext(ctx) });
}

fn mem_free(attr: aclrtMemAttr) -> (usize, usize) {
    let (mut f, mut t) = (0, 0);
    ok(unsafe { aclrtGetMemInfo(attr, &mut f, &mut t) });
    (f, t)
}

fn read_dev(p: *const c_void, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    d2h(&mut v, p);
    v
}

// ---------------------------------------------------------------------------------------------
// §1 Error codes: handles

#[test]
fn s1_destroyed_or_wrong_type_handles_are_107017_and_null_stream_is_default() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = dead_stream();
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtStreamQuery(s, &mut 0) },
        AclError::INVALID_HANDLE,
    );
    let e = event();
    ok(unsafe { aclrtDestroyEvent(e) });
    err(
        unsafe { aclrtQueryEventStatus(e, &mut 0) },
        AclError::INVALID_HANDLE,
    );
    err(unsafe { aclrtDestroyEvent(e) }, AclError::INVALID_HANDLE);
    // A stream passed as an event, an event passed as a stream.
    let live = stream();
    err(
        unsafe { aclrtSynchronizeEvent(live) },
        AclError::INVALID_HANDLE,
    );
    let ev = event();
    err(
        unsafe { aclrtSynchronizeStream(ev) },
        AclError::INVALID_HANDLE,
    );
    // NULL stream: the current context's default stream.
    let mut def = null_mut();
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut def) });
    assert!(!def.is_null());
    sleep_on(null_mut(), 200);
    let mut st = 99;
    ok(unsafe { aclrtStreamQuery(def, &mut st) });
    assert_eq!(
        st, ACL_STREAM_STATUS_NOT_READY,
        "work on NULL went to the default stream"
    );
    ok(unsafe { aclrtSynchronizeStream(null_mut()) });
    ok(unsafe { aclrtStreamQuery(def, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_COMPLETE);
    ok(unsafe { aclrtDestroyEvent(ev) });
    ok(unsafe { aclrtDestroyStream(live) });
}

// ---------------------------------------------------------------------------------------------
// §2 Memory: allocation and free

#[test]
fn s2_malloc_family_argument_and_context_checks() {
    let _g = shared();
    let _d = Dev::new(0);
    let mut p = null_mut();
    type Malloc = unsafe extern "C" fn(*mut *mut c_void, usize, aclrtMemMallocPolicy) -> aclError;
    let fns: [(&str, Malloc); 3] = [
        ("aclrtMalloc", aclrtMalloc),
        ("aclrtMallocAlign32", aclrtMallocAlign32),
        ("aclrtMallocCached", aclrtMallocCached),
    ];
    for (name, f) in fns {
        err(unsafe { f(null_mut(), 64, 0) }, AclError::INVALID_PARAM);
        err(unsafe { f(&mut p, 0, 0) }, AclError::INVALID_PARAM);
        // Out of memory (the default capacity is 8 GiB).
        err(
            unsafe { f(&mut p, 1 << 40, ACL_MEM_MALLOC_NORMAL_ONLY) },
            AclError::MEMORY_ALLOCATION,
        );
        // Start address 64-byte aligned; an out-of-range policy behaves as HUGE_FIRST.
        for policy in [0, 2, 3, 5, 99, 0x100, 0x100000] {
            let mut q = null_mut();
            ok(unsafe { f(&mut q, 100, policy) });
            assert_eq!(
                q as usize % 64,
                0,
                "{name} policy {policy}: 64-byte aligned"
            );
            free(q);
        }
        no_ctx(move || {
            let mut p = null_mut();
            err(unsafe { f(&mut p, 64, 0) }, AclError::CONTEXT_NULL);
        });
    }
    // aclrtMallocCached: above 2^50 → 107000; exactly 2^50 is not rejected by that check.
    err(
        unsafe { aclrtMallocCached(&mut p, (1 << 50) + 1, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMallocCached(&mut p, 1 << 50, 0) },
        AclError::MEMORY_ALLOCATION,
    );
    // aclrtMalloc has no 2^50 rule: out of memory.
    err(
        unsafe { aclrtMalloc(&mut p, (1 << 50) + 1, 0) },
        AclError::MEMORY_ALLOCATION,
    );
    // aclrtMallocHost.
    err(
        unsafe { aclrtMallocHost(null_mut(), 64) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMallocHost(&mut p, 0) },
        AclError::INVALID_PARAM,
    );
    let h = malloc_host(100);
    assert_eq!(h as usize % 64, 0);
    free_host(h);
    no_ctx(|| {
        let mut p = null_mut();
        err(
            unsafe { aclrtMallocHost(&mut p, 64) },
            AclError::CONTEXT_NULL,
        );
    });
}

#[test]
fn s2_malloc_sizes_are_charged_with_the_hardware_padding() {
    let _g = exclusive();
    let _d = Dev::new(1);
    let (f0, total) = mem_free(ACL_MEM_NORMAL);
    assert_eq!(total, 8 << 30);
    // aclrtMalloc / aclrtMallocCached: ALIGN_UP(size, 32) + 32.
    let a = malloc(100);
    assert_eq!(f0 - mem_free(ACL_MEM_NORMAL).0, 128 + 32);
    let mut c = null_mut();
    ok(unsafe { aclrtMallocCached(&mut c, 100, 0) });
    assert_eq!(f0 - mem_free(ACL_MEM_NORMAL).0, 2 * 160);
    // aclrtMallocAlign32: ALIGN_UP(size, 32), no extra 32.
    let mut b = null_mut();
    ok(unsafe { aclrtMallocAlign32(&mut b, 100, 0) });
    assert_eq!(f0 - mem_free(ACL_MEM_NORMAL).0, 2 * 160 + 128);
    free(a);
    free(b);
    free(c);
    assert_eq!(mem_free(ACL_MEM_NORMAL).0, f0, "free releases at once");
}

#[test]
fn s2_pinned_host_memory_has_a_budget_and_207001_beyond_it() {
    let _g = exclusive();
    let _d = Dev::new(0);
    // By default the budget is half of the machine's memory: 64 TiB is refused up front, before
    // anything is mapped or zero-filled.
    let mut p = null_mut();
    err(
        unsafe { aclrtMallocHost(&mut p, 64 << 40) },
        AclError::MEMORY_ALLOCATION,
    );
    assert!(p.is_null());
    let saved = ascendcl_emu::config();
    assert!(saved.host_memory > 0);
    ascendcl_emu::set_config(ascendcl_emu::Config {
        host_memory: 4 << 20,
        ..saved.clone()
    });
    let a = malloc_host(3 << 20);
    let r = unsafe { aclrtMallocHost(&mut p, 2 << 20) };
    let msg = take_msg();
    // Page rounding counts: 1 MiB + 1 byte takes 1 MiB + 4 KiB of the 1 MiB left.
    let rounded = unsafe { aclrtMallocHost(&mut p, (1 << 20) + 1) };
    take_msg();
    let b = malloc_host(1 << 20);
    free_host(a);
    let c = malloc_host(2 << 20);
    free_host(b);
    free_host(c);
    ascendcl_emu::set_config(saved);
    assert_eq!(
        (AclError(r), AclError(rounded)),
        (AclError::MEMORY_ALLOCATION, AclError::MEMORY_ALLOCATION)
    );
    assert!(
        msg.contains("ASCENDCL_EMU_HOST_MEMORY") && msg.contains("2097152 bytes requested"),
        "{msg}"
    );
}

#[test]
fn s2_out_of_memory_names_the_padding_when_it_is_what_does_not_fit() {
    let _g = exclusive();
    let _d = Dev::new(1);
    let saved = ascendcl_emu::config();
    let (free0, total) = mem_free(ACL_MEM_NORMAL);
    // Exactly 1 MiB free on the device.
    ascendcl_emu::set_config(ascendcl_emu::Config {
        memory: (total - free0) as u64 + (1 << 20),
        ..saved.clone()
    });
    let mut p = null_mut();
    let padded = unsafe { aclrtMalloc(&mut p, 1 << 20, ACL_MEM_MALLOC_NORMAL_ONLY) };
    let padded_msg = take_msg();
    let too_big = unsafe { aclrtMalloc(&mut p, 2 << 20, ACL_MEM_MALLOC_NORMAL_ONLY) };
    let too_big_msg = take_msg();
    // Without the extra 32 bytes the same size fits.
    let fits = unsafe { aclrtMallocAlign32(&mut p, 1 << 20, ACL_MEM_MALLOC_NORMAL_ONLY) };
    let fitted = p;
    if fits == 0 {
        free(fitted);
    }
    ascendcl_emu::set_config(saved);
    assert_eq!(
        (AclError(padded), AclError(too_big), AclError(fits)),
        (
            AclError::MEMORY_ALLOCATION,
            AclError::MEMORY_ALLOCATION,
            AclError::SUCCESS
        )
    );
    assert!(
        padded_msg.contains("ALIGN_UP(size, 32) + 32 = 1048608 bytes")
            && padded_msg.contains("the padding is what does not fit")
            && padded_msg.contains("1048576 of"),
        "{padded_msg}"
    );
    assert!(
        too_big_msg.contains("padded to ALIGN_UP(size, 32) + 32 = 2097184 bytes")
            && !too_big_msg.contains("the padding is what"),
        "{too_big_msg}"
    );
}

#[test]
fn s2_huge_only_policies_fail_with_207001_without_huge_pages() {
    let _g = exclusive();
    let _d = Dev::new(0);
    let saved = ascendcl_emu::config();
    ascendcl_emu::set_config(ascendcl_emu::Config {
        hugepages: ascendcl_emu::HugePages::Off,
        ..saved.clone()
    });
    let mut p = null_mut();
    let codes: Vec<aclError> = [
        ACL_MEM_MALLOC_HUGE_ONLY,
        ACL_MEM_MALLOC_HUGE_ONLY_P2P,
        ACL_MEM_MALLOC_HUGE1G_ONLY,
        ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
    ]
    .iter()
    .map(|&policy| unsafe { aclrtMalloc(&mut p, 4 << 20, policy) })
    .collect();
    take_msg();
    // HUGE_FIRST falls back to normal pages.
    let q = malloc_policy(4 << 20, ACL_MEM_MALLOC_HUGE_FIRST);
    ascendcl_emu::set_config(saved);
    assert_eq!(codes, vec![AclError::MEMORY_ALLOCATION; 4]);
    free(q);
}

#[test]
fn s2_free_rules() {
    let _g = shared();
    let _d = Dev::new(0);
    err(unsafe { aclrtFree(null_mut()) }, AclError::INVALID_PARAM);
    err(
        unsafe { aclrtFreeHost(null_mut()) },
        AclError::INVALID_PARAM,
    );
    let p = malloc(64);
    // aclrtFreeHost of a device pointer: 107000 [impl]; the pointer stays allocated.
    err(unsafe { aclrtFreeHost(p) }, AclError::PARAM_INVALID);
    // A memory call on a thread with no current context: 107002 (after the NULL check); the
    // memory stays allocated.
    let h0 = malloc_host(64);
    let (pu, hu) = (p as usize, h0 as usize);
    no_ctx(move || {
        err(unsafe { aclrtFree(null_mut()) }, AclError::INVALID_PARAM);
        err(
            unsafe { aclrtFreeHost(null_mut()) },
            AclError::INVALID_PARAM,
        );
        err(
            unsafe { aclrtFree(pu as *mut c_void) },
            AclError::CONTEXT_NULL,
        );
        err(
            unsafe { aclrtFreeHost(hu as *mut c_void) },
            AclError::CONTEXT_NULL,
        );
    });
    free_host(h0);
    free(p);
    // Double free is detected by the emulator (stricter than hardware): 207002.
    err(unsafe { aclrtFree(p) }, AclError::MEMORY_FREE);
    let h = malloc_host(64);
    err(unsafe { aclrtFree(h) }, AclError::PARAM_INVALID);
    free_host(h);
    err(unsafe { aclrtFreeHost(h) }, AclError::MEMORY_FREE);
}

#[test]
fn s2_free_does_not_wait_for_work_in_flight() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    let h = malloc_host(4096);
    let p = malloc(4096);
    sleep_on(s, 200);
    ok(unsafe { aclrtMemcpyAsync(p, 4096, h, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    let t = Instant::now();
    free(p);
    assert!(
        t.elapsed() < Duration::from_millis(150),
        "aclrtFree returned at once"
    );
    // The task whose memory was freed fails instead of touching it; reported by the sync.
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::RT_INTERNAL_ERROR,
    );
    free_host(h);
    ok(unsafe { aclrtDestroyStream(s) });
}

// ---------------------------------------------------------------------------------------------
// §2 Memset

#[test]
fn s2_memset_checks_in_order() {
    let _g = shared();
    let _d = Dev::new(0);
    let p = malloc(64);
    // count 0: success before any other check (NULL, count > maxCount, no context).
    ok(unsafe { aclrtMemset(null_mut(), 0, 1, 0) });
    no_ctx(|| ok(unsafe { aclrtMemset(null_mut(), 0, 1, 0) }));
    err(
        unsafe { aclrtMemset(null_mut(), 64, 1, 8) },
        AclError::INVALID_PARAM,
    );
    // NULL before count > maxCount.
    err(
        unsafe { aclrtMemset(null_mut(), 4, 1, 8) },
        AclError::INVALID_PARAM,
    );
    err(unsafe { aclrtMemset(p, 4, 1, 8) }, AclError::PARAM_INVALID);
    let pu = p as usize;
    no_ctx(move || {
        err(
            unsafe { aclrtMemset(pu as *mut c_void, 64, 1, 8) },
            AclError::CONTEXT_NULL,
        )
    });
    // The value is truncated to 8 bits.
    ok(unsafe { aclrtMemset(p, 64, 0x1ab, 64) });
    assert_eq!(read_dev(p, 64), vec![0xab; 64]);
    // Beyond the allocation: 107000.
    err(
        unsafe { aclrtMemset(p, 128, 0, 65) },
        AclError::PARAM_INVALID,
    );
    free(p);
}

#[test]
fn s2_memset_async_checks_in_order() {
    let _g = shared();
    let _d = Dev::new(0);
    let p = malloc(64);
    let dead = dead_stream();
    ok(unsafe { aclrtMemsetAsync(null_mut(), 0, 1, 0, dead) });
    err(
        unsafe { aclrtMemsetAsync(null_mut(), 4, 1, 8, dead) },
        AclError::INVALID_PARAM,
    );
    // Destroyed stream before count > maxCount.
    err(
        unsafe { aclrtMemsetAsync(p, 4, 1, 8, dead) },
        AclError::INVALID_HANDLE,
    );
    err(
        unsafe { aclrtMemsetAsync(p, 4, 1, 8, null_mut()) },
        AclError::PARAM_INVALID,
    );
    let (ctx, fs) = foreign_stream();
    err(
        unsafe { aclrtMemsetAsync(p, 64, 1, 8, fs) },
        AclError::STREAM_CONTEXT,
    );
    drop_foreign(ctx);
    let s = stream();
    ok(unsafe { aclrtMemsetAsync(p, 64, 0x2cd, 64, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(read_dev(p, 64), vec![0xcd; 64]);
    ok(unsafe { aclrtDestroyStream(s) });
    free(p);
}

#[test]
fn s2_memset_async_on_another_devices_stream_needs_peer_access() {
    // A stream's tasks run on its device: another device's memory is reached through peer
    // access only, as for copies (s2_memcpy_between_devices_needs_peer_access).
    let _g = exclusive();
    let _d1 = Dev::new(1);
    let q = malloc(64);
    let _d0 = Dev::new(0);
    let s = stream();
    assert_eq!(
        AclError(unsafe { aclrtMemsetAsync(q, 64, 0x11, 64, s) }),
        AclError::PARAM_INVALID
    );
    assert!(take_msg().contains("needs peer access"));
    err(
        unsafe { aclrtMemsetD32Async(q, 64, 0x11, 16, s) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtDeviceEnablePeerAccess(1, 0) });
    ok(unsafe { aclrtMemsetAsync(q, 64, 0x22, 64, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(read_dev(q, 64), vec![0x22; 64]);
    ok(unsafe { aclrtDeviceDisablePeerAccess(1) });
    err(
        unsafe { aclrtMemsetAsync(q, 64, 0x33, 64, s) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtDestroyStream(s) });
    free(q);
}

// ---------------------------------------------------------------------------------------------
// §2 aclrtMemcpy (synchronous), checks 1-6

#[test]
fn s2_memcpy_sync_order() {
    let _g = shared();
    let _d = Dev::new(0);
    let p = malloc(64);
    let pu = p as usize;
    // 1. count 0: success, even with NULL pointers, a bad kind, destMax 0, no context.
    ok(unsafe { aclrtMemcpy(null_mut(), 0, null(), 0, 99) });
    no_ctx(|| ok(unsafe { aclrtMemcpy(null_mut(), 0, null(), 0, 99) }));
    // 2. dst NULL, then src NULL (before the kind).
    err(
        unsafe { aclrtMemcpy(null_mut(), 0, null(), 8, 99) },
        AclError::INVALID_PARAM,
    );
    assert_eq!(
        unsafe { aclrtMemcpy(null_mut(), 8, p, 8, 99) },
        AclError::INVALID_PARAM
    );
    assert!(take_msg().contains("dst is NULL"));
    assert_eq!(
        unsafe { aclrtMemcpy(p, 8, null(), 8, 99) },
        AclError::INVALID_PARAM
    );
    assert!(take_msg().contains("src is NULL"));
    // 3. kind not in 0-5 (6, 7, anything else), before destMax.
    for kind in [
        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
        ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
        8,
        u32::MAX,
    ] {
        err(
            unsafe { aclrtMemcpy(p, 0, p, 8, kind) },
            AclError::INVALID_PARAM,
        );
    }
    // 4. destMax 0, count > destMax: 107000 (before dst == src and the context).
    err(
        unsafe { aclrtMemcpy(p, 0, p, 8, 1) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemcpy(p, 4, p, 8, 1) },
        AclError::PARAM_INVALID,
    );
    no_ctx(move || {
        let p = pu as *mut c_void;
        err(
            unsafe { aclrtMemcpy(p, 0, p.cast_const(), 8, 1) },
            AclError::PARAM_INVALID,
        );
        err(
            unsafe { aclrtMemcpy(p, 4, p.cast_const(), 8, 1) },
            AclError::PARAM_INVALID,
        );
        // 5. dst == src: success before the context check.
        ok(unsafe { aclrtMemcpy(p, 8, p.cast_const(), 8, 1) });
        // 6. no current context.
        let h = [1u8; 8];
        err(
            unsafe { aclrtMemcpy(p, 8, h.as_ptr().cast(), 8, 1) },
            AclError::CONTEXT_NULL,
        );
    });
    free(p);
}

#[test]
fn s2_memcpy_sync_kind_is_reserved_and_every_direction_works() {
    let _g = shared();
    let _d = Dev::new(0);
    let a = malloc(16);
    let b = malloc(16);
    let src: Vec<u8> = (1..=16).collect();
    // A kind that contradicts the pointers is not an error for the synchronous call.
    ok(unsafe { aclrtMemcpy(a, 16, src.as_ptr().cast(), 16, ACL_MEMCPY_DEVICE_TO_HOST) });
    ok(unsafe { aclrtMemcpy(b, 16, a, 16, ACL_MEMCPY_HOST_TO_HOST) });
    let mut back = [0u8; 16];
    ok(unsafe {
        aclrtMemcpy(
            back.as_mut_ptr().cast(),
            16,
            b,
            16,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
    assert_eq!(back.to_vec(), src);
    // Host to host (pageable and pinned), DEFAULT and HOST_TO_BUF_TO_DEVICE.
    let h = malloc_host(16);
    let mut out = [0u8; 16];
    ok(unsafe { aclrtMemcpy(h, 16, src.as_ptr().cast(), 16, ACL_MEMCPY_DEFAULT) });
    ok(unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), 16, h, 16, ACL_MEMCPY_HOST_TO_HOST) });
    assert_eq!(out.to_vec(), src);
    ok(unsafe { aclrtMemcpy(a, 16, h, 16, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE) });
    assert_eq!(read_dev(a, 16), src);
    // destMax larger than count is fine; the copy is bounded by the allocation.
    err(
        unsafe { aclrtMemcpy(a, 64, h, 17, ACL_MEMCPY_HOST_TO_DEVICE) },
        AclError::PARAM_INVALID,
    );
    free_host(h);
    free(a);
    free(b);
}

#[test]
fn s2_memcpy_between_devices_needs_peer_access() {
    let _g = exclusive();
    let _d1 = Dev::new(1);
    let q = malloc(16);
    let _d0 = Dev::new(0);
    let p = malloc(16);
    err(
        unsafe { aclrtMemcpy(p, 16, q, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) },
        AclError::PARAM_INVALID,
    );
    let mut can = 0;
    ok(unsafe { aclrtDeviceCanAccessPeer(&mut can, 0, 1) });
    assert_eq!(can, 1);
    ok(unsafe { aclrtDeviceEnablePeerAccess(1, 0) });
    ok(unsafe { aclrtMemcpy(p, 16, q, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) });
    ok(unsafe { aclrtDeviceDisablePeerAccess(1) });
    err(
        unsafe { aclrtMemcpy(p, 16, q, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) },
        AclError::PARAM_INVALID,
    );
    free(p);
    free(q);
}

/// A buffer of 16 bytes on `dev`, made on a thread of its own (the caller's current context is
/// left alone); the device reference stays held.
fn buffer_on(dev: i32) -> *mut c_void {
    std::thread::spawn(move || {
        ok(unsafe { aclrtSetDevice(dev) });
        malloc(16) as usize
    })
    .join()
    .unwrap() as *mut c_void
}

/// Frees a buffer of `buffer_on` and drops its device reference, on a thread of its own.
fn free_on(dev: i32, p: *mut c_void) {
    let p = p as usize;
    std::thread::spawn(move || {
        ok(unsafe { aclrtSetDevice(dev) });
        free(p as *mut c_void);
        ok(unsafe { aclrtResetDevice(dev) });
        ok(unsafe { aclrtResetDevice(dev) });
    })
    .join()
    .unwrap();
}

#[test]
fn s2_peer_access_is_one_way() {
    let _g = exclusive();
    let _d0 = Dev::new(0);
    let a = malloc(16);
    let c = buffer_on(1);
    // Device 1 enables access to device 0 ...
    std::thread::spawn(|| {
        let _d1 = Dev::new(1);
        ok(unsafe { aclrtDeviceEnablePeerAccess(0, 0) });
    })
    .join()
    .unwrap();
    // ... which does not let device 0 copy between them, in either direction.
    let r = unsafe { aclrtMemcpy(c, 16, a, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) };
    let msg = take_msg();
    assert_eq!(r, AclError::PARAM_INVALID);
    assert!(msg.contains("one-way"), "{msg}");
    err(
        unsafe { aclrtMemcpy(a, 16, c, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) },
        AclError::PARAM_INVALID,
    );
    // Device 1 itself runs both.
    let (au, cu) = (a as usize, c as usize);
    std::thread::spawn(move || {
        let _d1 = Dev::new(1);
        let (a, c) = (au as *mut c_void, cu as *mut c_void);
        ok(unsafe { aclrtMemcpy(c, 16, a, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) });
        ok(unsafe { aclrtMemcpy(a, 16, c, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) });
        ok(unsafe { aclrtDeviceDisablePeerAccess(0) });
    })
    .join()
    .unwrap();
    free(a);
    free_on(1, c);
}

#[test]
fn s2_resetting_the_peer_keeps_the_access_enabled_towards_it() {
    let _g = exclusive();
    let _d0 = Dev::new(0);
    let a = malloc(16);
    h2d(a, &[7u8; 16]);
    ok(unsafe { aclrtDeviceEnablePeerAccess(1, 0) });
    // Device 1 is set and released entirely (its own enabled accesses go with it) ...
    std::thread::spawn(|| {
        ok(unsafe { aclrtSetDevice(1) });
        ok(unsafe { aclrtDeviceEnablePeerAccess(0, 0) });
        ok(unsafe { aclrtResetDeviceForce(1) });
    })
    .join()
    .unwrap();
    assert_eq!(ascendcl_emu::device_refs(1), 0);
    // ... and the access device 0 enabled towards it stays.
    let c = buffer_on(1);
    ok(unsafe { aclrtMemcpy(c, 16, a, 16, ACL_MEMCPY_DEVICE_TO_DEVICE) });
    let mut out = [0u8; 16];
    d2h(&mut out, c);
    assert_eq!(out, [7u8; 16]);
    ok(unsafe { aclrtDeviceDisablePeerAccess(1) });
    // Device 1's access towards 0 went with its release.
    let cu = c as usize;
    std::thread::spawn(move || {
        let _d1 = Dev::new(1);
        err(
            unsafe { aclrtDeviceDisablePeerAccess(0) },
            AclError::PARAM_INVALID,
        );
        let _ = cu;
    })
    .join()
    .unwrap();
    free(a);
    free_on(1, c);
}

// ---------------------------------------------------------------------------------------------
// §2 aclrtMemcpyAsync, checks 1-11 and the location/kind table

#[test]
fn s2_memcpy_async_order_1_to_6() {
    let _g = shared();
    let _d = Dev::new(0);
    let p = malloc(64);
    let pu = p as usize;
    let dead = dead_stream();
    let dead_u = dead as usize;
    // 1. count 0: success with everything else wrong.
    ok(unsafe { aclrtMemcpyAsync(null_mut(), 0, null(), 0, 99, dead) });
    // 2. NULL pointers before the kind and the stream.
    err(
        unsafe { aclrtMemcpyAsync(null_mut(), 8, p, 8, 99, dead) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtMemcpyAsync(p, 8, null(), 8, 99, dead) },
        AclError::INVALID_PARAM,
    );
    // 3. kind not in 0-5 before the stream.
    for kind in [6, 7, 8] {
        err(
            unsafe { aclrtMemcpyAsync(p, 8, p, 8, kind, dead) },
            AclError::INVALID_PARAM,
        );
    }
    // 4. destroyed stream (or an event handle) before count > destMax.
    err(
        unsafe { aclrtMemcpyAsync(p, 4, p, 8, 1, dead) },
        AclError::INVALID_HANDLE,
    );
    let ev = event();
    err(
        unsafe { aclrtMemcpyAsync(p, 4, p, 8, 1, ev) },
        AclError::INVALID_HANDLE,
    );
    ok(unsafe { aclrtDestroyEvent(ev) });
    // 5. count > destMax before the context.
    err(
        unsafe { aclrtMemcpyAsync(p, 4, p, 8, 1, null_mut()) },
        AclError::PARAM_INVALID,
    );
    no_ctx(move || {
        let p = pu as *mut c_void;
        let dead = dead_u as aclrtStream;
        err(
            unsafe { aclrtMemcpyAsync(p, 4, p, 8, 1, null_mut()) },
            AclError::PARAM_INVALID,
        );
        // 4 before 6: a destroyed handle on a thread without context.
        err(
            unsafe { aclrtMemcpyAsync(p, 4, p, 8, 1, dead) },
            AclError::INVALID_HANDLE,
        );
        // 6. no current context (before the location/kind check and dst == src).
        err(
            unsafe { aclrtMemcpyAsync(p, 8, p, 8, 1, null_mut()) },
            AclError::CONTEXT_NULL,
        );
    });
    free(p);
}

#[test]
fn s2_memcpy_async_location_kind_table() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    let dev = malloc(64);
    let dev2 = malloc(64);
    let pin = malloc_host(64);
    let pin2 = malloc_host(64);
    let mut unreg = vec![7u8; 64];
    let mut unreg2 = vec![0u8; 64];
    let u = unreg.as_mut_ptr().cast::<c_void>();
    let u2 = unreg2.as_mut_ptr().cast::<c_void>();
    let cp = |d: *mut c_void, sr: *const c_void, k: u32| unsafe {
        aclrtMemcpyAsync(d, 64, sr, 64, k, s)
    };
    // Pinned/device pairs: the kind is forced whatever was passed (0-5).
    for k in 0..=5 {
        ok(cp(dev, pin, k));
        ok(cp(pin, dev, k));
        ok(cp(dev2, dev, k));
        // Host→Host: forced to H2H, then 207000.
        err(cp(pin2, pin, k), AclError::FEATURE_NOT_SUPPORT);
    }
    // Unreg→Device: H2D or D2D; DEFAULT → H2D; other kinds → 107000.
    for k in [
        ACL_MEMCPY_HOST_TO_DEVICE,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        ACL_MEMCPY_DEFAULT,
    ] {
        ok(cp(dev, u, k));
    }
    for k in [
        ACL_MEMCPY_HOST_TO_HOST,
        ACL_MEMCPY_DEVICE_TO_HOST,
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
    ] {
        // 7 before 8: H2H on Unreg→Device is a location/kind mismatch, not 207000.
        err(cp(dev, u, k), AclError::PARAM_INVALID);
    }
    // Device→Unreg: D2H or D2D; DEFAULT → D2H; other → 107000.
    for k in [
        ACL_MEMCPY_DEVICE_TO_HOST,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        ACL_MEMCPY_DEFAULT,
    ] {
        ok(cp(u2, dev, k));
    }
    for k in [
        ACL_MEMCPY_HOST_TO_HOST,
        ACL_MEMCPY_HOST_TO_DEVICE,
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
    ] {
        err(cp(u2, dev, k), AclError::PARAM_INVALID);
    }
    // Host→Unreg: H2H (→ 207000), the matching D2H accepted, DEFAULT → H2H (→ 207000).
    err(
        cp(u2, pin, ACL_MEMCPY_HOST_TO_HOST),
        AclError::FEATURE_NOT_SUPPORT,
    );
    err(
        cp(u2, pin, ACL_MEMCPY_DEFAULT),
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(cp(u2, pin, ACL_MEMCPY_DEVICE_TO_HOST));
    err(
        cp(u2, pin, ACL_MEMCPY_HOST_TO_DEVICE),
        AclError::PARAM_INVALID,
    );
    // Unreg→Host: H2H (→ 207000), the matching H2D accepted, DEFAULT → H2H.
    err(
        cp(pin, u, ACL_MEMCPY_HOST_TO_HOST),
        AclError::FEATURE_NOT_SUPPORT,
    );
    err(
        cp(pin, u, ACL_MEMCPY_DEFAULT),
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(cp(pin, u, ACL_MEMCPY_HOST_TO_DEVICE));
    err(
        cp(pin, u, ACL_MEMCPY_DEVICE_TO_HOST),
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtSynchronizeStream(s) });
    // Unreg→Unreg: any of the four; H2H and DEFAULT (→ H2H) give 207000.
    err(
        cp(u2, u, ACL_MEMCPY_HOST_TO_HOST),
        AclError::FEATURE_NOT_SUPPORT,
    );
    err(cp(u2, u, ACL_MEMCPY_DEFAULT), AclError::FEATURE_NOT_SUPPORT);
    for k in [
        ACL_MEMCPY_HOST_TO_DEVICE,
        ACL_MEMCPY_DEVICE_TO_HOST,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
    ] {
        unreg2.fill(0);
        ok(unsafe {
            aclrtMemcpyAsync(
                unreg2.as_mut_ptr().cast(),
                64,
                unreg.as_ptr().cast(),
                64,
                k,
                s,
            )
        });
        ok(unsafe { aclrtSynchronizeStream(s) });
        assert_eq!(unreg2, vec![7u8; 64], "kind {k}");
    }
    err(
        unsafe { aclrtMemcpyAsync(u2, 64, u, 64, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, s) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtDestroyStream(s) });
    free(dev);
    free(dev2);
    free_host(pin);
    free_host(pin2);
}

#[test]
fn s2_memcpy_async_order_8_9_11() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    let dev = malloc(64);
    let pin = malloc_host(64);
    // 8 before 9: host-to-host with dst == src is still 207000.
    err(
        unsafe { aclrtMemcpyAsync(pin, 64, pin, 64, ACL_MEMCPY_HOST_TO_HOST, s) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // 9. dst == src: success.
    ok(unsafe { aclrtMemcpyAsync(dev, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s) });
    let (ctx, fs) = foreign_stream();
    // 9 before 11: dst == src on another context's stream succeeds.
    ok(unsafe { aclrtMemcpyAsync(dev, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, fs) });
    // 11. stream of another context: 107003.
    err(
        unsafe { aclrtMemcpyAsync(dev, 64, pin, 64, ACL_MEMCPY_HOST_TO_DEVICE, fs) },
        AclError::STREAM_CONTEXT,
    );
    // 10 before 11: a pageable side makes the call synchronous, and it returns (copied) before
    // the stream's context is checked.
    let src = [6u8; 64];
    ok(unsafe {
        aclrtMemcpyAsync(
            dev,
            64,
            src.as_ptr().cast(),
            64,
            ACL_MEMCPY_HOST_TO_DEVICE,
            fs,
        )
    });
    assert_eq!(read_dev(dev, 64), vec![6u8; 64]);
    // ...but an explicit D2D from pageable memory is queued, so check 11 applies.
    err(
        unsafe {
            aclrtMemcpyAsync(
                dev,
                64,
                src.as_ptr().cast(),
                64,
                ACL_MEMCPY_DEVICE_TO_DEVICE,
                fs,
            )
        },
        AclError::STREAM_CONTEXT,
    );
    drop_foreign(ctx);
    ok(unsafe { aclrtDestroyStream(s) });
    free(dev);
    free_host(pin);
}

#[test]
fn s2_memcpy_async_pageable_is_synchronous_pinned_is_queued() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    let dev = malloc(64);
    let pin = malloc_host(64);
    // 10. Pageable source: the stream is synchronised and the copy done before returning.
    let src = [3u8; 64];
    sleep_on(s, 150);
    let t = Instant::now();
    ok(unsafe {
        aclrtMemcpyAsync(
            dev,
            64,
            src.as_ptr().cast(),
            64,
            ACL_MEMCPY_HOST_TO_DEVICE,
            s,
        )
    });
    assert!(
        t.elapsed() >= Duration::from_millis(100),
        "waited for the stream"
    );
    let mut st = 99;
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_COMPLETE);
    assert_eq!(
        read_dev(dev, 64),
        vec![3u8; 64],
        "landed when the call returned"
    );
    // Pinned source: truly asynchronous (queued behind the host function).
    // SAFETY: pin is a live pinned allocation of at least that many bytes.
    unsafe { std::ptr::write_bytes(pin.cast::<u8>(), 9, 64) };
    sleep_on(s, 150);
    let t = Instant::now();
    ok(unsafe { aclrtMemcpyAsync(dev, 64, pin, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    assert!(
        t.elapsed() < Duration::from_millis(100),
        "queued, not waited for"
    );
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_NOT_READY);
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(read_dev(dev, 64), vec![9u8; 64]);
    // HOST_TO_BUF_TO_DEVICE stages the bytes at enqueue time.
    sleep_on(s, 100);
    ok(unsafe { aclrtMemcpyAsync(dev, 64, pin, 64, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, s) });
    // SAFETY: pin is a live pinned allocation of at least that many bytes.
    unsafe { std::ptr::write_bytes(pin.cast::<u8>(), 1, 64) };
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(
        read_dev(dev, 64),
        vec![9u8; 64],
        "staged before the caller changed it"
    );
    ok(unsafe { aclrtDestroyStream(s) });
    free(dev);
    free_host(pin);
}

// ---------------------------------------------------------------------------------------------
// §2 Pageable ranges that run into an allocation (fixed: previously undetected)

/// A page-aligned window of `pages` pages inside a heap buffer (pageable memory).
fn pageable_pages(buf: &mut Vec<u8>, pages: usize) -> usize {
    let ps = 4096;
    buf.resize((pages + 1) * ps, 0);
    (buf.as_mut_ptr() as usize + ps - 1) & !(ps - 1)
}

#[test]
fn s2_pageable_range_running_into_an_allocation_is_107000() {
    let _g = shared();
    let _d = Dev::new(0);
    let dev = malloc(3 * 4096);
    let mut buf = Vec::new();
    let base = pageable_pages(&mut buf, 3);
    // Register the middle page: [base, base+4096) stays pageable, the next page is registered.
    let mut dp = null_mut();
    ok(unsafe { aclrtHostRegister((base + 4096) as *mut c_void, 4096, 0, &mut dp) });
    let b = base as *mut c_void;
    // Inside the pageable page: fine.
    ok(unsafe { aclrtMemcpy(dev, 4096, b, 4096, ACL_MEMCPY_HOST_TO_DEVICE) });
    // Starting in pageable memory and running into the registered range: 107000, nothing copied.
    type Call<'a> = Box<dyn Fn() -> aclError + 'a>;
    let calls: [(&str, Call<'_>); 6] = [
        (
            "memcpy src",
            Box::new(|| unsafe { aclrtMemcpy(dev, 8192, b, 4097, ACL_MEMCPY_HOST_TO_DEVICE) }),
        ),
        (
            "memcpy dst",
            Box::new(|| unsafe { aclrtMemcpy(b, 8192, dev, 8192, ACL_MEMCPY_DEVICE_TO_HOST) }),
        ),
        (
            "memset",
            Box::new(|| unsafe { aclrtMemset(b, 8192, 0, 4097) }),
        ),
        (
            "memsetAsync",
            Box::new(|| unsafe { aclrtMemsetAsync(b, 8192, 0, 8192, null_mut()) }),
        ),
        (
            "memcpyAsync",
            Box::new(|| unsafe {
                aclrtMemcpyAsync(dev, 8192, b, 8192, ACL_MEMCPY_HOST_TO_DEVICE, null_mut())
            }),
        ),
        (
            "memcpy2d",
            Box::new(|| unsafe {
                aclrtMemcpy2d(dev, 4096, b, 4096, 4096, 2, ACL_MEMCPY_HOST_TO_DEVICE)
            }),
        ),
    ];
    for (name, call) in &calls {
        take_msg();
        assert_eq!(call(), AclError::PARAM_INVALID, "{name}");
        let m = take_msg();
        assert!(m.contains("runs into"), "{name}: {m}");
    }
    ok(unsafe { aclrtHostUnregister(dp) });
    // Unregistered again: the whole window is pageable.
    ok(unsafe { aclrtMemcpy(dev, 8192, b, 8192, ACL_MEMCPY_HOST_TO_DEVICE) });
    free(dev);
}

#[test]
fn s2_pageable_range_running_into_device_memory_or_wrapping_is_107000() {
    let _g = shared();
    let _d = Dev::new(0);
    let dev = malloc(4096);
    let h = [0u8; 64];
    // A range that starts before a device allocation and ends inside it: 107000 whether the
    // start is pageable (runs into) or the end of a neighbouring allocation (runs past it).
    // Nothing is touched either way.
    let before = (dev as usize - 32) as *mut c_void;
    err(
        unsafe { aclrtMemcpy(before, 64, h.as_ptr().cast(), 64, ACL_MEMCPY_HOST_TO_HOST) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtMemset(before, 64, 0, 64) },
        AclError::PARAM_INVALID,
    );
    // A range that wraps around the address space: 107000 (not a crash).
    let top = (usize::MAX - 15) as *const c_void;
    err(
        unsafe { aclrtMemcpy(dev, 64, top, 64, ACL_MEMCPY_HOST_TO_DEVICE) },
        AclError::PARAM_INVALID,
    );
    assert!(take_msg().is_empty(), "err() already consumed the message");
    err(
        unsafe { aclrtMemset(top.cast_mut(), 64, 0, 64) },
        AclError::PARAM_INVALID,
    );
    free(dev);
}

/// Maps the page just below `addr` (pageable memory of the test's own), if it is free.
fn page_below(addr: usize) -> Option<usize> {
    let want = addr.checked_sub(4096)?;
    // Elsewhere than Linux the address is only a hint; the check below refuses any other one.
    #[cfg(target_os = "linux")]
    let at_free_address = libc::MAP_FIXED_NOREPLACE;
    #[cfg(not(target_os = "linux"))]
    let at_free_address = 0;
    // SAFETY: a fresh anonymous mapping at a free address (MAP_FIXED_NOREPLACE never replaces one,
    // and a hint never does).
    let p = unsafe {
        libc::mmap(
            want as *mut libc::c_void,
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | at_free_address,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    if p as usize != want {
        // SAFETY: p is the page this function just mapped.
        unsafe { libc::munmap(p, 4096) };
        return None;
    }
    Some(want)
}

#[test]
fn s2_pageable_page_just_below_device_memory() {
    // Device memory lives in device address space, which host memory borders only at its
    // edges: here, a virtual memory reservation with physical memory mapped at its start.
    // Exclusive: no other test maps memory between the reservation and the probe.
    let _g = exclusive();
    let _d = Dev::new(0);
    const MIB2: usize = 2 << 20;
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
    let mut hits = 0;
    for _ in 0..32 {
        let (mut va, mut ph) = (null_mut(), null_mut());
        ok(unsafe { aclrtReserveMemAddress(&mut va, MIB2, 0, null_mut(), 0) });
        ok(unsafe { aclrtMallocPhysical(&mut ph, MIB2, &prop, 0) });
        ok(unsafe { aclrtMapMem(va, MIB2, 0, ph, 0) });
        let Some(below) = page_below(va as usize) else {
            ok(unsafe { aclrtUnmapMem(va) });
            ok(unsafe { aclrtFreePhysical(ph) });
            ok(unsafe { aclrtReleaseMemAddress(va) });
            continue;
        };
        let b = below as *mut c_void;
        // Within the page: fine.
        ok(unsafe { aclrtMemset(b, 4096, 1, 4096) });
        // Runs into the device mapping.
        err(
            unsafe { aclrtMemset(b, 8192, 0, 4097) },
            AclError::PARAM_INVALID,
        );
        let h = [0u8; 16];
        assert_eq!(
            unsafe { aclrtMemcpy(b.wrapping_byte_add(4090), 16, h.as_ptr().cast(), 16, 0) },
            AclError::PARAM_INVALID
        );
        let m = take_msg();
        assert!(m.contains("runs into the device allocation"), "{m}");
        // Unmapped: the range now runs into the reservation, where nothing is mapped.
        ok(unsafe { aclrtUnmapMem(va) });
        assert_eq!(
            unsafe { aclrtMemset(b, 8192, 0, 4097) },
            AclError::PARAM_INVALID
        );
        let m = take_msg();
        assert!(m.contains("where nothing is mapped"), "{m}");
        hits += 1;
        // Nothing was written past the page.
        let mut tail = [9u8; 1];
        ok(unsafe { aclrtMemcpy(tail.as_mut_ptr().cast(), 1, b.wrapping_byte_add(4095), 1, 0) });
        assert_eq!(tail[0], 1);
        ok(unsafe { aclrtFreePhysical(ph) });
        ok(unsafe { aclrtReleaseMemAddress(va) });
        // SAFETY: b is the page page_below mapped for this test; nothing uses it any more.
        unsafe { libc::munmap(b, 4096) };
        break;
    }
    assert_eq!(hits, 1, "found no free page below a fresh reservation");
}

// ---------------------------------------------------------------------------------------------
// §2 2D copies

#[test]
fn s2_memcpy_2d_order() {
    let _g = shared();
    let _d = Dev::new(0);
    let dev = malloc(4096);
    let dev2 = malloc(4096);
    let host = vec![5u8; 4096];
    let h = host.as_ptr().cast::<c_void>();
    ok(unsafe { aclrtMemset(dev, 4096, 5, 4096) });
    type Sync2d = unsafe extern "C" fn(
        *mut c_void,
        usize,
        *const c_void,
        usize,
        usize,
        usize,
        aclrtMemcpyKind,
    ) -> aclError;
    let s = stream();
    let su = s as usize;
    let async2d: Sync2d = {
        unsafe extern "C" fn wrap(
            d: *mut c_void,
            dp: usize,
            sr: *const c_void,
            sp: usize,
            w: usize,
            hh: usize,
            k: aclrtMemcpyKind,
        ) -> aclError {
            // The stream is the default stream: the order checks do not depend on it.
            unsafe { aclrtMemcpy2dAsync(d, dp, sr, sp, w, hh, k, null_mut()) }
        }
        wrap
    };
    for (name, f) in [("sync", aclrtMemcpy2d as Sync2d), ("async", async2d)] {
        // width 0 or height 0: success before anything else.
        assert_eq!(
            unsafe { f(null_mut(), 0, null(), 0, 0, 4, 99) },
            0,
            "{name}"
        );
        assert_eq!(
            unsafe { f(null_mut(), 0, null(), 0, 4, 0, 99) },
            0,
            "{name}"
        );
        // NULL: 100000 (before width > pitch and the kind).
        err(
            unsafe { f(null_mut(), 0, h, 0, 8, 2, 99) },
            AclError::INVALID_PARAM,
        );
        err(
            unsafe { f(dev, 0, null(), 0, 8, 2, 99) },
            AclError::INVALID_PARAM,
        );
        // width > spitch or > dpitch: 100000 (before the kind). A pitch of 0 is always smaller
        // than a non-zero width, so it is reported here too.
        err(
            unsafe { f(dev, 16, h, 8, 9, 2, 99) },
            AclError::INVALID_PARAM,
        );
        err(
            unsafe { f(dev, 8, h, 16, 9, 2, 99) },
            AclError::INVALID_PARAM,
        );
        err(
            unsafe { f(dev, 0, h, 16, 8, 2, 1) },
            AclError::INVALID_PARAM,
        );
        // kind not in {H2D, D2H, D2D, DEFAULT}: 100000.
        for k in [
            ACL_MEMCPY_HOST_TO_HOST,
            ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
            6,
            7,
            99,
        ] {
            err(
                unsafe { f(dev, 16, h, 16, 8, 2, k) },
                AclError::INVALID_PARAM,
            );
        }
        // height > 5,242,880 or width > 5,000,000: 107000.
        err(
            unsafe { f(dev, 16, h, 16, 8, 5_242_881, 1) },
            AclError::PARAM_INVALID,
        );
        err(
            unsafe { f(dev, 5_000_001, h, 5_000_001, 5_000_001, 1, 1) },
            AclError::PARAM_INVALID,
        );
        // Valid H2D and D2H.
        ok(unsafe { f(dev, 64, h, 32, 16, 4, ACL_MEMCPY_HOST_TO_DEVICE) });
        let mut back = vec![0u8; 64];
        ok(unsafe {
            f(
                back.as_mut_ptr().cast(),
                16,
                dev,
                64,
                16,
                4,
                ACL_MEMCPY_DEFAULT,
            )
        });
        ok(unsafe { aclrtSynchronizeStream(null_mut()) });
        assert_eq!(back, vec![5u8; 64], "{name}");
    }
    // The limits apply before the context.
    no_ctx(|| {
        let d = 0x1000 as *mut c_void;
        err(
            unsafe { aclrtMemcpy2d(d, 16, d, 16, 8, 5_242_881, 1) },
            AclError::PARAM_INVALID,
        );
    });
    // Synchronous D2D: 207000 (explicit kind or DEFAULT between two device pointers).
    err(
        unsafe { aclrtMemcpy2d(dev2, 64, dev, 64, 64, 4, ACL_MEMCPY_DEVICE_TO_DEVICE) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    err(
        unsafe { aclrtMemcpy2d(dev2, 64, dev, 64, 64, 4, ACL_MEMCPY_DEFAULT) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    // Asynchronous D2D is supported.
    ok(unsafe {
        aclrtMemcpy2dAsync(
            dev2,
            64,
            dev,
            64,
            64,
            4,
            ACL_MEMCPY_DEVICE_TO_DEVICE,
            su as aclrtStream,
        )
    });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(read_dev(dev2, 64), vec![5u8; 64]);
    ok(unsafe { aclrtDestroyStream(s) });
    free(dev);
    free(dev2);
}

// ---------------------------------------------------------------------------------------------
// §2 Batch copies

fn attr(src: u32, dst: u32) -> aclrtMemcpyBatchAttr {
    aclrtMemcpyBatchAttr {
        dstLoc: aclrtMemLocation { id: 0, type_: dst },
        srcLoc: aclrtMemLocation { id: 0, type_: src },
        rsv: [0; 16],
    }
}

#[test]
fn s2_memcpy_batch_rules() {
    let _g = shared();
    let _d = Dev::new(0);
    const H: u32 = ACL_MEM_LOCATION_TYPE_HOST;
    const D: u32 = ACL_MEM_LOCATION_TYPE_DEVICE;
    let a = malloc(64);
    let b = malloc(64);
    let host: Vec<u8> = (0..128).map(|i| i as u8).collect();
    let mut dsts = [a, b];
    let mut srcs = [
        host.as_ptr() as *mut c_void,
        unsafe { host.as_ptr().add(64) } as *mut c_void,
    ];
    let mut maxs = [64usize, 64];
    let mut sizes = [64usize, 64];
    let mut attrs = [attr(H, D)];
    let mut idx = [0usize];
    let mut fi = 0usize;
    let call = |dsts: *mut *mut c_void,
                maxs: *mut usize,
                srcs: *mut *mut c_void,
                sizes: *mut usize,
                n: usize,
                attrs: *mut aclrtMemcpyBatchAttr,
                idx: *mut usize,
                na: usize,
                fi: *mut usize| unsafe {
        aclrtMemcpyBatch(dsts, maxs, srcs, sizes, n, attrs, idx, na, fi)
    };
    let (pd, pm, ps, pz) = (
        dsts.as_mut_ptr(),
        maxs.as_mut_ptr(),
        srcs.as_mut_ptr(),
        sizes.as_mut_ptr(),
    );
    let (pa, pi) = (attrs.as_mut_ptr(), idx.as_mut_ptr());
    // failIndex NULL, sizes NULL, numBatches 0, any other array NULL: 100000.
    err(
        call(pd, pm, ps, pz, 2, pa, pi, 1, null_mut()),
        AclError::INVALID_PARAM,
    );
    err(
        call(pd, pm, ps, null_mut(), 2, pa, pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    err(
        call(pd, pm, ps, pz, 0, pa, pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    err(
        call(null_mut(), pm, ps, pz, 2, pa, pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    err(
        call(pd, null_mut(), ps, pz, 2, pa, pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    err(
        call(pd, pm, null_mut(), pz, 2, pa, pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    err(
        call(pd, pm, ps, pz, 2, null_mut(), pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    err(
        call(pd, pm, ps, pz, 2, pa, null_mut(), 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    // destMaxs[i] < sizes[i]: 100000.
    // SAFETY: the pointer points into a live local array (taken with as_mut_ptr above).
    unsafe { *pm.add(1) = 63 };
    err(
        call(pd, pm, ps, pz, 2, pa, pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    // SAFETY: the pointer points into a live local array (taken with as_mut_ptr above).
    unsafe { *pm.add(1) = 64 };
    // A non-zero reserved byte: 100000.
    // SAFETY: the pointer points into a live local array (taken with as_mut_ptr above).
    unsafe { (*pa).rsv[15] = 1 };
    err(
        call(pd, pm, ps, pz, 2, pa, pi, 1, &mut fi),
        AclError::INVALID_PARAM,
    );
    // SAFETY: the pointer points into a live local array (taken with as_mut_ptr above).
    unsafe { (*pa).rsv[15] = 0 };
    // The runtime's checks answer 107000, with no copy to blame (failIndex SIZE_MAX):
    // attrsIndexes[0] must be 0; numAttrs is 1 to numBatches.
    // SAFETY: the pointer points into a live local array (taken with as_mut_ptr above).
    unsafe { *pi = 1 };
    fi = 7;
    err(
        call(pd, pm, ps, pz, 2, pa, pi, 1, &mut fi),
        AclError::PARAM_INVALID,
    );
    assert_eq!(fi, usize::MAX);
    // SAFETY: the pointer points into a live local array (taken with as_mut_ptr above).
    unsafe { *pi = 0 };
    err(
        call(pd, pm, ps, pz, 2, pa, pi, 0, &mut fi),
        AclError::PARAM_INVALID,
    );
    let mut three = [attr(H, D); 3];
    let mut three_idx = [0usize, 1, 2];
    fi = 7;
    err(
        call(
            pd,
            pm,
            ps,
            pz,
            2,
            three.as_mut_ptr(),
            three_idx.as_mut_ptr(),
            3,
            &mut fi,
        ),
        AclError::PARAM_INVALID,
    );
    assert_eq!(fi, usize::MAX);
    // A NULL copy: 107000 naming it.
    let mut holes = [a, std::ptr::null_mut()];
    err(
        call(holes.as_mut_ptr(), pm, ps, pz, 2, pa, pi, 1, &mut fi),
        AclError::PARAM_INVALID,
    );
    assert_eq!(fi, 1);
    // All sizes 0: success with failIndex = SIZE_MAX.
    let mut zero = [0usize, 0];
    fi = 7;
    ok(call(pd, pm, ps, zero.as_mut_ptr(), 2, pa, pi, 1, &mut fi));
    assert_eq!(fi, usize::MAX);
    // A valid H2D batch: failIndex = SIZE_MAX, data landed.
    fi = 7;
    ok(call(pd, pm, ps, pz, 2, pa, pi, 1, &mut fi));
    assert_eq!(fi, usize::MAX);
    assert_eq!(read_dev(a, 64), host[..64].to_vec());
    assert_eq!(read_dev(b, 64), host[64..].to_vec());
    // attrsIndexes strictly increasing; one batch is all H2D or all D2H (107000).
    let mut attrs2 = [attr(H, D), attr(D, H)];
    let mut idx2 = [0usize, 0];
    err(
        call(
            pd,
            pm,
            ps,
            pz,
            2,
            attrs2.as_mut_ptr(),
            idx2.as_mut_ptr(),
            2,
            &mut fi,
        ),
        AclError::PARAM_INVALID,
    );
    idx2[1] = 1;
    err(
        call(
            pd,
            pm,
            ps,
            pz,
            2,
            attrs2.as_mut_ptr(),
            idx2.as_mut_ptr(),
            2,
            &mut fi,
        ),
        AclError::PARAM_INVALID,
    );
    // A D2H batch.
    let mut out = vec![0u8; 128];
    let mut odst = [
        out.as_mut_ptr() as *mut c_void,
        unsafe { out.as_mut_ptr().add(64) } as *mut c_void,
    ];
    let mut osrc = [a, b];
    let mut dattr = [attr(D, H)];
    ok(call(
        odst.as_mut_ptr(),
        pm,
        osrc.as_mut_ptr(),
        pz,
        2,
        dattr.as_mut_ptr(),
        pi,
        1,
        &mut fi,
    ));
    assert_eq!(fi, usize::MAX);
    assert_eq!(out, host);
    // A copy that does not fit its allocation: its index in failIndex.
    let mut big = [64usize, 65];
    let mut bmax = [64usize, 65];
    err(
        call(
            pd,
            bmax.as_mut_ptr(),
            ps,
            big.as_mut_ptr(),
            2,
            pa,
            pi,
            1,
            &mut fi,
        ),
        AclError::PARAM_INVALID,
    );
    assert_eq!(fi, 1);
    free(a);
    free(b);
}

// ---------------------------------------------------------------------------------------------
// §2 Queries and registration

#[test]
fn s2_get_mem_info() {
    let _g = shared();
    let _d = Dev::new(0);
    let (mut f, mut t) = (0usize, 0usize);
    err(
        unsafe { aclrtGetMemInfo(ACL_MEM_NORMAL, null_mut(), &mut t) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetMemInfo(ACL_MEM_NORMAL, &mut f, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtGetMemInfo(18, &mut f, &mut t) },
        AclError::INVALID_MEMORY_TYPE,
    );
    err(
        unsafe { aclrtGetMemInfo(u32::MAX, &mut f, &mut t) },
        AclError::INVALID_MEMORY_TYPE,
    );
    for attr in [
        ACL_MEM_NORMAL,
        ACL_MEM_HUGE,
        ACL_MEM_HUGE1G,
        ACL_MEM_P2P_NORMAL,
        ACL_MEM_P2P_HUGE,
        ACL_MEM_P2P_HUGE1G,
        ACL_HBM_MEM,
    ] {
        let (f, t) = mem_free(attr);
        assert_eq!(t, 8 << 30, "attr {attr}");
        assert!(f <= t);
    }
    // An attribute the hardware lacks (DDR on an HBM device): free = total = 0.
    assert_eq!(mem_free(ACL_DDR_MEM), (0, 0));
    no_ctx(|| {
        let (mut f, mut t) = (0usize, 0usize);
        err(
            unsafe { aclrtGetMemInfo(ACL_MEM_NORMAL, &mut f, &mut t) },
            AclError::CONTEXT_NULL,
        );
    });
}

#[test]
fn s2_pointer_get_attributes() {
    let _g = shared();
    let _d = Dev::new(0);
    let mut a = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 9, type_: 9 },
        pageSize: 0,
        rsv: [0; 4],
    };
    let dev = malloc(64);
    let pin = malloc_host(64);
    let host = [0u8; 64];
    err(
        unsafe { aclrtPointerGetAttributes(null(), &mut a) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtPointerGetAttributes(dev, null_mut()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclrtPointerGetAttributes(pin, &mut a) });
    assert_eq!(a.location.type_, ACL_MEM_LOCATION_TYPE_HOST);
    assert!(a.pageSize > 0);
    ok(unsafe { aclrtPointerGetAttributes(dev, &mut a) });
    assert_eq!(
        (a.location.type_, a.location.id),
        (ACL_MEM_LOCATION_TYPE_DEVICE, 0)
    );
    ok(unsafe { aclrtPointerGetAttributes(host.as_ptr().cast(), &mut a) });
    assert_eq!(a.location.type_, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
    free(dev);
    free_host(pin);
}

#[test]
fn s2_host_register_and_unregister() {
    let _g = shared();
    let _d = Dev::new(0);
    let mut buf = Vec::new();
    let base = pageable_pages(&mut buf, 2) as *mut c_void;
    let mut dp = null_mut();
    err(
        unsafe { aclrtHostRegister(null_mut(), 4096, 0, &mut dp) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtHostRegister(base, 0, 0, &mut dp) },
        AclError::INVALID_PARAM,
    );
    // Unknown type bits: 207000.
    for t in [0x1, 0x2, 0x10, 0x8000_0000] {
        err(
            unsafe { aclrtHostRegister(base, 4096, t, &mut dp) },
            AclError::FEATURE_NOT_SUPPORT,
        );
    }
    // Unregistering a pointer that is not registered: 507911.
    err(
        unsafe { aclrtHostUnregister(base) },
        AclError::HOST_MEMORY_NOT_REGISTERED,
    );
    ok(unsafe { aclrtHostRegister(base, 4096, ACL_HOST_REGISTER_MAPPED, &mut dp) });
    assert!(!dp.is_null());
    // Registered memory is HOST (0) for aclrtPointerGetAttributes.
    let mut a = aclrtPtrAttributes {
        location: aclrtMemLocation { id: 9, type_: 9 },
        pageSize: 0,
        rsv: [0; 4],
    };
    ok(unsafe { aclrtPointerGetAttributes(base, &mut a) });
    assert_eq!(a.location.type_, ACL_MEM_LOCATION_TYPE_HOST);
    // Already registered: 507910.
    err(
        unsafe { aclrtHostRegister(base, 4096, 0, &mut dp) },
        AclError::HOST_MEMORY_ALREADY_REGISTERED,
    );
    ok(unsafe { aclrtHostUnregister(base) });
    err(
        unsafe { aclrtHostUnregister(base) },
        AclError::HOST_MEMORY_NOT_REGISTERED,
    );
}

#[test]
fn s2_host_register_v2_mapped_accepts_pinned_memory() {
    // The zero-copy sample registers memory from aclrtMallocHost with ACL_HOST_REG_MAPPED: the
    // runtime refuses only a range registered already.
    let _g = shared();
    let _d = Dev::new(0);
    let pin = malloc_host(8192);
    ok(unsafe { aclrtHostRegisterV2(pin, 8192, ACL_HOST_REG_MAPPED) });
    let mut dev_ptr = null_mut();
    ok(unsafe { aclrtHostGetDevicePointer(pin, &mut dev_ptr, 0) });
    assert_eq!(dev_ptr, pin);
    // A device copy through the device address reaches the pinned bytes.
    let dev = malloc(8192);
    ok(unsafe { aclrtMemset(dev, 8192, 0x3c, 8192) });
    ok(unsafe { aclrtMemcpy(dev_ptr, 8192, dev, 8192, ACL_MEMCPY_DEVICE_TO_HOST) });
    assert_eq!(unsafe { pin.cast::<u8>().add(8191).read() }, 0x3c);
    // A second registration of it (either API), or of part of it: 507910.
    err(
        unsafe { aclrtHostRegisterV2(pin, 8192, ACL_HOST_REG_MAPPED) },
        AclError::HOST_MEMORY_ALREADY_REGISTERED,
    );
    let mut dp = null_mut();
    err(
        unsafe { aclrtHostRegister(pin.wrapping_byte_add(4096), 4096, 0, &mut dp) },
        AclError::HOST_MEMORY_ALREADY_REGISTERED,
    );
    ok(unsafe { aclrtHostUnregister(pin) });
    err(
        unsafe { aclrtHostUnregister(pin) },
        AclError::HOST_MEMORY_NOT_REGISTERED,
    );
    // A part of it registers too, and goes with the pinned memory when it is freed.
    ok(unsafe { aclrtHostRegister(pin.wrapping_byte_add(4096), 4096, 0, &mut dp) });
    free_host(pin);
    err(
        unsafe { aclrtHostGetDevicePointer(pin.wrapping_byte_add(4096), &mut dev_ptr, 0) },
        AclError::HOST_MEMORY_NOT_REGISTERED,
    );
    free(dev);
}

#[test]
fn s2_host_register_v2_flags() {
    let _g = shared();
    let _d = Dev::new(0);
    let mut buf = Vec::new();
    let base = pageable_pages(&mut buf, 2) as *mut c_void;
    err(
        unsafe { aclrtHostRegisterV2(null_mut(), 4096, ACL_HOST_REG_MAPPED) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtHostRegisterV2(base, 0, ACL_HOST_REG_MAPPED) },
        AclError::INVALID_PARAM,
    );
    // Flag 0 or unknown bits: 107000.
    err(
        unsafe { aclrtHostRegisterV2(base, 4096, 0) },
        AclError::PARAM_INVALID,
    );
    for f in [0x1, 0x10, 0x8000_0000, ACL_HOST_REG_MAPPED | 0x1] {
        err(
            unsafe { aclrtHostRegisterV2(base, 4096, f) },
            AclError::PARAM_INVALID,
        );
    }
    let flags = ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED | ACL_HOST_REG_READONLY;
    ok(unsafe { aclrtHostRegisterV2(base, 4096, flags) });
    // The device address of registered memory; 507911 outside any registration.
    let mut dev_ptr = null_mut();
    ok(unsafe { aclrtHostGetDevicePointer(base, &mut dev_ptr, 0) });
    assert_eq!(dev_ptr, base);
    err(
        unsafe { aclrtHostGetDevicePointer(base, null_mut(), 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { aclrtHostGetDevicePointer(base, &mut dev_ptr, 1) },
        AclError::PARAM_INVALID,
    );
    let outside = (base as usize + 4096) as *mut c_void;
    err(
        unsafe { aclrtHostGetDevicePointer(outside, &mut dev_ptr, 0) },
        AclError::HOST_MEMORY_NOT_REGISTERED,
    );
    // Already registered, by either API: 507910.
    err(
        unsafe { aclrtHostRegisterV2(base, 4096, ACL_HOST_REG_MAPPED) },
        AclError::HOST_MEMORY_ALREADY_REGISTERED,
    );
    let mut dp = null_mut();
    err(
        unsafe { aclrtHostRegister(base, 4096, 0, &mut dp) },
        AclError::HOST_MEMORY_ALREADY_REGISTERED,
    );
    ok(unsafe { aclrtHostUnregister(base) });
    err(
        unsafe { aclrtHostUnregister(base) },
        AclError::HOST_MEMORY_NOT_REGISTERED,
    );
}

// ---------------------------------------------------------------------------------------------
// §3 Lifecycle: init and finalize

#[test]
fn s3_init_and_finalize_codes() {
    let _g = exclusive();
    // Start from a clean, initialised runtime.
    if unsafe { aclInit(null()) } != 0 {
        take_msg();
        ok(unsafe { aclFinalize() });
        ok(unsafe { aclInit(null()) });
    }
    err(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    err(
        unsafe { aclInit(c"".as_ptr()) },
        AclError::REPEAT_INITIALIZE,
    );
    ok(unsafe { aclFinalize() });
    err(unsafe { aclFinalize() }, AclError::REPEAT_FINALIZE);
    let mut rc = 5u64;
    err(
        unsafe { aclFinalizeReference(&mut rc) },
        AclError::REPEAT_FINALIZE,
    );
    // "" is no configuration.
    ok(unsafe { aclInit(c"".as_ptr()) });
    ok(unsafe { aclFinalize() });
    let dir = tempfile::tempdir().unwrap();
    let missing = std::ffi::CString::new(dir.path().join("none.json").to_str().unwrap()).unwrap();
    err(unsafe { aclInit(missing.as_ptr()) }, AclError::INVALID_FILE);
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"a\": [1, }").unwrap();
    let bad = std::ffi::CString::new(bad.to_str().unwrap()).unwrap();
    err(unsafe { aclInit(bad.as_ptr()) }, AclError::PARSE_FILE);
    // A failed aclInit leaves the runtime uninitialised.
    err(unsafe { aclFinalize() }, AclError::REPEAT_FINALIZE);
    // aclFinalizeReference decrements and tears down at the last reference.
    ok(unsafe { aclInit(null()) });
    err(unsafe { aclInit(null()) }, AclError::REPEAT_INITIALIZE);
    ok(unsafe { aclFinalizeReference(&mut rc) });
    assert_eq!(rc, 1);
    ok(unsafe { aclrtSetDevice(0) });
    ok(unsafe { aclFinalizeReference(&mut rc) });
    assert_eq!(rc, 0);
    assert_eq!(
        ascendcl_emu::device_refs(0),
        0,
        "the last reference tore everything down"
    );
    err(unsafe { aclFinalize() }, AclError::REPEAT_FINALIZE);
}

// ---------------------------------------------------------------------------------------------
// §3 Devices and contexts

#[test]
fn s3_devices_reference_counts_and_contexts() {
    let _g = exclusive();
    let r = unsafe { aclInit(null()) };
    assert!(r == 0 || r == AclError::REPEAT_INITIALIZE);
    take_msg();
    let mut n = 0u32;
    ok(unsafe { aclrtGetDeviceCount(&mut n) });
    assert_eq!(n, 2);
    err(unsafe { aclrtSetDevice(-1) }, AclError::INVALID_DEVICEID);
    err(
        unsafe { aclrtSetDevice(n as i32) },
        AclError::INVALID_DEVICEID,
    );
    err(
        unsafe { aclrtResetDevice(n as i32) },
        AclError::INVALID_DEVICEID,
    );
    no_ctx(|| {
        let mut d = 5;
        err(unsafe { aclrtGetDevice(&mut d) }, AclError::CONTEXT_NULL);
        let mut c = null_mut();
        err(
            unsafe { aclrtGetCurrentContext(&mut c) },
            AclError::CONTEXT_NULL,
        );
        // Memory, stream and copy calls without a current context: 107002.
        let mut s = null_mut();
        err(unsafe { aclrtCreateStream(&mut s) }, AclError::CONTEXT_NULL);
        let mut e = null_mut();
        err(unsafe { aclrtCreateEvent(&mut e) }, AclError::CONTEXT_NULL);
        err(unsafe { aclrtSynchronizeDevice() }, AclError::CONTEXT_NULL);
        err(
            unsafe { aclrtSynchronizeStream(null_mut()) },
            AclError::CONTEXT_NULL,
        );
        let h = [0u8; 8];
        let mut o = [0u8; 8];
        err(
            unsafe { aclrtMemcpy(o.as_mut_ptr().cast(), 8, h.as_ptr().cast(), 8, 0) },
            AclError::CONTEXT_NULL,
        );
    });
    // Each aclrtSetDevice adds a reference; reset after the count reached 0: 507007.
    ok(unsafe { aclrtSetDevice(1) });
    ok(unsafe { aclrtSetDevice(1) });
    assert_eq!(ascendcl_emu::device_refs(1), 2);
    let mut d = -1;
    ok(unsafe { aclrtGetDevice(&mut d) });
    assert_eq!(d, 1);
    ok(unsafe { aclrtResetDevice(1) });
    ok(unsafe { aclrtResetDevice(1) });
    assert_eq!(ascendcl_emu::device_refs(1), 0);
    err(
        unsafe { aclrtResetDevice(1) },
        AclError::CONTEXT_RELEASE_ERROR,
    );
    // The thread's context died with the device.
    err(unsafe { aclrtGetDevice(&mut d) }, AclError::CONTEXT_NULL);
    // aclrtResetDeviceForce releases at once whatever the count.
    ok(unsafe { aclrtSetDevice(1) });
    ok(unsafe { aclrtSetDevice(1) });
    ok(unsafe { aclrtResetDeviceForce(1) });
    assert_eq!(ascendcl_emu::device_refs(1), 0);
    err(
        unsafe { aclrtResetDevice(1) },
        AclError::CONTEXT_RELEASE_ERROR,
    );
    // The default context is shared by threads that set the device.
    ok(unsafe { aclrtSetDevice(1) });
    let mut mine = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut mine) });
    let mine_u = mine as usize;
    no_ctx(move || {
        ok(unsafe { aclrtSetDevice(1) });
        let mut theirs = null_mut();
        ok(unsafe { aclrtGetCurrentContext(&mut theirs) });
        assert_eq!(theirs as usize, mine_u);
        ok(unsafe { aclrtResetDevice(1) });
    });
    // The default context cannot be destroyed by aclrtDestroyContext (emulator: 107000).
    err(
        unsafe { aclrtDestroyContext(mine) },
        AclError::PARAM_INVALID,
    );
    // aclrtCreateContext makes the new context current.
    let mut c = null_mut();
    ok(unsafe { aclrtCreateContext(&mut c, 1) });
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    assert_eq!(cur, c);
    ok(unsafe { aclrtDestroyContext(c) });
    err(unsafe { aclrtDestroyContext(c) }, AclError::INVALID_HANDLE);
    ok(unsafe { aclrtResetDevice(1) });
}

// ---------------------------------------------------------------------------------------------
// §3 Streams

#[test]
fn s3_stream_timeouts_query_and_failure_mode() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    err(
        unsafe { aclrtSynchronizeStreamWithTimeout(s, -2) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtSynchronizeStreamWithTimeout(s, i32::MIN) },
        AclError::PARAM_INVALID,
    );
    sleep_on(s, 300);
    let mut st = 99;
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_NOT_READY);
    err(
        unsafe { aclrtSynchronizeStreamWithTimeout(s, 10) },
        AclError::STREAM_SYNC_TIMEOUT,
    );
    err(
        unsafe { aclrtSynchronizeDeviceWithTimeout(10) },
        AclError::STREAM_SYNC_TIMEOUT,
    );
    ok(unsafe { aclrtSynchronizeStreamWithTimeout(s, -1) });
    ok(unsafe { aclrtStreamQuery(s, &mut st) });
    assert_eq!(st, ACL_STREAM_STATUS_COMPLETE);
    err(
        unsafe { aclrtStreamQuery(s, null_mut()) },
        AclError::INVALID_PARAM,
    );
    // Failure mode: a value other than 0/1: 100000; the same mode again succeeds; STOP back to
    // CONTINUE: 207000; another context's stream: 107003. (STOP switches the whole context: a
    // context of its own, so that no other test's failure stops this one.)
    err(
        unsafe { aclrtSetStreamFailureMode(s, 2) },
        AclError::INVALID_PARAM,
    );
    let (ctx, fs) = foreign_stream();
    err(
        unsafe { aclrtSetStreamFailureMode(fs, 1) },
        AclError::STREAM_CONTEXT,
    );
    ok(unsafe { aclrtSetStreamFailureMode(fs, 0) });
    let mut cur = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut cur) });
    ok(unsafe { aclrtSetCurrentContext(ctx) });
    ok(unsafe { aclrtSetStreamFailureMode(fs, 1) });
    ok(unsafe { aclrtSetStreamFailureMode(fs, 1) });
    err(
        unsafe { aclrtSetStreamFailureMode(fs, 0) },
        AclError::FEATURE_NOT_SUPPORT,
    );
    ok(unsafe { aclrtSetCurrentContext(cur) });
    drop_foreign(ctx);
    // Created with priority 0; priority > 7 or unknown flag bits: 107000.
    let mut p = 99;
    ok(unsafe { aclrtStreamGetPriority(s, &mut p) });
    assert_eq!(p, 0);
    let mut s2 = null_mut();
    err(
        unsafe { aclrtCreateStreamWithConfig(&mut s2, 8, 0) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtCreateStreamWithConfig(&mut s2, 0, 0x40) },
        AclError::PARAM_INVALID,
    );
    ok(unsafe { aclrtCreateStreamWithConfig(&mut s2, 7, 0x3f) });
    let mut f = 0;
    ok(unsafe { aclrtStreamGetFlags(s2, &mut f) });
    assert_eq!(f, 0x3f);
    ok(unsafe { aclrtDestroyStream(s2) });
    ok(unsafe { aclrtDestroyStream(s) });
    err(unsafe { aclrtDestroyStream(s) }, AclError::INVALID_HANDLE);
}

static DONE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn mark_started(_: *mut c_void) {
    STARTED.store(1, std::sync::atomic::Ordering::SeqCst);
}

extern "C" fn slow_bump(arg: *mut c_void) {
    std::thread::sleep(Duration::from_millis(arg as u64));
    DONE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn s3_destroy_waits_force_runs_what_was_queued_reset_waits() {
    use std::sync::atomic::Ordering::SeqCst;
    let _g = exclusive();
    let _d = Dev::new(0);
    DONE.store(0, SeqCst);
    // aclrtDestroyStream waits for the stream's work.
    let s = stream();
    ok(unsafe { aclrtLaunchHostFunc(s, Some(slow_bump), 100 as *mut c_void) });
    ok(unsafe { aclrtDestroyStream(s) });
    assert_eq!(DONE.load(SeqCst), 1, "destroy waited for the host function");
    // aclrtDestroyStreamForce: what was already queued (here host functions) still runs, as
    // work handed to a device's stream does, and the call returns once it has (within a bound).
    let s = stream();
    STARTED.store(0, SeqCst);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(mark_started), std::ptr::null_mut()) });
    ok(unsafe { aclrtLaunchHostFunc(s, Some(slow_bump), 100 as *mut c_void) });
    for _ in 0..5 {
        ok(unsafe { aclrtLaunchHostFunc(s, Some(slow_bump), std::ptr::null_mut()) });
    }
    while STARTED.load(SeqCst) == 0 {
        std::thread::yield_now();
    }
    ok(unsafe { aclrtDestroyStreamForce(s) });
    assert_eq!(
        DONE.load(SeqCst),
        7,
        "every task queued before the forced destroy ran before the call returned"
    );
    // aclrtResetDevice at count 0 destroys the streams after their work finishes.
    ok(unsafe { aclrtSetDevice(1) });
    let s = stream();
    let before = DONE.load(SeqCst);
    ok(unsafe { aclrtLaunchHostFunc(s, Some(slow_bump), 100 as *mut c_void) });
    ok(unsafe { aclrtResetDevice(1) });
    assert_eq!(
        DONE.load(SeqCst),
        before + 1,
        "reset waited for the stream's work"
    );
    err(
        unsafe { aclrtSynchronizeStream(s) },
        AclError::INVALID_HANDLE,
    );
}

static OPEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Holds its stream until `OPEN` is set.
extern "C" fn hold_until_open(_: *mut c_void) {
    while !OPEN.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn s3_reset_force_runs_what_was_queued_and_gives_up_waits() {
    use std::sync::atomic::Ordering::SeqCst;
    let _g = exclusive();
    let _d = Dev::new(0);
    let mut home = null_mut();
    ok(unsafe { aclrtGetCurrentContext(&mut home) });
    DONE.store(0, SeqCst);
    OPEN.store(false, SeqCst);
    ok(unsafe { aclrtSetDevice(1) });
    // A stream held by a gate, with work queued behind it; pinned memory outlives the device.
    let s = stream();
    ok(unsafe { aclrtLaunchHostFunc(s, Some(hold_until_open), null_mut()) });
    for _ in 0..5 {
        ok(unsafe { aclrtLaunchHostFunc(s, Some(slow_bump), null_mut()) });
    }
    let host = malloc_host(64);
    unsafe { std::ptr::write_bytes(host.cast::<u8>(), 0, 64) };
    ok(unsafe { aclrtMemsetAsync(host, 64, 0x77, 64, s) });
    // A stream that waits for a notify no one records, with work queued behind the wait.
    let w = stream();
    let mut notify = null_mut();
    ok(unsafe { aclrtCreateNotify(&mut notify, 0) });
    ok(unsafe { aclrtWaitAndResetNotify(notify, w, 0) });
    ok(unsafe { aclrtLaunchHostFunc(w, Some(slow_bump), null_mut()) });
    let opener = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(30));
        OPEN.store(true, SeqCst);
    });
    ok(unsafe { aclrtResetDeviceForce(1) });
    opener.join().unwrap();
    assert_eq!(
        DONE.load(SeqCst),
        6,
        "the forced reset ran the queued work of both streams (the wait gave up) before it returned"
    );
    let mut back = [0u8; 64];
    unsafe { std::ptr::copy_nonoverlapping(host.cast::<u8>(), back.as_mut_ptr(), 64) };
    assert_eq!(back, [0x77; 64], "the queued memset ran");
    ok(unsafe { aclrtSetCurrentContext(home) });
    free_host(host);
}

// ---------------------------------------------------------------------------------------------
// §3 Events

#[test]
fn s3_event_flags() {
    let _g = shared();
    let _d = Dev::new(0);
    type Create = unsafe extern "C" fn(*mut aclrtEvent, u32) -> aclError;
    for f in [
        aclrtCreateEventWithFlag as Create,
        aclrtCreateEventExWithFlag,
    ] {
        let mut e = null_mut();
        err(unsafe { f(&mut e, 0) }, AclError::PARAM_INVALID);
        for bad in [0x4, 0x80, 0x100, 0x8000_0000, ACL_EVENT_SYNC | 0x4] {
            err(unsafe { f(&mut e, bad) }, AclError::PARAM_INVALID);
        }
        for good in [
            ACL_EVENT_SYNC,
            ACL_EVENT_CAPTURE_STREAM_PROGRESS,
            ACL_EVENT_TIME_LINE,
            ACL_EVENT_DEVICE_USE_ONLY,
            ACL_EVENT_EXTERNAL,
            ACL_EVENT_IPC,
            0x7b,
        ] {
            ok(unsafe { f(&mut e, good) });
            ok(unsafe { aclrtDestroyEvent(e) });
        }
        err(
            unsafe { f(null_mut(), ACL_EVENT_SYNC) },
            AclError::INVALID_PARAM,
        );
    }
}

#[test]
fn s3_event_status_elapsed_time_and_sync_timeout() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    let a = event();
    let b = event();
    // Never recorded: NOT_READY, which is 0 for aclrtQueryEventStatus.
    let mut st = 99;
    ok(unsafe { aclrtQueryEventStatus(a, &mut st) });
    assert_eq!(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
    assert_eq!(st, 0);
    // Elapsed time of an event not yet recorded: 507000.
    let mut ms = -1.0f32;
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, a, b) },
        AclError::RT_INTERNAL_ERROR,
    );
    ok(unsafe { aclrtRecordEvent(a, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtQueryEventStatus(a, &mut st) });
    assert_eq!(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_eq!(st, 1, "COMPLETE is 1 here (0 in aclrtEventStatus)");
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, a, b) },
        AclError::RT_INTERNAL_ERROR,
    );
    // Recorded but not yet reached: 507000 too.
    sleep_on(s, 300);
    ok(unsafe { aclrtRecordEvent(b, s) });
    ok(unsafe { aclrtQueryEventStatus(b, &mut st) });
    assert_eq!(st, 0);
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, a, b) },
        AclError::RT_INTERNAL_ERROR,
    );
    // Event sync: < -1 → 107000, expiry → 507047, -1 waits.
    err(
        unsafe { aclrtSynchronizeEventWithTimeout(b, -2) },
        AclError::PARAM_INVALID,
    );
    err(
        unsafe { aclrtSynchronizeEventWithTimeout(b, 10) },
        AclError::EVENT_SYNC_TIMEOUT,
    );
    ok(unsafe { aclrtSynchronizeEventWithTimeout(b, -1) });
    // Milliseconds, as a float: the 300 ms host function lies between the records.
    ok(unsafe { aclrtEventElapsedTime(&mut ms, a, b) });
    assert!((250.0..10_000.0).contains(&ms), "elapsed {ms} ms");
    // A plain aclrtCreateEvent event can be timed; one made with a flag lacking TIME_LINE
    // cannot (emulator: 107000).
    let mut c = null_mut();
    ok(unsafe { aclrtCreateEventWithFlag(&mut c, ACL_EVENT_SYNC) });
    ok(unsafe { aclrtRecordEvent(c, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    err(
        unsafe { aclrtEventElapsedTime(&mut ms, a, c) },
        AclError::PARAM_INVALID,
    );
    // Destroying an event in flight does not block.
    sleep_on(s, 200);
    ok(unsafe { aclrtRecordEvent(c, s) });
    let t = Instant::now();
    ok(unsafe { aclrtDestroyEvent(c) });
    assert!(t.elapsed() < Duration::from_millis(150));
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtDestroyEvent(a) });
    ok(unsafe { aclrtDestroyEvent(b) });
    ok(unsafe { aclrtDestroyStream(s) });
}

// ---------------------------------------------------------------------------------------------
// §3 Host work

extern "C" fn noop(_: *mut c_void) {}

#[test]
fn s3_callbacks_subscription_codes() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    // Launching on an unsubscribed stream: 107015.
    err(
        unsafe { aclrtLaunchCallback(Some(noop), null_mut(), ACL_CALLBACK_NO_BLOCK, s) },
        AclError::STREAM_NO_CB_REG,
    );
    // ProcessReport on a thread with no subscription: 107012 (immediately, not after the
    // timeout).
    let t = Instant::now();
    err(
        unsafe { aclrtProcessReport(1000) },
        AclError::THREAD_SUBSCRIBE,
    );
    assert!(t.elapsed() < Duration::from_millis(500));
    // Subscribed, nothing arrives: 507012 after the timeout.
    // SAFETY: pthread_self has no preconditions.
    let tid = unsafe { libc::pthread_self() } as u64;
    ok(unsafe { aclrtSubscribeReport(tid, s) });
    let t = Instant::now();
    err(unsafe { aclrtProcessReport(30) }, AclError::REPORT_TIMEOUT);
    assert!(t.elapsed() >= Duration::from_millis(25));
    // A launched callback is run by ProcessReport.
    ok(unsafe { aclrtLaunchCallback(Some(noop), null_mut(), ACL_CALLBACK_NO_BLOCK, s) });
    ok(unsafe { aclrtProcessReport(2000) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    ok(unsafe { aclrtUnSubscribeReport(tid, s) });
    err(
        unsafe { aclrtLaunchCallback(Some(noop), null_mut(), ACL_CALLBACK_NO_BLOCK, s) },
        AclError::STREAM_NO_CB_REG,
    );
    err(
        unsafe { aclrtProcessReport(10) },
        AclError::THREAD_SUBSCRIBE,
    );
    ok(unsafe { aclrtDestroyStream(s) });
}

#[test]
fn s3_host_func_runs_in_stream_order() {
    let _g = shared();
    let _d = Dev::new(0);
    let s = stream();
    let dev = malloc(8);
    let pin = malloc_host(8);
    // SAFETY: pin is a live pinned allocation of at least that many bytes.
    unsafe { std::ptr::write_bytes(pin.cast::<u8>(), 4, 8) };
    sleep_on(s, 100);
    ok(unsafe { aclrtMemcpyAsync(dev, 8, pin, 8, ACL_MEMCPY_HOST_TO_DEVICE, s) });
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(read_dev(dev, 8), vec![4u8; 8]);
    err(
        unsafe { aclrtLaunchHostFunc(s, None, null_mut()) },
        AclError::INVALID_PARAM,
    );
    free(dev);
    free_host(pin);
    ok(unsafe { aclrtDestroyStream(s) });
}

// ---------------------------------------------------------------------------------------------
// §3 Diagnostics

#[test]
fn s3_recent_error_message_and_last_error() {
    let _g = shared();
    // Start from a clean slate on this thread.
    unsafe { aclGetRecentErrMsg() };
    unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) };
    assert!(
        unsafe { aclGetRecentErrMsg() }.is_null(),
        "NULL when there are none"
    );
    assert_eq!(unsafe { aclrtFree(null_mut()) }, AclError::INVALID_PARAM);
    let p = unsafe { aclGetRecentErrMsg() };
    assert!(!p.is_null());
    let m = unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned();
    assert!(m.contains("aclrtFree"), "{m}");
    assert!(
        unsafe { aclGetRecentErrMsg() }.is_null(),
        "returns and clears"
    );
    // Messages are per thread.
    no_ctx(|| {
        assert_eq!(
            unsafe { aclrtFreeHost(null_mut()) },
            AclError::INVALID_PARAM
        );
    });
    assert!(unsafe { aclGetRecentErrMsg() }.is_null());
    // Last error: peek keeps it, get returns and clears it; other levels: 100000.
    assert_eq!(
        unsafe { aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) },
        AclError::INVALID_PARAM
    );
    assert_eq!(
        unsafe { aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) },
        AclError::INVALID_PARAM
    );
    assert_eq!(
        unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) },
        AclError::INVALID_PARAM
    );
    assert_eq!(unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) }, 0);
    assert_eq!(unsafe { aclrtGetLastError(1) }, AclError::INVALID_PARAM);
    assert_eq!(unsafe { aclrtPeekAtLastError(1) }, AclError::INVALID_PARAM);
    // Version 1.17.0 and the SoC name.
    let (mut a, mut b, mut c) = (0, 0, 0);
    ok(unsafe { aclrtGetVersion(&mut a, &mut b, &mut c) });
    assert_eq!((a, b, c), (1, 17, 0));
    let soc = unsafe { aclrtGetSocName() };
    assert!(!soc.is_null());
    assert_eq!(
        unsafe { std::ffi::CStr::from_ptr(soc) }.to_str().unwrap(),
        "Ascend910B2"
    );
}
