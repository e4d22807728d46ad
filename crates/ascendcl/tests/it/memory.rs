//! Device, pinned and registered memory; policies; enum conversions.

use crate::common::*;
use ascendcl::{
    DeviceAlloc, DeviceBuffer, Error, HostBuffer, HostRegisterFlags, HostRegisterType,
    HostRegistration, MallocConfig, MallocFlags, MallocPolicy, MemcpyKind, PointerLocation,
};

#[test]
fn device_buffers_from_each_allocation_function() {
    let r = rt();
    let d = r.device(0).unwrap();
    let data: Vec<u32> = (0..1000).collect();
    for alloc in [
        DeviceAlloc::Malloc,
        DeviceAlloc::Align32,
        DeviceAlloc::Cached,
    ] {
        let mut b =
            DeviceBuffer::<u32>::zeroed_with(&d, data.len(), MallocPolicy::HugeFirst, alloc)
                .unwrap();
        assert_eq!(b.to_vec().unwrap(), vec![0; data.len()], "{alloc:?}");
        b.copy_from_host(&data).unwrap();
        assert_eq!(b.to_vec().unwrap(), data, "{alloc:?}");
        b.free().unwrap();
    }
    // The runtime's own checks, reported under the function that made them: aclrtMallocCached
    // refuses sizes above 2^50 bytes (107000).
    let e = DeviceBuffer::<u8>::zeroed_with(
        &d,
        (1 << 50) + 1,
        MallocPolicy::HugeFirst,
        DeviceAlloc::Cached,
    )
    .unwrap_err();
    assert_eq!(
        (e.api(), e.code()),
        (Some("aclrtMallocCached"), Some(AclError::PARAM_INVALID)),
        "{e}"
    );
    // A size that overflows in Rust is refused before any call, naming the function.
    let e = DeviceBuffer::<u64>::zeroed_with(
        &d,
        usize::MAX,
        MallocPolicy::HugeFirst,
        DeviceAlloc::Align32,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Argument {
                api: "aclrtMallocAlign32",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(DeviceAlloc::default(), DeviceAlloc::Malloc);
}

#[test]
fn device_buffer_constructors() {
    let r = rt();
    let d = r.device(0).unwrap();
    for &policy in MallocPolicy::ALL {
        if matches!(
            policy,
            MallocPolicy::Huge1gOnly
                | MallocPolicy::Huge1gOnlyP2p
                | MallocPolicy::HugeOnly
                | MallocPolicy::HugeOnlyP2p
        ) {
            // Backed by huge pages that the machine may not have; success or 207001.
            match DeviceBuffer::<u8>::zeroed(&d, 16, policy) {
                Ok(b) => assert_eq!(b.to_vec().unwrap(), vec![0; 16]),
                Err(e) => assert_eq!(e.code(), Some(AclError::MEMORY_ALLOCATION), "{e}"),
            }
            continue;
        }
        let b = DeviceBuffer::<u64>::zeroed(&d, 100, policy).unwrap();
        assert_eq!(b.len(), 100);
        assert!(!b.is_empty());
        assert_eq!(b.size_in_bytes(), 800);
        assert_eq!(b.device_id(), 0);
        assert_eq!(b.to_vec().unwrap(), vec![0u64; 100]);
        b.free().unwrap();
    }
    let b = DeviceBuffer::from_slice(&d, &[1.5f32, 2.5], MallocPolicy::NormalOnly).unwrap();
    assert_eq!(b.to_vec().unwrap(), [1.5, 2.5]);
    // SAFETY: every element is written before it is read.
    let mut u = unsafe { DeviceBuffer::<i16>::uninit(&d, 3, MallocPolicy::default()) }.unwrap();
    u.copy_from_host(&[7, 8, 9]).unwrap();
    assert_eq!(u.to_vec().unwrap(), [7, 8, 9]);
    let with_hint = DeviceBuffer::<u8>::zeroed(
        &d,
        8,
        MallocPolicy::HugeFirst.with(MallocFlags::HIGH_BAND_WIDTH),
    );
    // The hint is accepted by the emulator or refused with a runtime error, never UB.
    if let Err(e) = with_hint {
        assert!(e.code().is_some(), "{e}");
    }
}

#[test]
fn empty_and_overflowing_buffers() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut e = DeviceBuffer::<u32>::zeroed(&d, 0, MallocPolicy::HugeFirst).unwrap();
    assert!(e.is_empty());
    e.copy_from_host(&[]).unwrap();
    assert_eq!(e.to_vec().unwrap(), Vec::<u32>::new());
    e.fill_bytes(1).unwrap();
    e.free().unwrap();
    assert_argument(DeviceBuffer::<u64>::zeroed(
        &d,
        usize::MAX,
        MallocPolicy::HugeFirst,
    ));
    assert_argument(HostBuffer::<u64>::zeroed(&d, usize::MAX));
    let h = HostBuffer::<u8>::zeroed(&d, 0).unwrap();
    assert!(h.is_empty());
    h.free().unwrap();
}

#[test]
fn out_of_device_memory_is_207001() {
    let r = rt();
    let d = r.device(0).unwrap();
    let e = assert_code(
        DeviceBuffer::<u8>::zeroed(&d, 1 << 50, MallocPolicy::NormalOnly),
        AclError::MEMORY_ALLOCATION,
    );
    assert_eq!(e.code_name(), Some("ACL_ERROR_RT_MEMORY_ALLOCATION"));
    assert!(
        e.to_string()
            .starts_with("aclrtMalloc failed: ACL_ERROR_RT_MEMORY_ALLOCATION (207001)"),
        "{e}"
    );
}

#[test]
fn fill_and_slices() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut b = DeviceBuffer::<u8>::zeroed(&d, 10, MallocPolicy::HugeFirst).unwrap();
    b.fill_bytes(0xAB).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![0xAB; 10]);
    b.slice_mut(2..5).unwrap().fill_bytes(1).unwrap();
    b.slice_mut(..2).unwrap().copy_from_host(&[9, 9]).unwrap();
    assert_eq!(
        b.to_vec().unwrap(),
        [9, 9, 1, 1, 1, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB]
    );
    let s = b.slice(1..=3).unwrap();
    assert_eq!(s.len(), 3);
    assert!(!s.is_empty());
    assert_eq!(s.device_id(), 0);
    assert_eq!(s.to_vec().unwrap(), [9, 1, 1]);
    let mut out = [0u8; 2];
    s.into_slice(1..).unwrap().copy_to_host(&mut out).unwrap();
    assert_eq!(out, [1, 1]);
    assert_eq!(s.as_ptr(), b.as_ptr().wrapping_add(1));
    assert_argument(b.slice(5..11));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = b.slice(4..2);
    assert_argument(reversed);
    assert_argument(b.slice_mut(..=10));
    let mut view = b.as_view_mut();
    assert_eq!(view.len(), 10);
    assert!(!view.is_empty());
    assert_eq!(view.device_id(), 0);
    assert!(!view.as_mut_ptr().is_null());
    assert_eq!(view.as_view().len(), 10);
    let mut tail = view.into_slice_mut(8..).unwrap();
    tail.copy_from(&[5u8, 6]).unwrap();
    assert_eq!(b.as_view().to_vec().unwrap()[8..], [5, 6]);
    let mut out = vec![0u8; 10];
    b.copy_to(&mut out).unwrap();
    assert_eq!(out[8..], [5, 6]);
    let src = DeviceBuffer::from_slice(&d, &[3u8; 10], MallocPolicy::HugeFirst).unwrap();
    b.copy_from(&src).unwrap();
    b.copy_from_device(&src).unwrap();
    assert_eq!(b.to_vec().unwrap(), [3; 10]);
    let mut p = b.as_mut_ptr();
    assert!(!p.is_null());
    p = p.wrapping_add(0);
    let _ = p;
}

#[test]
fn host_buffer_derefs() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut h = HostBuffer::<u32>::zeroed(&d, 8).unwrap();
    assert_eq!(&h[..], &[0; 8]);
    h[3] = 42;
    h.iter_mut().for_each(|x| *x += 1);
    assert_eq!(h[3], 43);
    let f = HostBuffer::from_slice(&d, &[1u16, 2, 3]).unwrap();
    assert_eq!(&*f, &[1, 2, 3]);
    assert_eq!(
        ascendcl::pointer_attributes(f.as_ptr()).unwrap().location,
        PointerLocation::Host
    );
    // SAFETY: written before read.
    let mut u = unsafe { HostBuffer::<u8>::uninit(&d, 4) }.unwrap();
    u.copy_from_slice(&[1, 2, 3, 4]);
    assert_eq!(&*u, &[1, 2, 3, 4]);
    u.free().unwrap();
    f.free().unwrap();
    drop(h);
}

#[test]
fn registered_host_memory() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut reg = HostRegistration::new(&d, vec![0u32; 4096], HostRegisterType::Mapped).unwrap();
    assert!(!reg.device_ptr().is_null());
    assert_eq!(reg.device().id(), 0);
    reg[0] = 5;
    let dev = DeviceBuffer::from_slice(&d, &reg[..], MallocPolicy::HugeFirst).unwrap();
    ascendcl::copy(&mut reg, &dev).unwrap();
    ascendcl::copy(&mut *reg, &dev).unwrap();
    let v = reg.unregister().unwrap();
    assert_eq!(v[0], 5);
    assert_eq!(v.len(), 4096);
    let reg = HostRegistration::new(&d, v, HostRegisterType::Mapped).unwrap();
    drop(reg);
    assert_argument(HostRegistration::<u8>::new(
        &d,
        Vec::new(),
        HostRegisterType::Mapped,
    ));
    assert_argument(HostRegistration::with_flags(
        &d,
        vec![0u8; 4096],
        HostRegisterFlags::empty(),
    ));
    // aclrtHostRegisterV2: registered (HOST) while the registration lives.
    let reg = HostRegistration::with_flags(&d, vec![0u8; 4096], HostRegisterFlags::PINNED).unwrap();
    let ptr = reg.as_ptr();
    assert_eq!(
        ascendcl::pointer_attributes(ptr).unwrap().location,
        PointerLocation::Host
    );
    let v = reg.unregister().unwrap();
    assert_eq!(v.as_ptr(), ptr, "the same vector comes back");
    assert_eq!(
        ascendcl::pointer_attributes(v.as_ptr()).unwrap().location,
        PointerLocation::Unregistered
    );
    assert_argument(ascendcl::pointer_attributes(std::ptr::null::<u8>()));
}

#[test]
fn enum_conversions_are_lossless() {
    for &k in MemcpyKind::ALL {
        let raw: u32 = k.into();
        assert_eq!(MemcpyKind::try_from(raw).unwrap(), k);
    }
    assert_eq!(MemcpyKind::ALL.len(), 8);
    assert!(matches!(
        MemcpyKind::try_from(8u32),
        Err(Error::UnknownValue { value: 8, .. })
    ));
    assert!(!MemcpyKind::InterDeviceToDevice.is_memcpy_kind());
    assert!(MemcpyKind::Default.is_memcpy_kind());
    for &p in MallocPolicy::ALL {
        let raw: u32 = p.into();
        assert_eq!(MallocPolicy::try_from(raw).unwrap(), p);
        for flags in [
            MallocFlags::empty(),
            MallocFlags::LOW_BAND_WIDTH,
            MallocFlags::HIGH_BAND_WIDTH | MallocFlags::USER_SPACE_READONLY,
            MallocFlags::all(),
        ] {
            let c = p.with(flags);
            let raw: u32 = c.into();
            assert_eq!(MallocConfig::try_from(raw).unwrap(), c);
        }
    }
    assert_eq!(MallocPolicy::ALL.len(), 8);
    assert!(MallocPolicy::try_from(8u32).is_err());
    assert!(MallocConfig::try_from(0x2000u32).is_err());
    assert!(MallocConfig::try_from(9u32).is_err());
    assert_eq!(
        MallocConfig::from(MallocPolicy::NormalOnly).flags,
        MallocFlags::empty()
    );
    for &m in ascendcl::MemAttr::ALL {
        let raw: u32 = m.into();
        assert_eq!(ascendcl::MemAttr::try_from(raw).unwrap(), m);
    }
    for &m in ascendcl::StreamStatus::ALL {
        let raw: u32 = m.into();
        assert_eq!(ascendcl::StreamStatus::try_from(raw).unwrap(), m);
    }
    for &m in ascendcl::FailureMode::ALL {
        let raw: u64 = m.into();
        assert_eq!(ascendcl::FailureMode::try_from(raw).unwrap(), m);
    }
    for &m in ascendcl::CallbackBlock::ALL {
        let raw: u32 = m.into();
        assert_eq!(ascendcl::CallbackBlock::try_from(raw).unwrap(), m);
    }
    for &m in HostRegisterType::ALL {
        let raw: u32 = m.into();
        assert_eq!(HostRegisterType::try_from(raw).unwrap(), m);
    }
    assert!(ascendcl::FailureMode::try_from(2u64).is_err());
}

#[test]
fn error_table() {
    assert_eq!(ascendcl::error_name(0), Some("ACL_SUCCESS"));
    assert_eq!(
        ascendcl::error_name(507046),
        Some("ACL_ERROR_RT_STREAM_SYNC_TIMEOUT")
    );
    assert_eq!(
        ascendcl::error_name(145000),
        Some("ACL_ERROR_GE_PARAM_INVALID")
    );
    assert_eq!(ascendcl::error_name(42), None);
    assert_eq!(
        ascendcl::error_code("ACL_ERROR_INVALID_PARAM"),
        Some(100000)
    );
    assert!(ascendcl::error_codes().len() > 250);
}
