//! Synchronous copies in every direction, 2D, batch and peer copies.

use crate::common::*;
use ascendcl::{
    Copy2d, DeviceBuffer, HostBuffer, MallocPolicy, MemcpyKind, MemoryLocation, copy, copy_2d,
    copy_batch, copy_with_kind,
};

#[test]
fn every_direction() {
    let r = rt();
    let d = r.device(0).unwrap();
    let data: Vec<u32> = (0..256).collect();
    // H2H: pageable to pinned, pinned to pageable.
    let mut pinned = HostBuffer::<u32>::zeroed(&d, 256).unwrap();
    copy(&mut pinned, &data).unwrap();
    let mut v = vec![0u32; 256];
    copy(&mut v, &pinned).unwrap();
    assert_eq!(v, data);
    // H2D from pageable and pinned.
    let mut a = DeviceBuffer::<u32>::zeroed(&d, 256, MallocPolicy::HugeFirst).unwrap();
    a.copy_from_host(&data).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed(&d, 256, MallocPolicy::NormalOnly).unwrap();
    b.copy_from_host(&pinned).unwrap();
    // D2D.
    let mut c = DeviceBuffer::<u32>::zeroed(&d, 256, MallocPolicy::HugeFirst).unwrap();
    c.copy_from_device(&a).unwrap();
    // D2H to pageable and pinned.
    let mut out = vec![0u32; 256];
    c.copy_to_host(&mut out).unwrap();
    assert_eq!(out, data);
    let mut pout = HostBuffer::<u32>::zeroed(&d, 256).unwrap();
    copy(&mut pout, &b).unwrap();
    assert_eq!(&pout[..], &data[..]);
    // Arrays.
    let mut arr = [0u32; 4];
    copy(&mut arr, &[1u32, 2, 3, 4]).unwrap();
    assert_eq!(arr, [1, 2, 3, 4]);
}

#[test]
fn explicit_kinds() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut dev = DeviceBuffer::<u8>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    copy_with_kind(&mut dev, &[1u8, 2, 3, 4], MemcpyKind::Default).unwrap();
    copy_with_kind(&mut dev, &[1u8, 2, 3, 5], MemcpyKind::HostToDevice).unwrap();
    let mut h = [0u8; 4];
    copy_with_kind(&mut h, &dev, MemcpyKind::Default).unwrap();
    assert_eq!(h, [1, 2, 3, 5]);
    copy_with_kind(&mut h, &[9u8; 4], MemcpyKind::HostToHost).unwrap();
    assert_eq!(h, [9; 4]);
    copy_with_kind(&mut dev, &[7u8; 4], MemcpyKind::HostToBufToDevice).unwrap();
    assert_eq!(dev.to_vec().unwrap(), [7; 4]);
    for k in [
        MemcpyKind::InnerDeviceToDevice,
        MemcpyKind::InterDeviceToDevice,
    ] {
        assert_argument(copy_with_kind(&mut dev, &[0u8; 4], k));
    }
    assert_eq!(
        MemcpyKind::between(MemoryLocation::Pinned, MemoryLocation::Device(0)),
        MemcpyKind::HostToDevice
    );
    assert_eq!(
        MemcpyKind::between(MemoryLocation::Device(0), MemoryLocation::Pageable),
        MemcpyKind::DeviceToHost
    );
    assert_eq!(MemoryLocation::Pinned.device(), None);
}

#[test]
fn lengths_are_checked_before_ffi() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut dev = DeviceBuffer::<u16>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let e = assert_argument(dev.copy_from_host(&[1, 2, 3]));
    assert!(e.to_string().contains("length mismatch"), "{e}");
    assert_argument(dev.copy_to_host(&mut [0; 5]));
    let other = DeviceBuffer::<u16>::zeroed(&d, 3, MallocPolicy::HugeFirst).unwrap();
    assert_argument(dev.copy_from_device(&other));
    assert_eq!(ascendcl::to_vec(&dev.slice(1..).unwrap()).unwrap().len(), 3);
}

#[test]
fn cross_device_needs_peer_access() {
    let r = rt();
    if !needs_devices(&r, 2, "cross_device_needs_peer_access") {
        return;
    }
    let d0 = r.device(0).unwrap();
    let d1 = r.device(1).unwrap();
    let a = DeviceBuffer::from_slice(&d0, &[1u8, 2, 3], MallocPolicy::HugeFirstP2p).unwrap();
    let mut b = DeviceBuffer::<u8>::zeroed(&d1, 3, MallocPolicy::HugeFirstP2p).unwrap();
    let e = assert_argument(b.copy_from_device(&a));
    assert!(e.to_string().contains("PeerAccess"), "{e}");
    assert!(d0.can_access_peer(&d1).unwrap());
    assert_argument(d0.enable_peer_access(&d0).map(|_| ()));
    let peer = d0.enable_peer_access(&d1).unwrap();
    assert_eq!(peer.devices(), (0, 1));
    peer.copy(&mut b, &a).unwrap();
    assert_eq!(b.to_vec().unwrap(), [1, 2, 3]);
    let mut back = DeviceBuffer::<u8>::zeroed(&d0, 3, MallocPolicy::HugeFirstP2p).unwrap();
    peer.copy(&mut back, &b).unwrap();
    assert_eq!(back.to_vec().unwrap(), [1, 2, 3]);
    // Host memory is not a peer copy.
    assert_argument(peer.copy(&mut b, &[0u8; 3]));
    peer.disable().unwrap();
}

#[test]
fn copies_2d() {
    let r = rt();
    let d = r.device(0).unwrap();
    // 3 rows of 4 elements, host pitch 5, device pitch 4.
    let host: Vec<u32> = (0..15).collect();
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, 12, MallocPolicy::HugeFirst).unwrap();
    let g = Copy2d {
        dst_pitch: 4,
        src_pitch: 5,
        width: 4,
        height: 3,
    };
    copy_2d(&mut dev, &host, g).unwrap();
    assert_eq!(
        dev.to_vec().unwrap(),
        [0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13]
    );
    let mut back = vec![0u32; 15];
    copy_2d(
        &mut back,
        &dev,
        Copy2d {
            dst_pitch: 5,
            src_pitch: 4,
            width: 4,
            height: 3,
        },
    )
    .unwrap();
    assert_eq!(back, [0, 1, 2, 3, 0, 5, 6, 7, 8, 0, 10, 11, 12, 13, 0]);
    // Empty: nothing to do.
    copy_2d(&mut dev, &host, Copy2d { height: 0, ..g }).unwrap();
    // Out of bounds and bad pitches are rejected in Rust.
    assert_argument(copy_2d(&mut dev, &host, Copy2d { height: 4, ..g }));
    assert_argument(copy_2d(&mut dev, &host, Copy2d { width: 6, ..g }));
    assert_argument(copy_2d(
        &mut dev,
        &host,
        Copy2d {
            dst_pitch: usize::MAX,
            height: 1,
            ..g
        },
    ));
}

#[test]
fn batch_copies() {
    let r = rt();
    let d = r.device(0).unwrap();
    let mut a = DeviceBuffer::<u32>::zeroed(&d, 3, MallocPolicy::HugeFirst).unwrap();
    let mut b = DeviceBuffer::<u32>::zeroed(&d, 3, MallocPolicy::HugeFirst).unwrap();
    let (x, y) = ([1u32, 2, 3], [4u32, 5, 6]);
    copy_batch(&mut [&mut a, &mut b], &[&x[..], &y[..]]).unwrap();
    assert_eq!(a.to_vec().unwrap(), x);
    assert_eq!(b.to_vec().unwrap(), y);
    let (mut p, mut q) = (vec![0u32; 3], vec![0u32; 3]);
    copy_batch(&mut [&mut p, &mut q], &[&a, &b]).unwrap();
    assert_eq!((p.as_slice(), q.as_slice()), (&x[..], &y[..]));
    // Empty batch, mismatched counts, lengths, and mixed directions.
    copy_batch::<[u32], [u32]>(&mut [], &[]).unwrap();
    assert_argument(copy_batch(&mut [&mut a], &[&x[..], &y[..]]));
    assert_argument(copy_batch(&mut [&mut a], &[&x[..2]]));
    let mut h = [0u32; 3];
    assert_argument(copy_batch(&mut [&mut h[..]], &[&x[..]]));
}
