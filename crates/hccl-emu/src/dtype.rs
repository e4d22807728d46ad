//! Data types and reduce operations: their sizes and names, and which of them each chip's
//! library accepts (the A2/A3 tables by default, Ascend 950's when the emulated SoC is one).

use crate::error::*;
use hccl_sys::*;

/// An element type of `hccl_types.h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `HCCL_DATA_TYPE_INT8`
    I8,
    /// `HCCL_DATA_TYPE_INT16`
    I16,
    /// `HCCL_DATA_TYPE_INT32`
    I32,
    /// `HCCL_DATA_TYPE_FP16`
    F16,
    /// `HCCL_DATA_TYPE_FP32`
    F32,
    /// `HCCL_DATA_TYPE_INT64`
    I64,
    /// `HCCL_DATA_TYPE_UINT64`
    U64,
    /// `HCCL_DATA_TYPE_UINT8`
    U8,
    /// `HCCL_DATA_TYPE_UINT16`
    U16,
    /// `HCCL_DATA_TYPE_UINT32`
    U32,
    /// `HCCL_DATA_TYPE_FP64`
    F64,
    /// `HCCL_DATA_TYPE_BFP16` (bfloat16)
    BF16,
    /// `HCCL_DATA_TYPE_INT128`
    I128,
    /// `HCCL_DATA_TYPE_HIF8`
    Hif8,
    /// `HCCL_DATA_TYPE_FP8E4M3`
    Fp8E4M3,
    /// `HCCL_DATA_TYPE_FP8E5M2`
    Fp8E5M2,
    /// `HCCL_DATA_TYPE_FP8E8M0`
    Fp8E8M0,
}

impl DType {
    /// Every type the header lists, in value order.
    pub const ALL: [DType; 17] = [
        DType::I8,
        DType::I16,
        DType::I32,
        DType::F16,
        DType::F32,
        DType::I64,
        DType::U64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::F64,
        DType::BF16,
        DType::I128,
        DType::Hif8,
        DType::Fp8E4M3,
        DType::Fp8E5M2,
        DType::Fp8E8M0,
    ];

    /// The type of a raw `HcclDataType`, if the header defines it.
    pub fn from_raw(v: HcclDataType) -> Option<DType> {
        Some(match v {
            HCCL_DATA_TYPE_INT8 => DType::I8,
            HCCL_DATA_TYPE_INT16 => DType::I16,
            HCCL_DATA_TYPE_INT32 => DType::I32,
            HCCL_DATA_TYPE_FP16 => DType::F16,
            HCCL_DATA_TYPE_FP32 => DType::F32,
            HCCL_DATA_TYPE_INT64 => DType::I64,
            HCCL_DATA_TYPE_UINT64 => DType::U64,
            HCCL_DATA_TYPE_UINT8 => DType::U8,
            HCCL_DATA_TYPE_UINT16 => DType::U16,
            HCCL_DATA_TYPE_UINT32 => DType::U32,
            HCCL_DATA_TYPE_FP64 => DType::F64,
            HCCL_DATA_TYPE_BFP16 => DType::BF16,
            HCCL_DATA_TYPE_INT128 => DType::I128,
            HCCL_DATA_TYPE_HIF8 => DType::Hif8,
            HCCL_DATA_TYPE_FP8E4M3 => DType::Fp8E4M3,
            HCCL_DATA_TYPE_FP8E5M2 => DType::Fp8E5M2,
            HCCL_DATA_TYPE_FP8E8M0 => DType::Fp8E8M0,
            _ => return None,
        })
    }

    /// The raw `HcclDataType`.
    pub fn raw(self) -> HcclDataType {
        match self {
            DType::I8 => HCCL_DATA_TYPE_INT8,
            DType::I16 => HCCL_DATA_TYPE_INT16,
            DType::I32 => HCCL_DATA_TYPE_INT32,
            DType::F16 => HCCL_DATA_TYPE_FP16,
            DType::F32 => HCCL_DATA_TYPE_FP32,
            DType::I64 => HCCL_DATA_TYPE_INT64,
            DType::U64 => HCCL_DATA_TYPE_UINT64,
            DType::U8 => HCCL_DATA_TYPE_UINT8,
            DType::U16 => HCCL_DATA_TYPE_UINT16,
            DType::U32 => HCCL_DATA_TYPE_UINT32,
            DType::F64 => HCCL_DATA_TYPE_FP64,
            DType::BF16 => HCCL_DATA_TYPE_BFP16,
            DType::I128 => HCCL_DATA_TYPE_INT128,
            DType::Hif8 => HCCL_DATA_TYPE_HIF8,
            DType::Fp8E4M3 => HCCL_DATA_TYPE_FP8E4M3,
            DType::Fp8E5M2 => HCCL_DATA_TYPE_FP8E5M2,
            DType::Fp8E8M0 => HCCL_DATA_TYPE_FP8E8M0,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Hif8 => 1,
            DType::Fp8E4M3 | DType::Fp8E5M2 | DType::Fp8E8M0 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
            DType::I128 => 16,
        }
    }

    /// The name without the `HCCL_DATA_TYPE_` prefix.
    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "INT8",
            DType::I16 => "INT16",
            DType::I32 => "INT32",
            DType::F16 => "FP16",
            DType::F32 => "FP32",
            DType::I64 => "INT64",
            DType::U64 => "UINT64",
            DType::U8 => "UINT8",
            DType::U16 => "UINT16",
            DType::U32 => "UINT32",
            DType::F64 => "FP64",
            DType::BF16 => "BFP16",
            DType::I128 => "INT128",
            DType::Hif8 => "HIF8",
            DType::Fp8E4M3 => "FP8E4M3",
            DType::Fp8E5M2 => "FP8E5M2",
            DType::Fp8E8M0 => "FP8E8M0",
        }
    }
}

/// A reduce operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedOp {
    /// `HCCL_REDUCE_SUM`
    Sum,
    /// `HCCL_REDUCE_PROD`
    Prod,
    /// `HCCL_REDUCE_MAX`
    Max,
    /// `HCCL_REDUCE_MIN`
    Min,
}

impl RedOp {
    /// Every operation, in value order.
    pub const ALL: [RedOp; 4] = [RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min];

    /// The operation of a raw `HcclReduceOp`.
    pub fn from_raw(v: HcclReduceOp) -> Option<RedOp> {
        Some(match v {
            HCCL_REDUCE_SUM => RedOp::Sum,
            HCCL_REDUCE_PROD => RedOp::Prod,
            HCCL_REDUCE_MAX => RedOp::Max,
            HCCL_REDUCE_MIN => RedOp::Min,
            _ => return None,
        })
    }

    /// The raw `HcclReduceOp`.
    pub fn raw(self) -> HcclReduceOp {
        match self {
            RedOp::Sum => HCCL_REDUCE_SUM,
            RedOp::Prod => HCCL_REDUCE_PROD,
            RedOp::Max => HCCL_REDUCE_MAX,
            RedOp::Min => HCCL_REDUCE_MIN,
        }
    }

    /// The name without the `HCCL_REDUCE_` prefix.
    pub fn name(self) -> &'static str {
        match self {
            RedOp::Sum => "SUM",
            RedOp::Prod => "PROD",
            RedOp::Max => "MAX",
            RedOp::Min => "MIN",
        }
    }
}

/// Which chip's library the emulator answers as, for the tables of accepted types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Personality {
    /// Atlas A2 / A3 (910B, 910_93) and the older chips: the default.
    A2A3,
    /// Ascend 950: more reducible types, FP8 data movement.
    A950,
}

impl Personality {
    /// The personality of the emulated SoC (`ASCENDCL_EMU_SOC`): Ascend 950 for an `Ascend950*`
    /// SoC name, A2/A3 otherwise.
    pub fn current() -> Personality {
        if ascendcl_emu::config().soc.starts_with("Ascend950") {
            Personality::A950
        } else {
            Personality::A2A3
        }
    }

    /// Whether a data-movement operation accepts `t`.
    pub fn moves(self, t: DType) -> bool {
        match t {
            DType::I128 => false,
            DType::Hif8 | DType::Fp8E4M3 | DType::Fp8E5M2 | DType::Fp8E8M0 => {
                self == Personality::A950
            }
            _ => true,
        }
    }

    /// Whether a reducing operation accepts `t` at all.
    pub fn reduces(self, t: DType) -> bool {
        match t {
            DType::I8 | DType::I16 | DType::I32 | DType::F16 | DType::F32 | DType::I64 => true,
            DType::BF16 => true,
            DType::U64 | DType::F64 => self == Personality::A950,
            _ => false,
        }
    }

    /// Whether a reducing operation accepts `op` on `t` (after [`Personality::reduces`]).
    pub fn reduces_with(self, t: DType, op: RedOp) -> bool {
        !(op == RedOp::Prod && matches!(t, DType::I16 | DType::BF16))
    }

    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Personality::A2A3 => "Atlas A2/A3",
            Personality::A950 => "Ascend 950",
        }
    }
}

/// Checks the data type of a data-movement operation (E_NOT_SUPPORT when refused).
pub(crate) fn check_move(raw: HcclDataType) -> R<DType> {
    let p = Personality::current();
    match DType::from_raw(raw) {
        Some(t) if p.moves(t) => Ok(t),
        Some(t) => fail(
            HCCL_E_NOT_SUPPORT,
            format!(
                "dataType {} ({raw}) is not supported by {} collectives",
                t.name(),
                p.name()
            ),
        ),
        None => fail(
            HCCL_E_NOT_SUPPORT,
            format!("dataType {raw} is not an HcclDataType"),
        ),
    }
}

/// Checks the data type and operation of a reducing operation, in the library's order: the
/// type, the operation, then the pair (E_NOT_SUPPORT for each).
pub(crate) fn check_reduce(raw: HcclDataType, op: HcclReduceOp) -> R<(DType, RedOp)> {
    let p = Personality::current();
    let t = match DType::from_raw(raw) {
        Some(t) if p.reduces(t) => t,
        Some(t) => {
            return fail(
                HCCL_E_NOT_SUPPORT,
                format!(
                    "dataType {} ({raw}) cannot be reduced on {} (reducible: INT8, INT16, INT32, \
                     INT64, FP16, FP32, BFP16{})",
                    t.name(),
                    p.name(),
                    if p == Personality::A950 {
                        ", UINT64, FP64"
                    } else {
                        ""
                    }
                ),
            );
        }
        None => {
            return fail(
                HCCL_E_NOT_SUPPORT,
                format!("dataType {raw} is not an HcclDataType"),
            );
        }
    };
    let Some(o) = RedOp::from_raw(op) else {
        return fail(
            HCCL_E_NOT_SUPPORT,
            format!("op {op} is not an HcclReduceOp (SUM 0, PROD 1, MAX 2, MIN 3)"),
        );
    };
    if !p.reduces_with(t, o) {
        return fail(
            HCCL_E_NOT_SUPPORT,
            format!(
                "{} of {} is not supported on {}",
                o.name(),
                t.name(),
                p.name()
            ),
        );
    }
    Ok((t, o))
}
