//! Error codes, the per-thread recent-error messages (`aclGetRecentErrMsg`) and the per-thread last
//! error (`aclrtGetLastError`).

use ascendcl_sys::{AclError, aclError};
use std::cell::{Cell, RefCell};
use std::ffi::{CString, c_char};

pub(crate) const SUCCESS: aclError = AclError::SUCCESS.code();
pub(crate) const INVALID_PARAM: aclError = AclError::INVALID_PARAM.code();
pub(crate) const REPEAT_INITIALIZE: aclError = AclError::REPEAT_INITIALIZE.code();
pub(crate) const INVALID_FILE: aclError = AclError::INVALID_FILE.code();
pub(crate) const PARSE_FILE: aclError = AclError::PARSE_FILE.code();
pub(crate) const REPEAT_FINALIZE: aclError = AclError::REPEAT_FINALIZE.code();
pub(crate) const RT_PARAM_INVALID: aclError = AclError::PARAM_INVALID.code();
pub(crate) const RT_INVALID_DEVICEID: aclError = AclError::INVALID_DEVICEID.code();
pub(crate) const RT_CONTEXT_NULL: aclError = AclError::CONTEXT_NULL.code();
pub(crate) const RT_STREAM_CONTEXT: aclError = AclError::STREAM_CONTEXT.code();
pub(crate) const RT_STREAM_MODEL: aclError = AclError::STREAM_MODEL.code();
pub(crate) const RT_STREAM_SUBSCRIBE: aclError = AclError::STREAM_SUBSCRIBE.code();
pub(crate) const RT_THREAD_SUBSCRIBE: aclError = AclError::THREAD_SUBSCRIBE.code();
pub(crate) const RT_STREAM_NO_CB_REG: aclError = AclError::STREAM_NO_CB_REG.code();
pub(crate) const RT_INVALID_MEMORY_TYPE: aclError = AclError::INVALID_MEMORY_TYPE.code();
pub(crate) const RT_INVALID_HANDLE: aclError = AclError::INVALID_HANDLE.code();
pub(crate) const RT_MODEL_CAPTURED: aclError = AclError::MODEL_CAPTURED.code();
pub(crate) const RT_STREAM_CAPTURED: aclError = AclError::STREAM_CAPTURED.code();
pub(crate) const RT_STREAM_NOT_CAPTURED: aclError = AclError::STREAM_NOT_CAPTURED.code();
pub(crate) const RT_TASK_GROUP_STATUS: aclError = AclError::STREAM_TASK_GROUP_STATUS.code();
pub(crate) const RT_MODEL_RUNNING: aclError = AclError::MODEL_RUNNING.code();
pub(crate) const RT_MODEL_UPDATE_FAILED: aclError = AclError::MODEL_UPDATE_FAILED.code();
pub(crate) const RT_FEATURE_NOT_SUPPORT: aclError = AclError::FEATURE_NOT_SUPPORT.code();
pub(crate) const RT_MEMORY_ALLOCATION: aclError = AclError::MEMORY_ALLOCATION.code();
pub(crate) const RT_MEMORY_FREE: aclError = AclError::MEMORY_FREE.code();
pub(crate) const RT_RESOURCE_ALLOC_FAIL: aclError = AclError::RESOURCE_ALLOC_FAIL.code();
pub(crate) const RT_NO_EVENT_RESOURCE: aclError = AclError::NO_EVENT_RESOURCE.code();
pub(crate) const RT_NO_STREAM_RESOURCE: aclError = AclError::NO_STREAM_RESOURCE.code();
pub(crate) const RT_NO_NOTIFY_RESOURCE: aclError = AclError::NO_NOTIFY_RESOURCE.code();
pub(crate) const RT_TASK_TIMEOUT: aclError = AclError::TASK_TIMEOUT.code();
pub(crate) const RT_INTERNAL_ERROR: aclError = AclError::RT_INTERNAL_ERROR.code();
pub(crate) const INTERNAL_ERROR: aclError = AclError::INTERNAL_ERROR.code();
pub(crate) const RT_AICORE_TIMEOUT: aclError = AclError::AICORE_TIMEOUT.code();
pub(crate) const RT_AICORE_EXCEPTION: aclError = AclError::AICORE_EXCEPTION.code();
pub(crate) const RT_VECTOR_CORE_TIMEOUT: aclError = AclError::VECTOR_CORE_TIMEOUT.code();
pub(crate) const RT_VECTOR_CORE_EXCEPTION: aclError = AclError::VECTOR_CORE_EXCEPTION.code();
pub(crate) const RT_CONTEXT_RELEASE_ERROR: aclError = AclError::CONTEXT_RELEASE_ERROR.code();
pub(crate) const RT_DEV_SETUP_ERROR: aclError = AclError::DEV_SETUP_ERROR.code();
pub(crate) const RT_REPORT_TIMEOUT: aclError = AclError::REPORT_TIMEOUT.code();
pub(crate) const RT_MODEL_ABORT_NORMAL: aclError = AclError::MODEL_ABORT_NORMAL.code();
pub(crate) const RT_LABEL_CONTEXT: aclError = AclError::LABEL_CONTEXT.code();
pub(crate) const RT_STREAM_SYNC_TIMEOUT: aclError = AclError::STREAM_SYNC_TIMEOUT.code();
pub(crate) const RT_EVENT_SYNC_TIMEOUT: aclError = AclError::EVENT_SYNC_TIMEOUT.code();
pub(crate) const FAILURE: aclError = AclError::FAILURE.code();
pub(crate) const FEATURE_UNSUPPORTED: aclError = AclError::FEATURE_UNSUPPORTED.code();
pub(crate) const PROF_ALREADY_RUN: aclError = AclError::PROF_ALREADY_RUN.code();
pub(crate) const PROF_NOT_RUN: aclError = AclError::PROF_NOT_RUN.code();
pub(crate) const PROFILING_FAILURE: aclError = AclError::PROFILING_FAILURE.code();
pub(crate) const RT_QUEUE_EMPTY: aclError = AclError::QUEUE_EMPTY.code();
pub(crate) const RT_QUEUE_FULL: aclError = AclError::QUEUE_FULL.code();
pub(crate) const HOST_MEMORY_ALREADY_REGISTERED: aclError =
    AclError::HOST_MEMORY_ALREADY_REGISTERED.code();
pub(crate) const HOST_MEMORY_NOT_REGISTERED: aclError = AclError::HOST_MEMORY_NOT_REGISTERED.code();

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

/// The text of a panic's payload (its message, when it has one).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The name of a code, for messages (the headers' symbolic name).
pub(crate) fn code_name(code: aclError) -> &'static str {
    AclError(code).name().unwrap_or("error")
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
