//! Virtual memory: reservations, physical allocations, mappings and their access, and physical
//! memory shared with other processes through shareable handles.

use super::ipc::read_pids;
use super::*;
use crate::memory;
use crate::memory::ipc::{self, Key, What};
use crate::memory::vmm;

/// The memory attributes `aclrtMallocPhysical` accepts.
fn attr_ok(a: aclrtMemAttr) -> bool {
    matches!(a, 2..=7 | 10 | 12..=17)
}

fn is_ddr(a: aclrtMemAttr) -> bool {
    matches!(
        a,
        ACL_DDR_MEM_HUGE | ACL_DDR_MEM_NORMAL | ACL_DDR_MEM_P2P_HUGE | ACL_DDR_MEM_P2P_NORMAL
    )
}

fn is_1g(a: aclrtMemAttr) -> bool {
    matches!(a, ACL_HBM_MEM_HUGE1G | ACL_MEM_HUGE1G | ACL_MEM_P2P_HUGE1G)
}

/// Checks a physical memory property in the runtime's order; the device (None: host memory)
/// and the granularity.
fn check_prop(p: &aclrtPhysicalMemProp) -> R<(Option<i32>, usize)> {
    if p.handleType != ACL_MEM_HANDLE_TYPE_NONE {
        return fail(
            INVALID_PARAM,
            format!(
                "prop.handleType {} must be ACL_MEM_HANDLE_TYPE_NONE",
                p.handleType
            ),
        );
    }
    if p.allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED {
        return fail(
            INVALID_PARAM,
            format!(
                "prop.allocationType {} must be ACL_MEM_ALLOCATION_TYPE_PINNED",
                p.allocationType
            ),
        );
    }
    let device = match p.location.type_ {
        ACL_MEM_LOCATION_TYPE_DEVICE => true,
        ACL_MEM_LOCATION_TYPE_HOST | ACL_MEM_LOCATION_TYPE_HOST_NUMA => false,
        t => {
            return fail(
                INVALID_PARAM,
                format!("prop.location.type {t} is not HOST, DEVICE or HOST_NUMA"),
            );
        }
    };
    if device && is_ddr(p.memAttr) {
        return fail(
            INVALID_PARAM,
            format!(
                "prop.memAttr {} is host (DDR) memory; the location is a device",
                p.memAttr
            ),
        );
    }
    if !attr_ok(p.memAttr) {
        return fail(
            INVALID_PARAM,
            format!(
                "prop.memAttr {} is not accepted for physical memory",
                p.memAttr
            ),
        );
    }
    if device {
        crate::device::check(p.location.id as i32)?;
    } else if p.location.type_ == ACL_MEM_LOCATION_TYPE_HOST_NUMA {
        crate::device::context::current_ids()?;
    }
    if is_1g(p.memAttr) && !device {
        return fail(
            RT_FEATURE_NOT_SUPPORT,
            "1 GiB pages exist for device memory only",
        );
    }
    let g = if is_1g(p.memAttr) {
        vmm::GIB1
    } else if device
        || matches!(
            p.memAttr,
            ACL_DDR_MEM_HUGE | ACL_DDR_MEM_P2P_HUGE | ACL_MEM_HUGE | ACL_MEM_P2P_HUGE
        )
    {
        vmm::MIB2
    } else {
        memory::page_size() as usize
    };
    Ok((device.then_some(p.location.id as i32), g))
}

acl! {
    /// `aclrtReserveMemAddress`: reserves address space (rounded up to 2 MiB, aligned to 2 MiB
    /// or to a larger power-of-two `alignment`); `expectPtr` is a hint; `flags` 0 or 1.
    fn aclrtReserveMemAddress(virPtr: *mut *mut c_void, size: usize, alignment: usize, expectPtr: *mut c_void, flags: u64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(virPtr, "virPtr") }?;
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        if flags > 1 {
            return fail(INVALID_PARAM, format!("flags {flags:#x} is not 0 or 1"));
        }
        out.set(vmm::reserve(size, alignment, expectPtr as usize)? as *mut c_void);
        Ok(())
    }
}

acl! {
    /// `aclrtReleaseMemAddress`: releases a reservation that has no mapping left.
    fn aclrtReleaseMemAddress(virPtr: *mut c_void) {
        if virPtr.is_null() {
            return fail(INVALID_PARAM, "virPtr is NULL");
        }
        vmm::release(virPtr as usize)
    }
}

acl! {
    /// `aclrtMallocPhysical`: physical memory of the property's device (charged against its
    /// capacity) or of the host, `size` rounded up to the granularity, in a shared memory file
    /// ready for export.
    fn aclrtMallocPhysical(handle: *mut aclrtDrvMemHandle, size: usize, prop: *const aclrtPhysicalMemProp, flags: u64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(handle, "handle") }?;
        if prop.is_null() {
            return fail(INVALID_PARAM, "prop is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        if flags != 0 {
            return fail(INVALID_PARAM, format!("flags {flags:#x} must be 0"));
        }
        // SAFETY: a non-NULL prop points to a property (C contract).
        let (device, g) = check_prop(unsafe { &*prop })?;
        out.set(vmm::malloc(size, g, device)? as *mut c_void);
        Ok(())
    }
}

acl! {
    /// `aclrtFreePhysical`: released now, or when its last mapping goes.
    fn aclrtFreePhysical(handle: aclrtDrvMemHandle) {
        if handle.is_null() {
            return fail(INVALID_PARAM, "handle is NULL");
        }
        crate::device::drain_current();
        vmm::free(handle as usize)
    }
}

acl! {
    /// `aclrtMapMem`: maps a whole physical allocation (`offset` 0, `size` its size) at
    /// `virPtr` inside a reservation, readable and writable; the range counts as device memory
    /// (or host memory) for copies.
    fn aclrtMapMem(virPtr: *mut c_void, size: usize, offset: usize, handle: aclrtDrvMemHandle, flags: u64) {
        if virPtr.is_null() || handle.is_null() {
            return fail(INVALID_PARAM, "virPtr or handle is NULL");
        }
        if size == 0 {
            return fail(INVALID_PARAM, "size is 0");
        }
        if flags != 0 {
            return fail(INVALID_PARAM, format!("flags {flags:#x} must be 0"));
        }
        vmm::map(virPtr as usize, size, offset, handle as usize)
    }
}

acl! {
    /// `aclrtUnmapMem`: unmaps a mapping made by `aclrtMapMem` (the reservation stays).
    fn aclrtUnmapMem(virPtr: *mut c_void) {
        if virPtr.is_null() {
            return fail(INVALID_PARAM, "virPtr is NULL");
        }
        crate::device::drain_current();
        vmm::unmap(virPtr as usize)
    }
}

acl! {
    /// `aclrtMemSetAccess`: the range must be a mapping; `ACL_RT_MEM_ACCESS_FLAGS_READWRITE`
    /// (the only access supported, 207000 otherwise) for a host or device location. A mapping
    /// is readable and writable by devices from the start; a host location makes a mapping of
    /// device memory accessible to host code (as the runtime maps device memory for the host),
    /// until it is unmapped.
    fn aclrtMemSetAccess(virPtr: *mut c_void, size: usize, desc: *mut aclrtMemAccessDesc, count: usize) {
        if virPtr.is_null() || desc.is_null() {
            return fail(RT_PARAM_INVALID, "virPtr or desc is NULL");
        }
        if count == 0 {
            return fail(RT_PARAM_INVALID, "count is 0");
        }
        vmm::mapping(virPtr as usize, size)?;
        // SAFETY: the array holds `count` descriptors (C contract).
        let all = unsafe { std::slice::from_raw_parts(desc, count) };
        for (i, d) in all.iter().enumerate() {
            if !matches!(d.location.type_, ACL_MEM_LOCATION_TYPE_HOST | ACL_MEM_LOCATION_TYPE_DEVICE) {
                return fail(RT_PARAM_INVALID, format!("desc[{i}].location.type {} is not HOST or DEVICE", d.location.type_));
            }
            if d.location.type_ == ACL_MEM_LOCATION_TYPE_DEVICE {
                crate::device::check(d.location.id as i32)?;
            }
            if d.flags != ACL_RT_MEM_ACCESS_FLAGS_READWRITE {
                return fail(RT_FEATURE_NOT_SUPPORT, format!("desc[{i}].flags {}: only ACL_RT_MEM_ACCESS_FLAGS_READWRITE is supported", d.flags));
            }
        }
        if all.iter().any(|d| d.location.type_ == ACL_MEM_LOCATION_TYPE_HOST) {
            vmm::grant_host(virPtr as usize, size)?;
        }
        Ok(())
    }
}

acl! {
    /// `aclrtMemGetAccess`: a mapped address's location and `ACL_RT_MEM_ACCESS_FLAGS_READWRITE`.
    fn aclrtMemGetAccess(virPtr: *mut c_void, location: *mut aclrtMemLocation, flag: *mut u64) {
        if virPtr.is_null() {
            return fail(INVALID_PARAM, "virPtr is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let (l, f) = unsafe { (Out::new(location, "location")?, Out::new(flag, "flag")?) };
        let dev = vmm::mapping_at(virPtr as usize).ok_or_else(|| Fail {
            code: RT_PARAM_INVALID,
            msg: format!("{virPtr:p} is not in a mapping made by aclrtMapMem"),
        })?;
        l.set(match dev {
            Some(d) => aclrtMemLocation { id: d as u32, type_: ACL_MEM_LOCATION_TYPE_DEVICE },
            None => aclrtMemLocation { id: 0, type_: ACL_MEM_LOCATION_TYPE_HOST },
        });
        f.set(u64::from(ACL_RT_MEM_ACCESS_FLAGS_READWRITE));
        Ok(())
    }
}

acl! {
    /// `aclrtMemGetAllocationGranularity`: 1 GiB for 1 GiB-page attributes, 2 MiB for device
    /// memory and huge-page host memory, the page size for normal host memory (minimum and
    /// recommended alike).
    fn aclrtMemGetAllocationGranularity(prop: *mut aclrtPhysicalMemProp, option: aclrtMemGranularityOptions, granularity: *mut usize) {
        if prop.is_null() {
            return fail(INVALID_PARAM, "prop is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(granularity, "granularity") }?;
        if option > ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED {
            return fail(INVALID_PARAM, format!("option {option} is not MINIMUM (0) or RECOMMENDED (1)"));
        }
        // SAFETY: a non-NULL prop points to a property (C contract).
        let (_, g) = check_prop(unsafe { &*prop })?;
        out.set(g);
        Ok(())
    }
}

/// Exports a physical allocation; its key.
fn export_physical(handle: aclrtDrvMemHandle, flags: u64) -> R<Key> {
    if flags > 1 {
        return fail(RT_PARAM_INVALID, format!("flags {flags:#x} is not 0 or 1"));
    }
    let h = handle as usize;
    let (fd, size, dev) = vmm::physical(h)?;
    if ipc::find_own(What::Physical, h as u64).is_some() {
        return fail(
            RT_PARAM_INVALID,
            "the physical allocation was already exported (one shareable handle per allocation)",
        );
    }
    ipc::export(
        What::Physical,
        fd,
        dev.unwrap_or(-1),
        size as u64,
        0,
        h as u64,
        flags == 1,
    )
}

acl! {
    /// `aclrtMemExportToShareableHandle`: a shareable handle (a `u64`) other processes import;
    /// `flags` `ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION` (1) lets any process import it.
    /// One handle per allocation (a second export is 107000).
    fn aclrtMemExportToShareableHandle(handle: aclrtDrvMemHandle, handleType: aclrtMemHandleType, flags: u64, shareableHandle: *mut u64) {
        if handle.is_null() {
            return fail(INVALID_PARAM, "handle is NULL");
        }
        if handleType != ACL_MEM_HANDLE_TYPE_NONE {
            return fail(INVALID_PARAM, format!("handleType {handleType} must be ACL_MEM_HANDLE_TYPE_NONE"));
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(shareableHandle, "shareableHandle") }?;
        out.set(export_physical(handle, flags)?.to_u64());
        Ok(())
    }
}

acl! {
    /// `aclrtMemExportToShareableHandleV2`: as the first version, the handle written to
    /// `shareableHandle` as a `u64` for `ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT`; the cross-server
    /// `FABRIC` type is 207000 (no fabric between emulated servers).
    fn aclrtMemExportToShareableHandleV2(handle: aclrtDrvMemHandle, flags: u64, shareType: aclrtMemSharedHandleType, shareableHandle: *mut c_void) {
        if handle.is_null() || shareableHandle.is_null() {
            return fail(INVALID_PARAM, "handle or shareableHandle is NULL");
        }
        match shareType {
            ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT => {}
            ACL_MEM_SHARE_HANDLE_TYPE_FABRIC => {
                return fail(RT_FEATURE_NOT_SUPPORT, "fabric handles (cross-server sharing) are not emulated");
            }
            t => return fail(RT_PARAM_INVALID, format!("shareType {t} is not DEFAULT (1) or FABRIC (2)")),
        }
        let k = export_physical(handle, flags)?;
        // SAFETY: for the DEFAULT type the buffer holds a u64 (C contract).
        unsafe { shareableHandle.cast::<u64>().write_unaligned(k.to_u64()) };
        Ok(())
    }
}

acl! {
    /// `aclrtMemSetPidToShareableHandle`: whitelists importing processes.
    fn aclrtMemSetPidToShareableHandle(shareableHandle: u64, pid: *mut i32, pidNum: usize) {
        if pid.is_null() {
            return fail(INVALID_PARAM, "pid is NULL");
        }
        if pidNum == 0 {
            return fail(INVALID_PARAM, "pidNum is 0");
        }
        ipc::allow(Key::from_u64(shareableHandle), read_pids(pid, pidNum))
    }
}

/// Reads a V2 shareable handle of type `t`.
fn v2_handle(sh: *mut c_void, t: aclrtMemSharedHandleType) -> R<Key> {
    if sh.is_null() {
        return fail(INVALID_PARAM, "shareableHandle is NULL");
    }
    match t {
        ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT => {
            // SAFETY: for the DEFAULT type the buffer holds a u64 (C contract).
            let v = unsafe { sh.cast::<u64>().read_unaligned() };
            Ok(Key::from_u64(v))
        }
        ACL_MEM_SHARE_HANDLE_TYPE_FABRIC => {
            fail(RT_FEATURE_NOT_SUPPORT, "fabric handles are not emulated")
        }
        t => fail(
            RT_PARAM_INVALID,
            format!("shareType {t} is not DEFAULT (1) or FABRIC (2)"),
        ),
    }
}

acl! {
    /// `aclrtMemSetPidToShareableHandleV2`.
    fn aclrtMemSetPidToShareableHandleV2(shareableHandle: *mut c_void, shareType: aclrtMemSharedHandleType, pid: *mut i32, pidNum: usize) {
        let k = v2_handle(shareableHandle, shareType)?;
        if pid.is_null() {
            return fail(INVALID_PARAM, "pid is NULL");
        }
        if pidNum == 0 {
            return fail(INVALID_PARAM, "pidNum is 0");
        }
        ipc::allow(k, read_pids(pid, pidNum))
    }
}

/// Imports a physical allocation exported by another process onto device `dev`.
fn import_physical(k: Key, dev: i32) -> R<usize> {
    let imp = ipc::import(k, What::Physical)?;
    // Peer access with the exporter's device is enabled automatically, as the runtime does.
    if let Err(e) = crate::device::import_peer(dev, imp.device, true) {
        // SAFETY: the descriptor opened by the import.
        unsafe { libc::close(imp.fd) };
        return Err(e);
    }
    Ok(vmm::insert_imported(imp.fd, imp.size as usize, dev))
}

acl! {
    /// `aclrtMemImportFromShareableHandle`: a physical allocation of another process (sharing
    /// its bytes), for device `deviceId`; map it with `aclrtMapMem`. The exporter's pid
    /// whitelist applies unless it disabled validation; importing in the exporting process is
    /// 107000.
    fn aclrtMemImportFromShareableHandle(shareableHandle: u64, deviceId: i32, handle: *mut aclrtDrvMemHandle) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(handle, "handle") }?;
        crate::device::check(deviceId)?;
        crate::device::context::current_ids()?;
        out.set(import_physical(Key::from_u64(shareableHandle), deviceId)? as *mut c_void);
        Ok(())
    }
}

acl! {
    /// `aclrtMemImportFromShareableHandleV2`: as the first version, for the current device.
    fn aclrtMemImportFromShareableHandleV2(shareableHandle: *mut c_void, shareType: aclrtMemSharedHandleType, flags: u64, handle: *mut aclrtDrvMemHandle) {
        if shareableHandle.is_null() {
            return fail(INVALID_PARAM, "shareableHandle is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(handle, "handle") }?;
        if flags != 0 {
            return fail(INVALID_PARAM, format!("flags {flags:#x} must be 0"));
        }
        let (dev, _) = crate::device::context::current_ids()?;
        let k = v2_handle(shareableHandle, shareType)?;
        out.set(import_physical(k, dev)? as *mut c_void);
        Ok(())
    }
}
