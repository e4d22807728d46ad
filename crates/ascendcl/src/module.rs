//! Kernel binaries (`aclrtBinaryLoadFromFile`, `aclrtBinaryLoad`, `aclrtBinaryLoadFromData`)
//! and their functions (`aclrtBinaryGetFunction`).
//!
//! A [`Module`] is a loaded kernel binary: on an NPU the `.o` CANN's `ascendc_library()` builds,
//! on the emulator the host-mode shared object `ascendc-build` links. [`Module::function`] gives
//! a [`KernelFunction`] by name, which scope launches ([`Scope::launch`](crate::Scope::launch),
//! [`Scope::launch_builder`](crate::Scope::launch_builder)) run. A function keeps its module
//! loaded; a launch borrows the function until the scope has waited for its stream, so a binary
//! is never unloaded while a kernel of it may still run.

use crate::deferred::{self, Raw};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::ffi::CString;
use std::path::Path;
use std::sync::Arc;

/// The core type a binary was built for (`ACL_RT_BINARY_LOAD_OPT_MAGIC`): it decides the error a
/// failing kernel reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BinaryCore {
    /// AI cores (`ACL_RT_BINARY_MAGIC_ELF_AICORE`).
    AiCore,
    /// Vector cores (`ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE`).
    VectorCore,
    /// Cube cores (`ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE`).
    CubeCore,
}

impl BinaryCore {
    fn magic(self) -> u32 {
        match self {
            BinaryCore::AiCore => sys::ACL_RT_BINARY_MAGIC_ELF_AICORE,
            BinaryCore::VectorCore => sys::ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE,
            BinaryCore::CubeCore => sys::ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE,
        }
    }
}

/// Options of [`Module::load_with`] and [`Module::from_bytes_with`] (`aclrtBinaryLoadOptions`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// `ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD`: copy the binary to the device on first use.
    pub lazy: bool,
    /// `ACL_RT_BINARY_LOAD_OPT_MAGIC`: the core type, when the binary does not say.
    pub core: Option<BinaryCore>,
}

impl LoadOptions {
    /// The C option list (empty: the options are passed as NULL).
    fn raw(&self) -> Vec<sys::aclrtBinaryLoadOption> {
        let mut opts = Vec::with_capacity(2);
        if self.lazy {
            opts.push(sys::aclrtBinaryLoadOption {
                type_: sys::ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD,
                value: sys::aclrtBinaryLoadOptionValue { isLazyLoad: 1 },
            });
        }
        if let Some(core) = self.core {
            opts.push(sys::aclrtBinaryLoadOption {
                type_: sys::ACL_RT_BINARY_LOAD_OPT_MAGIC,
                value: sys::aclrtBinaryLoadOptionValue {
                    magic: core.magic(),
                },
            });
        }
        opts
    }
}

/// A loaded binary and the device it was loaded for.
#[derive(Debug)]
struct Loaded {
    raw: sys::aclrtBinHandle,
    device: Device,
    /// Where it came from, for messages.
    origin: String,
}

// SAFETY: a binary handle is a plain value the runtime accepts from any thread; every call makes
// the device's context current first; it is never mutated while shared.
unsafe impl Send for Loaded {}
// SAFETY: as above.
unsafe impl Sync for Loaded {}

impl Drop for Loaded {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        let (raw, device) = (Raw(self.raw), self.device.clone());
        deferred::release(move || {
            device.ensure_current()?;
            // SAFETY: the last handle on the binary is gone: no function of it is left, and every
            // launch of one was waited for by its scope.
            unsafe { raw::aclrtBinaryUnLoad(raw.get()) }
        });
    }
}

/// A loaded kernel binary (`aclrtBinaryLoadFromFile`, `aclrtBinaryLoad`; `aclrtBinaryUnLoad`
/// when its last handle goes).
///
/// Owned, reference-counted, `Send + Sync`; it keeps its device open, and every
/// [`KernelFunction`] of it keeps it loaded.
///
/// | operation | C function |
/// |---|---|
/// | [`Module::load`], [`Module::load_with`] | `aclrtBinaryLoadFromFile` |
/// | [`Module::from_bytes`] | `aclrtCreateBinary`, `aclrtBinaryLoad`, `aclrtDestroyBinary` |
/// | [`Module::from_bytes_with`] | `aclrtBinaryLoadFromData` |
/// | [`Module::function`] | `aclrtBinaryGetFunction` |
/// | drop of the last handle, [`Module::unload`] | `aclrtBinaryUnLoad` |
///
/// ```no_run
/// use ascendcl::{LaunchConfig, Module, Runtime};
///
/// let device = Runtime::new()?.device(0)?;
/// let stream = device.create_stream()?;
/// let module = Module::load(&device, "/opt/kernels/libadd.so")?;
/// let add = module.function("add")?;
/// let x = device.clone_htod(&[1.0f32; 64])?;
/// let mut y = device.alloc_zeros::<f32>(64)?;
/// stream.scope(|s| {
///     // SAFETY: `add(const float* x, float* y, uint32_t n)` is the kernel's signature, and it
///     // touches n elements of each buffer.
///     unsafe {
///         s.launch_builder(&add)
///             .arg(&x)
///             .arg(&mut y)
///             .arg(64u32)
///             .launch(&LaunchConfig::blocks(8))
///     }
/// })?;
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Module {
    inner: Arc<Loaded>,
}

impl Module {
    /// Loads the kernel binary at `path` onto `device` (`aclrtBinaryLoadFromFile`).
    pub fn load(device: &Device, path: impl AsRef<Path>) -> Result<Module> {
        Module::load_with(device, path, LoadOptions::default())
    }

    /// Loads the kernel binary at `path` with options (`aclrtBinaryLoadFromFile`).
    pub fn load_with(
        device: &Device,
        path: impl AsRef<Path>,
        options: LoadOptions,
    ) -> Result<Module> {
        let path = path.as_ref();
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
            Error::argument(
                "aclrtBinaryLoadFromFile",
                format!("the path {} holds a NUL byte", path.display()),
            )
        })?;
        let mut opts = options.raw();
        let mut o = sys::aclrtBinaryLoadOptions {
            options: opts.as_mut_ptr(),
            numOpt: opts.len(),
        };
        let o = if opts.is_empty() {
            std::ptr::null_mut()
        } else {
            &mut o as *mut sys::aclrtBinaryLoadOptions
        };
        device.ensure_current()?;
        let mut raw: sys::aclrtBinHandle = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path, NULL or options that live for the call, a valid
        // out-pointer.
        unsafe { raw::aclrtBinaryLoadFromFile(c.as_ptr(), o, &mut raw) }?;
        Ok(Module::wrap(raw, device, path.display().to_string()))
    }

    /// Loads a kernel binary from its bytes (`aclrtCreateBinary`, `aclrtBinaryLoad`, which
    /// copies them; then `aclrtDestroyBinary`).
    pub fn from_bytes(device: &Device, bytes: &[u8]) -> Result<Module> {
        if bytes.is_empty() {
            return Err(Error::argument(
                "aclrtBinaryLoad",
                "a kernel binary of 0 bytes",
            ));
        }
        device.ensure_current()?;
        // SAFETY: the bytes live until the descriptor is destroyed below, after the load copied
        // them.
        let desc = unsafe { raw::aclrtCreateBinary(bytes.as_ptr().cast(), bytes.len()) };
        if desc.is_null() {
            // The runtime says why in the thread's last error (a stub of a backend without the
            // function leaves none: its missing-symbol record names it).
            let last = raw::aclrtGetLastError(sys::ACL_RT_THREAD_LEVEL);
            let code = if last.0 == 0 {
                sys::FEATURE_NOT_SUPPORT
            } else {
                last.0
            };
            return Err(crate::error::failure("aclrtCreateBinary", code));
        }
        let mut raw: sys::aclrtBinHandle = std::ptr::null_mut();
        // SAFETY: a live descriptor and a valid out-pointer.
        let loaded = unsafe { raw::aclrtBinaryLoad(desc, &mut raw) };
        // SAFETY: the descriptor was created above and is not used again.
        let destroyed = unsafe { raw::aclrtDestroyBinary(desc) };
        loaded?;
        let module = Module::wrap(raw, device, format!("{} bytes of binary data", bytes.len()));
        destroyed?;
        Ok(module)
    }

    /// Loads a kernel binary from its bytes with options (`aclrtBinaryLoadFromData`, which
    /// copies them): [`Module::from_bytes`] with the options of [`Module::load_with`].
    pub fn from_bytes_with(device: &Device, bytes: &[u8], options: LoadOptions) -> Result<Module> {
        if bytes.is_empty() {
            return Err(Error::argument(
                "aclrtBinaryLoadFromData",
                "a kernel binary of 0 bytes",
            ));
        }
        let mut opts = options.raw();
        let o = sys::aclrtBinaryLoadOptions {
            options: opts.as_mut_ptr(),
            numOpt: opts.len(),
        };
        let o = if opts.is_empty() {
            std::ptr::null()
        } else {
            &o as *const sys::aclrtBinaryLoadOptions
        };
        device.ensure_current()?;
        let mut raw: sys::aclrtBinHandle = std::ptr::null_mut();
        // SAFETY: `bytes` is readable for its length during the call (the runtime copies it);
        // NULL or options that live for the call; a valid out-pointer.
        unsafe { raw::aclrtBinaryLoadFromData(bytes.as_ptr().cast(), bytes.len(), o, &mut raw) }?;
        Ok(Module::wrap(
            raw,
            device,
            format!("{} bytes of binary data", bytes.len()),
        ))
    }

    fn wrap(raw: sys::aclrtBinHandle, device: &Device, origin: String) -> Module {
        Module {
            inner: Arc::new(Loaded {
                raw,
                device: device.clone(),
                origin,
            }),
        }
    }

    /// The kernel named `name` (`aclrtBinaryGetFunction`).
    pub fn function(&self, name: &str) -> Result<KernelFunction> {
        let c = CString::new(name).map_err(|_| {
            Error::argument("aclrtBinaryGetFunction", "the kernel name holds a NUL byte")
        })?;
        self.inner.device.ensure_current()?;
        let mut raw: sys::aclrtFuncHandle = std::ptr::null_mut();
        // SAFETY: the binary is live while `self` is; a NUL-terminated name; a valid out-pointer.
        unsafe { raw::aclrtBinaryGetFunction(self.inner.raw, c.as_ptr(), &mut raw) }?;
        Ok(KernelFunction {
            module: Arc::clone(&self.inner),
            raw,
            name: name.into(),
        })
    }

    /// The device the binary was loaded for.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The raw handle, for FFI. It stays owned by the module.
    pub fn as_raw(&self) -> sys::aclrtBinHandle {
        self.inner.raw
    }

    /// Releases this handle; the binary is unloaded (`aclrtBinaryUnLoad`) when it was the last
    /// one (no other `Module` clone and no [`KernelFunction`] of it is left). When the runtime
    /// refuses, the handle comes back with the error.
    pub fn unload(self) -> ReleaseResult<(), Self> {
        let inner = match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner,
            // Others hold it: the binary stays loaded for them.
            Err(_) => return Ok(()),
        };
        let r = inner.device.ensure_current().and_then(|()| {
            // SAFETY: this was the only handle: no function of the binary is left, and every
            // launch of one was waited for by its scope.
            unsafe { raw::aclrtBinaryUnLoad(inner.raw) }
        });
        let mut inner = inner;
        match r {
            Ok(()) => {
                inner.raw = std::ptr::null_mut();
                Ok(())
            }
            Err(e) => Err(ReleaseError::new(
                e,
                Module {
                    inner: Arc::new(inner),
                },
            )),
        }
    }
}

/// A kernel of a [`Module`] (`aclrtBinaryGetFunction`). Clonable, `Send + Sync`; it keeps its
/// module loaded. Launched through a [`Scope`](crate::Scope).
#[derive(Debug, Clone)]
pub struct KernelFunction {
    module: Arc<Loaded>,
    raw: sys::aclrtFuncHandle,
    name: Arc<str>,
}

// SAFETY: a function handle is a plain value the runtime accepts from any thread; the binary
// it belongs to stays loaded while `module` lives.
unsafe impl Send for KernelFunction {}
// SAFETY: as above; nothing is mutated.
unsafe impl Sync for KernelFunction {}

impl KernelFunction {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The raw handle, for FFI. It stays valid while `self` lives.
    pub fn as_raw(&self) -> sys::aclrtFuncHandle {
        self.raw
    }

    /// The device of its module.
    pub fn device(&self) -> &Device {
        &self.module.device
    }

    /// Where its binary came from (a path, or the size of the data).
    pub fn origin(&self) -> &str {
        &self.module.origin
    }
}
