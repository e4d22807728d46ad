//! Kernel binaries and their functions (`aclrtCreateBinary`, `aclrtBinaryLoad*`,
//! `aclrtBinaryGetFunction`, `aclrtBinaryUnLoad`).
//!
//! The emulator runs host-mode kernel binaries: shared objects built by `ascendc-build` that
//! export the table `ascendc_host_binary_v1` of the binary ABI (its `include/ascendc_host/
//! binary.h`): per kernel its name, an entry called once per block, and its parameters. A binary
//! is checked (an object file that carries the ABI's magic) before it is loaded with `dlopen`;
//! it stays mapped while a handle or a queued launch of one of its kernels needs it. Binaries are
//! process-wide, as the runtime's are: any context may take functions from them and launch them.

use crate::base::error::*;
use crate::base::hooks::{Hooks, Registration};
use crate::base::hub::{self, Kind, Resource, registry};
use crate::base::leak::LeakReport;
use crate::base::lock::{Mutex, Rank};
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::Arc;

/// The magic at the start of the table (ascendc_host/binary.h), NUL included.
const MAGIC: &[u8; 16] = b"ascendc-hostbin\0";
/// The ABI version this emulator implements.
pub(crate) const ABI: u32 = 1;
/// The exported table.
const TABLE_SYMBOL: &CStr = c"ascendc_host_binary_v1";

/// The fault kind of an access to global memory outside every live allocation
/// (ascendc_host/binary.h).
pub(crate) const FAULT_MEMORY: u32 = 2;

/// `ascendc_host_block`: one block of a launch, as an entry sees it.
#[repr(C)]
pub(crate) struct Block {
    pub abi: u32,
    pub block_idx: u32,
    pub block_num: u32,
    pub reserved: u32,
    pub args: *const u8,
    pub args_size: u64,
    pub runtime: *mut c_void,
    pub find_memory: unsafe extern "C" fn(
        *mut c_void,
        *const c_void,
        *mut *const c_void,
        *mut u64,
        *mut u32,
    ) -> i32,
    pub print: unsafe extern "C" fn(*mut c_void, *const c_char, u64),
    pub fault: *mut c_char,
    pub fault_capacity: u64,
    pub fault_kind: u32,
    pub core: u32,
    pub fault_addr: u64,
    pub fault_bytes: u64,
}

/// `ascendc_host_entry`.
pub(crate) type Entry = unsafe extern "C" fn(*mut Block) -> i32;

/// `ascendc_host_param` (read by the kernel's own entry; the runtime needs only the count).
#[repr(C)]
struct RawParam {
    _size: u32,
    _kind: u32,
}

#[repr(C)]
struct RawKernel {
    name: *const c_char,
    entry: Option<Entry>,
    param_count: u32,
    reserved: u32,
    params: *const RawParam,
}

#[repr(C)]
struct RawTable {
    magic: [u8; 16],
    abi: u32,
    kernel_count: u32,
    kernels: *const RawKernel,
}

/// The core type a binary was declared for (`ACL_RT_BINARY_LOAD_OPT_MAGIC`): it decides the code
/// a failing kernel reports, unless the kernel declares its own type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Core {
    /// Not declared: each kernel's own declaration (vector by default).
    Any,
    /// AI vector cores: failures are 507035.
    Vector,
    /// AI (cube) cores: failures are 507015.
    Cube,
}

/// One kernel of a binary.
#[derive(Debug)]
pub(crate) struct Kernel {
    pub name: String,
    pub entry: Entry,
    /// Its number of parameters.
    pub params: usize,
}

/// A loaded binary.
pub(crate) struct Binary {
    pub handle: usize,
    /// The function handles given out, by kernel index (one handle per kernel).
    functions: Mutex<HashMap<usize, usize>>,
    /// The `dlopen` handle.
    lib: *mut c_void,
    pub kernels: Vec<Kernel>,
    pub core: Core,
    /// Where it came from, for messages.
    pub origin: String,
    /// The anonymous file a binary loaded from data was staged in: kept open while the binary
    /// is loaded, so that no later load gets the same descriptor and with it the same
    /// `/proc/self/fd/N` path, which `dlopen` would answer with this binary. Closed after
    /// `dlclose` (fields drop after `Drop::drop`).
    _staged: Option<AnonFile>,
}

impl std::fmt::Debug for Binary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binary")
            .field("handle", &self.handle)
            .field("origin", &self.origin)
            .field("kernels", &self.kernels.len())
            .finish_non_exhaustive()
    }
}

// SAFETY: the dlopen handle is process-wide (dlsym and dlclose may be called from any thread)
// and the rest is owned data; the entries are plain functions the ABI lets any thread call.
unsafe impl Send for Binary {}
// SAFETY: as above; nothing is mutated after loading.
unsafe impl Sync for Binary {}

impl Drop for Binary {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and is closed once; the last reference to the
        // binary is gone, so no launch runs its code any more.
        unsafe { libc::dlclose(self.lib) };
    }
}

/// A kernel function handle: a kernel of a binary.
#[derive(Debug)]
pub(crate) struct Function {
    pub handle: usize,
    pub binary: Arc<Binary>,
    pub index: usize,
}

impl Function {
    pub(crate) fn kernel(&self) -> &Kernel {
        &self.binary.kernels[self.index]
    }
}

/// An `aclrtBinary` descriptor: data the caller keeps alive until `aclrtBinaryLoad` copied it.
#[derive(Debug, Clone, Copy)]
struct Descriptor {
    handle: usize,
    data: usize,
    len: usize,
}

impl Resource for Descriptor {
    const KIND: Kind = Kind::BinaryDescriptor;

    fn handle(&self) -> usize {
        self.handle
    }
}

impl Resource for Binary {
    const KIND: Kind = Kind::Binary;

    fn handle(&self) -> usize {
        self.handle
    }
}

impl Resource for Function {
    const KIND: Kind = Kind::Function;

    fn handle(&self) -> usize {
        self.handle
    }
}

/// Finalize forgets every binary, function and descriptor.
static HOOKS: Registration = Registration::new(Hooks {
    name: "kernel binaries",
    finalized: Some(finalized),
    ..Hooks::NONE
});

fn finalized(_: &mut LeakReport) {
    clear();
}

/// `aclrtCreateBinary`: a descriptor of `len` bytes at `data` (not copied).
pub(crate) fn create_descriptor(data: usize, len: usize) -> usize {
    HOOKS.ensure();
    let h = hub::new_handle();
    registry::<Descriptor>().insert(Arc::new(Descriptor {
        handle: h,
        data,
        len,
    }));
    h
}

/// `aclrtDestroyBinary`.
pub(crate) fn destroy_descriptor(h: usize) -> R {
    match registry::<Descriptor>().remove(h) {
        Some(_) => Ok(()),
        None => fail(
            RT_INVALID_HANDLE,
            format!("binary {h:#x} is not a descriptor made by aclrtCreateBinary"),
        ),
    }
}

/// The bytes a descriptor names: (address, length).
pub(crate) fn descriptor(h: usize) -> R<(usize, usize)> {
    match registry::<Descriptor>().get(h) {
        Some(d) => Ok((d.data, d.len)),
        None => fail(
            RT_INVALID_HANDLE,
            format!("binary {h:#x} is not a descriptor made by aclrtCreateBinary"),
        ),
    }
}

fn contains(bytes: &[u8], needle: &[u8]) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle)
}

/// Refuses data that is not a host-mode kernel binary, before anything is loaded.
fn check_image(bytes: &[u8], origin: &str) -> R {
    let object = bytes.starts_with(b"\x7fELF")
        || bytes.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || bytes.starts_with(&[0xce, 0xfa, 0xed, 0xfe]);
    if !object || !contains(bytes, MAGIC) {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "{origin} is not a kernel binary the emulator runs: it runs the host-mode \
                 binaries ascendc-build links (a shared object exporting ascendc_host_binary_v1); \
                 a device binary built by ascendc_library for an NPU runs only on CANN"
            ),
        );
    }
    Ok(())
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl* call on
    // this thread; it is copied at once.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".to_string()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Loads the object at `path` (already checked) and reads its table.
fn open(path: &CStr, origin: String, core: Core, staged: Option<AnonFile>) -> R<Arc<Binary>> {
    // SAFETY: dlopen of a checked kernel binary: its initialisers are those of the host layer
    // and of the user's kernels, which the ABI makes the binary's author's contract.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return fail(
            RT_PARAM_INVALID,
            format!("{origin} could not be loaded: {}", dl_error()),
        );
    }
    let close = |msg: String| {
        // SAFETY: opened above, not used afterwards.
        unsafe { libc::dlclose(lib) };
        fail(RT_PARAM_INVALID, msg)
    };
    // SAFETY: a live handle and a NUL-terminated name.
    let table = unsafe { libc::dlsym(lib, TABLE_SYMBOL.as_ptr()) }.cast::<RawTable>();
    if table.is_null() {
        return close(format!(
            "{origin} exports no ascendc_host_binary_v1 table (not built by ascendc-build?)"
        ));
    }
    // SAFETY: the symbol is the ABI's table: plain data the binary defines as constants.
    let t = unsafe { &*table };
    if &t.magic != MAGIC || t.abi != ABI {
        return close(format!(
            "{origin} has a kernel table of ABI {} (the emulator implements ABI {ABI})",
            t.abi
        ));
    }
    let mut kernels = Vec::with_capacity(t.kernel_count as usize);
    for i in 0..t.kernel_count as usize {
        // SAFETY: the table holds `kernel_count` kernels.
        let k = unsafe { &*t.kernels.add(i) };
        let (Some(entry), false) = (k.entry, k.name.is_null()) else {
            return close(format!(
                "{origin}: kernel {i} of the table has no name or entry"
            ));
        };
        // SAFETY: a NUL-terminated name of the table.
        let name = unsafe { CStr::from_ptr(k.name) }
            .to_string_lossy()
            .into_owned();
        if k.param_count > 0 && k.params.is_null() {
            return close(format!("{origin}: kernel {name} has no parameter table"));
        }
        kernels.push(Kernel {
            name,
            entry,
            params: k.param_count as usize,
        });
    }
    Ok(Arc::new(Binary {
        handle: hub::new_handle(),
        functions: Mutex::new(Rank::BinaryFunctions, HashMap::new()),
        lib,
        kernels,
        core,
        origin,
        _staged: staged,
    }))
}

fn register(b: Arc<Binary>) -> usize {
    HOOKS.ensure();
    let h = b.handle;
    registry::<Binary>().insert(b);
    h
}

/// `aclrtBinaryLoadFromFile`.
pub(crate) fn load_file(path: &CStr, core: Core) -> R<usize> {
    let shown = path.to_string_lossy().into_owned();
    let origin = format!("the file {shown}");
    let bytes = std::fs::read(&*shown).map_err(|e| Fail {
        code: RT_PARAM_INVALID,
        msg: format!("cannot read the kernel binary {shown}: {e}"),
    })?;
    check_image(&bytes, &origin)?;
    Ok(register(open(path, origin, core, None)?))
}

/// `aclrtBinaryLoad` / `aclrtBinaryLoadFromData`: the data is copied into an anonymous file,
/// which is loaded.
pub(crate) fn load_data(bytes: &[u8], core: Core) -> R<usize> {
    let origin = format!("the binary data of {} bytes", bytes.len());
    check_image(bytes, &origin)?;
    let file = AnonFile::with(bytes).map_err(|e| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("cannot stage the kernel binary for loading: {e}"),
    })?;
    let path = file.path.clone();
    let binary = open(&path, origin, core, Some(file))?;
    Ok(register(binary))
}

/// A file holding a copy of binary data, removed when dropped (after the binary is unloaded).
struct AnonFile {
    path: CString,
    #[cfg(target_os = "linux")]
    fd: i32,
    #[cfg(not(target_os = "linux"))]
    tmp: std::path::PathBuf,
}

impl AnonFile {
    #[cfg(target_os = "linux")]
    fn with(bytes: &[u8]) -> std::io::Result<AnonFile> {
        use std::io::Write;
        use std::os::fd::FromRawFd;
        // SAFETY: a NUL-terminated name and no flags.
        let fd = unsafe { libc::memfd_create(c"ascendc-kernel-binary".as_ptr(), 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a new descriptor owned here; `ManuallyDrop` keeps it open for dlopen.
        let mut f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        if let Err(e) = f.write_all(bytes) {
            // SAFETY: the descriptor is still ours.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let path = CString::new(format!("/proc/self/fd/{fd}")).unwrap_or_default();
        Ok(AnonFile { path, fd })
    }

    #[cfg(not(target_os = "linux"))]
    fn with(bytes: &[u8]) -> std::io::Result<AnonFile> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp =
            std::env::temp_dir().join(format!("ascendcl-emu-kernel-{}-{n}.so", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        let path = CString::new(tmp.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(AnonFile { path, tmp })
    }
}

impl Drop for AnonFile {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: the descriptor was opened by `with` and is closed once; the loaded object
        // keeps its own mapping.
        unsafe {
            libc::close(self.fd);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// A live binary.
pub(crate) fn binary(h: usize) -> R<Arc<Binary>> {
    match registry::<Binary>().get(h) {
        Some(b) => Ok(b),
        None => fail(
            RT_INVALID_HANDLE,
            format!("binary handle {h:#x} is not a loaded binary (unloaded, or not a handle)"),
        ),
    }
}

/// `aclrtBinaryUnLoad`: the handle and its functions go; launches already queued keep the code.
pub(crate) fn unload(h: usize) -> R {
    if registry::<Binary>().remove(h).is_none() {
        return fail(
            RT_INVALID_HANDLE,
            format!("binary handle {h:#x} is not a loaded binary (unloaded, or not a handle)"),
        );
    }
    registry::<Function>().remove_where(|f| f.binary.handle == h);
    Ok(())
}

/// `aclrtBinaryGetFunction`: the function handle of kernel `name` (the same handle every time).
pub(crate) fn function_by_name(h: usize, name: &str) -> R<usize> {
    let b = binary(h)?;
    let Some(index) = b.kernels.iter().position(|k| k.name == name) else {
        let names: Vec<&str> = b.kernels.iter().map(|k| k.name.as_str()).collect();
        return fail(
            RT_PARAM_INVALID,
            format!(
                "{} has no kernel named {name:?} (its kernels: {})",
                b.origin,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        );
    };
    let mut given = b.functions.lock();
    if let Some(&f) = given.get(&index) {
        return Ok(f);
    }
    let f = hub::new_handle();
    registry::<Function>().insert(Arc::new(Function {
        handle: f,
        binary: Arc::clone(&b),
        index,
    }));
    given.insert(index, f);
    Ok(f)
}

/// A live function.
pub(crate) fn function(h: usize) -> R<Arc<Function>> {
    match registry::<Function>().get(h) {
        Some(f) => Ok(f),
        None => fail(
            RT_INVALID_HANDLE,
            format!(
                "function handle {h:#x} is not a kernel function (its binary was unloaded, or it \
                 is not a handle)"
            ),
        ),
    }
}

/// `aclFinalize`: every binary and descriptor goes (queued launches were finished first).
pub(crate) fn clear() {
    registry::<Descriptor>().remove_where(|_| true);
    registry::<Function>().remove_where(|_| true);
    registry::<Binary>().remove_where(|_| true);
}
