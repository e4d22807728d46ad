//! Scenarios that change process-wide emulator state (fault injection, forced resets, leak
//! counts, finalisation), one after another in a single test that runs alone (`exclusive`), and
//! only on the emulator (on another backend it says so and stops).

use crate::common::*;
use crate::exclusive;
use ascendcl::{DeviceBuffer, Error, HostBuffer, MallocPolicy, Runtime};
use ascendcl_emu::{FaultSpec, clear_faults, inject_fault, inject_fault_with_code, leak_report};
use std::sync::Arc;

#[test]
fn isolated() {
    let _x = exclusive();
    drop(rt());
    if !needs_emulator("isolated", "fault injection and leak reports") {
        return;
    }
    no_leaks_and_finalize();
    runtime_messages_are_captured();
    error_paths_do_not_leak();
    drop_failures_are_reported();
    host_fn_launch_failure_reclaims_closure();
    reset_force_releases_device();
    scope_waits_when_synchronize_fails();
    scope_reports_lost_sync_error_when_closure_fails();
    peer_access_error_paths_disable_again();
    host_registration_error_path_unregisters();
    failed_releases_give_the_handle_back();
    remembered_contexts_are_not_trusted_after_a_destruction_elsewhere();
    the_last_handle_resets_the_device();
    clear_faults();
    assert!(leak_report().is_clean(), "{}", leak_report());
}

fn no_leaks_and_finalize() {
    let r = rt();
    {
        let d = r.device(0).unwrap();
        assert_eq!(ascendcl_emu::device_refs(0), 1);
        let s = d.create_stream().unwrap();
        let e = d.create_event().unwrap();
        let c = d.create_context().unwrap();
        let b = DeviceBuffer::<u8>::zeroed(&d, 4096, MallocPolicy::HugeFirst).unwrap();
        let h = HostBuffer::<u8>::zeroed(&d, 4096).unwrap();
        let reg = ascendcl::HostRegistration::new(
            &d,
            vec![0u8; 8192],
            ascendcl::HostRegisterType::Mapped,
        )
        .unwrap();
        let live = leak_report();
        assert_eq!(live.allocations, 1);
        assert_eq!(live.host_allocations, 1);
        assert_eq!(live.host_registrations, 1);
        assert_eq!(live.streams, 1);
        assert_eq!(live.events, 1);
        assert_eq!(live.contexts, 1);
        drop((reg, h, b, c, e, s));
        assert!(leak_report().is_clean(), "{}", leak_report());
    }
    // Dropping the device reset it.
    assert_eq!(ascendcl_emu::device_refs(0), 0);
    assert!(ascendcl::take_drop_errors().is_empty());
    assert_eq!(Runtime::handle_count(), 1);
    r.finalize().unwrap();
    assert_eq!(Runtime::handle_count(), 0);
    // A second aclFinalize is refused by the runtime, so the count matters: re-init works.
    let r = rt();
    r.device(0).unwrap().synchronize().unwrap();
    drop(r);
    assert_eq!(Runtime::handle_count(), 0);
}

fn runtime_messages_are_captured() {
    let r = rt();
    let d = r.device(0).unwrap();
    inject_fault("aclrtMemcpy", FaultSpec::Nth(1));
    let mut b = DeviceBuffer::<u8>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let e = b.copy_from_host(&[1, 2, 3, 4]).unwrap_err();
    match &e {
        Error::Acl {
            api,
            code,
            name,
            message,
        } => {
            assert_eq!(*api, "aclrtMemcpy");
            assert_eq!(*code, AclError::RT_INTERNAL_ERROR);
            assert_eq!(*name, Some("ACL_ERROR_RT_INTERNAL_ERROR"));
            assert!(
                message.as_deref().is_some_and(|m| m.contains("injected")),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.runtime_message(), e.runtime_message());
    assert!(
        e.to_string()
            .starts_with("aclrtMemcpy failed: ACL_ERROR_RT_INTERNAL_ERROR (507000): "),
        "{e}"
    );
    // The next copy works: the fault hit only the first call.
    b.copy_from_host(&[1, 2, 3, 4]).unwrap();
    clear_faults();
}

fn error_paths_do_not_leak() {
    let r = rt();
    let d = r.device(0).unwrap();
    let before = leak_report();
    // zeroed = malloc + memset: a failing memset frees the allocation.
    inject_fault("aclrtMemset", FaultSpec::Nth(1));
    assert_code(
        DeviceBuffer::<u32>::zeroed(&d, 64, MallocPolicy::HugeFirst),
        AclError::RT_INTERNAL_ERROR,
    );
    // from_slice = malloc + memcpy.
    inject_fault("aclrtMemcpy", FaultSpec::Nth(1));
    assert_code(
        DeviceBuffer::from_slice(&d, &[1u8; 8], MallocPolicy::HugeFirst),
        AclError::RT_INTERNAL_ERROR,
    );
    inject_fault("aclrtMalloc", FaultSpec::Nth(1));
    assert_code(
        DeviceBuffer::<u8>::zeroed(&d, 8, MallocPolicy::HugeFirst),
        AclError::MEMORY_ALLOCATION,
    );
    inject_fault("aclrtMallocHost", FaultSpec::Nth(1));
    assert_code(HostBuffer::<u8>::zeroed(&d, 8), AclError::MEMORY_ALLOCATION);
    inject_fault("aclrtCreateStreamWithConfig", FaultSpec::Nth(1));
    assert_code(d.create_stream(), AclError::NO_STREAM_RESOURCE);
    inject_fault("aclrtCreateEvent", FaultSpec::Nth(1));
    assert_code(d.create_event(), AclError::NO_EVENT_RESOURCE);
    clear_faults();
    assert_eq!(leak_report(), before);
    assert!(ascendcl::take_drop_errors().is_empty());
}

fn drop_failures_are_reported() {
    let r = rt();
    let d = r.device(0).unwrap();
    let _ = ascendcl::take_drop_errors();
    let b = DeviceBuffer::<u8>::zeroed(&d, 8, MallocPolicy::HugeFirst).unwrap();
    inject_fault("aclrtFree", FaultSpec::Nth(1));
    drop(b); // must not panic
    let errs = ascendcl::take_drop_errors();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].api(), Some("aclrtFree"));
    assert_eq!(ascendcl::drop_errors_overflow(), 0);
    // The explicit form reports the failure to the caller instead, with the buffer; giving up
    // on it (dropping it) makes one more attempt, which succeeds here.
    let b = DeviceBuffer::<u8>::zeroed(&d, 8, MallocPolicy::HugeFirst).unwrap();
    inject_fault_with_code("aclrtFree", FaultSpec::Nth(1), 207002);
    let e = b.free().unwrap_err();
    assert_eq!(e.error().code_name(), Some("ACL_ERROR_RT_MEMORY_FREE"));
    assert_eq!(
        e.to_string(),
        e.error().to_string(),
        "displays as the runtime's error"
    );
    drop(e);
    assert_eq!(
        leak_report().allocations,
        1,
        "only the dropped buffer is left"
    );
    let s = d.create_stream().unwrap();
    inject_fault("aclrtDestroyStream", FaultSpec::Nth(1));
    let e: Error = s.destroy().unwrap_err().into();
    assert_eq!(e.api(), Some("aclrtDestroyStream"));
    let s = d.create_stream().unwrap();
    inject_fault("aclrtDestroyStream", FaultSpec::Nth(1));
    drop(s);
    assert_eq!(ascendcl::take_drop_errors().len(), 1);
    clear_faults();
    // The buffer and the stream whose Drop was made to fail stay allocated in the emulator;
    // reset the device to reclaim them.
    d.reset_force().unwrap();
    assert!(ascendcl::take_drop_errors().is_empty());
}

/// A release the runtime refuses leaves the resource alive, and gives the handle back so that
/// the release can be retried: every consuming release, with its first call made to fail.
fn failed_releases_give_the_handle_back() {
    let _ = ascendcl::take_drop_errors();
    let r = rt();
    let d = r.device(0).unwrap();
    let base = leak_report();
    let alive = |what: &str, n: usize, field: fn(&ascendcl_emu::LeakReport) -> usize| {
        assert_eq!(
            field(&leak_report()),
            field(&base) + n,
            "{what}: {}",
            leak_report()
        );
    };

    let b = DeviceBuffer::<u8>::zeroed(&d, 64, MallocPolicy::HugeFirst).unwrap();
    inject_fault("aclrtFree", FaultSpec::Nth(1));
    let b = b.free().unwrap_err().into_handle();
    alive("aclrtFree", 1, |l| l.allocations);
    b.free().unwrap();
    alive("aclrtFree retried", 0, |l| l.allocations);

    let h = HostBuffer::<u8>::zeroed(&d, 64).unwrap();
    inject_fault("aclrtFreeHost", FaultSpec::Nth(1));
    let (e, h) = h.free().unwrap_err().into_parts();
    assert_eq!(e.api(), Some("aclrtFreeHost"));
    alive("aclrtFreeHost", 1, |l| l.host_allocations);
    h.free().unwrap();
    alive("aclrtFreeHost retried", 0, |l| l.host_allocations);

    for api in ["aclrtDestroyStream", "aclrtDestroyStreamForce"] {
        let s = d.create_stream().unwrap();
        inject_fault(api, FaultSpec::Nth(1));
        fn destroy(
            api: &str,
            s: ascendcl::Stream,
        ) -> ascendcl::ReleaseResult<(), ascendcl::Stream> {
            if api == "aclrtDestroyStream" {
                s.destroy()
            } else {
                s.destroy_force()
            }
        }
        let e = destroy(api, s).unwrap_err();
        assert_eq!(e.error().api(), Some(api));
        alive(api, 1, |l| l.streams);
        destroy(api, e.into_handle()).unwrap();
        alive(api, 0, |l| l.streams);
    }

    let ev = d.create_event().unwrap();
    inject_fault("aclrtDestroyEvent", FaultSpec::Nth(1));
    let ev = ev.destroy().unwrap_err().into_handle();
    alive("aclrtDestroyEvent", 1, |l| l.events);
    ev.destroy().unwrap();
    alive("aclrtDestroyEvent retried", 0, |l| l.events);

    let c = d.create_context().unwrap();
    inject_fault("aclrtDestroyContext", FaultSpec::Nth(1));
    let c = c.destroy().unwrap_err().into_handle();
    alive("aclrtDestroyContext", 1, |l| l.contexts);
    c.destroy().unwrap();
    alive("aclrtDestroyContext retried", 0, |l| l.contexts);

    let reg =
        ascendcl::HostRegistration::new(&d, vec![0u8; 4096], ascendcl::HostRegisterType::Mapped)
            .unwrap();
    inject_fault("aclrtHostUnregister", FaultSpec::Nth(1));
    let reg = reg.unregister().unwrap_err().into_handle();
    alive("aclrtHostUnregister", 1, |l| l.host_registrations);
    assert_eq!(reg.unregister().unwrap().len(), 4096);
    alive("aclrtHostUnregister retried", 0, |l| l.host_registrations);

    // Devices: the reference count stays until a reset succeeds.
    let d1 = r.device(1).unwrap();
    assert_eq!(ascendcl_emu::device_refs(1), 1);
    inject_fault("aclrtResetDevice", FaultSpec::Nth(1));
    let d1 = d1.reset().unwrap_err().into_handle();
    assert_eq!(ascendcl_emu::device_refs(1), 1);
    inject_fault("aclrtResetDeviceForce", FaultSpec::Nth(1));
    let d1 = d1.reset_force().unwrap_err().into_handle();
    assert_eq!(ascendcl_emu::device_refs(1), 1);
    d1.reset_force().unwrap();
    assert_eq!(ascendcl_emu::device_refs(1), 0);
    d.reset().unwrap();

    // The runtime: aclFinalize refused leaves it initialised and the handle counted.
    assert_eq!(Runtime::handle_count(), 1);
    inject_fault("aclFinalize", FaultSpec::Nth(1));
    let r = r.finalize().unwrap_err().into_handle();
    assert_eq!(Runtime::handle_count(), 1);
    r.device(0).unwrap().synchronize().unwrap();
    r.finalize().unwrap();
    assert_eq!(Runtime::handle_count(), 0);
    clear_faults();
    assert!(ascendcl::take_drop_errors().is_empty());
}

fn host_fn_launch_failure_reclaims_closure() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let token = Arc::new(());
    let t = token.clone();
    inject_fault("aclrtLaunchHostFunc", FaultSpec::Nth(1));
    let e = s.launch_host_fn(move || drop(t)).unwrap_err();
    assert_eq!(e.api(), Some("aclrtLaunchHostFunc"));
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "the refused closure was dropped"
    );
    clear_faults();
}

/// A forced reset frees everything on the device, so it needs the only handle: a clone, a
/// buffer or another thread's handle makes it refuse (handing the handle back); the last handle
/// may force it.
fn reset_force_releases_device() {
    let r = rt();
    let d = r.device(1).unwrap();
    let d2 = r.device(1).unwrap();
    // One open device per id: the second handle shares the first aclrtSetDevice reference.
    assert_eq!(ascendcl_emu::device_refs(1), 1);
    let (e, d) = d.reset_force().unwrap_err().into_parts();
    assert!(
        matches!(
            e,
            Error::Shared {
                api: "aclrtResetDeviceForce",
                what: "device",
                others: 1
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("aclrtResetDeviceForce refused: 1 other handle(s) share this device"),
        "{e}"
    );
    drop(d2);
    // A buffer holds the device as well.
    let buf = d.alloc_zeros::<u8>(16).unwrap();
    let d = d.reset_force().unwrap_err().into_handle();
    assert_eq!(ascendcl_emu::device_refs(1), 1);
    assert_eq!(buf.copy_to_vec().unwrap(), [0; 16], "the buffer is intact");
    drop(buf);
    // So does a handle moved to another thread, until that thread lets go.
    let (holding, go) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
    let d = std::thread::scope(|sc| {
        let other = d.clone();
        let (holding, go) = (&holding, &go);
        sc.spawn(move || {
            other.synchronize().unwrap();
            holding.wait();
            go.wait();
            drop(other);
        });
        holding.wait();
        let d = d.reset_force().unwrap_err().into_handle();
        go.wait();
        d
    });
    d.reset_force().unwrap();
    assert_eq!(ascendcl_emu::device_refs(1), 0);
}

/// Both synchronisations at the end of a scope fail: the scope must still not release the
/// borrowed buffers while the copy may be in flight (it polls `aclrtStreamQuery`).
fn scope_waits_when_synchronize_fails() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let src = DeviceBuffer::from_slice(&d, &[7u32; 4096], MallocPolicy::HugeFirst).unwrap();
    let mut out = HostBuffer::<u32>::zeroed(&d, 4096).unwrap();
    inject_fault("aclrtSynchronizeStream", FaultSpec::Every);
    let res = s.scope(|sc| {
        sc.launch_host_fn(|| std::thread::sleep(std::time::Duration::from_millis(200)))?;
        sc.copy(&mut out, &src)?;
        Ok(())
    });
    clear_faults();
    assert_code(res, AclError::RT_INTERNAL_ERROR);
    // The scope returned only after the stream had finished: the copy has landed.
    assert!(out.iter().all(|&x| x == 7), "the scope returned early");
    assert!(s.is_complete().unwrap());
    let _ = ascendcl::take_drop_errors();
}

/// The closure failed and the synchronisation failed too: the closure's error is returned and
/// the synchronisation's is not lost (it goes to `take_drop_errors`).
fn scope_reports_lost_sync_error_when_closure_fails() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let _ = ascendcl::take_drop_errors();
    inject_fault("aclrtSynchronizeStream", FaultSpec::Nth(1));
    let res: ascendcl::Result<()> = s.scope(|_| Err(Error::HostFnDiscarded));
    clear_faults();
    assert!(matches!(res, Err(Error::HostFnDiscarded)), "{res:?}");
    let errs = ascendcl::take_drop_errors();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].api(), Some("aclrtSynchronizeStream"));
}

/// `aclrtDeviceDisablePeerAccess(peer)` from `dev`'s context: `true` when access was enabled.
fn raw_disable(dev: &ascendcl::Device, peer: i32) -> bool {
    dev.make_current().unwrap();
    // SAFETY: a plain value argument; no `PeerAccess` token of this pair is alive.
    let disabled = unsafe { ascendcl::raw::aclrtDeviceDisablePeerAccess(peer) }.is_ok();
    let _ = ascendcl::take_drop_errors();
    disabled
}

fn peer_access_error_paths_disable_again() {
    let r = rt();
    let a = r.device(0).unwrap();
    let b = r.device(1).unwrap();
    // The second direction fails: the first is disabled again.
    inject_fault("aclrtDeviceEnablePeerAccess", FaultSpec::Nth(2));
    assert_code(a.enable_peer_access(&b), AclError::RT_INTERNAL_ERROR);
    clear_faults();
    assert!(!raw_disable(&a, 1), "a -> b was left enabled");
    assert!(!raw_disable(&b, 0), "b -> a was left enabled");
    // Both directions were enabled, then restoring the first device's context fails: both are
    // disabled again (the token is dropped).
    inject_fault("aclrtSetCurrentContext", FaultSpec::Nth(3));
    assert_code(a.enable_peer_access(&b), AclError::RT_INTERNAL_ERROR);
    clear_faults();
    assert!(!raw_disable(&a, 1), "a -> b was left enabled");
    assert!(!raw_disable(&b, 0), "b -> a was left enabled");
    // And the normal path still works.
    a.enable_peer_access(&b).unwrap().disable().unwrap();
}

fn host_registration_error_path_unregisters() {
    let r = rt();
    let d = r.device(0).unwrap();
    let before = leak_report();
    let v = vec![0u8; 8192];
    // The address is only looked up below, never dereferenced (the vector is gone by then).
    let addr = v.as_ptr();
    inject_fault("aclrtHostGetDevicePointer", FaultSpec::Nth(1));
    match ascendcl::HostRegistration::with_flags(
        &d,
        v,
        ascendcl::HostRegisterFlags::MAPPED | ascendcl::HostRegisterFlags::PINNED,
    ) {
        Err(e) => assert_eq!(e.code(), Some(AclError::RT_INTERNAL_ERROR), "{e}"),
        Ok(_) => panic!("the injected fault did not fire"),
    }
    clear_faults();
    assert_eq!(leak_report(), before);
    assert_eq!(
        ascendcl::pointer_attributes(addr).unwrap().location,
        ascendcl::PointerLocation::Unregistered
    );
}

/// Every call makes its handle's context current unless this thread already did; what a thread
/// remembers is dropped as soon as any thread destroys a context or resets a device (the runtime
/// may reuse the address). The injected `aclrtSetCurrentContext` failure shows whether a call
/// set the context.
fn remembered_contexts_are_not_trusted_after_a_destruction_elsewhere() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (ask, asked) = (std::sync::mpsc::channel::<()>(), std::sync::mpsc::channel());
    let (ask_tx, ask_rx) = ask;
    let (answer_tx, answer_rx) = asked;
    std::thread::scope(|t| {
        let d = &d;
        t.spawn(move || {
            // Remembered on this thread.
            let _ = answer_tx.send(d.synchronize());
            for () in ask_rx {
                let _ = answer_tx.send(d.synchronize());
            }
        });
        let sync_on_thread = || {
            ask_tx.send(()).unwrap();
            answer_rx.recv().unwrap()
        };
        answer_rx.recv().unwrap().unwrap();
        // Nothing was destroyed: the thread trusts what it remembers and sets nothing.
        inject_fault("aclrtSetCurrentContext", FaultSpec::Every);
        sync_on_thread().expect("no aclrtSetCurrentContext call");
        clear_faults();
        // A context destroyed here: the thread must set its context again.
        drop(d.create_context().unwrap());
        inject_fault("aclrtSetCurrentContext", FaultSpec::Every);
        let e = sync_on_thread().unwrap_err();
        assert_eq!(e.api(), Some("aclrtSetCurrentContext"), "{e}");
        clear_faults();
        sync_on_thread().unwrap();
        drop(ask_tx);
    });
}

/// A device is reset when its last handle goes, whichever kind of handle that is, and on
/// whichever thread; the runtime stays initialised until then.
fn the_last_handle_resets_the_device() {
    let r = rt();
    let d = r.device(1).unwrap();
    let again = r.device(1).unwrap();
    assert_eq!(
        ascendcl_emu::device_refs(1),
        1,
        "one aclrtSetDevice per open id"
    );
    let buf = d.alloc_zeros::<u8>(8).unwrap();
    let stream = d.create_stream().unwrap();
    drop((d, again));
    assert_eq!(
        ascendcl_emu::device_refs(1),
        1,
        "the buffer and stream hold it"
    );
    drop(buf);
    assert_eq!(ascendcl_emu::device_refs(1), 1, "the stream holds it");
    r.finalize().unwrap();
    assert_eq!(Runtime::handle_count(), 1, "the device holds the runtime");
    std::thread::spawn(move || drop(stream)).join().unwrap();
    assert_eq!(ascendcl_emu::device_refs(1), 0);
    assert_eq!(Runtime::handle_count(), 0, "finalised with the device");
    assert!(ascendcl::take_drop_errors().is_empty());
}
