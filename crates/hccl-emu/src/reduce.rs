//! Reduction arithmetic on raw element bytes: sum, product, maximum and minimum for every
//! numeric data type, one operand at a time.
//!
//! Integers wrap on overflow. `f32` and `f64` use the machine's IEEE arithmetic. `f16` and
//! `bf16` are computed in `f32` and rounded to the element type after each step, so a
//! reduction over n ranks rounds n − 1 times, as a device that accumulates in the element type
//! does; `f32` has more than twice their significand bits plus two, so that equals rounding the
//! exact result. Maximum and minimum of floating-point values return NaN when either operand is
//! NaN (of +0 and −0 they may return either).
//!
//! The loops run over typed slices when the bytes are aligned for the type (the usual case:
//! device allocations and the emulator's buffers are), one operation per loop, so the compiler
//! vectorises them (`cargo xtask` builds at `opt-level = 3`; the `f32` and `i32` sums compile to
//! packed `addps` / `paddd` on x86-64, 4 lanes in the baseline target and more with wider
//! `target-cpu`s). Unaligned bytes take an element-by-element path with the same results.

use crate::dtype::{DType, RedOp};
use bytemuck::Pod;
use half::{bf16, f16};

/// An element type with its arithmetic.
trait Elem: Pod {
    fn sum(a: Self, b: Self) -> Self;
    fn prod(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn prod(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
        }
    )*};
}

int_elem!(i8, i16, i32, i64, i128, u8, u16, u32, u64);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self { a + b }
            #[inline(always)]
            fn prod(a: Self, b: Self) -> Self { a * b }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() { <$t>::NAN } else if b > a { b } else { a }
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() { <$t>::NAN } else if b < a { b } else { a }
            }
        }
    )*};
}

float_elem!(f32, f64);

/// `acc[i] = f(acc[i], x[i])` (or `f(x[i], acc[i])` when `rev`) over typed slices, one loop per
/// operation so each vectorises.
#[inline(always)]
fn fold_typed<T: Elem>(acc: &mut [T], x: &[T], op: RedOp, rev: bool) {
    macro_rules! each {
        ($f:path) => {
            if rev {
                for (a, b) in acc.iter_mut().zip(x) {
                    *a = $f(*b, *a);
                }
            } else {
                for (a, b) in acc.iter_mut().zip(x) {
                    *a = $f(*a, *b);
                }
            }
        };
    }
    match op {
        RedOp::Sum => each!(T::sum),
        RedOp::Prod => each!(T::prod),
        RedOp::Max => each!(T::max),
        RedOp::Min => each!(T::min),
    }
}

/// `out[i] = f(a[i], b[i])` over typed slices.
#[inline(always)]
fn combine_typed<T: Elem>(out: &mut [T], a: &[T], b: &[T], op: RedOp) {
    macro_rules! each {
        ($f:path) => {
            for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
                *o = $f(*x, *y);
            }
        };
    }
    match op {
        RedOp::Sum => each!(T::sum),
        RedOp::Prod => each!(T::prod),
        RedOp::Max => each!(T::max),
        RedOp::Min => each!(T::min),
    }
}

fn load<T: Pod>(b: &[u8]) -> T {
    bytemuck::pod_read_unaligned(b)
}

fn store<T: Pod>(v: T, b: &mut [u8]) {
    b.copy_from_slice(bytemuck::bytes_of(&v));
}

/// `out = a op b` on bytes of `T` (`a` is `out` itself when `None`), aligned or not.
fn bytes_op<T: Elem>(out: &mut [u8], a: Option<&[u8]>, b: &[u8], op: RedOp, rev: bool) {
    let size = std::mem::size_of::<T>();
    match a {
        None => {
            if let (Ok(acc), Ok(x)) = (
                bytemuck::try_cast_slice_mut::<u8, T>(out),
                bytemuck::try_cast_slice::<u8, T>(b),
            ) {
                return fold_typed(acc, x, op, rev);
            }
            let mut one = [T::zeroed()];
            for (o, y) in out.chunks_exact_mut(size).zip(b.chunks_exact(size)) {
                let (p, q) = (load::<T>(o), load::<T>(y));
                one[0] = p;
                fold_typed(&mut one, &[q], op, rev);
                store(one[0], o);
            }
        }
        Some(a) => {
            if let (Ok(o), Ok(x), Ok(y)) = (
                bytemuck::try_cast_slice_mut::<u8, T>(out),
                bytemuck::try_cast_slice::<u8, T>(a),
                bytemuck::try_cast_slice::<u8, T>(b),
            ) {
                return combine_typed(o, x, y, op);
            }
            let mut one = [T::zeroed()];
            for ((o, x), y) in out
                .chunks_exact_mut(size)
                .zip(a.chunks_exact(size))
                .zip(b.chunks_exact(size))
            {
                combine_typed(&mut one, &[load::<T>(x)], &[load::<T>(y)], op);
                store(one[0], o);
            }
        }
    }
}

/// The 16-bit floats: blocks converted to `f32`, combined, rounded back.
fn half_op<H: Copy + Pod>(
    out: &mut [u8],
    a: Option<&[u8]>,
    b: &[u8],
    op: RedOp,
    rev: bool,
    to: fn(H) -> f32,
    from: fn(f32) -> H,
) {
    const BLOCK: usize = 256;
    let (mut fa, mut fb) = ([0f32; BLOCK], [0f32; BLOCK]);
    let mut at = 0;
    while at < out.len() {
        let len = (out.len() - at).min(BLOCK * 2);
        let k = len / 2;
        let src_a: &[u8] = match a {
            Some(a) => &a[at..at + len],
            None => &out[at..at + len],
        };
        for (f, c) in fa[..k].iter_mut().zip(src_a.chunks_exact(2)) {
            *f = to(load::<H>(c));
        }
        for (f, c) in fb[..k].iter_mut().zip(b[at..at + len].chunks_exact(2)) {
            *f = to(load::<H>(c));
        }
        fold_typed(&mut fa[..k], &fb[..k], op, rev && a.is_none());
        for (f, c) in fa[..k].iter().zip(out[at..at + len].chunks_exact_mut(2)) {
            store(from(*f), c);
        }
        at += len;
    }
}

/// Whether [`reduce_into`] supports `t` (every numeric type; not the 8-bit float formats, which
/// no library reduces).
pub fn supports(t: DType) -> bool {
    !matches!(
        t,
        DType::Hif8 | DType::Fp8E4M3 | DType::Fp8E5M2 | DType::Fp8E8M0
    )
}

fn dispatch(t: DType, op: RedOp, out: &mut [u8], a: Option<&[u8]>, b: &[u8], rev: bool) {
    assert_eq!(out.len(), b.len(), "reduce: lengths differ");
    assert!(
        a.is_none_or(|a| a.len() == b.len()),
        "reduce: lengths differ"
    );
    assert_eq!(out.len() % t.size(), 0, "reduce: partial element");
    match t {
        DType::I8 => bytes_op::<i8>(out, a, b, op, rev),
        DType::I16 => bytes_op::<i16>(out, a, b, op, rev),
        DType::I32 => bytes_op::<i32>(out, a, b, op, rev),
        DType::I64 => bytes_op::<i64>(out, a, b, op, rev),
        DType::I128 => bytes_op::<i128>(out, a, b, op, rev),
        DType::U8 => bytes_op::<u8>(out, a, b, op, rev),
        DType::U16 => bytes_op::<u16>(out, a, b, op, rev),
        DType::U32 => bytes_op::<u32>(out, a, b, op, rev),
        DType::U64 => bytes_op::<u64>(out, a, b, op, rev),
        DType::F32 => bytes_op::<f32>(out, a, b, op, rev),
        DType::F64 => bytes_op::<f64>(out, a, b, op, rev),
        DType::F16 => half_op::<f16>(out, a, b, op, rev, f16::to_f32, f16::from_f32),
        DType::BF16 => half_op::<bf16>(out, a, b, op, rev, bf16::to_f32, bf16::from_f32),
        DType::Hif8 | DType::Fp8E4M3 | DType::Fp8E5M2 | DType::Fp8E8M0 => {
            panic!("reduce: {} is not reducible", t.name())
        }
    }
}

/// `acc[i] = acc[i] op x[i]` for every element of type `t`.
///
/// # Panics
/// When the lengths differ or are not a multiple of the element size, or `t` is not
/// [`supports`]ed: callers size both from one count.
pub fn reduce_into(t: DType, op: RedOp, acc: &mut [u8], x: &[u8]) {
    dispatch(t, op, acc, None, x, false);
}

/// `acc[i] = x[i] op acc[i]`: as [`reduce_into`] with the operands the other way round (for
/// algorithms that keep one order of operands whichever rank computes).
pub fn reduce_into_rev(t: DType, op: RedOp, acc: &mut [u8], x: &[u8]) {
    dispatch(t, op, acc, None, x, true);
}

/// `out[i] = a[i] op b[i]`.
///
/// # Panics
/// As [`reduce_into`].
pub fn reduce_to(t: DType, op: RedOp, out: &mut [u8], a: &[u8], b: &[u8]) {
    dispatch(t, op, out, Some(a), b, false);
}

/// Reduces `inputs` (one per rank, in rank order) into `out`: `out = inputs[0]`, then each
/// following input is folded in. Every input has `out.len()` bytes.
pub fn reduce_all<'a>(
    t: DType,
    op: RedOp,
    out: &mut [u8],
    inputs: impl IntoIterator<Item = &'a [u8]>,
) {
    let mut it = inputs.into_iter();
    match (it.next(), it.next()) {
        (Some(first), Some(second)) => reduce_to(t, op, out, first, second),
        (Some(first), None) => out.copy_from_slice(first),
        _ => {}
    }
    for x in it {
        reduce_into(t, op, out, x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Pod>(v: &[T]) -> Vec<u8> {
        bytemuck::cast_slice(v).to_vec()
    }

    fn values<T: Pod>(b: &[u8]) -> Vec<T> {
        b.chunks_exact(std::mem::size_of::<T>())
            .map(load::<T>)
            .collect()
    }

    #[test]
    fn integers_wrap_and_compare_signed() {
        let mut a = bytes(&[i8::MAX, -3, 100]);
        reduce_into(DType::I8, RedOp::Sum, &mut a, &bytes(&[1i8, -4, 100]));
        assert_eq!(values::<i8>(&a), vec![i8::MIN, -7, -56]);
        let mut a = bytes(&[-5i32, 7]);
        reduce_into(DType::I32, RedOp::Max, &mut a, &bytes(&[3i32, -9]));
        assert_eq!(values::<i32>(&a), vec![3, 7]);
        let mut a = bytes(&[u64::MAX, 2]);
        reduce_into(DType::U64, RedOp::Prod, &mut a, &bytes(&[2u64, 3]));
        assert_eq!(values::<u64>(&a), vec![u64::MAX - 1, 6]);
        let mut a = bytes(&[i128::MIN, 1]);
        reduce_into(DType::I128, RedOp::Min, &mut a, &bytes(&[0i128, -1]));
        assert_eq!(values::<i128>(&a), vec![i128::MIN, -1]);
    }

    #[test]
    fn f16_rounds_after_each_step() {
        // 2048 + 1 is not representable in f16 (spacing 2 above 2048): each addition rounds
        // back to 2048 (ties to even), so three ranks give 2048, not 2050.
        let mut acc = bytes(&[f16::from_f32(2048.0)]);
        for _ in 0..2 {
            reduce_into(DType::F16, RedOp::Sum, &mut acc, &bytes(&[f16::ONE]));
        }
        assert_eq!(values::<f16>(&acc), vec![f16::from_f32(2048.0)]);
        // Accumulated in f32 and rounded once, the answer would be 2050.
        assert_eq!(f16::from_f32(2048.0 + 1.0 + 1.0), f16::from_f32(2050.0));
    }

    #[test]
    fn bf16_rounds_after_each_step() {
        // bf16 has 8 significant bits: 256 + 1 rounds back to 256.
        let mut acc = bytes(&[bf16::from_f32(256.0)]);
        for _ in 0..3 {
            reduce_into(DType::BF16, RedOp::Sum, &mut acc, &bytes(&[bf16::ONE]));
        }
        assert_eq!(values::<bf16>(&acc), vec![bf16::from_f32(256.0)]);
        let mut acc = bytes(&[bf16::from_f32(1.5)]);
        reduce_into(
            DType::BF16,
            RedOp::Prod,
            &mut acc,
            &bytes(&[bf16::from_f32(-2.0)]),
        );
        assert_eq!(values::<bf16>(&acc), vec![bf16::from_f32(-3.0)]);
    }

    #[test]
    fn float_max_min_propagate_nan() {
        let mut a = bytes(&[1.0f32, f32::NAN, -0.5]);
        reduce_into(
            DType::F32,
            RedOp::Max,
            &mut a,
            &bytes(&[f32::NAN, 2.0, -0.25]),
        );
        let v = values::<f32>(&a);
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(v[2], -0.25);
        let mut a = bytes(&[1.0f64, 4.0]);
        reduce_into(DType::F64, RedOp::Min, &mut a, &bytes(&[2.0f64, -4.0]));
        assert_eq!(values::<f64>(&a), vec![1.0, -4.0]);
    }

    #[test]
    fn unaligned_buffers_work() {
        let mut store = [0u8; 4 * 3 + 1];
        store[1..].copy_from_slice(&bytes(&[1u32, 2, 3]));
        let x = bytes(&[10u32, 20, 30]);
        reduce_into(DType::U32, RedOp::Sum, &mut store[1..], &x);
        assert_eq!(values::<u32>(&store[1..]), vec![11, 22, 33]);
    }

    #[test]
    fn every_path_agrees_with_the_scalar_one() {
        // Typed loops (aligned), element by element (offset by one byte), reversed operands and
        // three-operand forms give the same values for every type and operation.
        let n = 37;
        for t in DType::ALL.into_iter().filter(|t| supports(*t)) {
            for op in RedOp::ALL {
                let es = t.size();
                let a: Vec<u8> = (0..n * es).map(|i| (i * 7 + 3) as u8 % 61).collect();
                let b: Vec<u8> = (0..n * es).map(|i| (i * 13 + 5) as u8 % 59).collect();
                let mut want = a.clone();
                reduce_into(t, op, &mut want, &b);
                let mut shifted = vec![0u8; n * es + 1];
                shifted[1..].copy_from_slice(&a);
                reduce_into(t, op, &mut shifted[1..], &b);
                assert_eq!(&shifted[1..], &want[..], "{} {}", t.name(), op.name());
                let mut rev = b.clone();
                reduce_into_rev(t, op, &mut rev, &a);
                let mut out = vec![0u8; n * es];
                reduce_to(t, op, &mut out, &a, &b);
                let same = |x: &[u8], y: &[u8]| {
                    // NaNs may differ in payload between paths: compare as values.
                    x == y || matches!(t, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
                };
                assert!(same(&rev, &want), "rev {} {}", t.name(), op.name());
                assert!(same(&out, &want), "to {} {}", t.name(), op.name());
            }
        }
    }

    #[test]
    fn reduce_all_folds_in_rank_order() {
        let ins = [bytes(&[1.0f32]), bytes(&[1e8f32]), bytes(&[-1e8f32])];
        let mut out = vec![0u8; 4];
        reduce_all(
            DType::F32,
            RedOp::Sum,
            &mut out,
            ins.iter().map(|v| v.as_slice()),
        );
        // (1 + 1e8) rounds to 1e8 in f32, then - 1e8 gives 0: the fixed order is visible.
        assert_eq!(values::<f32>(&out), vec![0.0]);
    }
}
