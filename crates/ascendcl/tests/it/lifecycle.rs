//! Runtime, devices, contexts, backend information.

use crate::common::*;
use ascendcl::{BackendChoice, BackendKind, Error, MemAttr, Runtime};

#[test]
fn runtime_is_shared_and_clonable() {
    let a = rt();
    let b = a.clone();
    let c = rt();
    assert!(Runtime::handle_count() >= 3);
    drop(b);
    c.finalize().unwrap();
    drop(a);
}

#[test]
fn runtime_across_threads() {
    let base = rt();
    std::thread::scope(|s| {
        for i in 0..4 {
            let r = base.clone();
            s.spawn(move || {
                let dev = r.device(i % 2).unwrap();
                let mut buf = ascendcl::DeviceBuffer::<u32>::zeroed(
                    &dev,
                    64,
                    ascendcl::MallocPolicy::NormalOnly,
                )
                .unwrap();
                buf.copy_from_host(&[i as u32; 64]).unwrap();
                assert_eq!(buf.to_vec().unwrap(), vec![i as u32; 64]);
            });
        }
    });
    // Each thread created its own handle from scratch, too.
    std::thread::spawn(|| {
        let r = rt();
        let d = r.device(0).unwrap();
        d.synchronize().unwrap();
    })
    .join()
    .unwrap();
}

#[test]
fn backend_choice_is_fixed_once() {
    let _r = rt();
    // One backend is active: asking for the other kind explicitly is refused, Default fits.
    let (other, same) = if emulator_active() {
        (BackendChoice::Cann, BackendChoice::Emulator)
    } else {
        (BackendChoice::Emulator, BackendChoice::Cann)
    };
    let e = Runtime::with_backend(other).unwrap_err();
    assert!(
        matches!(e, Error::Load(ascendcl::LoadError::AlreadyChosen { .. })),
        "{e}"
    );
    let again = Runtime::with_backend(BackendChoice::Default).unwrap();
    drop(again);
    let b = ascendcl::install_backend(same).unwrap();
    assert_eq!(b.kind == BackendKind::Emulator, emulator_active());
}

#[test]
fn backend_info_reports_the_active_backend_and_why() {
    let r = rt();
    let info = r.backend();
    assert_eq!(info.is_emulator(), emulator_active());
    assert_eq!(
        info.kind.is_some_and(|k| k == BackendKind::Emulator),
        info.is_emulator()
    );
    // A library is reported exactly for CANN loaded at run time.
    assert_eq!(info.library.is_some(), info.kind == Some(BackendKind::Cann));
    assert!(!info.description.is_empty());
    assert!(
        !info.reason.is_empty(),
        "the backend says why it was chosen"
    );
    let _dev = r.device(0).unwrap();
    let info = r.backend();
    let soc = r.soc_name().expect("aclrtGetSocName");
    assert_eq!(info.soc_name.as_deref(), Some(soc.as_str()));
    if info.is_emulator() {
        assert!(soc.starts_with("Ascend"), "{soc}");
    }
    let v = info.version.expect("aclrtGetVersion");
    assert_eq!(r.version().unwrap(), v);
    assert!(v.major >= 1, "{v}");
    assert_eq!(
        v.to_string(),
        format!("{}.{}.{}", v.major, v.minor, v.patch)
    );
}

#[test]
fn device_count_and_open() {
    let r = rt();
    let n = r.device_count().unwrap();
    assert!(n >= 1);
    let d = r.device(0).unwrap();
    assert_eq!(d.id(), 0);
    assert!(!d.raw_context().is_null());
    d.make_current().unwrap();
    assert_eq!(ascendcl::current_context().unwrap(), d.raw_context());
    d.synchronize().unwrap();
    d.reset().unwrap();
}

#[test]
fn device_out_of_range_is_107001() {
    let r = rt();
    let n = r.device_count().unwrap() as i32;
    let e = assert_code(r.device(n), AclError::INVALID_DEVICEID);
    assert_eq!(e.code_name(), Some("ACL_ERROR_RT_INVALID_DEVICEID"));
    assert_eq!(e.api(), Some("aclrtSetDevice"));
    assert!(
        e.to_string()
            .starts_with("aclrtSetDevice failed: ACL_ERROR_RT_INVALID_DEVICEID (107001)")
    );
    assert_argument(r.device(-1));
}

#[test]
fn device_mem_info() {
    let r = rt();
    let d = r.device(0).unwrap();
    let info = d.mem_info(MemAttr::Normal).unwrap();
    assert!(info.total > 0);
    assert!(info.free <= info.total);
    for &attr in MemAttr::ALL {
        d.mem_info(attr).unwrap();
    }
}

#[test]
fn contexts_bind_and_restore() {
    let r = rt();
    let d = r.device(0).unwrap();
    let ctx = d.create_context().unwrap();
    assert_eq!(ctx.device_id(), 0);
    d.make_current().unwrap();
    let inside = ctx
        .bind(|b| {
            assert_eq!(ascendcl::current_context().unwrap(), b.as_raw());
            b.as_raw()
        })
        .unwrap();
    assert_eq!(inside, ctx.as_raw());
    // The device's default context is current again.
    assert_eq!(ascendcl::current_context().unwrap(), d.raw_context());

    // A stream of the context works while another context is current.
    let s = ctx.create_stream().unwrap();
    let s2 = ctx
        .create_stream_with(ascendcl::StreamFlags::FAST_LAUNCH, 1)
        .unwrap();
    d.make_current().unwrap();
    s.synchronize().unwrap();
    s2.destroy().unwrap();
    drop(s);
    ctx.destroy().unwrap();
}

#[test]
fn the_run_mode_is_host_on_the_emulator() {
    let r = rt();
    let mode = r.run_mode().unwrap();
    assert_eq!(ascendcl::sys::aclrtRunMode::from(mode), {
        let mut raw = 0;
        // SAFETY: a valid out-pointer.
        unsafe { ascendcl::raw::aclrtGetRunMode(&mut raw) }.unwrap();
        raw
    });
    if emulator_active() {
        assert_eq!(mode, ascendcl::RunMode::Host);
        assert_eq!(mode.to_string(), "ACL_HOST");
    }
}

#[test]
fn each_context_has_its_own_default_stream() {
    let r = rt();
    let d = r.device(0).unwrap();
    let a = d.create_context().unwrap();
    let b = d.create_context().unwrap();
    let sa = a.bind(|c| c.default_stream()).unwrap().unwrap();
    let sb = b.bind(|c| c.default_stream()).unwrap().unwrap();
    assert!(!sa.is_null() && !sb.is_null());
    assert_ne!(sa, sb, "two contexts, two default streams");
    // Asked again, the same stream; also after a call of this crate switched contexts inside
    // the closure.
    let again = a
        .bind(|c| {
            d.mem_info(MemAttr::Hbm).unwrap();
            c.default_stream()
        })
        .unwrap()
        .unwrap();
    assert_eq!(again, sa);
    // It is a stream the runtime accepts.
    // SAFETY: the default stream of a live context, current inside the closure.
    a.bind(|_| unsafe { ascendcl::raw::aclrtSynchronizeStream(sa) })
        .unwrap()
        .unwrap();
    b.destroy().unwrap();
    a.destroy().unwrap();
}

#[test]
fn bind_restores_on_panic() {
    let r = rt();
    let d = r.device(0).unwrap();
    let ctx = d.create_context().unwrap();
    d.make_current().unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ctx.bind(|_| panic!("inside bind")).unwrap();
    }));
    assert!(caught.is_err());
    assert_eq!(ascendcl::current_context().unwrap(), d.raw_context());
}

#[test]
fn two_devices_on_one_thread() {
    let r = rt();
    if !needs_devices(&r, 2, "two_devices_on_one_thread") {
        return;
    }
    let d0 = r.device(0).unwrap();
    let d1 = r.device(1).unwrap();
    // Allocation makes each device's context current as needed.
    let a = ascendcl::DeviceBuffer::<u8>::from_slice(
        &d0,
        &[1, 2, 3],
        ascendcl::MallocPolicy::HugeFirst,
    )
    .unwrap();
    let b = ascendcl::DeviceBuffer::<u8>::from_slice(
        &d1,
        &[4, 5, 6],
        ascendcl::MallocPolicy::HugeFirst,
    )
    .unwrap();
    assert_eq!(a.device_id(), 0);
    assert_eq!(b.device_id(), 1);
    assert_eq!(a.to_vec().unwrap(), [1, 2, 3]);
    assert_eq!(b.to_vec().unwrap(), [4, 5, 6]);
    assert_eq!(
        ascendcl::pointer_attributes(b.as_ptr()).unwrap().location,
        ascendcl::PointerLocation::Device(1)
    );
}

#[test]
fn load_errors_are_wrapped() {
    let e: Error = "bogus".parse::<BackendChoice>().unwrap_err().into();
    assert!(e.to_string().contains("bogus"), "{e}");
    assert_eq!(e.code(), None);
    // Looking for CANN on this machine fails and lists every path tried.
    if let Err(load) = ascendcl::sys::load_cann() {
        let e = Error::from(load);
        assert!(
            matches!(
                e,
                Error::Load(
                    ascendcl::LoadError::NotFound { .. } | ascendcl::LoadError::Unusable { .. }
                )
            ),
            "{e}"
        );
        assert!(e.to_string().contains("tried"), "{e}");
    }
}

#[test]
fn raw_regions_and_current() {
    use ascendcl::{CopySource, MemoryLocation, RawRegion};
    let r = rt();
    if !needs_devices(&r, 2, "raw_regions_and_current") {
        return;
    }
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let other = r.device(1).unwrap();
    other.make_current().unwrap();
    s.make_current().unwrap();
    assert_eq!(ascendcl::current_context().unwrap(), s.raw_context());
    let v = [1u16, 2, 3];
    let reg = v.source_region();
    assert_eq!(reg.len(), 3);
    assert!(!reg.is_empty());
    assert_eq!(reg.bytes(), 6);
    assert_eq!(reg.location(), MemoryLocation::Pageable);
    assert_eq!(reg.ptr().cast_const(), v.as_ptr());
    let r2 = RawRegion::new(reg.ptr(), 0, MemoryLocation::Pinned);
    assert!(r2.is_empty());
    let h = ascendcl::HostBuffer::<u8>::zeroed(&d, 64).unwrap();
    let attrs = ascendcl::pointer_attributes(h.as_ptr()).unwrap();
    assert!(attrs.page_size > 0);
    s.scope(|sc| {
        assert_eq!(sc.stream().as_raw(), s.as_raw());
        Ok(())
    })
    .unwrap();
}

#[test]
fn global_runtime() {
    let a = Runtime::global().unwrap();
    let b = Runtime::global().unwrap();
    assert!(std::ptr::eq(a, b));
    let d = a.device(0).unwrap();
    d.synchronize().unwrap();
}

#[test]
fn copies_keep_working_after_another_device_or_context_goes() {
    let r = rt();
    if !needs_devices(
        &r,
        2,
        "copies_keep_working_after_another_device_or_context_goes",
    ) {
        return;
    }
    std::thread::spawn(move || {
        let d0 = r.device(0).unwrap();
        let mut buf =
            ascendcl::DeviceBuffer::<u8>::zeroed(&d0, 4, ascendcl::MallocPolicy::HugeFirst)
                .unwrap();
        {
            let d1 = r.device(1).unwrap(); // d1's context is now current
            let _b1 =
                ascendcl::DeviceBuffer::<u8>::zeroed(&d1, 4, ascendcl::MallocPolicy::HugeFirst)
                    .unwrap();
        } // d1 reset: its context is gone
        buf.copy_from_host(&[1, 2, 3, 4]).unwrap();
        {
            let ctx = d0.create_context().unwrap(); // current now
            drop(ctx); // destroyed while current
        }
        assert_eq!(buf.to_vec().unwrap(), [1, 2, 3, 4]);
        assert_eq!(ascendcl::current_context().unwrap(), d0.raw_context());
    })
    .join()
    .unwrap();
}
