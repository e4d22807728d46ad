//! The part of the operator library (aclnn, `libopapi`/`libnnopbase`) that CANN's runtime samples
//! call, as a library layered on the runtime: tensors and scalars (`aclCreateTensor`,
//! `aclCreateScalar`), and the element-wise `aclnnAdd` (`out = self + alpha * other`) and
//! `aclnnMul` (`out = self * other`) with broadcasting, type promotion and strided views, each a
//! two-phase call (`…GetWorkspaceSize` checks and plans, the launch queues the work on a stream,
//! where captures and updates of models record it like any other task).
//!
//! | file | owns |
//! |---|---|
//! | `tensor.rs` | tensors, scalars and executors: the registry of the library's objects |
//! | `elementwise.rs` | the Add and Mul plans: shapes, types, the views' device ranges |
//! | `work.rs` | the plans' stream work: the arithmetic on device memory |

pub(crate) mod elementwise;
pub(crate) mod tensor;
mod work;

/// The stream work of a plan.
pub(crate) fn work_of(
    plan: elementwise::Plan,
    sides: [crate::engine::work::Side; 3],
) -> impl crate::engine::work::Work {
    work::Elementwise { plan, sides }
}

/// `aclnnStatus` codes (the operator library's, not `aclError`s).
pub(crate) mod status {
    /// `ACLNN_ERR_PARAM_NULLPTR`: a required argument is NULL.
    pub(crate) const PARAM_NULLPTR: i32 = 161_001;
    /// `ACLNN_ERR_PARAM_INVALID`: types, shapes or formats outside what the operator takes.
    pub(crate) const PARAM_INVALID: i32 = 161_002;
    /// `ACLNN_ERR_RUNTIME_ERROR`: a runtime call (the launch on the stream) failed.
    pub(crate) const RUNTIME_ERROR: i32 = 361_001;
}
