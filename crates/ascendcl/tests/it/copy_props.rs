//! Property tests: copy round-trips across sizes, offsets and directions, synchronous and
//! scoped-asynchronous.

use crate::common::*;
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, copy};
use proptest::prelude::*;

/// How the host side of a round trip is held.
#[derive(Debug, Clone, Copy)]
enum HostKind {
    Pageable,
    Pinned,
}

fn host_kind() -> impl Strategy<Value = HostKind> {
    prop_oneof![Just(HostKind::Pageable), Just(HostKind::Pinned)]
}

fn policy() -> impl Strategy<Value = MallocPolicy> {
    prop_oneof![
        Just(MallocPolicy::HugeFirst),
        Just(MallocPolicy::NormalOnly),
        Just(MallocPolicy::HugeFirstP2p),
        Just(MallocPolicy::NormalOnlyP2p),
    ]
}

/// Data plus a sub-range (offset, length) inside a device buffer of `cap` elements.
fn data_and_window() -> impl Strategy<Value = (Vec<u8>, usize, usize)> {
    (0usize..4096, 0usize..64).prop_flat_map(|(len, extra)| {
        (
            proptest::collection::vec(any::<u8>(), len),
            0..=extra,
            Just(len + extra),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// host → device (sub-range) → device (D2D) → host gives the data back, and leaves the rest of
    /// the device buffer untouched.
    #[test]
    fn sync_round_trip((data, offset, cap) in data_and_window(), hk in host_kind(), p in policy()) {
        let r = rt();
        let d = r.device(0).unwrap();
        let len = data.len();
        let mut dev = DeviceBuffer::<u8>::zeroed(&d, cap, p).unwrap();
        match hk {
            HostKind::Pageable => dev.slice_mut(offset..offset + len).unwrap().copy_from_host(&data).unwrap(),
            HostKind::Pinned => {
                let h = HostBuffer::from_slice(&d, &data).unwrap();
                dev.slice_mut(offset..offset + len).unwrap().copy_from(&*h).unwrap();
            }
        }
        let mut dev2 = DeviceBuffer::<u8>::zeroed(&d, len, p).unwrap();
        copy(&mut dev2, &dev.slice(offset..offset + len).unwrap()).unwrap();
        let back = match hk {
            HostKind::Pageable => dev2.to_vec().unwrap(),
            HostKind::Pinned => {
                let mut h = HostBuffer::<u8>::zeroed(&d, len).unwrap();
                copy(&mut h, &dev2).unwrap();
                h.to_vec()
            }
        };
        prop_assert_eq!(&back, &data);
        let whole = dev.to_vec().unwrap();
        prop_assert!(whole[..offset].iter().all(|&b| b == 0));
        prop_assert!(whole[offset + len..].iter().all(|&b| b == 0));
    }

    /// Typed elements: u32/f64 round trips keep every bit.
    #[test]
    fn typed_round_trip(words in proptest::collection::vec(any::<u32>(), 0..2048),
                        floats in proptest::collection::vec(any::<f64>(), 0..512)) {
        let r = rt();
        let d = r.device(0).unwrap();
        let a = DeviceBuffer::from_slice(&d, &words, MallocPolicy::HugeFirst).unwrap();
        prop_assert_eq!(a.to_vec().unwrap(), words);
        let b = DeviceBuffer::from_slice(&d, &floats, MallocPolicy::NormalOnly).unwrap();
        let back = b.to_vec().unwrap();
        prop_assert_eq!(back.len(), floats.len());
        for (x, y) in back.iter().zip(&floats) {
            prop_assert_eq!(x.to_bits(), y.to_bits());
        }
    }

    /// The same round trip through a stream scope (async H2D, D2D, D2H), pinned or pageable.
    #[test]
    fn async_round_trip((data, offset, cap) in data_and_window(), hk in host_kind()) {
        let r = rt();
        let d = r.device(0).unwrap();
        let s = d.create_stream().unwrap();
        let len = data.len();
        let pinned_src = HostBuffer::from_slice(&d, &data).unwrap();
        let mut dev = DeviceBuffer::<u8>::zeroed(&d, cap, MallocPolicy::HugeFirst).unwrap();
        let mut dev2 = DeviceBuffer::<u8>::zeroed(&d, len, MallocPolicy::HugeFirst).unwrap();
        let mut pinned_out = HostBuffer::<u8>::zeroed(&d, len).unwrap();
        let mut pageable_out = vec![0u8; len];
        s.scope(|sc| {
            let window = sc.claim(&mut dev).slice(offset..offset + len)?;
            match hk {
                HostKind::Pageable => sc.copy(window, &data[..])?,
                HostKind::Pinned => sc.copy(window, &pinned_src)?,
            }
            let d2 = sc.claim(&mut dev2);
            sc.copy(d2, window)?;
            sc.copy(&mut pinned_out, d2)?;
            sc.copy(&mut pageable_out, d2)?;
            Ok(())
        }).unwrap();
        prop_assert_eq!(&pinned_out[..], &data[..]);
        prop_assert_eq!(&pageable_out, &data);
        let whole = dev.to_vec().unwrap();
        prop_assert!(whole[..offset].iter().all(|&b| b == 0));
    }

    /// Mismatched lengths are always refused before the runtime is called.
    #[test]
    fn mismatched_lengths_refused(a in 0usize..256, b in 0usize..256) {
        prop_assume!(a != b);
        let r = rt();
        let d = r.device(0).unwrap();
        let mut dev = DeviceBuffer::<u16>::zeroed(&d, a, MallocPolicy::HugeFirst).unwrap();
        let host = vec![1u16; b];
        let is_argument = matches!(dev.copy_from_host(&host), Err(ascendcl::Error::Argument { .. }));
        prop_assert!(is_argument);
        let mut out = vec![0u16; b];
        let is_argument = matches!(dev.copy_to_host(&mut out), Err(ascendcl::Error::Argument { .. }));
        prop_assert!(is_argument);
    }
}
