//! Managed memory: host access through `Deref`, device access through `ManagedView` in scopes,
//! advice and attributes, prefetches, and the argument checks. On a backend without managed
//! memory (207000 from `aclrtMemAllocManaged`) the tests skip themselves.

use crate::common::*;
use ascendcl::{
    AclError, Device, ManagedBuffer, ManagedLocation, MemAdvice, PointerLocation, Runtime,
    pointer_attributes,
};

/// A managed buffer, or `None` (with a skip notice) when the backend has no managed memory.
fn managed<T: ascendcl::DeviceRepr>(d: &Device, src: &[T], test: &str) -> Option<ManagedBuffer<T>> {
    match ManagedBuffer::from_slice(d, src) {
        Ok(b) => Some(b),
        Err(e) if e.code() == Some(AclError::FEATURE_NOT_SUPPORT) => {
            skip(test, "the backend has no managed memory");
            None
        }
        Err(e) => panic!("aclrtMemAllocManaged: {e}"),
    }
}

fn device(r: &Runtime) -> Device {
    r.device(0).unwrap()
}

#[test]
fn host_and_device_share_the_memory() {
    let r = rt();
    let d = device(&r);
    let s = d.create_stream().unwrap();
    let Some(mut x) = managed(&d, &[1u32, 2, 3, 4], "host_and_device_share_the_memory") else {
        return;
    };
    assert_eq!(&x[..], &[1, 2, 3, 4]);
    assert_eq!(x.mapped_bytes(), ascendcl::MANAGED_PAGE);
    assert_eq!(
        pointer_attributes(x.as_ptr()).unwrap().location,
        PointerLocation::Managed(0)
    );
    x[0] = 10;
    let src = d.clone_htod(&[7u32, 8, 9, 10]).unwrap();
    let mut out = vec![0u32; 4];
    {
        let mut v = x.on_device();
        assert_eq!((v.len(), v.is_empty(), v.device_id()), (4, false, 0));
        assert_eq!(v.mapped_bytes(), ascendcl::MANAGED_PAGE);
        // Device to host from managed memory, then device to managed memory, in stream order.
        s.scope(|sc| {
            let c = sc.claim(&mut v);
            sc.copy(&mut out, c)?;
            sc.copy(c, &src)
        })
        .unwrap();
    }
    assert_eq!(out, [10, 2, 3, 4]);
    assert_eq!(
        &x[..],
        &[7, 8, 9, 10],
        "the host sees what the device wrote"
    );
    // A claimed view serves several operations of one scope.
    {
        let mut v = x.on_device();
        s.scope(|sc| {
            let c = sc.claim(&mut v);
            sc.fill_bytes(c, 0)?;
            sc.copy(&mut out, c)
        })
        .unwrap();
    }
    assert_eq!(out, [0; 4]);
    x.free().unwrap();
}

#[test]
fn advice_and_attributes() {
    let r = rt();
    let d = device(&r);
    let Some(x) = managed(&d, &[0f32; 1024], "advice_and_attributes") else {
        return;
    };
    assert!(!x.read_mostly().unwrap());
    assert_eq!(x.preferred_location().unwrap(), None);
    assert_eq!(x.last_prefetch_location().unwrap(), None);
    assert_eq!(x.accessed_by().unwrap(), Vec::<i32>::new());
    x.advise(MemAdvice::SetReadMostly).unwrap();
    assert!(x.read_mostly().unwrap());
    x.advise(MemAdvice::UnsetReadMostly).unwrap();
    assert!(!x.read_mostly().unwrap());
    x.advise(MemAdvice::SetPreferredLocation(ManagedLocation::Device(0)))
        .unwrap();
    assert_eq!(
        x.preferred_location().unwrap(),
        Some(ManagedLocation::Device(0))
    );
    x.advise(MemAdvice::SetPreferredLocation(ManagedLocation::Host))
        .unwrap();
    assert_eq!(x.preferred_location().unwrap(), Some(ManagedLocation::Host));
    x.advise(MemAdvice::UnsetPreferredLocation).unwrap();
    assert_eq!(x.preferred_location().unwrap(), None);
    x.advise(MemAdvice::SetAccessedBy(ManagedLocation::Device(0)))
        .unwrap();
    x.advise(MemAdvice::SetAccessedBy(ManagedLocation::Host))
        .unwrap();
    assert_eq!(x.accessed_by().unwrap(), [-1, 0]);
    x.advise(MemAdvice::UnsetAccessedBy(ManagedLocation::Host))
        .unwrap();
    assert_eq!(x.accessed_by().unwrap(), [0]);
    if emulator_active() {
        // The emulator's one NUMA node stands for the calling thread's.
        x.advise(MemAdvice::SetPreferredLocation(
            ManagedLocation::HostNumaCurrent,
        ))
        .unwrap();
        assert_eq!(
            x.preferred_location().unwrap(),
            Some(ManagedLocation::HostNuma(0))
        );
    }
    // A device id past the count is the runtime's error, typed.
    assert_code(
        x.advise(MemAdvice::SetPreferredLocation(ManagedLocation::Device(
            1000,
        ))),
        AclError::PARAM_INVALID,
    );
}

#[test]
fn prefetches_are_recorded() {
    let r = rt();
    let d = device(&r);
    let s = d.create_stream().unwrap();
    let Some(mut x) = managed(&d, &[1u8; 100], "prefetches_are_recorded") else {
        return;
    };
    let Some(mut y) = managed(&d, &[2u8; 100], "prefetches_are_recorded") else {
        return;
    };
    {
        let vx = x.on_device();
        s.scope(|sc| sc.prefetch(&vx, ManagedLocation::Device(0)))
            .unwrap();
    }
    assert_eq!(
        x.last_prefetch_location().unwrap(),
        Some(ManagedLocation::Device(0))
    );
    {
        let (vx, vy) = (x.on_device(), y.on_device());
        s.scope(|sc| {
            sc.prefetch_batch(Vec::<(&ascendcl::ManagedView<'_, u8>, _)>::new())?;
            sc.prefetch_batch([
                (&vx, ManagedLocation::Host),
                (&vy, ManagedLocation::Device(0)),
            ])
        })
        .unwrap();
    }
    assert_eq!(
        x.last_prefetch_location().unwrap(),
        Some(ManagedLocation::Host)
    );
    assert_eq!(
        y.last_prefetch_location().unwrap(),
        Some(ManagedLocation::Device(0))
    );
    assert_eq!((&x[..3], &y[..3]), (&[1u8; 3][..], &[2u8; 3][..]));
    // A claimed part prefetches its whole pages.
    {
        let mut vx = x.on_device();
        s.scope(|sc| {
            let c = sc.claim(&mut vx);
            sc.prefetch(c.slice(10..20)?, ManagedLocation::Device(0))?;
            sc.prefetch_batch([(c.slice(..1)?, ManagedLocation::Host)])
        })
        .unwrap();
    }
    assert_eq!(
        x.last_prefetch_location().unwrap(),
        Some(ManagedLocation::Host)
    );
    // Memory that is not managed: the runtime's error (107000 on the emulator).
    let plain = d.alloc_zeros::<u8>(16).unwrap();
    let r = s.scope(|sc| sc.prefetch(&plain, ManagedLocation::Host));
    if emulator_active() {
        assert_code(r, AclError::PARAM_INVALID);
    } else {
        assert!(r.is_err());
    }
}

#[test]
fn empty_buffers_are_refused() {
    let r = rt();
    let d = device(&r);
    assert_argument(ManagedBuffer::<u32>::zeroed(&d, 0).map(drop));
    assert_argument(ManagedBuffer::<u64>::zeroed(&d, usize::MAX).map(drop));
}

#[test]
fn buffers_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<ManagedBuffer<f32>>();
    both::<ascendcl::ManagedView<'static, f32>>();
}

#[test]
fn a_managed_buffer_reaches_a_scope_only_through_its_view() {
    // `ManagedBuffer` derefs to a slice for the host; as the source of an asynchronous copy
    // that slice would reach the device while the host may still read the buffer.
    let r = rt();
    let d = device(&r);
    let s = d.create_stream().unwrap();
    let Some(mut m) = managed(
        &d,
        &[5u32; 4],
        "a_managed_buffer_reaches_a_scope_only_through_its_view",
    ) else {
        return;
    };
    let mut dev = d.alloc_zeros::<u32>(4).unwrap();
    s.scope(|sc| {
        let e = assert_argument(sc.copy(&mut dev, &m[..]));
        assert!(e.to_string().contains("ManagedView"), "{e}");
        Ok(())
    })
    .unwrap();
    s.scope(|sc| {
        assert_argument(sc.copy(&mut m[..], &dev));
        Ok(())
    })
    .unwrap();
    assert_eq!(dev.copy_to_vec().unwrap(), [0; 4]);
    // Through the view it works.
    {
        let v = m.on_device();
        s.scope(|sc| sc.copy(&mut dev, &v)).unwrap();
    }
    assert_eq!(dev.copy_to_vec().unwrap(), [5; 4]);
}
