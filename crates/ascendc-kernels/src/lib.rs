//! The AscendC kernels of the CANN runtime's memory samples, `DeviceWrite` and `DeviceRead`,
//! built by `ascendc-build` for the NPU (CANN's `ascendc_library()`) or for the host (the C++
//! compiler), and callable from safe Rust.
//!
//! | kernel (cpp/kernels/write_read_value.cpp) | what it does | Rust |
//! |---|---|---|
//! | `DeviceWrite(__gm__ int* p, int v)` | `p[block_idx] = v`, prints `Source data: v` | [`write_value`] |
//! | `DeviceRead(__gm__ const int* p)` | prints `Destination data: p[block_idx]` | [`read_value`] |
//!
//! # Built by ascendc-build
//!
//! The build script is `ascendc-build`'s [`Build`](https://docs.rs/ascendc-build): the launchers
//! are generated from the kernels' signatures and this crate adds the sample's own checks (block
//! `i` uses element `i`). [`mode`] says how the kernels were built, [`build_info`] what the build
//! found; docs/kernels.md has the details.
//!
//! * [`Mode::Npu`]: a CANN install with `ascendc.cmake` was found at build time. The kernels are
//!   compiled by CANN's `ascendc_library()` for `SOC_VERSION`, and launched with
//!   `<<<blockDim, nullptr, stream>>>`. They run on the NPU, on the CANN backend.
//! * [`Mode::Host`]: otherwise. The same kernel sources are compiled by the host C++ compiler
//!   against the AscendC host layer into a kernel binary that the emulator runs: a launch is a
//!   kernel task on the stream (`aclrtLaunchKernelWithConfig`), its blocks on the emulator's
//!   threads, each with its own `block_idx`, their `printf` lines written in block order after
//!   the kernel (through Rust's stdout, so tests capture them like any other output).
//!
//! Either way a launch is ordered with the stream's other work, and a kernel that fails makes
//! the stream's synchronisation fail with the runtime's error.
//!
//! # Launches borrow like asynchronous copies
//!
//! A kernel is asynchronous work on a stream, so it is launched the way [`Stream::scope`] enqueues
//! copies: [`launch_write`] and [`launch_read`] take the [`Scope`] and a buffer borrowed (or
//! [claimed](ascendcl::Scope::claim)) for the whole scope, and the scope waits until the stream is
//! idle before the borrow ends — also when the wait fails, in which case it keeps polling, or
//! aborts the process when the runtime cannot tell. [`write_value`] and [`read_value`] are one
//! launch in a scope of their own. `docs/soundness.md` has the argument.
//!
//! ```no_run
//! use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
//!
//! let rt = Runtime::new()?;
//! let device = rt.device(0)?;
//! let stream = device.create_stream()?;
//! let mut buf = DeviceBuffer::<i32>::zeroed(&device, 1, MallocPolicy::HugeFirst)?;
//! ascendc_kernels::write_value(&stream, &mut buf, 123, 1)?; // prints "Source data: 123"
//! ascendc_kernels::read_value(&stream, &buf, 1)?; // prints "Destination data: 123"
//!
//! // Several launches and copies in one scope, ordered by the stream.
//! let mut host = vec![0i32; 1];
//! stream.scope(|s| {
//!     let b = s.claim(&mut buf);
//!     ascendc_kernels::launch_write(s, b, 7, 1)?;
//!     ascendc_kernels::launch_read(s, b, 1)?;
//!     s.copy(&mut host, b)
//! })?;
//! assert_eq!(host, [7]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

use ascendcl::{
    AsyncDest, AsyncSource, BackendKind, CopySource, DeviceBuffer, MemoryLocation, RawRegion,
    Scope, Stream,
};
use std::fmt;

/// The launchers `ascendc-build` generated for cpp/kernels/write_read_value.cpp.
#[allow(non_snake_case, dead_code)]
mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/kernels.rs"));
}

/// How the kernels of this build were compiled, and so where they can run (`host` or `npu`;
/// [`Mode::runs_on`] says on which backend).
pub use kernels::Mode;

/// The mode the build script compiled the kernels in.
pub const fn mode() -> Mode {
    kernels::MODE
}

/// What the build script found and used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BuildInfo {
    /// The build mode.
    pub mode: Mode,
    /// The SoC the kernels were compiled for (NPU mode).
    pub soc_version: Option<&'static str>,
    /// Where the SoC version came from (`$SOC_VERSION`, `npu-smi info`, ...).
    pub soc_origin: Option<&'static str>,
    /// The directory of `ascendc.cmake` (NPU mode).
    pub ascendc_cmake_dir: Option<&'static str>,
    /// The CANN install root (NPU mode).
    pub cann_root: Option<&'static str>,
    /// The cmake binary that built the kernels (NPU mode; host mode compiles them with the C++
    /// compiler directly).
    pub cmake: Option<&'static str>,
    /// The kernel binary the emulator loads (host mode).
    pub binary: Option<&'static str>,
}

const fn non_empty(s: &'static str) -> Option<&'static str> {
    if s.is_empty() { None } else { Some(s) }
}

/// What the build script found and used.
pub const fn build_info() -> BuildInfo {
    BuildInfo {
        mode: mode(),
        soc_version: non_empty(env!("ASCENDC_KERNELS_SOC_VERSION")),
        soc_origin: non_empty(env!("ASCENDC_KERNELS_SOC_ORIGIN")),
        ascendc_cmake_dir: non_empty(env!("ASCENDC_KERNELS_ASCENDC_CMAKE_DIR")),
        cann_root: non_empty(env!("ASCENDC_KERNELS_CANN_ROOT")),
        cmake: non_empty(env!("ASCENDC_KERNELS_CMAKE")),
        binary: non_empty(env!("ASCENDC_KERNELS_BINARY")),
    }
}

/// Why a kernel could not be launched or did not complete.
#[derive(Debug)]
#[non_exhaustive]
pub enum KernelError {
    /// `block_dim` was 0.
    ZeroBlockDim {
        /// The kernel.
        kernel: &'static str,
    },
    /// The buffer holds fewer elements than there are blocks (block `i` uses element `i`).
    BufferTooSmall {
        /// The kernel.
        kernel: &'static str,
        /// Elements in the buffer.
        len: usize,
        /// Blocks asked for.
        block_dim: u32,
    },
    /// The buffer is host memory: kernels read and write device memory only.
    NotDeviceMemory {
        /// The kernel.
        kernel: &'static str,
        /// Where the buffer is.
        location: MemoryLocation,
    },
    /// The buffer lives on another device than the stream.
    DeviceMismatch {
        /// The kernel.
        kernel: &'static str,
        /// The buffer's device.
        buffer_device: i32,
        /// The stream's device.
        stream_device: i32,
    },
    /// The kernels of this build cannot run on the active backend (host kernels need the
    /// emulator; NPU kernels need CANN).
    WrongBackend {
        /// The kernel.
        kernel: &'static str,
        /// How the kernels were built.
        mode: Mode,
        /// The active backend, if any.
        backend: Option<BackendKind>,
    },
    /// The runtime reported a failure while launching or waiting for the kernel.
    Runtime {
        /// The kernel.
        kernel: &'static str,
        /// The runtime's error.
        source: ascendcl::Error,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::ZeroBlockDim { kernel } => {
                write!(f, "cannot launch {kernel} with blockDim 0")
            }
            KernelError::BufferTooSmall {
                kernel,
                len,
                block_dim,
            } => write!(
                f,
                "cannot launch {kernel} with blockDim {block_dim} on a buffer of {len} element(s): \
                 block i uses element i"
            ),
            KernelError::NotDeviceMemory { kernel, location } => write!(
                f,
                "cannot launch {kernel} on {} host memory: kernels use device memory",
                match location {
                    MemoryLocation::Pinned => "pinned",
                    _ => "pageable",
                }
            ),
            KernelError::DeviceMismatch {
                kernel,
                buffer_device,
                stream_device,
            } => write!(
                f,
                "cannot launch {kernel} on a stream of device {stream_device} with a buffer of \
                 device {buffer_device}"
            ),
            KernelError::WrongBackend {
                kernel,
                mode,
                backend,
            } => {
                let backend = backend.map_or("no".to_string(), |b| b.to_string());
                let hint = match mode {
                    Mode::Host => {
                        "rebuild with CANN's ascendc.cmake available for NPU kernels, or run with \
                         ASCENDCL_BACKEND=emulator"
                    }
                    Mode::Npu => {
                        "run on the CANN backend, or rebuild with ASCENDC_BUILD_MODE=host for the \
                         emulator"
                    }
                };
                write!(
                    f,
                    "cannot launch {kernel}: the kernels were built in {} mode, which does not run \
                     on the {backend} backend; {hint}",
                    mode.name()
                )
            }
            KernelError::Runtime { kernel, .. } => write!(f, "kernel {kernel} failed"),
        }
    }
}

impl KernelError {
    /// The kernel the error is about.
    pub fn kernel(&self) -> &'static str {
        match self {
            KernelError::ZeroBlockDim { kernel }
            | KernelError::BufferTooSmall { kernel, .. }
            | KernelError::NotDeviceMemory { kernel, .. }
            | KernelError::DeviceMismatch { kernel, .. }
            | KernelError::WrongBackend { kernel, .. }
            | KernelError::Runtime { kernel, .. } => kernel,
        }
    }
}

/// So that `?` works on a launch inside a [`Stream::scope`] closure: a runtime failure becomes the
/// runtime's own error, a refused launch travels whole as [`ascendcl::Error::Layered`]
/// (`e.downcast_ref::<KernelError>()` gives it back).
impl From<KernelError> for ascendcl::Error {
    fn from(e: KernelError) -> Self {
        match e {
            KernelError::Runtime { source, .. } => source,
            other => ascendcl::Error::layered(other),
        }
    }
}

/// So that `?` works on a launch inside an `hccl::scope` closure (`hccl::Error` accepts every
/// [`ascendcl::IntoAclError`]).
impl ascendcl::IntoAclError for KernelError {}

impl std::error::Error for KernelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            KernelError::Runtime { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Launches `DeviceWrite` with `block_dim` blocks and waits for it: block `i` stores `value` in
/// element `i` of `buf` and prints `Source data: <value>`.
///
/// One [`launch_write`] in a [`Stream::scope`] of its own: the buffer stays borrowed until the
/// stream is idle, also when the wait fails (the error is returned only then).
pub fn write_value(
    stream: &Stream,
    buf: &mut DeviceBuffer<i32>,
    value: i32,
    block_dim: u32,
) -> Result<(), KernelError> {
    const KERNEL: &str = "DeviceWrite";
    // Every refusal is made here, so what the scope returns is a runtime failure.
    check(KERNEL, stream.device_id(), buf.source_region(), block_dim)?;
    stream
        .scope(|s| Ok(launch_write(s, &mut *buf, value, block_dim)?))
        .map_err(|source| KernelError::Runtime {
            kernel: KERNEL,
            source,
        })
}

/// Launches `DeviceRead` with `block_dim` blocks and waits for it: block `i` prints
/// `Destination data: <element i of buf>`. As [`write_value`], one [`launch_read`] in a scope of
/// its own.
pub fn read_value(
    stream: &Stream,
    buf: &DeviceBuffer<i32>,
    block_dim: u32,
) -> Result<(), KernelError> {
    const KERNEL: &str = "DeviceRead";
    check(KERNEL, stream.device_id(), buf.source_region(), block_dim)?;
    stream
        .scope(|s| Ok(launch_read(s, buf, block_dim)?))
        .map_err(|source| KernelError::Runtime {
            kernel: KERNEL,
            source,
        })
}

/// Enqueues `DeviceWrite` on the scope's stream: block `i` stores `value` in element `i` of
/// `dst` (device memory of the stream's device, at least `block_dim` elements), which stays
/// borrowed until the scope has waited for the stream.
///
/// ```no_run
/// use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
/// # let rt = Runtime::new()?;
/// # let device = rt.device(0)?;
/// # let stream = device.create_stream()?;
/// let mut buf = DeviceBuffer::<i32>::zeroed(&device, 4, MallocPolicy::HugeFirst)?;
/// stream.scope(|s| ascendc_kernels::launch_write(s, &mut buf, 5, 4).map_err(Into::into))?;
/// assert_eq!(buf.to_vec()?, [5; 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn launch_write<'scope>(
    scope: &Scope<'scope, '_>,
    mut dst: impl AsyncDest<'scope, Elem = i32>,
    value: i32,
    block_dim: u32,
) -> Result<(), KernelError> {
    const KERNEL: &str = "DeviceWrite";
    let region = dst.region();
    check(KERNEL, scope.device_id(), region, block_dim)?;
    kernels::DeviceWrite(scope, block_dim, dst, value).map_err(|e| runtime(KERNEL, e))
}

/// Enqueues `DeviceRead` on the scope's stream: block `i` prints element `i` of `src` (device
/// memory of the stream's device, at least `block_dim` elements), which stays borrowed until the
/// scope has waited for the stream.
pub fn launch_read<'scope>(
    scope: &Scope<'scope, '_>,
    src: impl AsyncSource<'scope, Elem = i32>,
    block_dim: u32,
) -> Result<(), KernelError> {
    const KERNEL: &str = "DeviceRead";
    let region = src.region();
    check(KERNEL, scope.device_id(), region, block_dim)?;
    kernels::DeviceRead(scope, block_dim, src).map_err(|e| runtime(KERNEL, e))
}

/// Everything a launch refuses before reaching the stream: host memory, a buffer of another
/// device, zero blocks, fewer elements than blocks, a backend this build's kernels cannot run on.
fn check(
    kernel: &'static str,
    stream_device: i32,
    region: RawRegion<i32>,
    block_dim: u32,
) -> Result<(), KernelError> {
    let Some(buffer_device) = region.location().device() else {
        return Err(KernelError::NotDeviceMemory {
            kernel,
            location: region.location(),
        });
    };
    if buffer_device != stream_device {
        return Err(KernelError::DeviceMismatch {
            kernel,
            buffer_device,
            stream_device,
        });
    }
    if block_dim == 0 {
        return Err(KernelError::ZeroBlockDim { kernel });
    }
    if (block_dim as usize) > region.len() {
        return Err(KernelError::BufferTooSmall {
            kernel,
            len: region.len(),
            block_dim,
        });
    }
    check_backend(kernel)
}

fn check_backend(kernel: &'static str) -> Result<(), KernelError> {
    let backend = ascendcl::sys::active().map(|b| b.kind);
    match backend {
        Some(kind) if mode().runs_on(kind) => Ok(()),
        _ => Err(KernelError::WrongBackend {
            kernel,
            mode: mode(),
            backend,
        }),
    }
}

/// Enqueues `DeviceWrite` on `stream` without waiting: block `i` writes `value` at `ptr[i]`.
///
/// # Safety
/// `ptr` must point to device memory (from the active backend) holding at least `block_dim`
/// `i32`s, which stays allocated and is not accessed by anything else until the stream has
/// finished the kernel (a later synchronisation returned).
pub unsafe fn launch_device_write(
    stream: &Stream,
    ptr: *mut i32,
    value: i32,
    block_dim: u32,
) -> Result<(), KernelError> {
    checked_launch("DeviceWrite", block_dim, || {
        let (p, v) = ((ptr as usize as u64).to_ne_bytes(), value.to_ne_bytes());
        // SAFETY: forwarded from the caller: the arguments are DeviceWrite's parameters.
        unsafe { kernels::DEVICEWRITE.launch_unchecked(stream, block_dim, &[&p, &v]) }
    })
}

/// Enqueues `DeviceRead` on `stream` without waiting: block `i` prints `ptr[i]`.
///
/// # Safety
/// `ptr` must point to device memory (from the active backend) holding at least `block_dim`
/// `i32`s, which stays allocated and is not written by anything else until the stream has
/// finished the kernel (a later synchronisation returned).
pub unsafe fn launch_device_read(
    stream: &Stream,
    ptr: *const i32,
    block_dim: u32,
) -> Result<(), KernelError> {
    checked_launch("DeviceRead", block_dim, || {
        let p = (ptr as usize as u64).to_ne_bytes();
        // SAFETY: forwarded from the caller: the argument is DeviceRead's parameter.
        unsafe { kernels::DEVICEREAD.launch_unchecked(stream, block_dim, &[&p]) }
    })
}

/// The checks every launch makes before enqueuing its kernel (a non-zero block count, a backend
/// that can run this build's kernels); a runtime failure is reported under the kernel's name.
fn checked_launch(
    kernel: &'static str,
    block_dim: u32,
    launch: impl FnOnce() -> Result<(), kernels::KernelError>,
) -> Result<(), KernelError> {
    if block_dim == 0 {
        return Err(KernelError::ZeroBlockDim { kernel });
    }
    check_backend(kernel)?;
    launch().map_err(|e| runtime(kernel, e))
}

/// A failure of a generated launcher, after this crate's own checks passed: the runtime's error
/// (or the launcher's refusal, carried as [`ascendcl::Error::Layered`]).
fn runtime(kernel: &'static str, e: impl Into<ascendcl::Error>) -> KernelError {
    KernelError::Runtime {
        kernel,
        source: e.into(),
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// `?` on every launcher's error where a user writes it, compiled and run: inside `hccl::scope`
/// (generated launchers, this crate's launchers, the launch builder) and as the value of a
/// `Stream::scope` closure (generated launchers), with refusals keeping their type.
#[cfg(test)]
mod error_story {
    use super::*;
    use ascendcl::{BackendChoice, MallocPolicy, Runtime};

    fn runtime() -> Option<Runtime> {
        if mode() != Mode::Host {
            eprintln!("skipped: kernels were built in NPU mode");
            return None;
        }
        Some(Runtime::with_backend(BackendChoice::Emulator).expect("the emulator backend"))
    }

    #[test]
    fn question_mark_in_hccl_and_stream_scopes() -> hccl::Result<()> {
        let Some(rt) = runtime() else { return Ok(()) };
        let dev = rt.device(0)?;
        let stream = dev.create_stream()?;
        let mut buf = DeviceBuffer::<i32>::zeroed(&dev, 2, MallocPolicy::HugeFirst)?;
        hccl::scope(&stream, |s| {
            let b = s.claim(&mut buf);
            kernels::DeviceWrite(s, 2, b, 3)?;
            launch_write(s, b, 4, 2)?;
            kernels::DEVICEWRITE
                .launch(s, 1)
                .output(b)
                .scalar(5i32)
                .run()?;
            Ok(())
        })?;
        assert_eq!(buf.to_vec()?, [5, 4]);
        // A generated launcher is the closure's value as it is: no `Ok(..?)`.
        stream.scope(|s| kernels::DeviceWrite(s, 2, &mut buf, 6))?;
        assert_eq!(buf.to_vec()?, [6, 6]);
        Ok(())
    }

    #[test]
    fn refusals_keep_their_type_through_both_error_types() {
        let Some(rt) = runtime() else { return };
        let dev = rt.device(0).unwrap();
        let stream = dev.create_stream().unwrap();
        let mut buf = DeviceBuffer::<i32>::zeroed(&dev, 2, MallocPolicy::HugeFirst).unwrap();
        // This crate's launcher, `?` into hccl::Error.
        let e = hccl::scope(&stream, |s| {
            launch_write(s, &mut buf, 1, 0)?;
            Ok(())
        })
        .unwrap_err();
        let hccl::Error::Acl(acl) = &e else {
            panic!("not a runtime-side error: {e:?}")
        };
        assert!(
            matches!(
                acl.downcast_ref::<KernelError>(),
                Some(KernelError::ZeroBlockDim {
                    kernel: "DeviceWrite"
                })
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            KernelError::ZeroBlockDim {
                kernel: "DeviceWrite"
            }
            .to_string()
        );
        // A generated launcher refusing 0 blocks, as a Stream::scope value.
        let e = stream
            .scope(|s| kernels::DeviceWrite(s, 0, &mut buf, 1))
            .unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<kernels::KernelError>(),
                Some(kernels::KernelError::ZeroBlocks {
                    kernel: "DeviceWrite"
                })
            ),
            "{e:?}"
        );
        // Nothing ran.
        assert_eq!(buf.to_vec().unwrap(), [0, 0]);
    }
}
