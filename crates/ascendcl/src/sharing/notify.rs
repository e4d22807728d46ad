//! Notifies shared with other processes: [`Notify::export`] names a notify by a [`NotifyKey`],
//! [`ImportedNotify`] is another process's notify, which this process records to release the
//! exporter's waits.

use super::key::{KEY_BUFFER, NotifyKey};
use super::{Importers, Pid, raw_pids};
use crate::device::Device;
use crate::error::Result;
use crate::notify::{self, Notify};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use crate::scope::Scope;
use ascendcl_sys as sys;
use std::ffi::c_char;

impl Notify {
    /// Exports the notify to other processes (`aclrtNotifyGetExportKey`): they open it with
    /// [`ImportedNotify::open`] and the key, and record it; this process waits on it. With
    /// [`Importers::Whitelisted`] only the pids given to [`Notify::allow`] may.
    pub fn export(&self, importers: Importers) -> Result<NotifyKey> {
        const API: &str = "aclrtNotifyGetExportKey";
        let flags = match importers {
            Importers::Whitelisted => 0,
            Importers::Anyone => u64::from(sys::ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION),
        };
        self.device().ensure_current()?;
        let mut key = [0 as c_char; KEY_BUFFER];
        // SAFETY: the notify is live while `self` is; the key buffer holds KEY_BUFFER bytes.
        unsafe {
            raw::aclrtNotifyGetExportKey(self.as_raw(), key.as_mut_ptr(), KEY_BUFFER, flags)
        }?;
        NotifyKey::from_buffer(API, &key)
    }

    /// Whitelists processes for importing this exported notify (`aclrtNotifySetImportPid`);
    /// the pids come from each importer's [`Device::bare_tgid`].
    pub fn allow(&self, pids: &[Pid]) -> Result<()> {
        let mut p = raw_pids(pids);
        self.device().ensure_current()?;
        // SAFETY: the notify is live while `self` is; `p` holds `len` pids, only read.
        unsafe { raw::aclrtNotifySetImportPid(self.as_raw(), p.as_mut_ptr(), p.len()) }
    }
}

bitflags::bitflags! {
    /// How [`ImportedNotify::open`] imports (`ACL_RT_NOTIFY_IMPORT_FLAG_*`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct NotifyImportFlags: u64 {
        /// `ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS`: enable peer access to the exporter's
        /// device when it is another device.
        const ENABLE_PEER_ACCESS = sys::ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS as u64;
    }
}

/// A notify of another process, imported by its key (`aclrtNotifyImportByKey`; destroyed with
/// `aclrtDestroyNotify` on drop).
///
/// An importer may only record it ([`Scope::record_imported_notify`]): each record releases one
/// wait of the exporting process. Waiting on it is not offered (the runtime refuses it). Owned,
/// `Send + Sync`; it keeps its device open.
///
/// | operation | C function |
/// |---|---|
/// | [`ImportedNotify::open`] | `aclrtNotifyImportByKey` |
/// | [`Scope::record_imported_notify`] | `aclrtRecordNotify` |
/// | drop, [`ImportedNotify::destroy`] | `aclrtDestroyNotify` |
#[derive(Debug)]
pub struct ImportedNotify {
    /// NULL once destroyed explicitly.
    raw: sys::aclrtNotify,
    device: Device,
}

// SAFETY: a notify handle is a plain value the runtime accepts from any thread; every call makes
// the device's context current first; it is never mutated while shared.
unsafe impl Send for ImportedNotify {}
// SAFETY: as above; recording is synchronised by the runtime.
unsafe impl Sync for ImportedNotify {}

impl ImportedNotify {
    /// Imports the notify another process exported under `key`, on `device`
    /// (`aclrtNotifyImportByKey`). Refused by the runtime: a process not on the whitelist, a
    /// key of this process, a destroyed notify.
    pub fn open(device: &Device, key: &NotifyKey, flags: NotifyImportFlags) -> Result<Self> {
        device.ensure_current()?;
        let mut raw: sys::aclrtNotify = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a NUL-terminated key.
        unsafe { raw::aclrtNotifyImportByKey(&mut raw, key.as_c_str().as_ptr(), flags.bits()) }?;
        Ok(ImportedNotify {
            raw,
            device: device.clone(),
        })
    }

    /// The raw handle, for FFI. It stays owned by `self`.
    pub fn as_raw(&self) -> sys::aclrtNotify {
        self.raw
    }

    /// The device it was imported on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Destroys it now (`aclrtDestroyNotify`); on failure it comes back with the error.
    pub fn destroy(mut self) -> ReleaseResult<(), Self> {
        // SAFETY: the handle is live and owned by `self`; no scope borrows it (we own it).
        match unsafe { notify::destroy_now(&mut self.raw, &self.device) } {
            Ok(()) => Ok(()),
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

impl Drop for ImportedNotify {
    fn drop(&mut self) {
        // SAFETY: the handle (if not destroyed already) was owned by the dropped value and no
        // scope borrows it.
        unsafe { notify::destroy_on_drop(self.raw, &self.device) }
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Enqueues recording a notify of another process when the stream reaches this point
    /// (`aclrtRecordNotify`): the exporter's next wait on it is released.
    pub fn record_imported_notify(&self, notify: &'scope ImportedNotify) -> Result<()> {
        self.stream().make_current()?;
        // SAFETY: both handles are live; the notify is borrowed until the scope has waited for
        // the stream.
        unsafe { raw::aclrtRecordNotify(notify.raw, self.as_raw()) }
    }
}
