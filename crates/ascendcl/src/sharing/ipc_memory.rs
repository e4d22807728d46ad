//! Device memory shared with other processes by key: [`IpcMemExport`] (the exporter's buffer
//! and its key) and [`IpcMemImport`] (the memory as another process imported it).

use super::key::{IpcMemKey, KEY_BUFFER};
use super::{ClaimKey, ImportClaim, Importers, Pid, raw_pids};
use crate::copy::{self, CopySource, MemoryLocation, RawRegion};
use crate::deferred;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceRepr, DeviceSliceMut, copy_endpoints, device_views};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::ffi::{c_char, c_void};
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

/// A device buffer exported to other processes under an [`IpcMemKey`]
/// (`aclrtIpcMemGetExportKey`; the key is closed with `aclrtIpcMemClose` before the buffer is
/// freed, on drop).
///
/// It owns the buffer: it was taken by value, so no scope was using it when its pages became
/// shareable, and it is freed only after the key is closed, the order the runtime asks for. It
/// is still the exporter's memory: a [`CopySource`] and [`CopyDest`](crate::CopyDest) like the
/// buffer ([`IpcMemExport::buffer`] reaches the buffer's reading methods,
/// [`IpcMemExport::as_view_mut`] a mutable view), written by the importers too.
///
/// | operation | C function |
/// |---|---|
/// | [`IpcMemExport::new`] | `aclrtIpcMemGetExportKey` |
/// | [`IpcMemExport::allow`] | `aclrtIpcMemSetImportPid` |
/// | drop, [`IpcMemExport::close`] | `aclrtIpcMemClose` (then `aclrtFree` on drop) |
#[derive(Debug)]
pub struct IpcMemExport<T: DeviceRepr> {
    /// Taken out only by `close` and `drop`.
    buf: ManuallyDrop<DeviceBuffer<T>>,
    key: IpcMemKey,
}

impl<T: DeviceRepr> IpcMemExport<T> {
    /// Exports `buf` (`aclrtIpcMemGetExportKey`); with [`Importers::Whitelisted`] only the pids
    /// given to [`IpcMemExport::allow`] may import it. An empty buffer is an
    /// [`Error::Argument`]; on any failure the buffer comes back inside the [`ReleaseError`].
    pub fn new(buf: DeviceBuffer<T>, importers: Importers) -> ReleaseResult<Self, DeviceBuffer<T>> {
        match export_key(&buf, importers) {
            Ok(key) => Ok(IpcMemExport {
                buf: ManuallyDrop::new(buf),
                key,
            }),
            Err(e) => Err(ReleaseError::new(e, buf)),
        }
    }

    /// The key importers open it by.
    pub fn key(&self) -> &IpcMemKey {
        &self.key
    }

    /// Whitelists processes for importing it (`aclrtIpcMemSetImportPid`); the pids come from
    /// each importer's [`Device::bare_tgid`].
    pub fn allow(&self, pids: &[Pid]) -> Result<()> {
        let mut p = raw_pids(pids);
        self.buf.device().ensure_current()?;
        // SAFETY: a key of this process's live export; `p` holds `len` pids, only read.
        unsafe {
            raw::aclrtIpcMemSetImportPid(self.key.as_c_str().as_ptr(), p.as_mut_ptr(), p.len())
        }
    }

    /// The exported buffer.
    pub fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buf
    }

    #[inline]
    fn region(&self) -> RawRegion<T> {
        self.buf.source_region()
    }

    /// A mutable view of the exported memory, for the writing methods of a view. (The buffer
    /// itself is not lent mutably: swapping another buffer in would let the exported one be
    /// freed while its key is open.)
    pub fn as_view_mut(&mut self) -> DeviceSliceMut<'_, T> {
        self.buf.as_view_mut()
    }

    /// Copies `src` (host memory) into the exported memory; lengths must be equal
    /// (`aclrtMemcpy`).
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        copy::copy(self, src)
    }

    /// Sets every byte of the exported memory to `value` (`aclrtMemset`).
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        self.buf.fill_bytes(value)
    }

    /// Closes the key now (`aclrtIpcMemClose`): later imports fail, imports other processes
    /// made stay theirs until they close them. The buffer comes back; on failure the export
    /// does, with the error.
    pub fn close(mut self) -> ReleaseResult<DeviceBuffer<T>, Self> {
        if let Err(e) = close_key(&self.key, self.buf.device()) {
            return Err(ReleaseError::new(e, self));
        }
        // SAFETY: the buffer is taken once; `self` is forgotten right after and its key, the
        // only other owned field, is dropped here.
        let buf = unsafe { ManuallyDrop::take(&mut self.buf) };
        let me = ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again, so the key is moved out exactly once.
        drop(unsafe { std::ptr::read(&me.key) });
        Ok(buf)
    }
}

/// `aclrtIpcMemGetExportKey` of the whole buffer.
fn export_key<T: DeviceRepr>(buf: &DeviceBuffer<T>, importers: Importers) -> Result<IpcMemKey> {
    const API: &str = "aclrtIpcMemGetExportKey";
    if buf.is_empty() {
        return Err(Error::argument(
            API,
            "an empty buffer has no memory to export",
        ));
    }
    let flags = match importers {
        Importers::Whitelisted => 0,
        Importers::Anyone => u64::from(sys::ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
    };
    buf.device().ensure_current()?;
    let mut key = [0 as c_char; KEY_BUFFER];
    // SAFETY: the buffer's own allocation and size; no scope borrows it (it is owned by the
    // caller and about to be moved); the key buffer holds KEY_BUFFER bytes.
    unsafe {
        raw::aclrtIpcMemGetExportKey(
            buf.as_ptr().cast_mut().cast(),
            buf.size_in_bytes(),
            key.as_mut_ptr(),
            KEY_BUFFER,
            flags,
        )
    }?;
    IpcMemKey::from_buffer(API, &key)
}

/// `aclrtIpcMemClose` of `key` with `device`'s context current.
fn close_key(key: &IpcMemKey, device: &Device) -> Result<()> {
    device.ensure_current()?;
    // SAFETY: a NUL-terminated key; closing it ends an export or an import of this process.
    unsafe { raw::aclrtIpcMemClose(key.as_c_str().as_ptr()) }
}

impl<T: DeviceRepr> Drop for IpcMemExport<T> {
    fn drop(&mut self) {
        // SAFETY: the buffer is taken once, here; the export is not used afterwards.
        let buf = unsafe { ManuallyDrop::take(&mut self.buf) };
        let key = self.key.clone();
        deferred::release(move || {
            let r = close_key(&key, buf.device());
            // Freed after the key is closed, as the runtime asks.
            drop(buf);
            r
        });
    }
}

// The exported buffer's own memory, valid while the export (and so the buffer) is borrowed.
copy_endpoints!(source: IpcMemExport<T>; dest: IpcMemExport<T>);

bitflags::bitflags! {
    /// How [`IpcMemImport::open`] imports (`ACL_RT_IPC_MEM_IMPORT_FLAG_*`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct IpcImportFlags: u64 {
        /// `ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS`: enable peer access to the
        /// exporter's device when it is another device (without it, peer access must be
        /// enabled already).
        const ENABLE_PEER_ACCESS = sys::ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS as u64;
    }
}

/// Device memory another process exported, imported into this one as elements of `T`
/// (`aclrtIpcMemImportByKey`; closed with `aclrtIpcMemClose` on drop).
///
/// The import is the memory: a [`CopySource`] and [`CopyDest`](crate::CopyDest) for copies and,
/// borrowed, for [`Stream::scope`](crate::Stream::scope) operations, with views
/// ([`IpcMemImport::slice`]) borrowed from it. Closing consumes it, so neither a view nor a scope
/// can use the memory after the import ended. Its length comes from the runtime
/// (`aclrtMemGetAddressRange` of the imported address: the size the exporter shared), never from
/// the key. One live import per key in a process (a second is an [`Error::Argument`]):
/// `aclrtIpcMemClose` ends a key's latest import, so an import of the same key made through
/// [`raw`](crate::raw) alongside would be ended by this one's close. `Send + Sync`; it keeps its
/// device open.
///
/// | operation | C function |
/// |---|---|
/// | [`IpcMemImport::open`] | `aclrtIpcMemImportByKey`, `aclrtMemGetAddressRange` |
/// | copies, [`IpcMemImport::to_vec`], ... | `aclrtMemcpy` |
/// | drop, [`IpcMemImport::close`] | `aclrtIpcMemClose` |
#[derive(Debug)]
pub struct IpcMemImport<T: DeviceRepr> {
    ptr: NonNull<T>,
    len: usize,
    key: IpcMemKey,
    /// None once closed explicitly.
    claim: Option<Box<ImportClaim>>,
    device: Device,
}

// SAFETY: the import owns its mapping, which the host never dereferences; every call makes the
// device's context current first; `T: DeviceRepr` is `Send`.
unsafe impl<T: DeviceRepr> Send for IpcMemImport<T> {}
// SAFETY: `&self` methods only read the memory through the runtime; `T: DeviceRepr` is `Sync`.
unsafe impl<T: DeviceRepr> Sync for IpcMemImport<T> {}

impl<T: DeviceRepr> IpcMemImport<T> {
    /// Imports the memory another process exported under `key`, as memory of `device`
    /// (`aclrtIpcMemImportByKey`), and learns its size (`aclrtMemGetAddressRange`). Refused by
    /// the runtime: a process not on the export's whitelist, a closed key, the exporting
    /// process itself, another device without peer access (see
    /// [`IpcImportFlags::ENABLE_PEER_ACCESS`]). A zero-sized `T`, a size that is not a whole
    /// number of elements or an address not aligned for `T` is an [`Error::Argument`] (the
    /// import is closed again).
    pub fn open(device: &Device, key: &IpcMemKey, flags: IpcImportFlags) -> Result<Self> {
        const API: &str = "aclrtIpcMemImportByKey";
        if size_of::<T>() == 0 {
            return Err(Error::argument(API, "the element type has no size"));
        }
        let claim = ImportClaim::take(API, ClaimKey::IpcMemory(key.as_bytes().to_vec()))?;
        device.ensure_current()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a NUL-terminated key.
        unsafe { raw::aclrtIpcMemImportByKey(&mut p, key.as_c_str().as_ptr(), flags.bits()) }?;
        let fail = |e: Error| {
            // Close the import just made; the claim goes with this call's error.
            let _ = close_key(key, device);
            Err(e)
        };
        let (mut base, mut size) = (std::ptr::null_mut(), 0usize);
        // SAFETY: valid out-pointers; the address is only looked up.
        if let Err(e) = unsafe { raw::aclrtMemGetAddressRange(p, &mut base, &mut size) } {
            return fail(e);
        }
        let ptr = match NonNull::new(p.cast::<T>()) {
            Some(ptr)
                if base == p
                    && ptr.as_ptr().is_aligned()
                    && size.is_multiple_of(size_of::<T>()) =>
            {
                ptr
            }
            _ => {
                return fail(Error::argument(
                    API,
                    format!(
                        "the import at {p:p} ({size} bytes, block at {base:p}) is not a whole, \
                         aligned number of {}-byte elements",
                        size_of::<T>()
                    ),
                ));
            }
        };
        Ok(IpcMemImport {
            ptr,
            len: size / size_of::<T>(),
            key: key.clone(),
            claim: Some(Box::new(claim)),
            device: device.clone(),
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_in_bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The key it was imported by.
    pub fn key(&self) -> &IpcMemKey {
        &self.key
    }

    /// The device it was imported on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The address in this process, for FFI (kernel arguments). Never dereference it on the
    /// host.
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// The address, for FFI that writes the memory.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    #[inline]
    fn region(&self) -> RawRegion<T> {
        RawRegion::new(
            self.ptr.as_ptr(),
            self.len,
            MemoryLocation::Device(self.device.id()),
        )
        .with_context(self.device.raw_context())
    }

    /// Copies `src` (host memory) into the import; lengths must be equal (`aclrtMemcpy`).
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        copy::copy(self, src)
    }

    /// Copies the import into `dst` (host memory); lengths must be equal (`aclrtMemcpy`).
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        copy::copy(dst, self)
    }

    /// Copies the import into a new `Vec` (`aclrtMemcpy`).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        copy::to_vec(self)
    }

    /// Ends the import now (`aclrtIpcMemClose`); on failure it comes back with the error.
    pub fn close(mut self) -> ReleaseResult<(), Self> {
        match close_key(&self.key, &self.device) {
            Ok(()) => {
                self.claim = None;
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(e, self)),
        }
    }
}

impl<T: DeviceRepr> Drop for IpcMemImport<T> {
    fn drop(&mut self) {
        let Some(claim) = self.claim.take() else {
            return;
        };
        let (key, device) = (self.key.clone(), self.device.clone());
        deferred::release(move || {
            let r = close_key(&key, &device);
            // Another import of the key may follow once this one is closed.
            drop(claim);
            r
        });
    }
}

// The imported mapping, valid for `len` elements while the import is borrowed (closing consumes
// it), with its device's context alive while it holds the device.
copy_endpoints!(source: IpcMemImport<T>; dest: IpcMemImport<T>);
device_views!(IpcMemImport, "import");
