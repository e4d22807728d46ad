//! Errors of tasks that failed on the device: the process-wide exception callback as a Rust
//! closure ([`ExceptionCallback`]) receiving a typed [`ExceptionInfo`], and the calling thread's
//! last error ([`last_error`], [`peek_last_error`]) and recent message ([`recent_error_message`]).

use crate::deferred::CallbackMark;
use crate::error::{Error, Result};
use crate::host_fn;
use crate::raw;
use ascendcl_sys::{self as sys, AclError};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

/// What the runtime reports about a task that failed on the device, copied out of its
/// `aclrtExceptionInfo` (`aclrtGet{Task,Stream,Thread,Device}IdFromExceptionInfo`,
/// `aclrtGetErrorCodeFromExceptionInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExceptionInfo {
    /// The task's id on its stream (as the thread's last task id counts them).
    pub task_id: u32,
    /// The stream's id ([`Stream::id`](crate::Stream::id)).
    pub stream_id: u32,
    /// The operating-system id of the thread that launched the task.
    pub thread_id: u32,
    /// The device.
    pub device_id: u32,
    /// The error the task failed with.
    pub error: AclError,
}

type ExceptionFn = dyn Fn(&ExceptionInfo) + Send + Sync + 'static;

/// The registered closure and the first panic it raised. The runtime's callback takes no
/// argument of ours, so there is one slot per process.
struct Slot {
    f: Option<Arc<ExceptionFn>>,
    panic: Option<String>,
}

static SLOT: Mutex<Slot> = Mutex::new(Slot {
    f: None,
    panic: None,
});

fn slot() -> std::sync::MutexGuard<'static, Slot> {
    SLOT.lock().unwrap_or_else(PoisonError::into_inner)
}

unsafe extern "C" fn exception_trampoline(info: *mut sys::aclrtExceptionInfo) {
    // Releases of handles the closure captured go to the release thread: the runtime forbids
    // them on its callback threads.
    let _mark = CallbackMark::enter();
    // SAFETY: `info` is the pointer the runtime hands to its exception callback, valid for the
    // duration of the call; the accessors only read it.
    let info = unsafe {
        ExceptionInfo {
            task_id: raw::aclrtGetTaskIdFromExceptionInfo(info),
            stream_id: raw::aclrtGetStreamIdFromExceptionInfo(info),
            thread_id: raw::aclrtGetThreadIdFromExceptionInfo(info),
            device_id: raw::aclrtGetDeviceIdFromExceptionInfo(info),
            error: AclError(raw::aclrtGetErrorCodeFromExceptionInfo(info) as i32),
        }
    };
    let Some(f) = slot().f.clone() else {
        return;
    };
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(&info))) {
        let message = host_fn::panic_message(&*p);
        slot().panic.get_or_insert(message);
    }
}

/// The process's exception callback (`aclrtSetExceptionInfoCallback`): a closure that runs
/// for every task that fails on a device, until this is dropped or [`unregister`]ed.
///
/// One per process (the runtime keeps one callback): registering while another is registered
/// is an [`Error::Argument`]. The closure runs on a runtime thread; a panic is caught there and
/// reported by [`unregister`]. Handles it captures may be dropped there (their releases go to a
/// release thread of this crate).
///
/// [`unregister`]: ExceptionCallback::unregister
#[derive(Debug)]
pub struct ExceptionCallback {
    registered: bool,
}

impl ExceptionCallback {
    /// Registers `f`.
    pub fn register<F>(f: F) -> Result<ExceptionCallback>
    where
        F: Fn(&ExceptionInfo) + Send + Sync + 'static,
    {
        let mut s = slot();
        if s.f.is_some() {
            return Err(Error::argument(
                "aclrtSetExceptionInfoCallback",
                "an exception callback is already registered in this process",
            ));
        }
        s.f = Some(Arc::new(f));
        s.panic = None;
        // SAFETY: the trampoline matches the C signature and lives for the whole program.
        if let Err(e) = unsafe { raw::aclrtSetExceptionInfoCallback(Some(exception_trampoline)) } {
            s.f = None;
            return Err(e);
        }
        Ok(ExceptionCallback { registered: true })
    }

    fn unregister_inner(&mut self) -> Result<()> {
        if !self.registered {
            return Ok(());
        }
        // SAFETY: NULL unregisters.
        unsafe { raw::aclrtSetExceptionInfoCallback(None) }?;
        self.registered = false;
        // A report already running holds its own reference to the closure.
        slot().f = None;
        Ok(())
    }

    /// Unregisters the closure. A panic it raised while registered is reported as
    /// [`Error::CallbackPanicked`] (the closure is unregistered all the same). When the runtime
    /// refuses, the registration stays and the drop of this value tries again.
    pub fn unregister(mut self) -> Result<()> {
        self.unregister_inner()?;
        match slot().panic.take() {
            None => Ok(()),
            Some(message) => Err(Error::CallbackPanicked {
                what: "exception callback",
                message,
            }),
        }
    }
}

impl Drop for ExceptionCallback {
    fn drop(&mut self) {
        let r = self.unregister_inner();
        crate::drop_errors::report(r);
    }
}

/// The calling thread's last runtime error, which this clears (`aclrtGetLastError` at thread
/// level); `None` when there was none since it was last cleared.
pub fn last_error() -> Option<AclError> {
    let e = raw::aclrtGetLastError(sys::ACL_RT_THREAD_LEVEL);
    (e != AclError::SUCCESS).then_some(e)
}

/// The calling thread's last runtime error, left in place (`aclrtPeekAtLastError` at thread
/// level).
pub fn peek_last_error() -> Option<AclError> {
    let e = raw::aclrtPeekAtLastError(sys::ACL_RT_THREAD_LEVEL);
    (e != AclError::SUCCESS).then_some(e)
}

/// The runtime's description of the calling thread's most recent failure, which this clears
/// (`aclGetRecentErrMsg`); `None` when there is none. Every [`Error::Acl`] already carries the
/// message read right after its failure, so this answers `None` after one was built: it is for
/// failures of raw FFI calls.
pub fn recent_error_message() -> Option<String> {
    crate::error::recent_err_msg()
}

/// The id of the last task the calling thread launched on a created stream
/// (`aclrtGetThreadLastTaskId`), as [`ExceptionInfo::task_id`] names a failed one. An error
/// when the thread has launched none.
pub fn last_task_id() -> Result<u32> {
    let mut id = 0u32;
    // SAFETY: a valid out-pointer.
    unsafe { raw::aclrtGetThreadLastTaskId(&mut id) }?;
    Ok(id)
}
