//! Reduction arithmetic on raw element bytes: sum, product, maximum and minimum for every
//! numeric data type, one rank's contribution at a time.
//!
//! Integers wrap on overflow. `f32` and `f64` use the machine's IEEE arithmetic; `f16` and
//! `bf16` compute each step exactly (in `f64`) and round the result to the element type, so a
//! reduction over n ranks rounds n − 1 times, as a device that accumulates in the element type
//! does. Maximum and minimum of floating-point values return NaN when either operand is NaN.
//! Elements are read and written with unaligned byte copies, so buffers of any alignment work.

use crate::dtype::{DType, RedOp};
use half::{bf16, f16};

/// An element type the arithmetic supports.
trait Elem: Copy {
    const SIZE: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
    fn combine(self, other: Self, op: RedOp) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().expect("element size"))
            }
            #[inline]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes());
            }
            #[inline]
            fn combine(self, o: Self, op: RedOp) -> Self {
                match op {
                    RedOp::Sum => self.wrapping_add(o),
                    RedOp::Prod => self.wrapping_mul(o),
                    RedOp::Max => self.max(o),
                    RedOp::Min => self.min(o),
                }
            }
        }
    )*};
}

int_elem!(i8, i16, i32, i64, i128, u8, u16, u32, u64);

/// Maximum or minimum of two floats, NaN when either is NaN.
#[inline]
fn float_pick(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if (b > a) == max {
        b
    } else {
        a
    }
}

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().expect("element size"))
            }
            #[inline]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes());
            }
            #[inline]
            fn combine(self, o: Self, op: RedOp) -> Self {
                match op {
                    RedOp::Sum => self + o,
                    RedOp::Prod => self * o,
                    RedOp::Max => float_pick(self as f64, o as f64, true) as $t,
                    RedOp::Min => float_pick(self as f64, o as f64, false) as $t,
                }
            }
        }
    )*};
}

float_elem!(f32, f64);

macro_rules! half_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = 2;
            #[inline]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().expect("element size"))
            }
            #[inline]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes());
            }
            #[inline]
            fn combine(self, o: Self, op: RedOp) -> Self {
                let (a, b) = (self.to_f64(), o.to_f64());
                // The exact sum or product of two 16-bit floats is representable in f64 (or
                // rounds there without changing the final rounding), so one rounding to the
                // element type follows.
                let r = match op {
                    RedOp::Sum => a + b,
                    RedOp::Prod => a * b,
                    RedOp::Max => float_pick(a, b, true),
                    RedOp::Min => float_pick(a, b, false),
                };
                <$t>::from_f64(r)
            }
        }
    )*};
}

half_elem!(f16, bf16);

fn fold<T: Elem>(acc: &mut [u8], x: &[u8], op: RedOp) {
    for (a, b) in acc.chunks_exact_mut(T::SIZE).zip(x.chunks_exact(T::SIZE)) {
        T::load(a).combine(T::load(b), op).store(a);
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

/// `acc[i] = acc[i] op x[i]` for every element of type `t`.
///
/// # Panics
/// When the lengths differ or are not a multiple of the element size, or `t` is not
/// [`supports`]ed: callers size both from one count.
pub fn reduce_into(t: DType, op: RedOp, acc: &mut [u8], x: &[u8]) {
    assert_eq!(acc.len(), x.len(), "reduce_into: lengths differ");
    assert_eq!(acc.len() % t.size(), 0, "reduce_into: partial element");
    match t {
        DType::I8 => fold::<i8>(acc, x, op),
        DType::I16 => fold::<i16>(acc, x, op),
        DType::I32 => fold::<i32>(acc, x, op),
        DType::I64 => fold::<i64>(acc, x, op),
        DType::I128 => fold::<i128>(acc, x, op),
        DType::U8 => fold::<u8>(acc, x, op),
        DType::U16 => fold::<u16>(acc, x, op),
        DType::U32 => fold::<u32>(acc, x, op),
        DType::U64 => fold::<u64>(acc, x, op),
        DType::F16 => fold::<f16>(acc, x, op),
        DType::BF16 => fold::<bf16>(acc, x, op),
        DType::F32 => fold::<f32>(acc, x, op),
        DType::F64 => fold::<f64>(acc, x, op),
        DType::Hif8 | DType::Fp8E4M3 | DType::Fp8E5M2 | DType::Fp8E8M0 => {
            panic!("reduce_into: {} is not reducible", t.name())
        }
    }
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
    if let Some(first) = it.next() {
        out.copy_from_slice(first);
    }
    for x in it {
        reduce_into(t, op, out, x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Elem>(v: &[T]) -> Vec<u8> {
        let mut b = vec![0u8; v.len() * T::SIZE];
        for (x, c) in v.iter().zip(b.chunks_exact_mut(T::SIZE)) {
            x.store(c);
        }
        b
    }

    fn values<T: Elem>(b: &[u8]) -> Vec<T> {
        b.chunks_exact(T::SIZE).map(T::load).collect()
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
