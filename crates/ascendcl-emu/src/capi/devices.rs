//! Devices and contexts: set/reset, counts, synchronisation, peer access, contexts.

use super::*;

acl! {
    /// `aclrtSetDevice`: joins (or creates) the device's default context and makes it current.
    fn aclrtSetDevice(deviceId: i32) {
        state::set_device(deviceId)
    }
}

acl! {
    /// `aclrtResetDevice`: drops one reference; the last releases the device's resources.
    fn aclrtResetDevice(deviceId: i32) {
        state::reset_device(deviceId, false)
    }
}

acl! {
    /// `aclrtResetDeviceForce`: releases the device at once, whatever its reference count.
    fn aclrtResetDeviceForce(deviceId: i32) {
        state::reset_device(deviceId, true)
    }
}

acl! {
    /// `aclrtGetDevice`: the current context's device; 107002 without one.
    fn aclrtGetDevice(deviceId: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(deviceId, "deviceId") }?;
        out.set(state::get_device()?);
        Ok(())
    }
}

acl! {
    /// `aclrtGetDeviceCount`: the configured number of devices.
    fn aclrtGetDeviceCount(count: *mut u32) {
        // SAFETY: C contract (NULL or valid).
        unsafe { Out::new(count, "count") }?.set(state::device_count());
        Ok(())
    }
}

acl! {
    /// `aclrtSynchronizeDevice`: waits for every stream of the current device.
    fn aclrtSynchronizeDevice() {
        state::synchronize_device(None)
    }
}

acl! {
    /// `aclrtSynchronizeDeviceWithTimeout`: as `aclrtSynchronizeDevice`, up to `timeout` ms
    /// (-1: forever); 507046 on expiry.
    fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) {
        state::synchronize_device(timeout_arg(timeout)?)
    }
}

acl! {
    /// `aclrtDeviceCanAccessPeer`: 1 for two different emulated devices.
    fn aclrtDeviceCanAccessPeer(canAccessPeer: *mut i32, deviceId: i32, peerDeviceId: i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(canAccessPeer, "canAccessPeer") }?;
        state::check_device(deviceId)?;
        state::check_device(peerDeviceId)?;
        if deviceId == peerDeviceId {
            return fail(
                RT_PARAM_INVALID,
                format!("deviceId and peerDeviceId are both {deviceId}"),
            );
        }
        out.set(1);
        Ok(())
    }
}

acl! {
    /// `aclrtDeviceEnablePeerAccess`: lets copies between the current device and the peer run.
    fn aclrtDeviceEnablePeerAccess(peerDeviceId: i32, flags: u32) {
        if flags != 0 {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} must be 0 (reserved)"));
        }
        state::set_peer(peerDeviceId, true)
    }
}

acl! {
    /// `aclrtDeviceDisablePeerAccess`.
    fn aclrtDeviceDisablePeerAccess(peerDeviceId: i32) {
        state::set_peer(peerDeviceId, false)
    }
}

acl! {
    /// `aclrtCreateContext`: a new context on the device, made current for the calling thread.
    fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(context, "context") }?;
        out.set(as_ptr(state::create_context(deviceId)?));
        Ok(())
    }
}

acl! {
    /// `aclrtDestroyContext`: destroys a context made by `aclrtCreateContext` and its streams.
    fn aclrtDestroyContext(context: aclrtContext) {
        if context.is_null() {
            return fail(INVALID_PARAM, "context is NULL");
        }
        state::destroy_context(handle(context))
    }
}

acl! {
    /// `aclrtSetCurrentContext`: makes a context current for the calling thread.
    fn aclrtSetCurrentContext(context: aclrtContext) {
        if context.is_null() {
            return fail(INVALID_PARAM, "context is NULL");
        }
        state::set_current_context(handle(context))
    }
}

acl! {
    /// `aclrtGetCurrentContext`: the calling thread's current context; 107002 without one.
    fn aclrtGetCurrentContext(context: *mut aclrtContext) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(context, "context") }?;
        out.set(as_ptr(state::current_context()?));
        Ok(())
    }
}

acl! {
    /// `aclrtCtxGetCurrentDefaultStream`: the current context's default stream.
    fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(stream, "stream") }?;
        let ctx = state::current()?;
        out.set(as_ptr(ctx.default_stream.handle));
        Ok(())
    }
}
