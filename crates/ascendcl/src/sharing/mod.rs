//! Sharing with other processes of the same machine: physical memory by shareable handle, device
//! memory by IPC key, notifies by key, IPC events by handle; the pid whitelists that decide who
//! may import; one file per kind.
//!
//! Every export names who may import it ([`Importers`]): only the processes the exporter
//! whitelists (`aclrt*SetImportPid` / `aclrtMemSetPidToShareableHandle` with the importer's
//! [`Pid`], from [`Device::bare_tgid`]), or any process. The keys and handles
//! ([`ShareableHandle`], [`FabricHandle`], [`IpcMemKey`], [`NotifyKey`], [`IpcEventHandle`]) are
//! plain values, printed and parsed (or turned into bytes and back) to pass them to another
//! process by any channel.
//!
//! Imports are owned values that end the import when dropped: an [`IpcMemImport`] is the
//! imported memory itself and closes it (`aclrtIpcMemClose`), so views of it and scopes using it
//! cannot outlive it; an imported [`PhysicalMemory`](crate::PhysicalMemory) is freed like a local
//! one, after its mapping. One process holds at most one live import of each key or shareable
//! handle through this crate (a second is refused): two imports of the same memory would be two
//! owners of the same bytes, and `aclrtIpcMemClose` unmaps a key's latest import rather than a
//! chosen one.
//!
//! Memory shared with another process is written by that process whenever it likes: a copy out
//! of it sees some state of its bytes (every bit pattern is a valid element, `T: DeviceRepr`).
//! Ordering the two processes is theirs to arrange (a notify, an IPC event, a message).

mod event;
mod ipc_memory;
mod key;
mod notify;
mod shareable;

pub use event::IpcEventHandle;
pub use ipc_memory::{IpcImportFlags, IpcMemExport, IpcMemImport};
pub use key::{IpcMemKey, NotifyKey};
pub use notify::{ImportedNotify, NotifyImportFlags};
pub use shareable::{FabricHandle, ShareableHandle};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use std::collections::HashSet;
use std::fmt;
use std::sync::{LazyLock, Mutex};

/// A process as the runtime names it in import whitelists: its bare tgid, the host's process id
/// (`aclrtDeviceGetBareTgid`; in a container, the pid on the host).
///
/// ```
/// # let rt = ascendcl::Runtime::new()?;
/// let me = rt.device(0)?.bare_tgid()?;
/// let back: ascendcl::Pid = me.to_string().parse().expect("a pid");
/// assert_eq!(back, me);
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Pid(i32);

impl Pid {
    /// A pid received from another process.
    pub const fn from_raw(pid: i32) -> Pid {
        Pid(pid)
    }

    /// The number.
    pub const fn as_raw(self) -> i32 {
        self.0
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for Pid {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> std::result::Result<Pid, Self::Err> {
        s.trim().parse().map(Pid)
    }
}

impl Device {
    /// This process as other processes whitelist it (`aclrtDeviceGetBareTgid`).
    pub fn bare_tgid(&self) -> Result<Pid> {
        self.ensure_current()?;
        let mut pid = 0i32;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclrtDeviceGetBareTgid(&mut pid) }?;
        Ok(Pid(pid))
    }
}

/// Who may import an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Importers {
    /// Only the processes the exporter whitelists (the runtime's default).
    #[default]
    Whitelisted,
    /// Any process (the export's `..._DISABLE_PID_VALIDATION` flag).
    Anyone,
}

/// The pids as the C functions take them (a `*mut i32` array they only read).
pub(crate) fn raw_pids(pids: &[Pid]) -> Vec<i32> {
    pids.iter().map(|p| p.0).collect()
}

/// What a physical allocation was exported as.
#[derive(Debug, Clone)]
pub(crate) enum Exported {
    /// `aclrtMemExportToShareableHandle`.
    Default(ShareableHandle),
    /// `aclrtMemExportToShareableHandleV2` with `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`.
    Fabric(Box<FabricHandle>),
}

/// What an import claims in this process.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ClaimKey {
    Shareable(u64),
    Fabric(Box<[u8; 128]>),
    IpcMemory(Vec<u8>),
}

static CLAIMS: LazyLock<Mutex<HashSet<ClaimKey>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// This process's one live import of a key or handle: taken before the import, given up when
/// the import has ended.
#[derive(Debug)]
pub(crate) struct ImportClaim(ClaimKey);

impl ImportClaim {
    fn take(api: &'static str, key: ClaimKey) -> Result<ImportClaim> {
        let mut claims = CLAIMS.lock().unwrap_or_else(|p| p.into_inner());
        if !claims.insert(key.clone()) {
            return Err(Error::argument(
                api,
                "this process already holds a live import of it; use that one (two imports would \
                 be two owners of the same memory)",
            ));
        }
        Ok(ImportClaim(key))
    }
}

impl Drop for ImportClaim {
    fn drop(&mut self) {
        CLAIMS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.0);
    }
}
