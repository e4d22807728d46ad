//! Built-in device tasks: reductions and random numbers, checked against host computations.

use crate::common::*;
use ascendcl::{Distribution, Error, RandomState, ReduceKind};

#[test]
fn reductions_match_the_host() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let a = [1.5f32, -2.0, 3.0, 8.0];
    let b = [0.5f32, 5.0, 3.0, -1.0];
    for (kind, f) in [
        (
            ReduceKind::Sum,
            (|x: f32, y: f32| x + y) as fn(f32, f32) -> f32,
        ),
        (ReduceKind::Max, |x: f32, y: f32| x.max(y)),
        (ReduceKind::Min, |x: f32, y: f32| x.min(y)),
        (ReduceKind::Equal, |x: f32, y: f32| {
            f32::from(u8::from(x == y))
        }),
    ] {
        let mut dst = d.clone_htod(&a).unwrap();
        let src = d.clone_htod(&b).unwrap();
        s.scope(|sc| sc.reduce(&mut dst, &src, kind)).unwrap();
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| f(*x, *y)).collect();
        assert_eq!(dst.to_vec().unwrap(), want, "{kind:?}");
        assert_eq!(src.to_vec().unwrap(), b, "the source is untouched");
    }
    // Integers: a sum wraps around.
    let mut x = d.clone_htod(&[100i8, -3, 7, 0]).unwrap();
    let y = d.clone_htod(&[100i8, 3, -9, 0]).unwrap();
    s.scope(|sc| sc.reduce(&mut x, &y, ReduceKind::Sum))
        .unwrap();
    assert_eq!(x.to_vec().unwrap(), [-56, 0, -2, 0]);
    let mut x = d.clone_htod(&[5i32, -7, 9, 1]).unwrap();
    let y = d.clone_htod(&[6i32, -8, 9, 0]).unwrap();
    s.scope(|sc| sc.reduce(&mut x, &y, ReduceKind::Min))
        .unwrap();
    assert_eq!(x.to_vec().unwrap(), [5, -8, 9, 0]);
    // A claimed region reduced with itself, in stream order after a copy.
    let mut z = d.alloc_zeros::<i16>(3).unwrap();
    s.scope(|sc| {
        let c = sc.claim(&mut z);
        sc.copy(c, &[1i16, 2, 3])?;
        sc.reduce(c, c, ReduceKind::Sum)
    })
    .unwrap();
    assert_eq!(z.to_vec().unwrap(), [2, 4, 6]);
    // Checked in Rust: lengths, host memory.
    let short = d.clone_htod(&[1i32; 2]).unwrap();
    let e = s
        .scope(|sc| sc.reduce(&mut x, &short, ReduceKind::Sum))
        .unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    let host = [1i32; 4];
    let e = s
        .scope(|sc| sc.reduce(&mut x, &host, ReduceKind::Sum))
        .unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
}

fn mean_std(v: &[f32]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().map(|x| f64::from(*x)).sum::<f64>() / n;
    let var = v.iter().map(|x| (f64::from(*x) - m).powi(2)).sum::<f64>() / n;
    (m, var.sqrt())
}

#[test]
fn random_numbers_are_seeded_and_distributed() {
    const N: usize = 20_000;
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let mut out = d.alloc_zeros::<f32>(N).unwrap();
    let mut state = RandomState::new(&d, 42).unwrap();
    assert_eq!(state.seed(), 42);
    let uniform = Distribution::uniform(-2.0f32, 3.0);
    s.scope(|sc| sc.random(&mut out, uniform, &mut state))
        .unwrap();
    let first = out.to_vec().unwrap();
    assert!(first.iter().all(|x| (-2.0..3.0).contains(x)));
    let (m, sd) = mean_std(&first);
    assert!(
        (m - 0.5).abs() < 0.05 && (sd - 5.0 / 12f64.sqrt()).abs() < 0.05,
        "{m} {sd}"
    );
    assert_ne!(
        state.counter().unwrap(),
        [0, 0],
        "the task advanced the counter"
    );
    // The counter moved on: new numbers; reset: the same again.
    s.scope(|sc| sc.random(&mut out, uniform, &mut state))
        .unwrap();
    assert_ne!(out.to_vec().unwrap(), first);
    state.reset().unwrap();
    s.scope(|sc| sc.random(&mut out, uniform, &mut state))
        .unwrap();
    assert_eq!(out.to_vec().unwrap(), first, "same seed, same counter");
    // Another seed: other numbers.
    let mut other = RandomState::new(&d, 43).unwrap();
    s.scope(|sc| sc.random(&mut out, uniform, &mut other))
        .unwrap();
    assert_ne!(out.to_vec().unwrap(), first);

    s.scope(|sc| sc.random(&mut out, Distribution::normal(1.0f32, 2.0), &mut state))
        .unwrap();
    let (m, sd) = mean_std(&out.to_vec().unwrap());
    assert!(
        (m - 1.0).abs() < 0.06 && (sd - 2.0).abs() < 0.06,
        "{m} {sd}"
    );
    s.scope(|sc| {
        sc.random(
            &mut out,
            Distribution::truncated_normal(1.0f32, 2.0),
            &mut state,
        )
    })
    .unwrap();
    assert!(
        out.to_vec()
            .unwrap()
            .iter()
            .all(|x| (-3.0..=5.0).contains(x))
    );

    let mut ints = d.alloc_zeros::<i32>(N).unwrap();
    s.scope(|sc| sc.random(&mut ints, Distribution::uniform(10i32, 20), &mut state))
        .unwrap();
    let v = ints.to_vec().unwrap();
    assert!(v.iter().all(|x| (10..20).contains(x)));
    assert!((10..20).all(|k| v.contains(&k)), "every value drawn");

    // Dropout bitmask, ratio 0.25: about three bits in four set.
    let mut mask = d.alloc_zeros::<u8>(N / 8).unwrap();
    s.scope(|sc| sc.dropout_bitmask(&mut mask, 0.25, &mut state))
        .unwrap();
    let ones: u32 = mask.to_vec().unwrap().iter().map(|b| b.count_ones()).sum();
    let frac = f64::from(ones) / N as f64;
    assert!((frac - 0.75).abs() < 0.02, "{frac}");
    let e = s
        .scope(|sc| sc.dropout_bitmask(&mut mask, 1.5, &mut state))
        .unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    // Host memory is refused before the runtime is called.
    let mut host = vec![0f32; 8];
    let e = s
        .scope(|sc| sc.random(&mut host, uniform, &mut state))
        .unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
}
