//! The operator library's functions the runtime samples call (the `operators` concept):
//! `aclCreateTensor`, `aclCreateScalar`, `aclDestroy{Tensor,Scalar}`, `aclnnAdd` and `aclnnMul`
//! with their `…GetWorkspaceSize`. Their status codes are `aclnnStatus` (161001 a NULL argument,
//! 161002 an invalid one, 361001 a failed runtime call), their messages go to
//! `aclGetRecentErrMsg` as the runtime's do. The C library exports them under their names
//! (lib64/libopapi.so and libnnopbase.so of the emulator root link to it).

use super::*;
use crate::operators::elementwise::{self, Num, Plan};
use crate::operators::status;
use crate::operators::tensor::{self, Executor, MAX_DIMS, Object, Scalar, Tensor};
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs a call that returns a handle: NULL, the failure recorded, when it fails or panics.
fn handle_or_null<T>(api: &'static str, f: impl FnOnce() -> R<usize>) -> *mut T {
    let run = move || match f() {
        Ok(h) => h as *mut T,
        Err(e) => {
            record(api, e);
            std::ptr::null_mut()
        }
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| {
        panicked(api, p.as_ref());
        std::ptr::null_mut()
    })
}

fn null(what: &str) -> Fail {
    Fail {
        code: status::PARAM_NULLPTR,
        msg: format!("{what} is NULL"),
    }
}

fn invalid(msg: impl Into<String>) -> Fail {
    Fail {
        code: status::PARAM_INVALID,
        msg: msg.into(),
    }
}

/// `n` values at `p` (NULL with 0 is no values).
///
/// # Safety
/// `p` is NULL or valid for `n` reads.
unsafe fn dims<'a>(p: *const i64, n: u64, what: &str) -> R<&'a [i64]> {
    if n as usize > MAX_DIMS {
        return Err(invalid(format!(
            "{what} has {n} dims, more than {MAX_DIMS}"
        )));
    }
    match (p.is_null(), n) {
        (_, 0) => Ok(&[]),
        (true, _) => Err(null(what)),
        // SAFETY: the caller's contract.
        (false, n) => Ok(unsafe { std::slice::from_raw_parts(p, n as usize) }),
    }
}

/// `aclCreateTensor`: a view of `viewDimsNum` dims (strides in elements; NULL strides are the
/// contiguous ones) at `offset` elements from `tensorData`, with its storage shape; NULL on a
/// bad argument.
///
/// # Safety
/// The pointers are NULL or valid for their counts.
pub unsafe extern "C" fn aclCreateTensor(
    viewDims: *const i64,
    viewDimsNum: u64,
    dataType: aclDataType,
    stride: *const i64,
    offset: i64,
    format: aclFormat,
    storageDims: *const i64,
    storageDimsNum: u64,
    tensorData: *mut c_void,
) -> *mut c_void {
    handle_or_null("aclCreateTensor", || {
        // SAFETY: the caller's contract.
        let shape = unsafe { dims(viewDims, viewDimsNum, "viewDims") }?.to_vec();
        let strides = if stride.is_null() {
            let mut s = vec![1i64; shape.len()];
            for i in (0..shape.len().saturating_sub(1)).rev() {
                s[i] = s[i + 1] * shape[i + 1].max(1);
            }
            s
        } else {
            // SAFETY: as many strides as dims (the documented contract).
            unsafe { dims(stride, viewDimsNum, "stride") }?.to_vec()
        };
        // SAFETY: the caller's contract.
        let storage = unsafe { dims(storageDims, storageDimsNum, "storageDims") }?.to_vec();
        // Element-wise operators do not depend on the format.
        let _ = format;
        if elementwise::elem_size(dataType).is_none() {
            return Err(invalid(format!(
                "data type {dataType} is not one the emulated operators take"
            )));
        }
        Ok(tensor::insert(Object::Tensor(Tensor {
            shape,
            strides,
            offset,
            dtype: dataType,
            storage,
            data: tensorData as usize,
        })))
    })
}

/// `aclCreateScalar`: a copy of the value at `value` of `dataType`; NULL on a bad argument.
///
/// # Safety
/// `value` is NULL or valid for one element of `dataType`.
pub unsafe extern "C" fn aclCreateScalar(value: *mut c_void, dataType: aclDataType) -> *mut c_void {
    handle_or_null("aclCreateScalar", || {
        if value.is_null() {
            return Err(null("value"));
        }
        let p = value as *const u8;
        // SAFETY: one element of `dataType` at `value` (the caller's contract).
        let v = unsafe {
            match dataType {
                ACL_FLOAT => Num::F(f64::from(p.cast::<f32>().read_unaligned())),
                ACL_DOUBLE => Num::F(p.cast::<f64>().read_unaligned()),
                ACL_FLOAT16 => Num::F(f64::from(half::f16::from_bits(
                    p.cast::<u16>().read_unaligned(),
                ))),
                ACL_BF16 => Num::F(f64::from(half::bf16::from_bits(
                    p.cast::<u16>().read_unaligned(),
                ))),
                ACL_INT8 => Num::I(i64::from(p.cast::<i8>().read_unaligned())),
                ACL_UINT8 | ACL_BOOL => Num::I(i64::from(p.read_unaligned())),
                ACL_INT16 => Num::I(i64::from(p.cast::<i16>().read_unaligned())),
                ACL_INT32 => Num::I(i64::from(p.cast::<i32>().read_unaligned())),
                ACL_INT64 => Num::I(p.cast::<i64>().read_unaligned()),
                t => {
                    return Err(invalid(format!(
                        "data type {t} is not one the emulated operators take"
                    )));
                }
            }
        };
        Ok(tensor::insert(Object::Scalar(Scalar {
            dtype: dataType,
            value: v,
        })))
    })
}

acl! {
    /// `aclDestroyTensor`: the description (not the memory it views).
    fn aclDestroyTensor(tensor: *const c_void) {
        if tensor.is_null() {
            return Err(null("tensor"));
        }
        if tensor::remove_if(tensor as usize, |o| matches!(o, Object::Tensor(_))) {
            Ok(())
        } else {
            Err(invalid("tensor is not a live tensor"))
        }
    }
}

acl! {
    /// `aclDestroyScalar`.
    fn aclDestroyScalar(scalar: *const c_void) {
        if scalar.is_null() {
            return Err(null("scalar"));
        }
        if tensor::remove_if(scalar as usize, |o| matches!(o, Object::Scalar(_))) {
            Ok(())
        } else {
            Err(invalid("scalar is not a live scalar"))
        }
    }
}

fn tensor_arg(p: *const c_void, what: &str) -> R<Tensor> {
    if p.is_null() {
        return Err(null(what));
    }
    tensor::tensor(p as usize).ok_or_else(|| invalid(format!("{what} is not a live tensor")))
}

/// Hands out the plan's executor and its workspace size (none needed).
///
/// # Safety
/// The outputs are NULL or valid for one write.
unsafe fn hand_out(plan: Plan, workspace: *mut u64, executor: *mut *mut c_void) -> R {
    if workspace.is_null() {
        return Err(null("workspaceSize"));
    }
    if executor.is_null() {
        return Err(null("executor"));
    }
    let h = tensor::insert(Object::Executor(Executor {
        plan,
        used: AtomicBool::new(false),
    }));
    // SAFETY: non-NULL and valid for one write each (the caller's contract).
    unsafe {
        workspace.write(0);
        executor.write(h as *mut c_void);
    }
    Ok(())
}

acl! {
    /// `aclnnAddGetWorkspaceSize`: checks `out = self + alpha * other` (broadcast shapes, the
    /// promoted type held by out's) and hands out its executor; no workspace is needed (0).
    fn aclnnAddGetWorkspaceSize(self_: *const c_void, other: *const c_void, alpha: *const c_void, out: *mut c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) {
        let (a, b, o) = (tensor_arg(self_, "self")?, tensor_arg(other, "other")?, tensor_arg(out, "out")?);
        if alpha.is_null() {
            return Err(null("alpha"));
        }
        let alpha = tensor::scalar(alpha as usize).ok_or_else(|| invalid("alpha is not a live scalar"))?;
        let plan = elementwise::plan_add(&a, &b, alpha, &o).map_err(|(code, msg)| Fail { code, msg })?;
        // SAFETY: the caller's contract for the outputs.
        unsafe { hand_out(plan, workspaceSize, executor) }
    }
}

acl! {
    /// `aclnnMulGetWorkspaceSize`: checks `out = self * other` and hands out its executor (no
    /// workspace).
    fn aclnnMulGetWorkspaceSize(self_: *const c_void, other: *const c_void, out: *mut c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) {
        let (a, b, o) = (tensor_arg(self_, "self")?, tensor_arg(other, "other")?, tensor_arg(out, "out")?);
        let plan = elementwise::plan_mul(&a, &b, &o).map_err(|(code, msg)| Fail { code, msg })?;
        // SAFETY: the caller's contract for the outputs.
        unsafe { hand_out(plan, workspaceSize, executor) }
    }
}

/// Queues an executor's plan on `stream`: its views must lie in device memory of the stream's
/// device; the executor runs once.
fn launch(name: &str, executor: *mut c_void, stream: aclrtStream) -> R {
    if executor.is_null() {
        return Err(null("executor"));
    }
    let entry =
        tensor::get(executor as usize).ok_or_else(|| invalid("executor is not a live executor"))?;
    let Object::Executor(ex) = &entry.object else {
        return Err(invalid("executor is not a live executor"));
    };
    if ex.plan.name != name {
        return Err(invalid(format!(
            "the executor is {}'s, not {name}'s",
            ex.plan.name
        )));
    }
    if ex.used.load(Ordering::Acquire) {
        return Err(invalid(
            "the executor was launched already (an executor runs once)",
        ));
    }
    let runtime = |f: Fail| Fail {
        code: status::RUNTIME_ERROR,
        msg: format!("{} ({} {})", f.msg, code_name(f.code), f.code),
    };
    let s = crate::stream::get(handle(stream)).map_err(runtime)?;
    crate::stream::check_context(&s).map_err(runtime)?;
    let p = &ex.plan;
    let mut sides = Vec::with_capacity(3);
    for (what, v) in [("self", &p.a), ("other", &p.b), ("out", &p.out)] {
        let (first, end) = v.extent(&p.shape);
        let side = crate::memory::read()
            .check(what, first, end - first)
            .map_err(|f| invalid(f.msg))?;
        if side.loc != Loc::Device(s.device) {
            return Err(invalid(format!(
                "{what}'s data at {first:#x} is not device memory of the stream's device {}",
                s.device
            )));
        }
        sides.push(side);
    }
    let sides: [crate::engine::work::Side; 3] = [sides[0], sides[1], sides[2]];
    if ex.used.swap(true, Ordering::AcqRel) {
        return Err(invalid(
            "the executor was launched already (an executor runs once)",
        ));
    }
    s.enqueue(crate::operators::work_of(p.clone(), sides))
        .map_err(runtime)?;
    tensor::remove_if(executor as usize, |_| true);
    Ok(())
}

acl! {
    /// `aclnnAdd`: queues the Add of `executor` on `stream` (the workspace is not used).
    fn aclnnAdd(workspace: *mut c_void, workspaceSize: u64, executor: *mut c_void, stream: aclrtStream) {
        let _ = (workspace, workspaceSize);
        launch("Add", executor, stream)
    }
}

acl! {
    /// `aclnnMul`: queues the Mul of `executor` on `stream` (the workspace is not used).
    fn aclnnMul(workspace: *mut c_void, workspaceSize: u64, executor: *mut c_void, stream: aclrtStream) {
        let _ = (workspace, workspaceSize);
        launch("Mul", executor, stream)
    }
}
