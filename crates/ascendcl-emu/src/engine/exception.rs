//! Task exceptions: the process's exception callback (`aclrtSetExceptionInfoCallback`), called
//! on the stream's worker thread when a task fails, with the task's identity; and the id of the
//! last task each thread submitted to a stream it created (`aclrtGetThreadLastTaskId`).

use crate::base::lock::{Mutex, Rank};
use ascendcl_sys::{aclError, aclrtExceptionInfo, aclrtExceptionInfoCallback};
use std::cell::Cell;

/// What `aclrtExceptionInfo` (opaque in the headers) points to in the emulator.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Info {
    pub task_id: u32,
    pub stream_id: u32,
    pub thread_id: u32,
    pub device_id: u32,
    pub error_code: u32,
}

static CALLBACK: Mutex<aclrtExceptionInfoCallback> = Mutex::new(Rank::ExceptionCallback, None);

thread_local! {
    static LAST_TASK: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Sets (or, with `None`, clears) the process's exception callback; the last call wins.
pub(crate) fn set_callback(cb: aclrtExceptionInfoCallback) {
    *CALLBACK.lock() = cb;
}

/// Reports a failed task to the callback, if one is set (outside any lock).
pub(crate) fn report(info: Info) {
    let cb = *CALLBACK.lock();
    if let Some(f) = cb {
        let mut info = info;
        // SAFETY: the callback was registered for this purpose; `info` lives for the call, which
        // is all the runtime promises.
        unsafe { f((&mut info as *mut Info).cast::<aclrtExceptionInfo>()) };
    }
}

/// Reads a field of an exception record; 0xFFFFFFFF for NULL, as the runtime answers.
///
/// # Safety
/// `info` is NULL or a pointer handed to the exception callback, during the callback.
pub(crate) unsafe fn field(info: *const aclrtExceptionInfo, f: impl FnOnce(&Info) -> u32) -> u32 {
    if info.is_null() {
        return u32::MAX;
    }
    // SAFETY: per the contract, `info` points to an `Info` made by `report`.
    f(unsafe { &*info.cast::<Info>() })
}

/// Records the id of a task the calling thread submitted to a stream it created.
pub(crate) fn set_last_task(id: u32) {
    let _ = LAST_TASK.try_with(|l| l.set(Some(id)));
}

/// The id of the last task the calling thread submitted to a created stream.
pub(crate) fn last_task() -> Option<u32> {
    LAST_TASK.with(Cell::get)
}

/// The calling thread's id (the kernel's thread id, as the runtime reports it), asked of the
/// kernel once per thread.
pub(crate) fn thread_id() -> u32 {
    #[cfg(target_os = "linux")]
    thread_local! {
        // SAFETY: gettid has no preconditions.
        static TID: u32 = unsafe { libc::gettid() as u32 };
    }
    // Elsewhere (macOS) a number per thread, in the order threads first ask.
    #[cfg(not(target_os = "linux"))]
    thread_local! {
        static TID: u32 = {
            static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        };
    }
    TID.try_with(|t| *t).unwrap_or(0)
}

/// An error code as the exception record carries it.
pub(crate) fn code(e: aclError) -> u32 {
    e as u32
}
