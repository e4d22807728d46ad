//! Resource limits of devices and streams (`aclrt*ResLimit`) and the stream whose limits the
//! calling thread uses.

use super::*;
use crate::device::limits;

/// The checks of the device resource-limit functions, in the runtime's order.
fn res_limit_device(dev: i32, t: u32) -> R {
    if dev < 0 {
        return fail(RT_INVALID_DEVICEID, format!("deviceId {dev} is negative"));
    }
    limits::check_type(t)?;
    crate::device::check(dev)?;
    if !crate::device::is_open(dev) {
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
        let s = crate::stream::get(handle(stream))?;
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
        let s = crate::stream::get(handle(stream))?;
        limits::check_type(type_)?;
        out.set(limits::stream_own(s.handle, type_).unwrap_or_else(|| limits::device(s.device, type_)));
        Ok(())
    }
}

acl! {
    /// `aclrtResetStreamResLimit`: the stream falls back to its device's limits.
    fn aclrtResetStreamResLimit(stream: aclrtStream) {
        let s = crate::stream::get(handle(stream))?;
        limits::reset_stream(s.handle);
        Ok(())
    }
}

acl! {
    /// `aclrtUseStreamResInCurrentThread`: the calling thread uses the stream's limits.
    fn aclrtUseStreamResInCurrentThread(stream: aclrtStream) {
        let s = crate::stream::get(handle(stream))?;
        limits::use_stream(s.handle);
        Ok(())
    }
}

acl! {
    /// `aclrtUnuseStreamResInCurrentThread`: the calling thread stops using the stream's limits.
    fn aclrtUnuseStreamResInCurrentThread(stream: aclrtStream) {
        let s = crate::stream::get(handle(stream))?;
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
        let (dev, _) = crate::device::context::current_ids()?;
        out.set(limits::device(dev, type_));
        Ok(())
    }
}
