//! Sharing with other processes: IPC memory by key, notifies by key and IPC events, and the
//! process id importers are whitelisted by.

use super::*;
use crate::memory;
use crate::memory::ipc::{self, Key, What};
use crate::sync::notify;

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
pub(super) fn read_pids<'a>(pid: *mut i32, num: usize) -> &'a [i32] {
    // SAFETY: the array holds `num` pids (C contract).
    unsafe { std::slice::from_raw_parts(pid, num) }
}

acl! {
    /// `aclrtDeviceGetBareTgid`: the process id other processes whitelist (the host's pid).
    fn aclrtDeviceGetBareTgid(pid: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        unsafe { Out::new(pid, "pid") }?.set(ipc::pid() as i32);
        Ok(())
    }
}

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
        crate::device::context::current_ids()?;
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
        let (dev, _) = crate::device::context::current_ids()?;
        let k = read_key(key)?;
        out.set(ipc::import_memory(k, dev, flags == 1)? as *mut c_void);
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
        crate::device::drain_current();
        ipc::close_memory(k)
    }
}

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
        let (dev, _) = crate::device::context::current_ids()?;
        let k = read_key(key)?;
        let imp = ipc::import(k, What::Notify)?;
        if let Err(e) = crate::device::import_peer(dev, imp.device, flags & 2 != 0) {
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

acl! {
    /// `aclrtIpcGetEventHandle`: a handle (64 bytes) any process may open with
    /// `aclrtIpcOpenEventHandle`, for an event created with `ACL_EVENT_IPC` (107000 otherwise).
    fn aclrtIpcGetEventHandle(event: aclrtEvent, handle: *mut aclrtIpcEventHandle) {
        if event.is_null() {
            return fail(INVALID_PARAM, "event is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(handle, "handle") }?;
        let ev = crate::event::get(super::handle(event))?;
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
        crate::device::context::current_ids()?;
        let bytes: Vec<u8> = handle.reserved.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
        let k = Key::parse(&String::from_utf8_lossy(&bytes))?;
        let imp = ipc::import(k, What::Event)?;
        let base = notify::map_foreign_arena(k.pid, imp.fd)?;
        let h = crate::event::insert_opened(crate::event::Shared { base: base + imp.offset as usize, own: false })?;
        out.set(as_ptr(h));
        Ok(())
    }
}
