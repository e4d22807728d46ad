//! Accessors and small functions not exercised elsewhere: every public function is called at
//! least once by the tests.

use crate::common::*;
use ascendcl::{
    Copy2d, DeviceBuffer, HostBuffer, MallocConfig, MallocFlags, MallocPolicy, MemcpyKind,
    MemoryLocation, RawRegion,
};
use std::time::Duration;

#[test]
fn device_slice_accessors() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut buf =
        DeviceBuffer::from_slice(&d, &[1u16, 2, 3, 4, 5, 6], MallocPolicy::NormalOnly).unwrap();
    assert_eq!(buf.size_in_bytes(), 12);
    assert_eq!(buf.device_id(), d.id());
    let base = buf.as_ptr();
    assert_eq!(buf.as_mut_ptr().cast_const(), base);

    let view = buf.as_view();
    assert_eq!(
        (view.len(), view.is_empty(), view.device_id()),
        (6, false, 0)
    );
    assert_eq!(view.as_ptr(), base);
    let part = view.into_slice(2..4).unwrap();
    assert_eq!(part.as_ptr(), base.wrapping_add(2));
    let mut host = [0u16; 2];
    part.copy_to_host(&mut host).unwrap();
    assert_eq!(host, [3, 4]);
    assert_eq!(part.to_vec().unwrap(), [3, 4]);
    assert_argument(view.into_slice(5..9));
    assert!(view.into_slice(6..).unwrap().is_empty());

    let mut m = buf.as_view_mut();
    assert_eq!((m.len(), m.is_empty(), m.device_id()), (6, false, 0));
    assert_eq!(m.as_mut_ptr().cast_const(), base);
    assert_eq!(m.as_view().to_vec().unwrap(), [1, 2, 3, 4, 5, 6]);
    let mut tail = m.into_slice_mut(4..).unwrap();
    tail.copy_from_host(&[50, 60]).unwrap();
    tail.copy_from(&[51u16, 61]).unwrap();
    tail.fill_bytes(0).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [1, 2, 3, 4, 0, 0]);
    let mut other = vec![0u16; 6];
    buf.copy_to(&mut other).unwrap();
    assert_eq!(other, [1, 2, 3, 4, 0, 0]);
    assert_argument(buf.as_view_mut().into_slice_mut(..=6));
}

#[test]
fn claimed_and_scope_accessors() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let mut dev = DeviceBuffer::<u8>::zeroed(&d, 8, MallocPolicy::HugeFirst).unwrap();
    let mut host = HostBuffer::<u8>::zeroed(&d, 8).unwrap();
    s.scope(|sc| {
        assert_eq!(sc.as_raw(), s.as_raw());
        assert_eq!(sc.device_id(), 0);
        assert_eq!(sc.stream().as_raw(), s.as_raw());
        let c = sc.claim(&mut dev);
        assert_eq!((c.len(), c.is_empty()), (8, false));
        assert_eq!(c.location(), MemoryLocation::Device(0));
        assert_eq!(c.as_ptr(), c.as_mut_ptr().cast_const());
        let half = c.slice(4..).unwrap();
        assert_eq!(half.as_ptr(), c.as_ptr().wrapping_add(4));
        assert!(c.slice(9..).is_err());
        assert!(c.slice(8..).unwrap().is_empty());
        sc.fill_bytes(half, 7)?;
        let h = sc.claim(&mut host);
        assert_eq!(h.location(), MemoryLocation::Pinned);
        // memset of host memory is refused before the runtime is called.
        assert!(sc.fill_bytes(h, 1).is_err());
        sc.copy(h, c)
    })
    .unwrap();
    assert_eq!(&host[..], &[0, 0, 0, 0, 7, 7, 7, 7]);
}

#[test]
fn raw_region_and_kinds() {
    let mut v = [0u32; 3];
    let r = RawRegion::new(v.as_mut_ptr(), 3, MemoryLocation::Pageable);
    assert_eq!((r.len(), r.is_empty(), r.bytes()), (3, false, 12));
    assert_eq!(r.ptr(), v.as_mut_ptr());
    assert_eq!(r.location(), MemoryLocation::Pageable);
    assert_eq!(MemoryLocation::Pinned.device(), None);
    assert_eq!(
        MemcpyKind::between(MemoryLocation::Pinned, MemoryLocation::Device(1)),
        MemcpyKind::HostToDevice
    );
    assert!(!MemcpyKind::InterDeviceToDevice.is_memcpy_kind());
    for k in MemcpyKind::ALL {
        assert_eq!(MemcpyKind::try_from(u32::from(*k)).unwrap(), *k);
    }
    let c = MallocPolicy::HugeOnly.with(MallocFlags::HIGH_BAND_WIDTH);
    assert_eq!(MallocConfig::try_from(u32::from(c)).unwrap(), c);
    assert!(MallocConfig::try_from(0x7fff_fff0).is_err());
    assert!(MallocPolicy::try_from(99).is_err());
}

#[test]
fn context_and_bound_accessors() {
    let r = rt();
    let d = r.device(0).unwrap();
    let ctx = d.create_context().unwrap();
    assert_eq!(ctx.device_id(), 0);
    let s = ctx.create_stream().unwrap();
    assert_eq!(s.raw_context(), ctx.as_raw());
    assert_eq!(s.device_id(), 0);
    let inside = ctx
        .bind(|b| (b.as_raw(), ascendcl::current_context().unwrap()))
        .unwrap();
    assert_eq!(inside, (ctx.as_raw(), ctx.as_raw()));
    drop(s);
    ctx.destroy().unwrap();
}

#[test]
fn timeouts_never_panic() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let e = d.create_event().unwrap();
    e.record(&s).unwrap();
    // Durations far beyond i32::MAX milliseconds are capped, not truncated or panicking.
    for t in [
        Some(Duration::MAX),
        Some(Duration::from_secs(u64::from(u32::MAX))),
        Some(Duration::from_nanos(1)),
        None,
    ] {
        s.synchronize_timeout(t).unwrap();
        e.synchronize_timeout(t).unwrap();
    }
    assert!(e.is_complete().unwrap());
}

#[test]
fn out_of_range_ids_and_sizes_are_errors() {
    let r = rt();
    assert_argument(r.device(-1));
    assert_argument(r.device(i32::MIN));
    assert_code(r.device(i32::MAX), AclError::INVALID_DEVICEID);
    let d = r.device(0).unwrap();
    // Element counts whose byte size overflows usize.
    assert_argument(DeviceBuffer::<u64>::zeroed(
        &d,
        usize::MAX / 2,
        MallocPolicy::HugeFirst,
    ));
    assert_argument(HostBuffer::<u64>::zeroed(&d, usize::MAX / 4));
    // A priority outside 0-7 is the runtime's typed error, not a panic.
    assert!(d.create_stream_with(Default::default(), u32::MAX).is_err());
    // 2D geometry whose byte sizes overflow.
    let mut dst = vec![0u64; 4];
    let src = [0u64; 4];
    let g = Copy2d {
        dst_pitch: usize::MAX,
        src_pitch: usize::MAX,
        width: 1,
        height: 1,
    };
    assert_argument(ascendcl::copy_2d(&mut dst, &src, g));
    let g = Copy2d {
        dst_pitch: usize::MAX / 2,
        src_pitch: 1,
        width: 1,
        height: 3,
    };
    assert_argument(ascendcl::copy_2d(&mut dst, &src, g));
}
