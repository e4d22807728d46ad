//! Allocation with a configuration (`aclrtMallocWithCfg`, `aclrtMallocForTaskScheduler`,
//! `aclrtMallocHostWithCfg`): attribute lists naming the allocating module and the device.

use super::*;

/// The attributes of a configuration (none for a NULL configuration); `attrs` NULL with a
/// non-zero count is 100000 (the ACL layer's check).
///
/// # Safety
/// `cfg` is NULL or valid, and its `attrs` hold `numAttrs` elements.
unsafe fn attributes<'a>(cfg: *mut aclrtMallocConfig) -> R<&'a [aclrtMallocAttribute]> {
    // SAFETY: the caller's contract.
    let Some(c) = (unsafe { cfg.as_ref() }) else {
        return Ok(&[]);
    };
    if c.numAttrs == 0 {
        return Ok(&[]);
    }
    if c.attrs.is_null() {
        return fail(
            INVALID_PARAM,
            format!("cfg->attrs is NULL while cfg->numAttrs is {}", c.numAttrs),
        );
    }
    // SAFETY: the caller's contract: attrs holds numAttrs elements.
    Ok(unsafe { std::slice::from_raw_parts(c.attrs, c.numAttrs) })
}

/// The runtime's reading of the attributes: the reserved attribute and the module id are
/// accepted (the module id only labels the memory), a device id must be `device` (107000), any
/// other attribute is 107000. The last of repeated attributes wins.
fn check_attributes(attrs: &[aclrtMallocAttribute], device: Option<i32>) -> R {
    for (i, a) in attrs.iter().enumerate() {
        match a.attr {
            ACL_RT_MEM_ATTR_RSV | ACL_RT_MEM_ATTR_MODULE_ID => {}
            ACL_RT_MEM_ATTR_DEVICE_ID => {
                // SAFETY: the union is read as the member its attribute names.
                let id = unsafe { a.value.deviceId };
                let ok = match device {
                    Some(d) => id == d as u32,
                    None => id < state::device_count(),
                };
                if !ok {
                    let want = device.map_or_else(
                        || format!("a device id below {}", state::device_count()),
                        |d| format!("the current device {d}"),
                    );
                    return fail(
                        RT_PARAM_INVALID,
                        format!("cfg->attrs[{i}]: device id {id} is not {want}"),
                    );
                }
            }
            other => {
                return fail(
                    RT_PARAM_INVALID,
                    format!(
                        "cfg->attrs[{i}].attr {other} is not accepted here (0 reserved, 1 module \
                         id, 2 device id)"
                    ),
                );
            }
        }
    }
    Ok(())
}

/// `aclrtMallocWithCfg` and `aclrtMallocForTaskScheduler`: device memory with the policy, the
/// size rounded up to 32 bytes (no padding).
fn malloc_cfg(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    cfg: *mut aclrtMallocConfig,
    api: &str,
) -> R {
    // SAFETY: C contract (NULL or valid).
    let out = unsafe { Out::new(dev_ptr, "devPtr") }?;
    // SAFETY: C contract (NULL or valid, attrs holding numAttrs elements).
    let attrs = unsafe { attributes(cfg) }?;
    if size == 0 {
        return fail(INVALID_PARAM, "size is 0");
    }
    let dev = state::current_device_epoch()?;
    check_attributes(attrs, Some(dev.0))?;
    let capacity = config::with(|c| c.memory);
    let p = memory::malloc_device(api, dev, size, policy, Sizing::Align32, capacity)?;
    out.set(p as *mut c_void);
    Ok(())
}

acl! {
    /// `aclrtMallocWithCfg`: device memory with a policy and a configuration (module id,
    /// device id: the current device), freed with `aclrtFree`.
    fn aclrtMallocWithCfg(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy, cfg: *mut aclrtMallocConfig) {
        malloc_cfg(devPtr, size, policy, cfg, "aclrtMallocWithCfg")
    }
}

acl! {
    /// `aclrtMallocForTaskScheduler`: as `aclrtMallocWithCfg`, memory the task scheduler reads
    /// (one kind of device memory in the emulator).
    fn aclrtMallocForTaskScheduler(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy, cfg: *mut aclrtMallocConfig) {
        malloc_cfg(devPtr, size, policy, cfg, "aclrtMallocForTaskScheduler")
    }
}

acl! {
    /// `aclrtMallocHostWithCfg`: pinned host memory with a configuration (module id, device
    /// id), freed with `aclrtFreeHost`.
    fn aclrtMallocHostWithCfg(ptr: *mut *mut c_void, size: u64, cfg: *mut aclrtMallocConfig) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(ptr, "ptr") }?;
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        // SAFETY: C contract (NULL or valid, attrs holding numAttrs elements).
        let attrs = unsafe { attributes(cfg) }.map_err(|f| Fail { code: RT_PARAM_INVALID, ..f })?;
        state::current_ids()?;
        check_attributes(attrs, None)?;
        let size = usize::try_from(size).map_err(|_| Fail { code: RT_MEMORY_ALLOCATION, msg: format!("size {size} does not fit the address space") })?;
        out.set(memory::malloc_host(size)? as *mut c_void);
        Ok(())
    }
}
