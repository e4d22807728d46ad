//! Failed tasks: the exception callback and its accessors, the calling thread's last task id,
//! and a device's error details (`aclrtGetErrorVerbose`).

use super::*;
use crate::engine::exception;

acl! {
    /// `aclrtGetErrorVerbose`: the device's error details. Emulated devices have no hardware
    /// faults: after a kernel failed on the device, the last failure (`ACL_RT_ERROR_MEMORY` with
    /// the access for global memory outside every allocation, else `ACL_RT_ERROR_OTHERS`, the
    /// types A2/A3 report), otherwise `ACL_RT_NO_ERROR`; never anything to repair.
    fn aclrtGetErrorVerbose(deviceId: i32, errorInfo: *mut aclrtErrorInfo) {
        if errorInfo.is_null() {
            return fail(INVALID_PARAM, "errorInfo is NULL");
        }
        crate::device::check(deviceId)?;
        let last = crate::kernel::launch::device_error(deviceId);
        // SAFETY: C contract: valid for writing one aclrtErrorInfo; the fields written are plain
        // integers and pointers-as-values.
        unsafe {
            let e = &mut *errorInfo;
            e.tryRepair = 0;
            e.hasDetail = 0;
            e.reserved = [0; 2];
            e.errorType = ACL_RT_NO_ERROR;
            match last {
                Some(crate::kernel::launch::DeviceError::Memory { addr, bytes }) => {
                    e.errorType = ACL_RT_ERROR_MEMORY;
                    e.hasDetail = 1;
                    let d = &mut e.detail.uceInfo;
                    d.arraySize = 1;
                    d.memUceInfoArray[0].addr = addr as usize as *mut c_void;
                    d.memUceInfoArray[0].len = bytes as usize;
                    d.memUceInfoArray[0].reserved = [0; 14];
                }
                Some(crate::kernel::launch::DeviceError::Other) => e.errorType = ACL_RT_ERROR_OTHERS,
                None => {}
            }
        }
        Ok(())
    }
}

acl! {
    /// `aclrtGetThreadLastTaskId`: the id of the last task the calling thread put on a stream
    /// it created (its submission number on that stream); 107000 before any.
    fn aclrtGetThreadLastTaskId(taskId: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(taskId, "taskId") }?;
        let id = exception::last_task().ok_or_else(|| Fail {
            code: RT_PARAM_INVALID,
            msg: "the calling thread has not submitted a task to a stream it created".to_string(),
        })?;
        out.set(id);
        Ok(())
    }
}

acl! {
    /// `aclrtSetExceptionInfoCallback`: the process's callback for failed tasks, called on the
    /// stream's worker thread when a task fails (NULL clears it; the last call wins).
    fn aclrtSetExceptionInfoCallback(callback: aclrtExceptionInfoCallback) {
        exception::set_callback(callback);
        Ok(())
    }
}

macro_rules! exception_field {
    ($(#[$m:meta])* $name:ident, $field:ident) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `info` is NULL or the pointer handed to the exception callback, during the callback.
        pub unsafe extern "C" fn $name(info: *const aclrtExceptionInfo) -> u32 {
            // SAFETY: the caller's contract.
            unsafe { exception::field(info, |i| i.$field) }
        }
    };
}

exception_field!(
    /// `aclrtGetTaskIdFromExceptionInfo`: the failed task's id (0xFFFFFFFF for NULL).
    aclrtGetTaskIdFromExceptionInfo, task_id
);

exception_field!(
    /// `aclrtGetStreamIdFromExceptionInfo`: the failed task's stream id (0xFFFFFFFF for NULL).
    aclrtGetStreamIdFromExceptionInfo, stream_id
);

exception_field!(
    /// `aclrtGetThreadIdFromExceptionInfo`: the submitting thread's id (0xFFFFFFFF for NULL).
    aclrtGetThreadIdFromExceptionInfo, thread_id
);

exception_field!(
    /// `aclrtGetDeviceIdFromExceptionInfo`: the device (0xFFFFFFFF for NULL).
    aclrtGetDeviceIdFromExceptionInfo, device_id
);

exception_field!(
    /// `aclrtGetErrorCodeFromExceptionInfo`: the task's error code (0xFFFFFFFF for NULL).
    aclrtGetErrorCodeFromExceptionInfo, error_code
);
