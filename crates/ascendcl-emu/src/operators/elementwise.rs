//! The plans of the element-wise operators: `out = self + alpha * other` (Add) and
//! `out = self * other` (Mul). The inputs broadcast against each other (trailing dimensions
//! aligned, a dimension of 1 stretched) to the output's shape; the arithmetic is done in the
//! promoted type of the inputs (a floating type over any integer one, the wider of two of a
//! kind), which the output's type must hold (no floating result into an integer tensor).

use super::status;
use super::tensor::{MAX_DIMS, Tensor};
use ascendcl_sys::*;

/// A value, widened: floating types as `f64`, integer and bool types as `i64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    F(f64),
    I(i64),
}

impl Num {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::F(f) => f,
            Num::I(i) => i as f64,
        }
    }

    pub(crate) fn as_i64(self) -> i64 {
        match self {
            Num::F(f) => f as i64,
            Num::I(i) => i,
        }
    }
}

/// The element size of a type the operators take.
pub(crate) fn elem_size(t: aclDataType) -> Option<usize> {
    Some(match t {
        ACL_INT8 | ACL_UINT8 | ACL_BOOL => 1,
        ACL_FLOAT16 | ACL_BF16 | ACL_INT16 => 2,
        ACL_FLOAT | ACL_INT32 => 4,
        ACL_INT64 | ACL_DOUBLE => 8,
        _ => return None,
    })
}

pub(crate) fn is_float(t: aclDataType) -> bool {
    matches!(t, ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 | ACL_DOUBLE)
}

/// A type's rank in promotion: floating above integer, wider above narrower.
fn order(t: aclDataType) -> u32 {
    match t {
        ACL_BOOL => 0,
        ACL_UINT8 => 1,
        ACL_INT8 => 2,
        ACL_INT16 => 3,
        ACL_INT32 => 4,
        ACL_INT64 => 5,
        ACL_FLOAT16 => 6,
        ACL_BF16 => 7,
        ACL_FLOAT => 8,
        _ => 9,
    }
}

/// The type two inputs promote to.
pub(crate) fn promote(a: aclDataType, b: aclDataType) -> aclDataType {
    if (a == ACL_FLOAT16 && b == ACL_BF16) || (a == ACL_BF16 && b == ACL_FLOAT16) {
        return ACL_FLOAT;
    }
    if order(a) >= order(b) { a } else { b }
}

/// What an operator computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Add { alpha: Num },
    Mul,
}

/// One operand as the plan walks it: its address, offset and strides aligned to the output's
/// dimensions (0 where it broadcasts), in elements.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct View {
    pub data: usize,
    pub offset: i64,
    pub strides: Vec<i64>,
    pub dtype: aclDataType,
}

impl View {
    /// The bytes `[first, end)` the view reaches over `shape`, from its data address.
    pub(crate) fn extent(&self, shape: &[i64]) -> (usize, usize) {
        let es = elem_size(self.dtype).unwrap_or(1) as i64;
        let last: i64 = shape
            .iter()
            .zip(&self.strides)
            .map(|(d, s)| (d - 1).max(0) * s)
            .sum();
        let first = self.data as i64 + self.offset * es;
        (first as usize, (first + last * es + es) as usize)
    }
}

/// An operator's plan: everything its launch needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub name: &'static str,
    pub op: Op,
    pub a: View,
    pub b: View,
    pub out: View,
    /// The output's shape.
    pub shape: Vec<i64>,
    /// Computed in floating point (else in 64-bit integers).
    pub float: bool,
}

/// A refused argument: the `aclnnStatus` and why.
pub(crate) type Refusal = (i32, String);

fn invalid<T>(msg: impl Into<String>) -> Result<T, Refusal> {
    Err((status::PARAM_INVALID, msg.into()))
}

fn check_tensor(what: &str, t: &Tensor) -> Result<(), Refusal> {
    if elem_size(t.dtype).is_none() {
        return invalid(format!(
            "{what}'s data type {} is not one the operator takes (float, float16, bfloat16, double, int8, int16, int32, int64, uint8, bool)",
            t.dtype
        ));
    }
    if t.shape.len() > MAX_DIMS {
        return invalid(format!(
            "{what} has {} dims, more than {MAX_DIMS}",
            t.shape.len()
        ));
    }
    if t.shape.iter().any(|&d| d < 0) || t.strides.iter().any(|&s| s < 0) || t.offset < 0 {
        return invalid(format!("{what} has a negative dim, stride or offset"));
    }
    let elements: i64 = t.shape.iter().product();
    if t.data == 0 && elements > 0 {
        return invalid(format!("{what} has no data"));
    }
    // The view stays within its storage (element-wise operators ignore the format).
    let last = t.offset
        + t.shape
            .iter()
            .zip(&t.strides)
            .map(|(d, s)| (d - 1).max(0) * s)
            .sum::<i64>();
    let stored: i64 = t.storage.iter().product();
    if elements > 0 && !t.storage.is_empty() && last >= stored {
        return invalid(format!(
            "{what}'s view reaches element {last}, past its storage of {stored} elements ({:?})",
            t.storage
        ));
    }
    Ok(())
}

/// The shape two shapes broadcast to.
pub(crate) fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], i: usize| {
        let k = n - i;
        if k > s.len() { 1 } else { s[s.len() - k] }
    };
    (0..n)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// `t` walked over `shape` (which it broadcasts to).
fn view(t: &Tensor, shape: &[i64]) -> View {
    let pad = shape.len() - t.shape.len();
    let strides = (0..shape.len())
        .map(|i| {
            if i < pad || (t.shape[i - pad] == 1 && shape[i] != 1) {
                0
            } else {
                t.strides[i - pad]
            }
        })
        .collect();
    View {
        data: t.data,
        offset: t.offset,
        strides,
        dtype: t.dtype,
    }
}

fn plan(name: &'static str, op: Op, a: &Tensor, b: &Tensor, out: &Tensor) -> Result<Plan, Refusal> {
    check_tensor("self", a)?;
    check_tensor("other", b)?;
    check_tensor("out", out)?;
    let Some(shape) = broadcast(&a.shape, &b.shape) else {
        return invalid(format!(
            "the shapes of self {:?} and other {:?} do not broadcast",
            a.shape, b.shape
        ));
    };
    if shape != out.shape {
        return invalid(format!(
            "out's shape {:?} is not the broadcast shape {shape:?} of self and other",
            out.shape
        ));
    }
    let promoted = promote(a.dtype, b.dtype);
    if is_float(promoted) && !is_float(out.dtype) {
        return invalid(format!(
            "out's data type {} cannot hold the floating result (type {promoted})",
            out.dtype
        ));
    }
    Ok(Plan {
        name,
        op,
        a: view(a, &shape),
        b: view(b, &shape),
        out: view(out, &shape),
        shape,
        float: is_float(promoted) || is_float(out.dtype),
    })
}

/// `aclnnAddGetWorkspaceSize`'s checks and plan.
pub(crate) fn plan_add(
    a: &Tensor,
    b: &Tensor,
    alpha: super::tensor::Scalar,
    out: &Tensor,
) -> Result<Plan, Refusal> {
    let p = plan("Add", Op::Add { alpha: alpha.value }, a, b, out)?;
    if !p.float && is_float(alpha.dtype) && alpha.value.as_f64().fract() != 0.0 {
        return invalid(format!(
            "alpha {} is not an integer, and self and other promote to an integer type",
            alpha.value.as_f64()
        ));
    }
    Ok(p)
}

/// `aclnnMulGetWorkspaceSize`'s checks and plan.
pub(crate) fn plan_mul(a: &Tensor, b: &Tensor, out: &Tensor) -> Result<Plan, Refusal> {
    plan("Mul", Op::Mul, a, b, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[i64], dtype: aclDataType) -> Tensor {
        let mut strides = vec![1i64; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        Tensor {
            shape: shape.to_vec(),
            strides,
            offset: 0,
            dtype,
            storage: shape.to_vec(),
            data: 0x1000,
        }
    }

    #[test]
    fn shapes_broadcast_as_numpy_does() {
        assert_eq!(broadcast(&[4, 2], &[2]), Some(vec![4, 2]));
        assert_eq!(broadcast(&[4, 1], &[1, 3]), Some(vec![4, 3]));
        assert_eq!(broadcast(&[], &[3]), Some(vec![3]));
        assert_eq!(broadcast(&[4, 2], &[3]), None);
    }

    #[test]
    fn a_plan_checks_shapes_and_types() {
        let f = |s: &[i64]| t(s, ACL_FLOAT);
        let p = plan_mul(&f(&[4, 2]), &f(&[2]), &f(&[4, 2])).unwrap();
        assert_eq!(
            p.b.strides,
            vec![0, 1],
            "other broadcasts along the first dim"
        );
        assert_eq!(p.shape, vec![4, 2]);
        assert_eq!(
            plan_mul(&f(&[4, 2]), &f(&[3]), &f(&[4, 2])).unwrap_err().0,
            status::PARAM_INVALID
        );
        assert_eq!(
            plan_mul(&f(&[4, 2]), &f(&[2]), &f(&[8])).unwrap_err().0,
            status::PARAM_INVALID
        );
        let int = t(&[2], ACL_INT32);
        assert!(
            plan_mul(&int, &f(&[2]), &int).is_err(),
            "a float result into int32"
        );
        assert!(
            plan_mul(&int, &int, &f(&[2])).is_ok(),
            "an int result into float"
        );
        assert!(plan_mul(&t(&[2], ACL_COMPLEX64), &f(&[2]), &f(&[2])).is_err());
        let alpha = super::super::tensor::Scalar {
            dtype: ACL_FLOAT,
            value: Num::F(0.5),
        };
        assert!(
            plan_add(&int, &int, alpha, &int).is_err(),
            "a fractional alpha on ints"
        );
        assert!(plan_add(&f(&[2]), &f(&[2]), alpha, &f(&[2])).unwrap().float);
        assert_eq!(promote(ACL_FLOAT16, ACL_BF16), ACL_FLOAT);
        assert_eq!(promote(ACL_INT8, ACL_INT32), ACL_INT32);
    }

    #[test]
    fn a_views_extent_covers_its_last_element() {
        let mut x = t(&[4, 2], ACL_FLOAT);
        x.offset = 2;
        let v = view(&x, &[4, 2]);
        assert_eq!(v.extent(&[4, 2]), (0x1000 + 8, 0x1000 + 8 + 8 * 4));
    }
}
