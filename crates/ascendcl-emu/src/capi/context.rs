//! Contexts: creation, destruction, the calling thread's current context and its default
//! stream.

use super::*;

acl! {
    /// `aclrtCreateContext`: a new context on the device, made current for the calling thread.
    fn aclrtCreateContext(context: *mut aclrtContext, deviceId: i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(context, "context") }?;
        out.set(as_ptr(crate::device::context::create(deviceId)?));
        Ok(())
    }
}

acl! {
    /// `aclrtDestroyContext`: destroys a context made by `aclrtCreateContext` and its streams.
    fn aclrtDestroyContext(context: aclrtContext) {
        if context.is_null() {
            return fail(INVALID_PARAM, "context is NULL");
        }
        crate::device::context::destroy(handle(context))
    }
}

acl! {
    /// `aclrtSetCurrentContext`: makes a context current for the calling thread.
    fn aclrtSetCurrentContext(context: aclrtContext) {
        if context.is_null() {
            return fail(INVALID_PARAM, "context is NULL");
        }
        crate::device::context::set_current_context(handle(context))
    }
}

acl! {
    /// `aclrtGetCurrentContext`: the calling thread's current context; 107002 without one.
    fn aclrtGetCurrentContext(context: *mut aclrtContext) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(context, "context") }?;
        out.set(as_ptr(crate::device::context::current_context()?));
        Ok(())
    }
}

acl! {
    /// `aclrtCtxGetCurrentDefaultStream`: the current context's default stream.
    fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(stream, "stream") }?;
        let ctx = crate::device::context::current()?;
        out.set(as_ptr(ctx.default_stream.handle));
        Ok(())
    }
}
