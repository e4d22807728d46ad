//! Safe, typed Rust API for the Huawei CANN runtime (AscendCL, `acl/acl_rt.h`).
//!
//! | runtime concept | Rust type | C functions |
//! |---|---|---|
//! | process initialisation | [`Runtime`] (clonable; last drop finalises) | `aclInit`, `aclFinalize` |
//! | backend (CANN / emulator) | [`BackendChoice`], [`BackendInfo`] | `aclrtGetSocName`, `aclrtGetVersion` |
//! | device selected on a thread | [`Device`] | `aclrtSetDevice`, `aclrtResetDevice[Force]`, `aclrtSynchronizeDevice`, `aclrtGetMemInfo` |
//! | context | [`Context`], [`Context::bind`] | `aclrtCreateContext`, `aclrtDestroyContext`, `aclrtSetCurrentContext` |
//! | stream | [`Stream`] | `aclrtCreateStreamWithConfig`, `aclrtDestroyStream[Force]`, `aclrtSynchronizeStream[WithTimeout]`, `aclrtStreamQuery`, `aclrtSetStreamFailureMode` |
//! | event | [`Event`] | `aclrtCreateEvent[WithFlag]`, `aclrtRecordEvent`, `aclrtQueryEventStatus`, `aclrtSynchronizeEvent`, `aclrtEventElapsedTime`, `aclrtStreamWaitEvent` |
//! | device memory | [`DeviceBuffer`] + [`MallocPolicy`] | `aclrtMalloc`, `aclrtFree`, `aclrtMemset` |
//! | pinned host memory | [`HostBuffer`] | `aclrtMallocHost`, `aclrtFreeHost` |
//! | registered host memory | [`HostRegistration`] | `aclrtHostRegister[V2]`, `aclrtHostUnregister` |
//! | synchronous copies | [`copy()`], [`DeviceBuffer::copy_from_host`], [`DeviceBuffer::copy_to_host`], [`copy_2d`], [`copy_batch`] | `aclrtMemcpy`, `aclrtMemcpy2d`, `aclrtMemcpyBatch` |
//! | peer copies | [`PeerAccess`] | `aclrtDeviceCanAccessPeer`, `aclrtDeviceEnablePeerAccess`, `aclrtMemcpy` |
//! | asynchronous copies | [`Stream::scope`], [`Scope`] | `aclrtMemcpyAsync`, `aclrtMemsetAsync`, `aclrtMemcpy2dAsync` |
//! | host functions | [`Stream::launch_host_fn`], [`ReportSubscription`] | `aclrtLaunchHostFunc`, `aclrtSubscribeReport`, `aclrtLaunchCallback`, `aclrtProcessReport` |
//! | errors | [`Error`], [`AclError`], [`ReleaseError`] | `aclGetRecentErrMsg` |
//! | every C function, checked | [`raw`] | all of `acl/acl_rt.h` |
//!
//! Each wrapped C function and the Rust that calls it (`docs/api-map.md` also lists the
//! functions without a safe wrapper, which [`raw`] calls with a checked status):
//!
#![doc = include_str!("api_table.md")]
//!
//!
//! # Ownership and threads
//!
//! `Runtime` → [`Device<'rt>`](Device) → [`Stream<'d>`](Stream), [`Event<'d>`](Event),
//! [`DeviceBuffer<'d, T>`](DeviceBuffer), [`HostBuffer<'d, T>`](HostBuffer). Each handle borrows the
//! one it depends on, so using a buffer after its device is reset, or a device after
//! `aclFinalize`, does not compile. `Runtime` is a cheap clonable handle (`Send + Sync`): the
//! first one of the process calls `aclInit`, the last one to go calls `aclFinalize`, and tests
//! running in parallel threads share one initialisation. Devices, contexts, streams, events and
//! buffers are neither `Send` nor `Sync`: the runtime's current device and context are per
//! thread, so every thread opens its own [`Device`].
//!
//! # The current context
//!
//! The runtime acts on the calling thread's *current context*. Opening a [`Device`] makes its
//! default context current. This crate remembers, per thread, which context it last made
//! current; creating resources (allocations, streams, events) and enqueuing work on a stream
//! make their own context current first when it is not already — a thread-local compare, no
//! runtime call in the common case. Synchronous copies never touch the current context (they
//! only need one). [`Context::bind`] runs a closure with an explicit context current and
//! restores the previous one afterwards; [`Device::make_current`] and [`Stream::make_current`]
//! prepare raw FFI (kernel launches) on [`Stream::as_raw`].
//!
//! # Memory and copies
//!
//! [`DeviceBuffer`] is device memory (`aclrtMalloc` with a [`MallocPolicy`], optionally with
//! [`MallocFlags`]), never dereferenced on the host; [`DeviceSlice`]/[`DeviceSliceMut`] view parts
//! of it. [`HostBuffer`] is pinned host memory that derefs to `[T]`; [`HostRegistration`]
//! registers ordinary host memory for as long as it borrows it. Element types implement
//! [`DeviceRepr`] (plain data, every bit pattern valid). Safe constructors zero-initialise;
//! `unsafe` `uninit` constructors skip it.
//!
//! Any [`CopySource`] copies into any [`CopyDest`] of the same element type ([`copy()`] and the
//! `copy_*` methods): the direction ([`MemcpyKind`]) follows from where each side lives, lengths
//! must be equal and are checked before the runtime is called, and buffers of two devices are
//! refused — copies between devices go through a [`PeerAccess`] token from
//! [`Device::enable_peer_access`]. The copy path adds no allocation, no lock and no runtime call
//! to `aclrtMemcpy`.
//!
//! # Asynchronous work
//!
//! The hazard of an asynchronous copy is a host that frees, moves or writes a buffer while the
//! device still uses it. A guard returned to the caller cannot prevent that (`mem::forget`
//! defeats it). Like `std::thread::scope`, [`Stream::scope`] runs a closure that enqueues copies,
//! memsets, 2D copies and host functions through a [`Scope`], and **itself** waits for the stream
//! before returning — on success, on error and on panic. Everything handed to the scope is
//! borrowed until then: sources shared (the host cannot write or free them), destinations
//! exclusively (the host cannot read or touch them); [`Scope::claim`] takes a buffer for the
//! whole scope and hands out a copyable [`Claimed`] region that several stream-ordered operations
//! of that scope may use — kernel launches included (`ascendc_kernels::launch_write` takes the
//! scope and a region; raw FFI uses [`Claimed::as_mut_ptr`] with [`Scope::as_raw`]). A claimed
//! region is branded with its scope: the scope of another stream, whose work is not ordered with
//! this one, does not accept it. Buffers created inside the closure are rejected by the borrow
//! checker. `docs/soundness.md` gives the whole argument. Pageable host memory is
//! accepted as well: the runtime completes such copies before the enqueue returns, and the
//! scope's borrows cover them anyway. If the synchronisation fails, the scope keeps waiting
//! (polling `aclrtStreamQuery`) until the stream reports its work complete; if the runtime cannot
//! tell at all, the process aborts rather than hand back memory the device may still use. The
//! unchecked fast path is [`Stream::copy_async_unchecked`] (`unsafe`, with its contract in
//! `# Safety`).
//!
//! # Host functions
//!
//! [`Stream::launch_host_fn`] enqueues an `FnOnce() + Send + 'static` closure
//! (`aclrtLaunchHostFunc`); [`Stream::subscribe_report`] starts a report thread for the
//! `aclrtLaunchCallback` model. A panic is caught at the FFI boundary, returned by the closure's
//! [`HostFnHandle`] and by the stream's next synchronisation ([`Error::HostFnPanicked`]). Each
//! closure is dropped exactly once: after it runs, when the runtime refuses the launch, or —
//! never having run — when [`Stream::destroy_force`] discards it ([`Error::HostFnDiscarded`]).
//! Closing a [`ReportSubscription`] runs the callbacks already queued before its thread stops.
//!
//! # Errors and `Drop`
//!
//! Every fallible call returns [`Error`]: the C function's name, the `aclError`, its symbolic
//! name from the headers' error tables ([`error_name`]) and the text of `aclGetRecentErrMsg`
//! read right after the failure, e.g. `aclrtMalloc failed: ACL_ERROR_RT_MEMORY_ALLOCATION
//! (207001): <runtime message>`. [`Error::code`] returns the code as an [`AclError`], which has a
//! named constant for every code of the headers: `Err(e) if e.code() ==
//! Some(AclError::MEMORY_ALLOCATION)`. A function the backend lacks is [`Error::MissingSymbol`], a
//! backend that cannot be loaded [`Error::Load`] (listing every path tried), an argument refused
//! in Rust [`Error::Argument`]. The safe API never panics on user input.
//!
//! Every handle has an explicit consuming release (`free`, `destroy`, `destroy_force`, `reset`,
//! `reset_force`, `unregister`, `finalize`; `close` and `disable`, which make several calls,
//! return a plain `Result`). When the runtime refuses a release the resource is still alive, so
//! the handle comes back with the error in a [`ReleaseError`]: retry, or give up on it explicitly
//! (`?` converts it into [`Error`] and drops the handle). A handle that is merely dropped
//! releases itself on a best-effort basis: `Drop` never panics and pushes a failure onto a
//! process-wide list read with [`take_drop_errors`].
//!
//! # Backends
//!
//! [`Runtime::new`] uses the backend named by `ASCENDCL_BACKEND` (`cann`, `emulator`, `auto`;
//! unset: CANN when found, else the host emulator of the default `emulator` feature);
//! [`Runtime::with_backend`] chooses explicitly. A CANN install that is found but does not load
//! is an error ([`LoadError::Unusable`]), never a silent switch to the emulator.
//! [`Runtime::backend`] tells which backend is active, why it was chosen
//! ([`BackendInfo::reason`]) and what it found: library path, SoC name (`aclrtGetSocName`), ACL
//! version (`aclrtGetVersion`).
//!
//! # Example: the h2d lifecycle
//!
//! ```
//! use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};
//!
//! // aclInit (backend from ASCENDCL_BACKEND; the emulator when no CANN is installed).
//! let rt = Runtime::new()?;
//! let info = rt.backend();
//! println!("backend: {} ({:?})", info.description, info.soc_name);
//!
//! // aclrtSetDevice(0) and a stream.
//! let device = rt.device(0)?;
//! let stream = device.create_stream()?;
//!
//! // Pinned host memory (aclrtMallocHost) and device memory (aclrtMalloc, huge pages first).
//! let mut host = HostBuffer::<u32>::zeroed(&device, 1024)?;
//! for (i, x) in host.iter_mut().enumerate() {
//!     *x = i as u32;
//! }
//! let mut dev = DeviceBuffer::<u32>::zeroed(&device, 1024, MallocPolicy::HugeFirst)?;
//!
//! // Synchronous copy host to device (aclrtMemcpy), and back.
//! dev.copy_from_host(&host)?;
//! let mut back = vec![0u32; 1024];
//! dev.copy_to_host(&mut back)?;
//! assert_eq!(back[..], host[..]);
//!
//! // Asynchronous copy on the stream, waited for by the scope.
//! stream.scope(|s| s.copy(&mut back, &dev))?;
//!
//! // Teardown, in reverse order, each reporting its own failure.
//! dev.free()?;               // aclrtFree
//! host.free()?;              // aclrtFreeHost
//! stream.destroy()?;         // aclrtDestroyStream
//! device.reset()?;           // aclrtResetDevice
//! rt.finalize()?;            // aclFinalize (when this was the last Runtime handle)
//! # Ok::<(), ascendcl::Error>(())
//! ```
#![warn(missing_docs)]

mod context;
mod copy;
mod device;
mod drop_errors;
mod error;
mod event;
mod host_fn;
mod memory;
pub mod raw;
mod release;
mod result;
mod runtime;
mod scope;
mod stream;

pub use ascendcl_sys::AclError;
pub use context::{Bound, Context, current_context};
pub use copy::{
    Copy2d, CopyDest, CopySource, MemcpyKind, MemoryLocation, PointerAttributes, PointerLocation,
    RawRegion, copy, copy_2d, copy_batch, copy_with_kind, pointer_attributes, to_vec,
};
pub use device::{Device, MemAttr, MemInfo, PeerAccess};
pub use drop_errors::{drop_errors_overflow, take_drop_errors};
pub use error::{Error, Result, error_code, error_codes, error_name};
pub use event::{Event, EventFlags};
pub use host_fn::{CallbackBlock, HostFnHandle, ReportSubscription};
pub use memory::{
    DeviceAlloc, DeviceBuffer, DeviceRepr, DeviceSlice, DeviceSliceMut, HostBuffer,
    HostRegisterFlags, HostRegisterType, HostRegistration, MallocConfig, MallocFlags, MallocPolicy,
};
pub use release::{ReleaseError, ReleaseResult};
pub use runtime::{
    AclVersion, BackendChoice, BackendInfo, BackendKind, LoadError, LoadFailure, Runtime,
    install_backend,
};
pub use scope::{AsyncDest, AsyncSource, Claimed, Scope};
pub use stream::{FailureMode, Stream, StreamFlags, StreamStatus};

/// The raw bindings this crate is built on: types, constants and the function table. [`raw`]
/// calls the same functions with a checked status.
pub use ascendcl_sys as sys;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
