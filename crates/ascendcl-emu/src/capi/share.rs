//! Memory and notifies shared with other processes: IPC memory by key, virtual memory
//! management with shareable physical allocations, and notifies by key.

use super::*;
use crate::ipc::{self, Key, What};
use crate::notify;
use crate::vmm;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A key output buffer must hold 64 characters and the NUL.
const KEY_LEN: usize = 65;

/// Writes a key into the caller's buffer of `len` bytes.
fn write_key(out: *mut c_char, len: usize, key: Key) -> R {
    let s = key.to_string_key();
    if len < s.len() + 1 {
        return fail(
            RT_PARAM_INVALID,
            format!("len {len} is too small for the key ({KEY_LEN} bytes hold any key)"),
        );
    }
    // SAFETY: the buffer holds `len` bytes (C contract), more than the key and its NUL.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), out, s.len());
        out.add(s.len()).write(0);
    }
    Ok(())
}

/// Reads a key argument (NULL checked by the caller).
fn read_key(key: *const c_char) -> R<Key> {
    // SAFETY: a non-NULL key is a NUL-terminated string (C contract).
    let s = unsafe { CStr::from_ptr(key) }.to_string_lossy();
    Key::parse(&s)
}

/// Reads `num` pids (NULL and 0 checked by the caller).
fn read_pids<'a>(pid: *mut i32, num: usize) -> &'a [i32] {
    // SAFETY: the array holds `num` pids (C contract).
    unsafe { std::slice::from_raw_parts(pid, num) }
}

/// Peer access for an import made on `dev` of memory (or a notify) of `peer`: `enable` turns
/// it on; otherwise it must have been enabled (107000).
fn import_peer(dev: i32, peer: i32, enable: bool) -> R {
    if dev == peer || peer < 0 || state::check_device(peer).is_err() {
        return Ok(());
    }
    if enable {
        return state::enable_peer_from(dev, peer);
    }
    if !state::peer_enabled(dev, peer) {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "the export lives on device {peer} and this process imports it on device {dev} \
                 without peer access (aclrtDeviceEnablePeerAccess, or the import's peer-access \
                 flag)"
            ),
        );
    }
    Ok(())
}

acl! {
    /// `aclrtDeviceGetBareTgid`: the process id other processes whitelist (the host's pid).
    fn aclrtDeviceGetBareTgid(pid: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        unsafe { Out::new(pid, "pid") }?.set(ipc::pid() as i32);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// IPC memory

/// The mappings (address, length) of one key's imports, latest last.
type Mappings = Vec<(usize, usize)>;

/// Imports of IPC memory in this process, by key.
static IMPORTS: LazyLock<Mutex<HashMap<String, Mappings>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

acl! {
    /// `aclrtIpcMemGetExportKey`: exports the device allocation that starts at `devPtr` (whose
    /// size is at least `size`) under a new key of at most 64 characters; `flags`
    /// `ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION` (1) lets any process import it,
    /// otherwise only whitelisted pids. The allocation's pages move into shared memory (work in
    /// flight on it must be finished).
    fn aclrtIpcMemGetExportKey(devPtr: *mut c_void, size: usize, key: *mut c_char, len: usize, flags: u64) {
        if devPtr.is_null() {
            return fail(INVALID_PARAM, "devPtr is NULL");
        }
        if key.is_null() {
            return fail(INVALID_PARAM, "key is NULL");
        }
        if size == 0 {
            return fail(RT_PARAM_INVALID, "size is 0");
        }
        if len == 0 {
            return fail(RT_PARAM_INVALID, "len is 0");
        }
        if flags > 1 {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} is not 0 or 1"));
        }
        state::current_ids()?;
        let (fd, asize, dev) = memory::write().share(devPtr as usize)?;
        if size > asize {
            return fail(RT_PARAM_INVALID, format!("size {size} exceeds the allocation's {asize} bytes"));
        }
        let k = ipc::export(What::IpcMemory, fd, dev, size as u64, 0, devPtr as u64, flags == 1)?;
        write_key(key, len, k)
    }
}

acl! {
    /// `aclrtIpcMemSetImportPid`: adds pids (`aclrtDeviceGetBareTgid` of the importers) to the
    /// whitelist of one of this process's keys.
    fn aclrtIpcMemSetImportPid(key: *const c_char, pid: *mut i32, num: usize) {
        if key.is_null() || pid.is_null() {
            return fail(INVALID_PARAM, "key or pid is NULL");
        }
        if num == 0 || num > i32::MAX as usize {
            return fail(RT_PARAM_INVALID, format!("num {num} is not a positive count"));
        }
        ipc::allow(read_key(key)?, read_pids(pid, num))
    }
}

acl! {
    /// `aclrtIpcMemImportByKey`: maps the memory another process exported under `key` and
    /// returns its address in this process (each import maps it anew), as device memory of the
    /// current device. `flags` `ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS` (1) enables peer
    /// access to the exporter's device; without it, a different device needs it enabled.
    fn aclrtIpcMemImportByKey(devPtr: *mut *mut c_void, key: *const c_char, flags: u64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(devPtr, "devPtr") }?;
        if key.is_null() {
            return fail(INVALID_PARAM, "key is NULL");
        }
        if flags > 1 {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} is not 0 or 1"));
        }
        let (dev, _) = state::current_ids()?;
        let k = read_key(key)?;
        let imp = ipc::import(k, What::IpcMemory)?;
        let result = (|| {
            import_peer(dev, imp.device, flags == 1)?;
            let len = imp.size as usize;
            let base = notify::map_shared(imp.fd, len).map_err(|f| Fail {
                code: RT_MEMORY_ALLOCATION,
                msg: f.msg,
            })?;
            if let Err(e) = memory::write().insert_external(base, len, Some(dev), memory::page_size()) {
                // SAFETY: unmapping the mapping just made.
                unsafe { libc::munmap(base as *mut libc::c_void, len) };
                return Err(e);
            }
            crate::sync::lock(&IMPORTS)
                .entry(k.to_string_key())
                .or_default()
                .push((base, len));
            Ok(base)
        })();
        // SAFETY: the descriptor opened by the import; the mapping keeps the file alive.
        unsafe { libc::close(imp.fd) };
        out.set(result? as *mut c_void);
        Ok(())
    }
}

acl! {
    /// `aclrtIpcMemClose`: in an importing process, unmaps the latest import of `key` (the key
    /// is forgotten with its last import); in the exporting process, closes the key so that
    /// later imports fail (mappings importers made stay valid until they close them).
    fn aclrtIpcMemClose(key: *const c_char) {
        if key.is_null() {
            return fail(INVALID_PARAM, "key is NULL");
        }
        let k = read_key(key)?;
        let name = k.to_string_key();
        let imported = {
            let mut m = crate::sync::lock(&IMPORTS);
            let v = m.get_mut(&name);
            let one = v.and_then(|v| v.pop());
            if m.get(&name).is_some_and(|v| v.is_empty()) {
                m.remove(&name);
            }
            one
        };
        if let Some((base, len)) = imported {
            memory::write().remove_external(base);
            // SAFETY: the mapping made by the import, no longer in the allocation table.
            unsafe { libc::munmap(base as *mut libc::c_void, len) };
            return Ok(());
        }
        ipc::close(k)
    }
}

// ---------------------------------------------------------------------------------------------
// Virtual memory management

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
        state::check_device(p.location.id as i32)?;
    } else if p.location.type_ == ACL_MEM_LOCATION_TYPE_HOST_NUMA {
        state::current_ids()?;
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
        vmm::unmap(virPtr as usize)
    }
}

acl! {
    /// `aclrtMemSetAccess`: the range must be a mapping; `ACL_RT_MEM_ACCESS_FLAGS_READWRITE`
    /// (the only access supported, 207000 otherwise) for a host or device location. Mappings
    /// are readable and writable from the start, so this records nothing more.
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
                state::check_device(d.location.id as i32)?;
            }
            if d.flags != ACL_RT_MEM_ACCESS_FLAGS_READWRITE {
                return fail(RT_FEATURE_NOT_SUPPORT, format!("desc[{i}].flags {}: only ACL_RT_MEM_ACCESS_FLAGS_READWRITE is supported", d.flags));
            }
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
    if let Err(e) = import_peer(dev, imp.device, true) {
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
        state::check_device(deviceId)?;
        state::current_ids()?;
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
        let (dev, _) = state::current_ids()?;
        let k = v2_handle(shareableHandle, shareType)?;
        out.set(import_physical(k, dev)? as *mut c_void);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Notifies shared with other processes

acl! {
    /// `aclrtNotifyGetExportKey`: exports a notify under a key; `flags`
    /// `ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION` (2) lets any process import it.
    fn aclrtNotifyGetExportKey(notify: aclrtNotify, key: *mut c_char, len: usize, flags: u64) {
        if notify.is_null() || key.is_null() {
            return fail(INVALID_PARAM, "notify or key is NULL");
        }
        if len == 0 {
            return fail(RT_PARAM_INVALID, "len is 0");
        }
        if flags != 0 && flags != u64::from(ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION) {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} is not 0 or 0x2"));
        }
        let n = notify::get(handle(notify))?;
        if n.imported {
            return fail(RT_PARAM_INVALID, "an imported notify cannot be exported again");
        }
        let fd = notify::arena_fd().ok_or_else(|| Fail { code: RT_INTERNAL_ERROR, msg: "no notify arena".to_string() })?;
        let k = match ipc::find_own(What::Notify, n.handle as u64) {
            Some(k) => k,
            None => ipc::export(What::Notify, fd, n.device, 4, u64::from(n.id) * 4, n.handle as u64, flags != 0)?,
        };
        write_key(key, len, k)
    }
}

acl! {
    /// `aclrtNotifySetImportPid`: whitelists importing processes for an exported notify.
    fn aclrtNotifySetImportPid(notify: aclrtNotify, pid: *mut i32, num: usize) {
        if notify.is_null() || pid.is_null() {
            return fail(INVALID_PARAM, "notify or pid is NULL");
        }
        if num == 0 || num > i32::MAX as usize {
            return fail(RT_PARAM_INVALID, format!("num {num} is not a positive count"));
        }
        let n = notify::get(handle(notify))?;
        let k = ipc::find_own(What::Notify, n.handle as u64).ok_or_else(|| Fail {
            code: RT_PARAM_INVALID,
            msg: "the notify has no export key yet (aclrtNotifyGetExportKey)".to_string(),
        })?;
        ipc::allow(k, read_pids(pid, num))
    }
}

acl! {
    /// `aclrtNotifyImportByKey`: a notify of another process, which this process may record
    /// (the exporter waits on it); `flags` `ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS` (2)
    /// enables peer access to the exporter's device; bit 0 (device use only) needs MC2 support,
    /// which is not emulated (207000).
    fn aclrtNotifyImportByKey(notify: *mut aclrtNotify, key: *const c_char, flags: u64) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(notify, "notify") }?;
        if key.is_null() {
            return fail(INVALID_PARAM, "key is NULL");
        }
        if flags > 3 {
            return fail(RT_PARAM_INVALID, format!("flags {flags:#x} has unknown bits"));
        }
        if flags & 1 != 0 {
            return fail(RT_FEATURE_NOT_SUPPORT, "device-use-only imports need MC2 support, which is not emulated");
        }
        let (dev, _) = state::current_ids()?;
        let k = read_key(key)?;
        let imp = ipc::import(k, What::Notify)?;
        if let Err(e) = import_peer(dev, imp.device, flags & 2 != 0) {
            // SAFETY: the descriptor opened by the import.
            unsafe { libc::close(imp.fd) };
            return Err(e);
        }
        let base = notify::map_foreign_arena(k.pid, imp.fd)?;
        let h = notify::insert_imported(dev, (imp.offset / 4) as u32, base + imp.offset as usize);
        out.set(as_ptr(h));
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// IPC events

acl! {
    /// `aclrtIpcGetEventHandle`: a handle (64 bytes) any process may open with
    /// `aclrtIpcOpenEventHandle`, for an event created with `ACL_EVENT_IPC` (107000 otherwise).
    fn aclrtIpcGetEventHandle(event: aclrtEvent, handle: *mut aclrtIpcEventHandle) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(handle, "handle") }?;
        let ev = state::event(super::handle(event))?;
        let Some(sh) = ev.shared.filter(|s| s.own) else {
            return fail(RT_PARAM_INVALID, format!("event {:#x} was not created with ACL_EVENT_IPC (0x40) in this process", ev.handle));
        };
        let fd = notify::arena_fd().ok_or_else(|| Fail { code: RT_INTERNAL_ERROR, msg: "no shared arena".to_string() })?;
        let offset = notify::arena_offset(sh.base).unwrap_or(0) as u64;
        let k = match ipc::find_own(What::Event, ev.handle as u64) {
            Some(k) => k,
            None => ipc::export(What::Event, fd, ev.device, 8, offset, ev.handle as u64, true)?,
        };
        let s = k.to_string_key();
        let mut h = aclrtIpcEventHandle { reserved: [0; 64] };
        for (d, b) in h.reserved.iter_mut().zip(s.bytes()) {
            *d = b as c_char;
        }
        out.set(h);
        Ok(())
    }
}

acl! {
    /// `aclrtIpcOpenEventHandle`: an event of the current device that shares the exporter's
    /// records: querying, synchronising and stream waits see records made in the other process.
    fn aclrtIpcOpenEventHandle(handle: aclrtIpcEventHandle, event: *mut aclrtEvent) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(event, "event") }?;
        state::current_ids()?;
        let bytes: Vec<u8> = handle.reserved.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
        let k = Key::parse(&String::from_utf8_lossy(&bytes))?;
        let imp = ipc::import(k, What::Event)?;
        let base = notify::map_foreign_arena(k.pid, imp.fd)?;
        let h = state::insert_opened_event(crate::event::Shared { base: base + imp.offset as usize, own: false })?;
        out.set(as_ptr(h));
        Ok(())
    }
}
