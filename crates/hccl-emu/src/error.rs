//! HCCL result codes: names, the strings of `HcclGetErrorString`, the failure type of the
//! emulated calls and the messages they leave for `aclGetRecentErrMsg`.

use ascendcl_emu::extension::{self, AclFailure};
use hccl_sys::*;
use std::ffi::CStr;

/// A failed call: the code it returns and what went wrong (without the API name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail {
    pub code: HcclResult,
    pub msg: String,
}

/// The result of an emulated call.
pub(crate) type R<T = ()> = Result<T, Fail>;

/// A failure with `code` and message `msg`.
pub(crate) fn fail<T>(code: HcclResult, msg: impl Into<String>) -> R<T> {
    Err(Fail {
        code,
        msg: msg.into(),
    })
}

/// The symbolic name of a code (`HCCL_E_PARA`), or `HCCL_E_<n>` for one this header does not
/// define.
pub fn code_name(code: HcclResult) -> String {
    let name = match code {
        HCCL_SUCCESS => "HCCL_SUCCESS",
        HCCL_E_PARA => "HCCL_E_PARA",
        HCCL_E_PTR => "HCCL_E_PTR",
        HCCL_E_MEMORY => "HCCL_E_MEMORY",
        HCCL_E_INTERNAL => "HCCL_E_INTERNAL",
        HCCL_E_NOT_SUPPORT => "HCCL_E_NOT_SUPPORT",
        HCCL_E_NOT_FOUND => "HCCL_E_NOT_FOUND",
        HCCL_E_UNAVAIL => "HCCL_E_UNAVAIL",
        HCCL_E_SYSCALL => "HCCL_E_SYSCALL",
        HCCL_E_TIMEOUT => "HCCL_E_TIMEOUT",
        HCCL_E_OPEN_FILE_FAILURE => "HCCL_E_OPEN_FILE_FAILURE",
        HCCL_E_TCP_CONNECT => "HCCL_E_TCP_CONNECT",
        HCCL_E_ROCE_CONNECT => "HCCL_E_ROCE_CONNECT",
        HCCL_E_TCP_TRANSFER => "HCCL_E_TCP_TRANSFER",
        HCCL_E_ROCE_TRANSFER => "HCCL_E_ROCE_TRANSFER",
        HCCL_E_RUNTIME => "HCCL_E_RUNTIME",
        HCCL_E_DRV => "HCCL_E_DRV",
        HCCL_E_PROFILING => "HCCL_E_PROFILING",
        HCCL_E_CCE => "HCCL_E_CCE",
        HCCL_E_NETWORK => "HCCL_E_NETWORK",
        HCCL_E_AGAIN => "HCCL_E_AGAIN",
        HCCL_E_REMOTE => "HCCL_E_REMOTE",
        HCCL_E_SUSPENDING => "HCCL_E_SUSPENDING",
        HCCL_E_OPRETRY_FAIL => "HCCL_E_OPRETRY_FAIL",
        HCCL_E_OOM => "HCCL_E_OOM",
        HCCL_E_RESERVED => "HCCL_E_RESERVED",
        HcclResult(n) => return format!("HCCL_E_{n}"),
    };
    name.to_string()
}

/// `HcclGetErrorString`: a static string per code; "unknown error" for any other value.
pub(crate) fn error_string(code: HcclResult) -> &'static CStr {
    match code {
        HCCL_SUCCESS => c"no error",
        HCCL_E_PARA => c"parameter error",
        HCCL_E_PTR => c"empty pointer",
        HCCL_E_MEMORY => c"memory error",
        HCCL_E_INTERNAL => c"internal error",
        HCCL_E_NOT_SUPPORT => c"not support feature",
        HCCL_E_NOT_FOUND => c"not found specific resource",
        HCCL_E_UNAVAIL => c"resource unavailable",
        HCCL_E_SYSCALL => c"call system interface error",
        HCCL_E_TIMEOUT => c"timeout",
        HCCL_E_OPEN_FILE_FAILURE => c"open file fail",
        HCCL_E_TCP_CONNECT => c"tcp connect fail",
        HCCL_E_ROCE_CONNECT => c"roce connect fail",
        HCCL_E_TCP_TRANSFER => c"tcp transfer fail",
        HCCL_E_ROCE_TRANSFER => c"roce transfer fail",
        HCCL_E_RUNTIME => c"call runtime api fail",
        HCCL_E_DRV => c"call driver api fail",
        HCCL_E_PROFILING => c"call profiling api fail",
        HCCL_E_CCE => c"call cce api fail",
        HCCL_E_NETWORK => c"call network api fail",
        HCCL_E_AGAIN => c"try again",
        HCCL_E_REMOTE => c"error cqe",
        HCCL_E_SUSPENDING => c"error communicator suspending",
        HCCL_E_OPRETRY_FAIL => c"retry constraint",
        HCCL_E_OOM => c"out of memory",
        _ => c"unknown error",
    }
}

/// Records a failure of `api` as a recent-error message of the calling thread (read with
/// `aclGetRecentErrMsg`) and returns its code.
#[cold]
pub(crate) fn record(api: &str, f: &Fail) -> HcclResult {
    extension::record_message(format!(
        "[hccl-emu] {api}: {} ({} {})",
        f.msg,
        code_name(f.code),
        f.code.0
    ));
    f.code
}

/// The ACL runtime's failure for a call that needs a current device, as HCCL reports it.
pub(crate) fn runtime(f: AclFailure) -> Fail {
    Fail {
        code: HCCL_E_RUNTIME,
        msg: format!(
            "no current device on the calling thread (call aclrtSetDevice first): {}",
            f.message
        ),
    }
}

/// Codes of the stream errors that collectives leave (`aclError`, reported by the stream's
/// synchronisation).
pub(crate) mod stream_code {
    /// A collective that could not complete: a peer that never arrived within the execution
    /// timeout (it never issued it, left, or its process died), peers that issued different
    /// operations, or another rank whose part failed (hardware reports all of them the same way
    /// once the timeout expires). `ACL_ERROR_RT_AICPU_TIMEOUT`.
    pub const TIMEOUT: i32 = ascendcl_sys::ACL_ERROR_RT_AICPU_TIMEOUT as i32;
    /// A buffer that is not device memory of the communicator's device, or lies outside its
    /// allocation. `ACL_ERROR_RT_DEVICE_MEM_ERROR`.
    pub const MEMORY: i32 = ascendcl_sys::ACL_ERROR_RT_DEVICE_MEM_ERROR as i32;
    /// A failure of the emulator itself (shared memory, sockets). `ACL_ERROR_RT_INTERNAL_ERROR`.
    pub const INTERNAL: i32 = ascendcl_sys::ACL_ERROR_RT_INTERNAL_ERROR as i32;
}
