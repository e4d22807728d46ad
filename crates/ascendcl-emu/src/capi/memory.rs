//! Memory: allocation (with a policy or a configuration) and release, memory information, pointer
//! attributes and address ranges, host registration and managed allocations.

use super::*;
use crate::memory;

fn malloc_common(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    sizing: Sizing,
    api: &str,
    cached: bool,
) -> R {
    // SAFETY: C contract (NULL or valid).
    let out = unsafe { Out::new(dev_ptr, "devPtr") }?;
    if size == 0 {
        return fail(INVALID_PARAM, "size is 0");
    }
    if cached && size as u64 > 1u64 << 50 {
        return fail(RT_PARAM_INVALID, format!("size {size} is above 2^50"));
    }
    let dev = crate::device::context::current_device_epoch()?;
    let capacity = config::with(|c| c.memory);
    let p = memory::malloc_device(api, dev, size, policy, sizing, capacity)?;
    out.set(p as *mut c_void);
    Ok(())
}

acl! {
    /// `aclrtMalloc`: device memory with a policy (huge pages as documented), 64-byte aligned.
    fn aclrtMalloc(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) {
        malloc_common(devPtr, size, policy, Sizing::Padded, "aclrtMalloc", false)
    }
}

acl! {
    /// `aclrtMallocAlign32`: as `aclrtMalloc`, size rounded to 32 without the extra 32 bytes.
    fn aclrtMallocAlign32(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) {
        malloc_common(devPtr, size, policy, Sizing::Align32, "aclrtMallocAlign32", false)
    }
}

acl! {
    /// `aclrtMallocCached`: as `aclrtMalloc`; sizes above 2^50 are 107000.
    fn aclrtMallocCached(devPtr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) {
        malloc_common(devPtr, size, policy, Sizing::Padded, "aclrtMallocCached", true)
    }
}

acl! {
    /// `aclrtMallocHost`: pinned host memory.
    fn aclrtMallocHost(hostPtr: *mut *mut c_void, size: usize) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(hostPtr, "hostPtr") }?;
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        crate::device::context::current_ids()?;
        out.set(memory::malloc_host(size)? as *mut c_void);
        Ok(())
    }
}

acl! {
    /// `aclrtFree`: frees device memory at once (work in flight is not waited for).
    fn aclrtFree(devPtr: *mut c_void) {
        if devPtr.is_null() {
            return fail(INVALID_PARAM, "devPtr is NULL");
        }
        // A memory call: needs a current context (107002), after the NULL check.
        let (dev, _) = crate::device::context::current_ids()?;
        crate::device::drain(dev);
        memory::write().free(devPtr as usize, Kind::Device(0))
    }
}

acl! {
    /// `aclrtFreeHost`: frees pinned host memory; a device pointer is 107000.
    fn aclrtFreeHost(hostPtr: *mut c_void) {
        if hostPtr.is_null() {
            return fail(INVALID_PARAM, "hostPtr is NULL");
        }
        // A memory call: needs a current context (107002), after the NULL check.
        crate::device::context::current_ids()?;
        memory::write().free(hostPtr as usize, Kind::Pinned)
    }
}

acl! {
    /// `aclrtGetMemInfo`: free and total bytes of the current device (DDR attributes: 0, 0).
    fn aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) {
        // SAFETY: C contract (NULL or valid).
        let (f, t) = unsafe { (Out::new(free, "free")?, Out::new(total, "total")?) };
        if attr > ACL_MEM_P2P_HUGE1G {
            return fail(RT_INVALID_MEMORY_TYPE, format!("attr {attr} is not an aclrtMemAttr (0-17)"));
        }
        let (dev, _) = crate::device::context::current_ids()?;
        let ddr = matches!(attr, ACL_DDR_MEM | ACL_DDR_MEM_HUGE | ACL_DDR_MEM_NORMAL | ACL_DDR_MEM_P2P_HUGE | ACL_DDR_MEM_P2P_NORMAL);
        if ddr {
            f.set(0);
            t.set(0);
            return Ok(());
        }
        let cap = config::with(|c| c.memory);
        let used = memory::read().used(dev);
        f.set(cap.saturating_sub(used) as usize);
        t.set(cap as usize);
        Ok(())
    }
}

acl! {
    /// `aclrtPointerGetAttributes`: location (HOST 0 for pinned/registered, DEVICE 1,
    /// UNREGISTERED 2) and page size.
    fn aclrtPointerGetAttributes(ptr: *const c_void, attributes: *mut aclrtPtrAttributes) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(attributes, "attributes") }?;
        let (loc, page, managed) = {
            let t = memory::read();
            let (loc, page) = t.attributes(ptr as usize)?;
            (loc, page, t.is_managed(ptr as usize))
        };
        let (type_, id) = match loc {
            // Location type 3 is MANAGED (the enum of these headers does not name it).
            Loc::Device(d) if managed => (3, d as u32),
            Loc::Host => (ACL_MEM_LOCATION_TYPE_HOST, 0),
            Loc::Device(d) => (ACL_MEM_LOCATION_TYPE_DEVICE, d as u32),
            Loc::Unreg => (ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0),
        };
        out.set(aclrtPtrAttributes {
            location: aclrtMemLocation { id, type_ },
            pageSize: page,
            rsv: [0; 4],
        });
        Ok(())
    }
}

acl! {
    /// `aclrtMemGetAddressRange`: the start and size of the allocation that contains `ptr`:
    /// device memory, pinned host memory, a mapping made by `aclrtMapMem`, or IPC memory
    /// imported from another process (the size its exporter shared). An address in no live
    /// allocation is 107000.
    fn aclrtMemGetAddressRange(ptr: *mut c_void, pbase: *mut *mut c_void, psize: *mut usize) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let (base, size) = unsafe { (Out::new(pbase, "pbase")?, Out::new(psize, "psize")?) };
        let (start, len) = memory::read().range_of(ptr as usize).ok_or_else(|| Fail {
            code: RT_PARAM_INVALID,
            msg: format!("{ptr:p} is not in memory allocated, mapped or imported through the runtime"),
        })?;
        base.set(start as *mut c_void);
        size.set(len);
        Ok(())
    }
}

acl! {
    /// `aclrtHostRegister`: makes a host range count as pinned memory; `devPtr` receives the
    /// same address (host and device share the address space in the emulator).
    fn aclrtHostRegister(ptr: *mut c_void, size: u64, type_: aclrtHostRegisterType, devPtr: *mut *mut c_void) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(devPtr, "devPtr") }?;
        const KNOWN: u32 = ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY;
        if type_ & !KNOWN != 0 {
            return fail(
                RT_FEATURE_NOT_SUPPORT,
                format!("type {type_:#x} has unsupported bits {:#x}", type_ & !KNOWN),
            );
        }
        crate::device::context::current_ids()?;
        let size = usize::try_from(size).map_err(|_| Fail {
            code: INVALID_PARAM,
            msg: format!("size {size} does not fit the address space"),
        })?;
        memory::write().register(ptr as usize, size)?;
        out.set(ptr);
        Ok(())
    }
}

acl! {
    /// `aclrtHostRegisterV2`: registers a host range with `ACL_HOST_REG_*` flags; a flag word of
    /// 0 or with unknown bits is 107000, an already registered range 507910.
    fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        const KNOWN: u32 = ACL_HOST_REG_MAPPED
            | ACL_HOST_REG_IOMEMORY
            | ACL_HOST_REG_READONLY
            | ACL_HOST_REG_PINNED;
        if flag == 0 {
            return fail(RT_PARAM_INVALID, "flag is 0 (at least one ACL_HOST_REG_* bit is needed)");
        }
        if flag & !KNOWN != 0 {
            return fail(
                RT_PARAM_INVALID,
                format!("flag {flag:#x} has unknown bits {:#x}", flag & !KNOWN),
            );
        }
        crate::device::context::current_ids()?;
        let size = usize::try_from(size).map_err(|_| Fail {
            code: INVALID_PARAM,
            msg: format!("size {size} does not fit the address space"),
        })?;
        memory::write().register(ptr as usize, size)
    }
}

acl! {
    /// `aclrtHostGetDevicePointer`: the device address of registered host memory (the same
    /// address: host and device share the address space in the emulator); 507911 when the
    /// pointer is not in a registered range.
    fn aclrtHostGetDevicePointer(pHost: *mut c_void, pDevice: *mut *mut c_void, flag: u32) {
        if pHost.is_null() {
            return fail(INVALID_PARAM, "pHost is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(pDevice, "pDevice") }?;
        if flag != 0 {
            return fail(RT_PARAM_INVALID, format!("flag {flag:#x} must be 0 (reserved)"));
        }
        if !memory::read().is_registered(pHost as usize) {
            return fail(
                HOST_MEMORY_NOT_REGISTERED,
                format!("pHost {pHost:p} is not in a registered host range"),
            );
        }
        out.set(pHost);
        Ok(())
    }
}

acl! {
    /// `aclrtHostMemMapCapabilities`: whether an engine of the device can reach host memory
    /// through a mapping. Host and device share one address space in the emulator, so every
    /// engine type can.
    fn aclrtHostMemMapCapabilities(deviceId: u32, hacType: aclrtHacType, capabilities: *mut aclrtHostMemMapCapability) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(capabilities, "capabilities") }?;
        let n = crate::device::count();
        if deviceId >= n {
            return fail(RT_PARAM_INVALID, format!("deviceId {deviceId} is not below the device count {n}"));
        }
        if hacType > ACL_RT_HAC_TYPE_CCU {
            return fail(RT_PARAM_INVALID, format!("hacType {hacType} is not an aclrtHacType (0-9)"));
        }
        out.set(ACL_RT_HOST_MEM_MAP_SUPPORTED);
        Ok(())
    }
}

acl! {
    /// `aclrtHostUnregister`: 507911 for a pointer that is not a registered range's start.
    fn aclrtHostUnregister(ptr: *mut c_void) {
        if ptr.is_null() {
            return fail(INVALID_PARAM, "ptr is NULL");
        }
        memory::write().unregister(ptr as usize)
    }
}

acl! {
    /// `aclrtMemAllocManaged`: managed memory usable by host and device, `size` rounded up to
    /// 2 MiB, placed from 0x90000000000 when the address space allows; `flag` must be
    /// `ACL_RT_MEM_ATTACH_GLOBAL` (1). Freed with `aclrtFree`; its pointer attributes report
    /// location type 3 (managed).
    fn aclrtMemAllocManaged(ptr: *mut *mut c_void, size: u64, flag: u32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(ptr, "ptr") }?;
        if flag != ACL_RT_MEM_ATTACH_GLOBAL {
            return fail(INVALID_PARAM, format!("flag {flag} must be ACL_RT_MEM_ATTACH_GLOBAL (1)"));
        }
        if size == 0 {
            return fail(RT_PARAM_INVALID, "size is 0");
        }
        let dev = crate::device::context::current_device_epoch()?;
        let size = usize::try_from(size).map_err(|_| Fail { code: RT_MEMORY_ALLOCATION, msg: format!("size {size} does not fit the address space") })?;
        out.set(memory::malloc_managed(dev, size)? as *mut c_void);
        Ok(())
    }
}

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
                    None => id < crate::device::count(),
                };
                if !ok {
                    let want = device.map_or_else(
                        || format!("a device id below {}", crate::device::count()),
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
    let dev = crate::device::context::current_device_epoch()?;
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
        crate::device::context::current_ids()?;
        check_attributes(attrs, None)?;
        let size = usize::try_from(size).map_err(|_| Fail { code: RT_MEMORY_ALLOCATION, msg: format!("size {size} does not fit the address space") })?;
        out.set(memory::malloc_host(size)? as *mut c_void);
        Ok(())
    }
}

acl! {
    /// `aclrtFreeWithDevSync`: synchronises the current device, then frees device memory.
    fn aclrtFreeWithDevSync(devPtr: *mut c_void) {
        if devPtr.is_null() {
            return fail(INVALID_PARAM, "devPtr is NULL");
        }
        crate::device::synchronize(None)?;
        memory::write().free(devPtr as usize, Kind::Device(0))
    }
}

acl! {
    /// `aclrtFreeHostWithDevSync`: synchronises the current device, then frees pinned memory.
    fn aclrtFreeHostWithDevSync(hostPtr: *mut c_void) {
        if hostPtr.is_null() {
            return fail(INVALID_PARAM, "hostPtr is NULL");
        }
        crate::device::synchronize(None)?;
        memory::write().free(hostPtr as usize, Kind::Pinned)
    }
}
