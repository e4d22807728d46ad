//! Built-in device tasks: `aclrtReduceAsync` and `aclrtRandomNumAsync`.

use super::*;
use crate::builtin;
use crate::builtin::work::{RandomJob, Reduce, Scalar};
use crate::memory;

/// The types `aclrtReduceAsync` accepts at all (the ACL layer) and those the emulated SoCs
/// (Atlas A2/A3) support.
fn reduce_type(t: aclDataType) -> R<()> {
    match t {
        ACL_FLOAT | ACL_FLOAT16 | ACL_INT16 | ACL_INT8 | ACL_INT32 | ACL_BF16 => Ok(()),
        ACL_INT4 | ACL_UINT8 | ACL_UINT16 | ACL_UINT32 => fail(
            RT_FEATURE_NOT_SUPPORT,
            format!(
                "type {t} is not supported by reductions on this SoC (int8, int16, int32, fp16, fp32, bf16 are)"
            ),
        ),
        t => fail(
            INVALID_PARAM,
            format!("type {t} is not a reduction data type"),
        ),
    }
}

/// Validates `[p, p+len)` as device memory (107000 otherwise).
fn device_range(what: &str, p: usize, len: usize) -> R<memory::Side> {
    let side = memory::read().check(what, p, len)?;
    match side.loc {
        Loc::Device(_) => Ok(side),
        _ => fail(
            RT_PARAM_INVALID,
            format!("{what} {p:#x} is not device memory"),
        ),
    }
}

acl! {
    /// `aclrtReduceAsync`: a stream task computing `dst[i] = dst[i] OP src[i]` over `count`
    /// bytes of elements of `type_`: `ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM` (10), `MAX` (11), `MIN`
    /// (12), `EQUAL` (13: 1 where equal, 0 elsewhere). `dst` and `src` are device memory of the
    /// stream's device; `reserve` must be NULL.
    fn aclrtReduceAsync(dst: *mut c_void, src: *const c_void, count: u64, kind: aclrtReduceKind, type_: aclDataType, stream: aclrtStream, reserve: *mut c_void) {
        if dst.is_null() || src.is_null() {
            return fail(INVALID_PARAM, "dst or src is NULL");
        }
        if !reserve.is_null() {
            return fail(INVALID_PARAM, "reserve must be NULL");
        }
        let elem = match type_ {
            ACL_FLOAT | ACL_FLOAT16 | ACL_INT16 | ACL_INT4 | ACL_INT8 | ACL_INT32 | ACL_BF16
            | ACL_UINT8 | ACL_UINT16 | ACL_UINT32 => builtin::element_size(type_).unwrap_or(1),
            t => return fail(INVALID_PARAM, format!("type {t} is not a reduction data type")),
        };
        if count == 0 {
            return fail(RT_PARAM_INVALID, "count is 0");
        }
        if !(ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM..=ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL).contains(&kind) {
            return fail(RT_PARAM_INVALID, format!("kind {kind} is not SUM (10), MAX (11), MIN (12) or EQUAL (13)"));
        }
        if kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM && count > 4 << 30 {
            return fail(RT_PARAM_INVALID, format!("count {count} exceeds 4 GiB for SUM"));
        }
        reduce_type(type_)?;
        let len = usize::try_from(count).map_err(|_| Fail { code: RT_PARAM_INVALID, msg: "count overflows".to_string() })?;
        if len % elem != 0 {
            return fail(RT_PARAM_INVALID, format!("count {count} is not a multiple of the element size {elem}"));
        }
        let s = crate::stream::get(handle(stream))?;
        crate::stream::check_context(&s)?;
        let d_side = device_range("dst", dst as usize, len)?;
        let s_side = device_range("src", src as usize, len)?;
        for side in [d_side, s_side] {
            if side.loc != Loc::Device(s.device) {
                return fail(RT_PARAM_INVALID, format!("dst, src and the stream must be on one device ({})", s.device));
            }
        }
        s.enqueue(Reduce { dst: dst as usize, src: src as usize, len, kind, dtype: type_, sides: [d_side, s_side] })
    }
}

/// Reads a scalar parameter: inline (`isAddr` 0, `size` bytes in [1, max]) or a device address
/// (`isAddr` 1) holding `size` bytes.
fn scalar(what: &str, p: &aclrtRandomParaInfo, max: usize) -> R<Scalar> {
    let size = usize::from(p.size);
    match p.isAddr {
        0 | 1 if size == 0 || size > if p.isAddr == 1 { 8 } else { max } => fail(
            RT_PARAM_INVALID,
            format!(
                "{what}.size {size} is outside 1..={}",
                if p.isAddr == 1 { 8 } else { max }
            ),
        ),
        0 => Ok(Scalar {
            addr: None,
            bytes: p.valueOrAddr,
            size,
        }),
        1 => {
            let addr = u64::from_le_bytes(p.valueOrAddr) as usize;
            let side = device_range(what, addr, size.min(max).max(1))?;
            Ok(Scalar {
                addr: Some((addr, side)),
                bytes: [0; 8],
                size: size.min(max),
            })
        }
        other => fail(
            RT_PARAM_INVALID,
            format!("{what}.isAddr {other} is not 0 or 1"),
        ),
    }
}

acl! {
    /// `aclrtRandomNumAsync`: a stream task writing `randomNum` random values of `dataType` to
    /// `randomResultAddr` with Philox4x32-10 keyed by `randomSeed` at the 128-bit offset held in
    /// device memory at `randomCounterAddr` (advanced by the blocks drawn, so that the next task
    /// continues the sequence): dropout bitmask (one bit per value, set with probability
    /// 1 - ratio), uniform in [min, max), normal, truncated normal (within two standard
    /// deviations). The same seed and offset give the same numbers.
    fn aclrtRandomNumAsync(taskInfo: *const aclrtRandomNumTaskInfo, stream: aclrtStream, reserve: *mut c_void) {
        if taskInfo.is_null() {
            return fail(INVALID_PARAM, "taskInfo is NULL");
        }
        // SAFETY: a non-NULL taskInfo points to a task description (C contract).
        let t = unsafe { &*taskInfo };
        let dtype = t.dataType;
        if !matches!(dtype, ACL_BF16 | ACL_FLOAT16 | ACL_FLOAT | ACL_INT32 | ACL_INT64 | ACL_UINT32 | ACL_UINT64) {
            return fail(INVALID_PARAM, format!("dataType {dtype} is not bf16, fp16, fp32, int32, int64, uint32 or uint64"));
        }
        if !reserve.is_null() {
            return fail(RT_PARAM_INVALID, "reserve must be NULL");
        }
        let func = t.randomNumFuncParaInfo.funcType;
        let float = matches!(dtype, ACL_BF16 | ACL_FLOAT16 | ACL_FLOAT);
        match func {
            ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS => {}
            ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK | ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS
            | ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS if float => {}
            f if f > ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS => {
                return fail(RT_PARAM_INVALID, format!("funcType {f} is not a random function"));
            }
            f => return fail(RT_PARAM_INVALID, format!("funcType {f} needs bf16, fp16 or fp32, not type {dtype}")),
        }
        if t.randomCounterAddr.is_null() || t.randomResultAddr.is_null() {
            return fail(RT_PARAM_INVALID, "randomCounterAddr or randomResultAddr is NULL");
        }
        let seed = scalar("randomSeed", &t.randomSeed, 8)?;
        let num = scalar("randomNum", &t.randomNum, 8)?;
        let elem = builtin::element_size(dtype).unwrap_or(4);
        // SAFETY: the union member of each function type is plain bytes, all of them valid.
        let params = unsafe {
            let p = &t.randomNumFuncParaInfo.paramInfo;
            match func {
                ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK => {
                    let r = scalar("dropoutRation", &p.dropoutBitmaskInfo.dropoutRation, elem)?;
                    [r, r]
                }
                ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS => [
                    scalar("min", &p.uniformDisInfo.min, elem)?,
                    scalar("max", &p.uniformDisInfo.max, elem)?,
                ],
                _ => [
                    scalar("mean", &p.normalDisInfo.mean, elem)?,
                    scalar("stddev", &p.normalDisInfo.stddev, elem)?,
                ],
            }
        };
        let s = crate::stream::get(handle(stream))?;
        crate::stream::check_context(&s)?;
        // The count is read now to size the result (a count in device memory as well).
        let n = {
            let b = num.addr.map_or(num.bytes, |(a, side)| {
                let mut b = [0u8; 8];
                // SAFETY: validated as num.size bytes of device memory just above.
                unsafe { memory::access::read(a, side, &mut b[..num.size]) };
                b
            });
            let mut w = [0u8; 8];
            w[..num.size].copy_from_slice(&b[..num.size]);
            u64::from_le_bytes(w) as usize
        };
        let result_len = if func == ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK { n.div_ceil(8) } else { n.saturating_mul(elem) };
        let r_side = device_range("randomResultAddr", t.randomResultAddr as usize, result_len.max(1))?;
        let c_side = device_range("randomCounterAddr", t.randomCounterAddr as usize, 16)?;
        s.enqueue(RandomJob {
            dtype,
            func,
            params,
            seed,
            num,
            result: t.randomResultAddr as usize,
            result_len,
            counter: t.randomCounterAddr as usize,
            sides: [r_side, c_side],
        })
    }
}
