//! Device queries and errors: capabilities and attributes from the SoC table, utilisation and
//! status, resource limits, error details, exception callbacks and task ids.

use super::*;
use crate::exception;
use crate::limits;
use crate::soc;

/// A device id given as `u32` (the `aclGetDeviceCapability` / `aclrtGetDeviceInfo` style),
/// checked against the count with `code`.
fn check_device_u32(dev: u32, code: aclError) -> R<i32> {
    let n = state::device_count();
    if dev >= n {
        return fail(code, format!("deviceId {dev} is outside [0, {n})"));
    }
    Ok(dev as i32)
}

acl! {
    /// `aclGetDeviceCapability`: AI cores, vector cores or L2 size of the emulated SoC;
    /// everything invalid is 100000 (the ACL layer's checks).
    fn aclGetDeviceCapability(deviceId: u32, deviceInfo: aclDeviceInfo, value: *mut i64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        check_device_u32(deviceId, INVALID_PARAM)?;
        let s = soc::current();
        let v = match deviceInfo {
            ACL_DEVICE_INFO_AI_CORE_NUM => i64::from(s.ai_core),
            ACL_DEVICE_INFO_VECTOR_CORE_NUM => i64::from(s.vector_core),
            ACL_DEVICE_INFO_L2_SIZE => s.l2 as i64,
            other => {
                return fail(INVALID_PARAM, format!("deviceInfo {other} is not AI_CORE_NUM (0), VECTOR_CORE_NUM (1) or L2_SIZE (2)"));
            }
        };
        out.set(v);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceCapability`: whether a device feature is supported (neither
    /// `ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV` nor `ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV`
    /// is emulated: `ACL_DEV_FEATURE_NOT_SUPPORT`).
    fn aclrtGetDeviceCapability(deviceId: i32, devFeatureType: aclrtDevFeatureType, value: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        if !matches!(devFeatureType, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV | ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV) {
            return fail(RT_PARAM_INVALID, format!("devFeatureType {devFeatureType} is not a known feature (1 or 21)"));
        }
        state::check_device(deviceId)?;
        out.set(ACL_DEV_FEATURE_NOT_SUPPORT as i32);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceInfo`: a device attribute; a device id past the count and an unknown
    /// attribute are 107000.
    fn aclrtGetDeviceInfo(deviceId: u32, attr: aclrtDevAttr, value: *mut i64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        let dev = check_device_u32(deviceId, RT_PARAM_INVALID)?;
        let s = soc::current();
        let v = match attr {
            ACL_DEV_ATTR_AICPU_CORE_NUM => i64::from(s.aicpu),
            ACL_DEV_ATTR_AICORE_CORE_NUM | ACL_DEV_ATTR_CUBE_CORE_NUM => i64::from(s.ai_core),
            ACL_DEV_ATTR_VECTOR_CORE_NUM => i64::from(s.vector_core),
            // SIMT limits exist on Ascend 950 only: 0 elsewhere.
            ACL_DEV_ATTR_WARP_SIZE..=ACL_DEV_ATTR_MAX_BLOCK_DIM_Z => 0,
            ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE => config::with(|c| c.memory) as i64,
            ACL_DEV_ATTR_L2_CACHE_SIZE => s.l2 as i64,
            ACL_DEV_ATTR_PHY_CHIP_ID | ACL_DEV_ATTR_SUPER_POD_DEVICE_ID => i64::from(dev),
            ACL_DEV_ATTR_SMP_ID
            | ACL_DEV_ATTR_SUPER_POD_SERVER_ID
            | ACL_DEV_ATTR_SUPER_POD_ID
            | ACL_DEV_ATTR_CUST_OP_PRIVILEGE
            | ACL_DEV_ATTR_MAINBOARD_ID
            | ACL_DEV_ATTR_HD_CONNECT_TYPE
            | ACL_DEV_ATTR_IS_VIRTUAL => 0,
            ACL_DEV_ATTR_NPU_ARCH => s.npu_arch,
            other => return fail(RT_PARAM_INVALID, format!("attr {other} is not an aclrtDevAttr")),
        };
        out.set(v);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceUtilizationRate`: the emulator runs no kernels, so cube, vector and AI CPU
    /// utilisation are 0 (-1 for a device id outside the count, as for a query that fails);
    /// memory utilisation is always -1, as on hardware. `utilizationExtend` must be NULL.
    fn aclrtGetDeviceUtilizationRate(deviceId: i32, utilizationInfo: *mut aclrtUtilizationInfo) {
        if utilizationInfo.is_null() {
            return fail(INVALID_PARAM, "utilizationInfo is NULL");
        }
        // SAFETY: C contract: a non-NULL pointer is valid for reads and writes.
        let u = unsafe { &mut *utilizationInfo };
        if !u.utilizationExtend.is_null() {
            return fail(INVALID_PARAM, "utilizationInfo->utilizationExtend is reserved and must be NULL");
        }
        let v = if state::check_device(deviceId).is_ok() { 0 } else { -1 };
        u.cubeUtilization = v;
        u.vectorUtilization = v;
        u.aicpuUtilization = v;
        u.memoryUtilization = -1;
        Ok(())
    }
}

acl! {
    /// `aclrtQueryDeviceStatus`: `ACL_RT_DEVICE_STATUS_NORMAL` (emulated devices do not fail).
    fn aclrtQueryDeviceStatus(deviceId: i32, deviceStatus: *mut aclrtDeviceStatus) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(deviceStatus, "deviceStatus") }?;
        state::check_device(deviceId)?;
        out.set(ACL_RT_DEVICE_STATUS_NORMAL);
        Ok(())
    }
}

/// The checks of the device resource-limit functions, in the runtime's order.
fn res_limit_device(dev: i32, t: u32) -> R {
    if dev < 0 {
        return fail(RT_INVALID_DEVICEID, format!("deviceId {dev} is negative"));
    }
    limits::check_type(t)?;
    state::check_device(dev)?;
    if !state::device_is_open(dev) {
        return fail(
            RT_DEV_SETUP_ERROR,
            format!("device {dev} is not open in this process (call aclrtSetDevice first)"),
        );
    }
    Ok(())
}

acl! {
    /// `aclrtSetDeviceResLimit`: the cube (0) or vector (1) cores later launches on the device
    /// may use, process-wide (the last call wins); at most the hardware count (107000 above);
    /// the device must be open (507033). Recorded and reported; the emulator runs no kernels.
    fn aclrtSetDeviceResLimit(deviceId: i32, type_: aclrtDevResLimitType, value: u32) {
        res_limit_device(deviceId, type_)?;
        limits::check_value(type_, value)?;
        limits::set_device(deviceId, type_, value);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceResLimit`: the current limit (the hardware count unless set).
    fn aclrtGetDeviceResLimit(deviceId: i32, type_: aclrtDevResLimitType, value: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        res_limit_device(deviceId, type_)?;
        out.set(limits::device(deviceId, type_));
        Ok(())
    }
}

acl! {
    /// `aclrtResetDeviceResLimit`: restores the hardware counts.
    fn aclrtResetDeviceResLimit(deviceId: i32) {
        res_limit_device(deviceId, 0)?;
        limits::reset_device(deviceId);
        Ok(())
    }
}

acl! {
    /// `aclrtSetStreamResLimit`: a stream's own limit, for the threads that use its limits.
    fn aclrtSetStreamResLimit(stream: aclrtStream, type_: aclrtDevResLimitType, value: u32) {
        let s = state::stream(handle(stream))?;
        limits::check_type(type_)?;
        limits::check_value(type_, value)?;
        limits::set_stream(s.handle, type_, value);
        Ok(())
    }
}

acl! {
    /// `aclrtGetStreamResLimit`: the stream's limit, or its device's when it has none.
    fn aclrtGetStreamResLimit(stream: aclrtStream, type_: aclrtDevResLimitType, value: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        let s = state::stream(handle(stream))?;
        limits::check_type(type_)?;
        out.set(limits::stream_own(s.handle, type_).unwrap_or_else(|| limits::device(s.device, type_)));
        Ok(())
    }
}

acl! {
    /// `aclrtResetStreamResLimit`: the stream falls back to its device's limits.
    fn aclrtResetStreamResLimit(stream: aclrtStream) {
        let s = state::stream(handle(stream))?;
        limits::reset_stream(s.handle);
        Ok(())
    }
}

acl! {
    /// `aclrtUseStreamResInCurrentThread`: the calling thread uses the stream's limits.
    fn aclrtUseStreamResInCurrentThread(stream: aclrtStream) {
        let s = state::stream(handle(stream))?;
        limits::use_stream(s.handle);
        Ok(())
    }
}

acl! {
    /// `aclrtUnuseStreamResInCurrentThread`: the calling thread stops using the stream's limits.
    fn aclrtUnuseStreamResInCurrentThread(stream: aclrtStream) {
        let s = state::stream(handle(stream))?;
        if limits::used_stream() == s.handle {
            limits::use_stream(0);
        }
        Ok(())
    }
}

acl! {
    /// `aclrtGetResInCurrentThread`: the limit of the stream the thread uses, when it has one;
    /// otherwise the current device's (needs a current context, 107002).
    fn aclrtGetResInCurrentThread(type_: aclrtDevResLimitType, value: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        limits::check_type(type_)?;
        let used = limits::used_stream();
        if used != 0
            && let Some(v) = limits::stream_own(used, type_)
        {
            out.set(v);
            return Ok(());
        }
        let (dev, _) = state::current_ids()?;
        out.set(limits::device(dev, type_));
        Ok(())
    }
}

acl! {
    /// `aclrtGetErrorVerbose`: the device's error details. Emulated devices have no hardware
    /// faults: after a kernel failed on the device, the last failure (`ACL_RT_ERROR_MEMORY` with
    /// the access for global memory outside every allocation, else `ACL_RT_ERROR_OTHERS`, the
    /// types A2/A3 report), otherwise `ACL_RT_NO_ERROR`; never anything to repair.
    fn aclrtGetErrorVerbose(deviceId: i32, errorInfo: *mut aclrtErrorInfo) {
        if errorInfo.is_null() {
            return fail(INVALID_PARAM, "errorInfo is NULL");
        }
        state::check_device(deviceId)?;
        let last = crate::kernel_run::device_error(deviceId);
        // SAFETY: C contract: valid for writing one aclrtErrorInfo; the fields written are plain
        // integers and pointers-as-values.
        unsafe {
            let e = &mut *errorInfo;
            e.tryRepair = 0;
            e.hasDetail = 0;
            e.reserved = [0; 2];
            e.errorType = ACL_RT_NO_ERROR;
            match last {
                Some(crate::kernel_run::DeviceError::Memory { addr, bytes }) => {
                    e.errorType = ACL_RT_ERROR_MEMORY;
                    e.hasDetail = 1;
                    let d = &mut e.detail.uceInfo;
                    d.arraySize = 1;
                    d.memUceInfoArray[0].addr = addr as usize as *mut c_void;
                    d.memUceInfoArray[0].len = bytes as usize;
                    d.memUceInfoArray[0].reserved = [0; 14];
                }
                Some(crate::kernel_run::DeviceError::Other) => e.errorType = ACL_RT_ERROR_OTHERS,
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
