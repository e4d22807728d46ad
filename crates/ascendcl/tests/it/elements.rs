//! Element types beyond the primitives: `half::f16` / `half::bf16` (feature `half`) and user
//! plain-data structs through `device_repr!` (feature `bytemuck`), compiled with both features
//! (`cargo test -p ascendcl --features half,bytemuck --test it`, as `cargo xtask test` does).

use crate::common::*;
use ascendcl::half::{bf16, f16};
use bytemuck::{Pod, Zeroable};

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
struct Particle {
    position: [f32; 3],
    mass: f32,
}

ascendcl::device_repr!(Particle);

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
struct Pair(u32, i32);

#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
struct Meters(f64);

ascendcl::device_repr!(Pair, Meters);

#[test]
fn half_precision_round_trips() {
    let r = rt();
    let d = r.device(0).unwrap();
    let halves: Vec<f16> = (0..300).map(|i| f16::from_f32(i as f32 / 8.0)).collect();
    let mut buf = d.clone_htod(&halves).unwrap();
    assert_eq!(buf.copy_to_vec().unwrap(), halves);
    // Every bit pattern survives, NaNs and infinities included.
    let bits: Vec<f16> = [0x7c00u16, 0xfc00, 0x7e01, 0x0001, 0x8000]
        .into_iter()
        .map(f16::from_bits)
        .collect();
    buf.slice_mut(..5).unwrap().copy_from(&bits).unwrap();
    let back = buf.copy_to_vec().unwrap();
    assert!(
        back[..5]
            .iter()
            .zip(&bits)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
    let brains: Vec<bf16> = (0..64).map(|i| bf16::from_f32(i as f32 * -1.5)).collect();
    let b = d.clone_htod(&brains).unwrap();
    let s = d.create_stream().unwrap();
    let mut out = ascendcl::HostBuffer::<bf16>::zeroed(&d, 64).unwrap();
    s.scope(|sc| sc.copy(&mut out, &b)).unwrap();
    assert_eq!(&out[..], &brains[..]);
}

#[test]
fn plain_data_structs_round_trip() {
    let r = rt();
    let d = r.device(0).unwrap();
    let ps: Vec<Particle> = (0..100)
        .map(|i| Particle {
            position: [i as f32, -(i as f32), 0.5],
            mass: 1.0 + i as f32,
        })
        .collect();
    let mut dev = d.alloc_zeros::<Particle>(100).unwrap();
    assert_eq!(dev.size_in_bytes(), 1600);
    assert_eq!(dev.copy_to_vec().unwrap()[7], Particle::zeroed());
    dev.copy_from(&ps).unwrap();
    assert_eq!(dev.copy_to_vec().unwrap(), ps);
    let pairs = [Pair(1, -1), Pair(u32::MAX, i32::MIN)];
    assert_eq!(d.clone_htod(&pairs).unwrap().copy_to_vec().unwrap(), pairs);
    let m = [Meters(1.5); 3];
    assert_eq!(d.clone_htod(&m).unwrap().copy_to_vec().unwrap(), m);
}

#[test]
fn device_repr_needs_pod() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail_features/*.rs");
}
