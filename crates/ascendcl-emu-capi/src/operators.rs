//! The operator library's functions CANN's runtime samples call (`aclnn/acl_meta.h`,
//! `aclnnop/aclnn_add.h`, `aclnnop/aclnn_mul.h` of the emulator root), exported under their
//! names: the emulator root's `lib64/libopapi.so` and `libnnopbase.so` are links to this library.

use ascendcl_emu::capi::operators as op;
use ascendcl_sys::{aclDataType, aclFormat, aclrtStream};
use std::ffi::c_void;

macro_rules! export {
    ($( $(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $ret:ty; )*) => {
        $(
            $(#[$m])*
            ///
            /// # Safety
            /// The C function's contract (see the header).
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($a: $t),*) -> $ret {
                // SAFETY: the emulator's function of the same signature; the caller upholds
                // the C contract.
                unsafe { op::$name($($a),*) }
            }
        )*
    };
}

export! {
    /// `aclCreateTensor`, run by the emulator.
    fn aclCreateTensor(viewDims: *const i64, viewDimsNum: u64, dataType: aclDataType, stride: *const i64, offset: i64, format: aclFormat, storageDims: *const i64, storageDimsNum: u64, tensorData: *mut c_void) -> *mut c_void;
    /// `aclCreateScalar`, run by the emulator.
    fn aclCreateScalar(value: *mut c_void, dataType: aclDataType) -> *mut c_void;
    /// `aclDestroyTensor`, run by the emulator.
    fn aclDestroyTensor(tensor: *const c_void) -> i32;
    /// `aclDestroyScalar`, run by the emulator.
    fn aclDestroyScalar(scalar: *const c_void) -> i32;
    /// `aclnnAddGetWorkspaceSize`, run by the emulator.
    fn aclnnAddGetWorkspaceSize(self_: *const c_void, other: *const c_void, alpha: *const c_void, out: *mut c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) -> i32;
    /// `aclnnAdd`, run by the emulator.
    fn aclnnAdd(workspace: *mut c_void, workspaceSize: u64, executor: *mut c_void, stream: aclrtStream) -> i32;
    /// `aclnnMulGetWorkspaceSize`, run by the emulator.
    fn aclnnMulGetWorkspaceSize(self_: *const c_void, other: *const c_void, out: *mut c_void, workspaceSize: *mut u64, executor: *mut *mut c_void) -> i32;
    /// `aclnnMul`, run by the emulator.
    fn aclnnMul(workspace: *mut c_void, workspaceSize: u64, executor: *mut c_void, stream: aclrtStream) -> i32;
}
