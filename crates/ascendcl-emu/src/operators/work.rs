//! The element-wise plans as stream work: each output element computed from the two inputs' at
//! the same (broadcast) index, in the promoted type, when the stream reaches the task. The inputs
//! are read whole before the output is written, so an output may alias an input.

use super::elementwise::{Num, Op, Plan, View, elem_size};
use crate::base::error::*;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Side, Work};
use crate::memory::access;
use ascendcl_sys::*;
use half::{bf16, f16};

/// A plan queued on a stream; replayable (a captured model runs it at every execution).
#[derive(Debug)]
pub(crate) struct Elementwise {
    pub plan: Plan,
    pub sides: [Side; 3],
}

impl Work for Elementwise {
    fn memory(&self) -> &[Side] {
        &self.sides
    }

    fn run(&self, _: &Cx<'_>) -> R {
        let p = &self.plan;
        let [sa, sb, so] = self.sides;
        let a = read_all(&p.a, &p.shape, sa);
        let b = read_all(&p.b, &p.shape, sb);
        let values = a.iter().zip(&b).map(|(&x, &y)| match (p.op, p.float) {
            (Op::Add { alpha }, true) => Num::F(x.as_f64() + alpha.as_f64() * y.as_f64()),
            (Op::Add { alpha }, false) => Num::I(
                x.as_i64()
                    .wrapping_add(alpha.as_i64().wrapping_mul(y.as_i64())),
            ),
            (Op::Mul, true) => Num::F(x.as_f64() * y.as_f64()),
            (Op::Mul, false) => Num::I(x.as_i64().wrapping_mul(y.as_i64())),
        });
        let offsets: Vec<usize> = offsets(&p.out, &p.shape).collect();
        for (at, v) in offsets.into_iter().zip(values) {
            store(access::ptr(at, so) as usize, p.out.dtype, v);
        }
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "aclnn"
    }

    fn describe(&self) -> Task {
        let name = match self.plan.op {
            Op::Add { .. } => "aclnnAdd",
            Op::Mul => "aclnnMul",
        };
        let elements: i64 = self.plan.shape.iter().map(|&d| d.max(0)).product();
        Task::new(name, "kernel").num("elements", elements as u64)
    }
}

/// The address of every element of `v` over `shape`, in row-major order of the output.
fn offsets<'a>(v: &'a View, shape: &'a [i64]) -> impl Iterator<Item = usize> + 'a {
    let es = elem_size(v.dtype).unwrap_or(1) as i64;
    let total: usize = shape.iter().map(|&d| d.max(0) as usize).product();
    let mut idx = vec![0i64; shape.len()];
    (0..total).map(move |n| {
        if n > 0 {
            // The next index, row-major.
            for k in (0..shape.len()).rev() {
                idx[k] += 1;
                if idx[k] < shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        let e: i64 = v.offset + idx.iter().zip(&v.strides).map(|(i, s)| i * s).sum::<i64>();
        (v.data as i64 + e * es) as usize
    })
}

/// The elements of `v` (validated as `side`), read through the emulator's view of device memory.
fn read_all(v: &View, shape: &[i64], side: Side) -> Vec<Num> {
    offsets(v, shape)
        .map(|at| load(access::ptr(at, side) as usize, v.dtype))
        .collect()
}

/// One element of device memory (at the address the emulator's code reaches it by, see
/// [`access::ptr`]), widened.
fn load(at: usize, t: aclDataType) -> Num {
    // SAFETY: every element's address lies in the view's extent, validated as live device
    // memory of the stream's device when the work was queued (and checked live again before it
    // runs); unaligned reads, since a view's offset is the user's.
    unsafe {
        match t {
            ACL_FLOAT => Num::F(f64::from((at as *const f32).read_unaligned())),
            ACL_DOUBLE => Num::F((at as *const f64).read_unaligned()),
            ACL_FLOAT16 => Num::F(f64::from(f16::from_bits(
                (at as *const u16).read_unaligned(),
            ))),
            ACL_BF16 => Num::F(f64::from(bf16::from_bits(
                (at as *const u16).read_unaligned(),
            ))),
            ACL_INT8 => Num::I(i64::from((at as *const i8).read_unaligned())),
            ACL_UINT8 | ACL_BOOL => Num::I(i64::from((at as *const u8).read_unaligned())),
            ACL_INT16 => Num::I(i64::from((at as *const i16).read_unaligned())),
            ACL_INT32 => Num::I(i64::from((at as *const i32).read_unaligned())),
            _ => Num::I((at as *const i64).read_unaligned()),
        }
    }
}

/// Stores `v` as type `t` (floats rounded to nearest, integers truncated and wrapped, bool as
/// zero or one).
fn store(at: usize, t: aclDataType, v: Num) {
    // SAFETY: as for `load`: the output's extent was validated as live device memory.
    unsafe {
        match t {
            ACL_FLOAT => (at as *mut f32).write_unaligned(v.as_f64() as f32),
            ACL_DOUBLE => (at as *mut f64).write_unaligned(v.as_f64()),
            ACL_FLOAT16 => (at as *mut u16).write_unaligned(f16::from_f64(v.as_f64()).to_bits()),
            ACL_BF16 => (at as *mut u16).write_unaligned(bf16::from_f64(v.as_f64()).to_bits()),
            ACL_INT8 => (at as *mut i8).write_unaligned(v.as_i64() as i8),
            ACL_UINT8 => (at as *mut u8).write_unaligned(v.as_i64() as u8),
            ACL_BOOL => (at as *mut u8).write_unaligned(u8::from(v.as_f64() != 0.0)),
            ACL_INT16 => (at as *mut i16).write_unaligned(v.as_i64() as i16),
            ACL_INT32 => (at as *mut i32).write_unaligned(v.as_i64() as i32),
            _ => (at as *mut i64).write_unaligned(v.as_i64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::elementwise::View;
    use super::*;

    #[test]
    fn offsets_walk_a_broadcast_view_row_major() {
        let v = View {
            data: 0,
            offset: 1,
            strides: vec![0, 1],
            dtype: ACL_FLOAT,
        };
        let got: Vec<usize> = offsets(&v, &[2, 3]).collect();
        assert_eq!(got, vec![4, 8, 12, 4, 8, 12]);
    }

    #[test]
    fn values_round_trip_through_each_type() {
        let mut buf = [0u8; 8];
        let at = buf.as_mut_ptr() as usize;
        for (t, v) in [
            (ACL_FLOAT, Num::F(1.5)),
            (ACL_FLOAT16, Num::F(-2.5)),
            (ACL_BF16, Num::F(3.0)),
            (ACL_INT32, Num::I(-7)),
            (ACL_INT64, Num::I(1 << 40)),
            (ACL_UINT8, Num::I(200)),
        ] {
            store(at, t, v);
            assert_eq!(load(at, t), v, "type {t}");
        }
    }
}
