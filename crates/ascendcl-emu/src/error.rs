//! Error codes, the per-thread recent-error messages (`aclGetRecentErrMsg`) and the per-thread last
//! error (`aclrtGetLastError`).

use ascendcl_sys::aclError;
use std::cell::{Cell, RefCell};
use std::ffi::{CString, c_char};

pub(crate) const SUCCESS: aclError = 0;
pub(crate) const INVALID_PARAM: aclError = 100000;
pub(crate) const REPEAT_INITIALIZE: aclError = 100002;
pub(crate) const INVALID_FILE: aclError = 100003;
pub(crate) const PARSE_FILE: aclError = 100006;
pub(crate) const REPEAT_FINALIZE: aclError = 100037;
pub(crate) const RT_PARAM_INVALID: aclError = 107000;
pub(crate) const RT_INVALID_DEVICEID: aclError = 107001;
pub(crate) const RT_CONTEXT_NULL: aclError = 107002;
pub(crate) const RT_STREAM_CONTEXT: aclError = 107003;
pub(crate) const RT_STREAM_MODEL: aclError = 107005;
pub(crate) const RT_STREAM_SUBSCRIBE: aclError = 107011;
pub(crate) const RT_THREAD_SUBSCRIBE: aclError = 107012;
pub(crate) const RT_STREAM_NO_CB_REG: aclError = 107015;
pub(crate) const RT_INVALID_MEMORY_TYPE: aclError = 107016;
pub(crate) const RT_INVALID_HANDLE: aclError = 107017;
pub(crate) const RT_MODEL_CAPTURED: aclError = 107026;
pub(crate) const RT_STREAM_CAPTURED: aclError = 107027;
pub(crate) const RT_STREAM_NOT_CAPTURED: aclError = 107029;
pub(crate) const RT_TASK_GROUP_STATUS: aclError = 107033;
pub(crate) const RT_MODEL_RUNNING: aclError = 107037;
pub(crate) const RT_MODEL_UPDATE_FAILED: aclError = 107040;
pub(crate) const RT_FEATURE_NOT_SUPPORT: aclError = 207000;
pub(crate) const RT_MEMORY_ALLOCATION: aclError = 207001;
pub(crate) const RT_MEMORY_FREE: aclError = 207002;
pub(crate) const RT_RESOURCE_ALLOC_FAIL: aclError = 207005;
pub(crate) const RT_NO_EVENT_RESOURCE: aclError = 207007;
pub(crate) const RT_NO_STREAM_RESOURCE: aclError = 207008;
pub(crate) const RT_NO_NOTIFY_RESOURCE: aclError = 207009;
pub(crate) const RT_TASK_TIMEOUT: aclError = 107020;
pub(crate) const RT_INTERNAL_ERROR: aclError = 507000;
pub(crate) const INTERNAL_ERROR: aclError = ascendcl_sys::ACL_ERROR_INTERNAL_ERROR;
pub(crate) const RT_AICORE_TIMEOUT: aclError =
    ascendcl_sys::ACL_ERROR_RT_AICORE_TIMEOUT as aclError;
pub(crate) const RT_AICORE_EXCEPTION: aclError =
    ascendcl_sys::ACL_ERROR_RT_AICORE_EXCEPTION as aclError;
pub(crate) const RT_VECTOR_CORE_TIMEOUT: aclError =
    ascendcl_sys::ACL_ERROR_RT_VECTOR_CORE_TIMEOUT as aclError;
pub(crate) const RT_VECTOR_CORE_EXCEPTION: aclError =
    ascendcl_sys::ACL_ERROR_RT_VECTOR_CORE_EXCEPTION as aclError;
pub(crate) const RT_CONTEXT_RELEASE_ERROR: aclError = 507007;
pub(crate) const RT_DEV_SETUP_ERROR: aclError = 507033;
pub(crate) const RT_REPORT_TIMEOUT: aclError = 507012;
pub(crate) const RT_MODEL_ABORT_NORMAL: aclError = 507023;
pub(crate) const RT_LABEL_CONTEXT: aclError = 507031;
pub(crate) const RT_STREAM_SYNC_TIMEOUT: aclError = 507046;
pub(crate) const RT_EVENT_SYNC_TIMEOUT: aclError = 507047;
pub(crate) const HOST_MEMORY_ALREADY_REGISTERED: aclError = 507910;
pub(crate) const HOST_MEMORY_NOT_REGISTERED: aclError = 507911;

/// A failed call: the code it returns and what went wrong (without the API name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail {
    pub code: aclError,
    pub msg: String,
}

/// The result of an emulated call.
pub(crate) type R<T = ()> = Result<T, Fail>;

/// A failure with `code` and message `msg`.
pub(crate) fn fail<T>(code: aclError, msg: impl Into<String>) -> R<T> {
    Err(Fail {
        code,
        msg: msg.into(),
    })
}

/// The name of a code, for messages.
pub(crate) fn code_name(code: aclError) -> &'static str {
    match code {
        SUCCESS => "ACL_SUCCESS",
        INVALID_PARAM => "ACL_ERROR_INVALID_PARAM",
        REPEAT_INITIALIZE => "ACL_ERROR_REPEAT_INITIALIZE",
        INVALID_FILE => "ACL_ERROR_INVALID_FILE",
        PARSE_FILE => "ACL_ERROR_PARSE_FILE",
        REPEAT_FINALIZE => "ACL_ERROR_REPEAT_FINALIZE",
        RT_PARAM_INVALID => "ACL_ERROR_RT_PARAM_INVALID",
        RT_INVALID_DEVICEID => "ACL_ERROR_RT_INVALID_DEVICEID",
        RT_CONTEXT_NULL => "ACL_ERROR_RT_CONTEXT_NULL",
        RT_STREAM_CONTEXT => "ACL_ERROR_RT_STREAM_CONTEXT",
        RT_STREAM_MODEL => "ACL_ERROR_RT_STREAM_MODEL",
        RT_STREAM_SUBSCRIBE => "ACL_ERROR_RT_STREAM_SUBSCRIBE",
        RT_THREAD_SUBSCRIBE => "ACL_ERROR_RT_THREAD_SUBSCRIBE",
        RT_STREAM_NO_CB_REG => "ACL_ERROR_RT_STREAM_NO_CB_REG",
        RT_INVALID_MEMORY_TYPE => "ACL_ERROR_RT_INVALID_MEMORY_TYPE",
        RT_INVALID_HANDLE => "ACL_ERROR_RT_INVALID_HANDLE",
        RT_MODEL_CAPTURED => "ACL_ERROR_RT_MODEL_CAPTURED",
        RT_STREAM_CAPTURED => "ACL_ERROR_RT_STREAM_CAPTURED",
        RT_STREAM_NOT_CAPTURED => "ACL_ERROR_RT_STREAM_NOT_CAPTURED",
        RT_TASK_GROUP_STATUS => "ACL_ERROR_STREAM_TASK_GROUP_STATUS",
        RT_MODEL_RUNNING => "ACL_ERROR_RT_MODEL_RUNNING",
        RT_MODEL_UPDATE_FAILED => "ACL_ERROR_RT_MODEL_UPDATE_FAILED",
        RT_FEATURE_NOT_SUPPORT => "ACL_ERROR_RT_FEATURE_NOT_SUPPORT",
        RT_MEMORY_ALLOCATION => "ACL_ERROR_RT_MEMORY_ALLOCATION",
        RT_MEMORY_FREE => "ACL_ERROR_RT_MEMORY_FREE",
        RT_RESOURCE_ALLOC_FAIL => "ACL_ERROR_RT_RESOURCE_ALLOC_FAIL",
        RT_NO_EVENT_RESOURCE => "ACL_ERROR_RT_NO_EVENT_RESOURCE",
        RT_NO_STREAM_RESOURCE => "ACL_ERROR_RT_NO_STREAM_RESOURCE",
        RT_NO_NOTIFY_RESOURCE => "ACL_ERROR_RT_NO_NOTIFY_RESOURCE",
        RT_TASK_TIMEOUT => "ACL_ERROR_RT_TASK_TIMEOUT",
        RT_INTERNAL_ERROR => "ACL_ERROR_RT_INTERNAL_ERROR",
        INTERNAL_ERROR => "ACL_ERROR_INTERNAL_ERROR",
        RT_AICORE_TIMEOUT => "ACL_ERROR_RT_AICORE_TIMEOUT",
        RT_AICORE_EXCEPTION => "ACL_ERROR_RT_AICORE_EXCEPTION",
        RT_VECTOR_CORE_TIMEOUT => "ACL_ERROR_RT_VECTOR_CORE_TIMEOUT",
        RT_VECTOR_CORE_EXCEPTION => "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION",
        RT_CONTEXT_RELEASE_ERROR => "ACL_ERROR_RT_CONTEXT_RELEASE_ERROR",
        RT_DEV_SETUP_ERROR => "ACL_ERROR_RT_DEV_SETUP_ERROR",
        RT_REPORT_TIMEOUT => "ACL_ERROR_RT_REPORT_TIMEOUT",
        RT_MODEL_ABORT_NORMAL => "ACL_ERROR_RT_MODEL_ABORT_NORMAL",
        RT_LABEL_CONTEXT => "ACL_ERROR_RT_LABEL_CONTEXT",
        RT_STREAM_SYNC_TIMEOUT => "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT",
        RT_EVENT_SYNC_TIMEOUT => "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT",
        HOST_MEMORY_ALREADY_REGISTERED => "ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        HOST_MEMORY_NOT_REGISTERED => "ACL_ERROR_HOST_MEMORY_NOT_REGISTERED",
        _ => "error",
    }
}

thread_local! {
    static LAST: Cell<aclError> = const { Cell::new(SUCCESS) };
    pub(crate) static MESSAGES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static RETURNED: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records a failure of `api` on the calling thread and returns its code.
#[cold]
pub(crate) fn record(api: &str, f: Fail) -> aclError {
    if f.code == REPEAT_INITIALIZE {
        // A repeated aclInit is routine (callers ignore it); like the runtime, which logs it as
        // a warning, it sets the last error but adds no recent-error message.
        let _ = LAST.try_with(|l| l.set(f.code));
        return f.code;
    }
    let line = format!(
        "[ascendcl-emu] {api}: {} ({} {})",
        f.msg,
        code_name(f.code),
        f.code
    );
    // try_with: a call from a thread-local destructor must not panic (and so abort).
    let _ = MESSAGES.try_with(|m| {
        let mut m = m.borrow_mut();
        // Bound the backlog of a thread that never reads its messages.
        if m.len() >= 64 {
            m.remove(0);
        }
        m.push(line);
    });
    let _ = LAST.try_with(|l| l.set(f.code));
    f.code
}

/// Turns a result into the C return code, recording the message of a failure.
#[inline]
pub(crate) fn finish(api: &str, r: R) -> aclError {
    match r {
        Ok(()) => SUCCESS,
        Err(f) => record(api, f),
    }
}

/// `aclGetRecentErrMsg`: the calling thread's messages joined by newlines, then cleared; NULL when
/// there are none. The string stays valid until the thread's next call.
pub(crate) fn take_recent() -> *const c_char {
    let joined = MESSAGES.with(|m| {
        let mut m = m.borrow_mut();
        if m.is_empty() {
            None
        } else {
            let s = m.join("\n");
            m.clear();
            Some(s)
        }
    });
    RETURNED.with(|r| {
        let mut r = r.borrow_mut();
        *r = joined.map(|s| CString::new(s.replace('\0', " ")).unwrap_or_default());
        r.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
    })
}

/// Returns the calling thread's recent messages without clearing them (for Rust tests).
pub fn recent_messages() -> Vec<String> {
    MESSAGES.with(|m| m.borrow().clone())
}

/// The last error of the calling thread; `clear` resets it to success.
pub(crate) fn last_error(clear: bool) -> aclError {
    LAST.try_with(|l| {
        let v = l.get();
        if clear {
            l.set(SUCCESS);
        }
        v
    })
    .unwrap_or(SUCCESS)
}
