//! Memcpy descriptors (`Scope::copy_with_desc`) and batched asynchronous copies
//! (`Scope::copy_batch`): results checked on the host, and every argument the crate refuses
//! before the runtime is called.

use crate::common::*;
use ascendcl::{
    Claimed, DeviceBuffer, HostBuffer, MallocPolicy, MemcpyDescriptor, memcpy_desc_size,
};

#[test]
fn descriptor_copies() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let size = memcpy_desc_size().unwrap();
    assert!(size >= 32, "descriptor size {size}");
    let mut desc = MemcpyDescriptor::new(&d).unwrap();
    assert_eq!((desc.size(), desc.device_id()), (size, 0));
    assert_eq!(desc.as_ptr() as usize % 64, 0);
    let data: Vec<i32> = (0..1024).map(|i| i * 3 - 7).collect();
    let src = d.clone_htod(&data).unwrap();
    let mut dst = d.alloc_zeros::<i32>(1024).unwrap();
    s.scope(|sc| sc.copy_with_desc(&mut desc, &mut dst, &src))
        .unwrap();
    assert_eq!(dst.copy_to_vec().unwrap(), data);
    // A part of a buffer, and the descriptor reused in the next scope.
    let mut part = d.alloc_zeros::<i32>(10).unwrap();
    let middle = src.slice(100..110).unwrap();
    s.scope(|sc| sc.copy_with_desc(&mut desc, &mut part, &middle))
        .unwrap();
    assert_eq!(part.copy_to_vec().unwrap(), &data[100..110]);
    // Empty: nothing to do.
    let (mut e1, e2) = (
        d.alloc_zeros::<i32>(0).unwrap(),
        d.alloc_zeros::<i32>(0).unwrap(),
    );
    s.scope(|sc| sc.copy_with_desc(&mut desc, &mut e1, &e2))
        .unwrap();

    // Refused before the call: host memory on either side, lengths that differ.
    let mut host = vec![0i32; 1024];
    assert_argument(s.scope(|sc| sc.copy_with_desc(&mut desc, &mut host, &src)));
    assert_argument(s.scope(|sc| sc.copy_with_desc(&mut desc, &mut dst, &data)));
    assert_argument(s.scope(|sc| sc.copy_with_desc(&mut desc, &mut part, &src)));
}

#[test]
fn descriptors_and_buffers_of_another_device() {
    let r = rt();
    if !needs_devices(&r, 2, "descriptors_and_buffers_of_another_device") {
        return;
    }
    let (d0, d1) = (r.device(0).unwrap(), r.device(1).unwrap());
    let s = d0.create_stream().unwrap();
    let mut desc1 = MemcpyDescriptor::new(&d1).unwrap();
    let mut desc0 = MemcpyDescriptor::new(&d0).unwrap();
    let (src, mut dst) = (
        d0.alloc_zeros::<u8>(8).unwrap(),
        d0.alloc_zeros::<u8>(8).unwrap(),
    );
    let other = d1.alloc_zeros::<u8>(8).unwrap();
    assert_argument(s.scope(|sc| sc.copy_with_desc(&mut desc1, &mut dst, &src)));
    assert_argument(s.scope(|sc| sc.copy_with_desc(&mut desc0, &mut dst, &other)));
}

#[test]
fn batched_copies_in_both_directions() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let mut pinned = HostBuffer::from_slice(&d, &[1u16; 64]).unwrap();
    let mut pageable = vec![2u16; 32];
    let mut a = DeviceBuffer::<u16>::zeroed(&d, 64, MallocPolicy::HugeFirst).unwrap();
    let mut b = DeviceBuffer::<u16>::zeroed(&d, 32, MallocPolicy::HugeFirst).unwrap();
    let mut c = d.clone_htod(&[3u16; 16]).unwrap();
    let mut back_pinned = HostBuffer::<u16>::zeroed(&d, 16).unwrap();
    let mut back = vec![0u16; 16];
    let (mut empty_src, mut empty_dst) = (Vec::<u16>::new(), d.alloc_zeros::<u16>(0).unwrap());
    s.scope(|sc| {
        // Nothing to copy.
        sc.copy_batch(Vec::<(Claimed<'_, u16>, Claimed<'_, u16>)>::new())?;
        // Two host-to-device pairs (pinned, pageable), an empty pair, and two device-to-host
        // pairs (pinned, pageable) from one source: claimed regions give every pair one type.
        let (ca, cb, ce, cp, cv) = (
            sc.claim(&mut a),
            sc.claim(&mut b),
            sc.claim(&mut empty_dst),
            sc.claim(&mut back_pinned),
            sc.claim(&mut back),
        );
        let (sp, sg, se, sd) = (
            sc.claim(&mut pinned),
            sc.claim(&mut pageable),
            sc.claim(&mut empty_src),
            sc.claim(&mut c),
        );
        sc.copy_batch([(ca, sp), (cb, sg), (ce, se), (cp, sd), (cv, sd)])
    })
    .unwrap();
    assert_eq!(a.copy_to_vec().unwrap(), vec![1; 64]);
    assert_eq!(b.copy_to_vec().unwrap(), vec![2; 32]);
    assert_eq!(
        (&back_pinned[..], &back[..]),
        (&[3u16; 16][..], &[3u16; 16][..])
    );
    // Borrowed buffers of one type each side.
    let (mut x, mut y) = (vec![0u16; 64], vec![0u16; 64]);
    s.scope(|sc| sc.copy_batch([(&mut x, &a), (&mut y, &a)]))
        .unwrap();
    assert_eq!((x, y), (vec![1; 64], vec![1; 64]));
}

#[test]
fn batch_arguments_are_checked() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let src = d.clone_htod(&[1u8; 8]).unwrap();
    let mut dst = d.alloc_zeros::<u8>(8).unwrap();
    let mut host = vec![0u8; 8];
    let short = [0u8; 4];
    // Device to device, host to host, lengths that differ.
    assert_argument(s.scope(|sc| sc.copy_batch([(&mut dst, &src)])));
    assert_argument(s.scope(|sc| sc.copy_batch([(&mut host, &short[..])])));
    assert_argument(s.scope(|sc| sc.copy_batch([(&mut host[..], &short[..])])));
    assert_eq!(host, [0; 8], "nothing was copied");
    if needs_devices(&r, 2, "batch_arguments_are_checked (another device)") {
        let other = r.device(1).unwrap().alloc_zeros::<u8>(8).unwrap();
        assert_argument(s.scope(|sc| sc.copy_batch([(&mut host, &other)])));
    }
}
