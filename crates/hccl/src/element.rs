//! Element types and reduction operations of collectives, in place of raw `HcclDataType` and
//! `HcclReduceOp` integers.

use ascendcl::DeviceRepr;
use hccl_sys as sys;

mod sealed {
    pub trait Sealed {}
}

/// A type HCCL can move and reduce, with its `HcclDataType`. Sealed: implemented for `i8`,
/// `i16`, `i32`, `i64`, `i128`, `u8`, `u16`, `u32`, `u64`, `f32`, `f64`, the 8-bit float
/// formats [`Hif8`], [`Fp8E4M3`], [`Fp8E5M2`] and [`Fp8E8M0`] and, with the `half` feature,
/// `half::f16` and `half::bf16`: every data type of `hccl_types.h`.
///
/// Which types a library reduces (as opposed to moves) depends on the chip: a refused pair
/// comes back from the call as [`ResultCode::NotSupport`](crate::ResultCode::NotSupport).
pub trait Element: DeviceRepr + sealed::Sealed {
    /// The `HcclDataType`.
    const DATA_TYPE: sys::HcclDataType;
}

macro_rules! elements {
    ($($t:ty => $c:ident),* $(,)?) => { $(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DATA_TYPE: sys::HcclDataType = sys::$c;
        }
    )* };
}

elements! {
    i8 => HCCL_DATA_TYPE_INT8,
    i16 => HCCL_DATA_TYPE_INT16,
    i32 => HCCL_DATA_TYPE_INT32,
    i64 => HCCL_DATA_TYPE_INT64,
    i128 => HCCL_DATA_TYPE_INT128,
    u8 => HCCL_DATA_TYPE_UINT8,
    u16 => HCCL_DATA_TYPE_UINT16,
    u32 => HCCL_DATA_TYPE_UINT32,
    u64 => HCCL_DATA_TYPE_UINT64,
    f32 => HCCL_DATA_TYPE_FP32,
    f64 => HCCL_DATA_TYPE_FP64,
    Hif8 => HCCL_DATA_TYPE_HIF8,
    Fp8E4M3 => HCCL_DATA_TYPE_FP8E4M3,
    Fp8E5M2 => HCCL_DATA_TYPE_FP8E5M2,
    Fp8E8M0 => HCCL_DATA_TYPE_FP8E8M0,
}

macro_rules! byte_formats {
    ($($t:ident: $doc:literal;)*) => { $(
        #[doc = $doc]
        ///
        /// The raw byte: HCCL moves these values (on the chips that accept the type) and
        /// does not reduce them; this crate does no arithmetic on them either.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[repr(transparent)]
        pub struct $t(pub u8);

        // SAFETY: a transparent `u8`: one byte, no padding, every bit pattern a valid value.
        unsafe impl DeviceRepr for $t {}
    )* };
}

byte_formats! {
    Hif8: "An 8-bit HiFloat8 value (`HCCL_DATA_TYPE_HIF8`).";
    Fp8E4M3: "An 8-bit float with 4 exponent and 3 mantissa bits (`HCCL_DATA_TYPE_FP8E4M3`).";
    Fp8E5M2: "An 8-bit float with 5 exponent and 2 mantissa bits (`HCCL_DATA_TYPE_FP8E5M2`).";
    Fp8E8M0: "An 8-bit power-of-two scale, 8 exponent bits (`HCCL_DATA_TYPE_FP8E8M0`).";
}

#[cfg(feature = "half")]
elements! {
    ascendcl::half::f16 => HCCL_DATA_TYPE_FP16,
    ascendcl::half::bf16 => HCCL_DATA_TYPE_BFP16,
}

/// A reduction operation (`HcclReduceOp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Element-wise sum (`HCCL_REDUCE_SUM`).
    Sum,
    /// Element-wise product (`HCCL_REDUCE_PROD`).
    Prod,
    /// Element-wise maximum (`HCCL_REDUCE_MAX`).
    Max,
    /// Element-wise minimum (`HCCL_REDUCE_MIN`).
    Min,
}

impl ReduceOp {
    /// Every operation.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min];

    /// The raw `HcclReduceOp`.
    pub fn raw(self) -> sys::HcclReduceOp {
        match self {
            ReduceOp::Sum => sys::HCCL_REDUCE_SUM,
            ReduceOp::Prod => sys::HCCL_REDUCE_PROD,
            ReduceOp::Max => sys::HCCL_REDUCE_MAX,
            ReduceOp::Min => sys::HCCL_REDUCE_MIN,
        }
    }
}
