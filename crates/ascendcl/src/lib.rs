//! Safe, typed Rust API for the Huawei CANN runtime (AscendCL, `acl/acl_rt.h`).
//!
//! # Getting started
//!
//! The crate is not on crates.io yet: depend on the repository (pin one `rev` for all its
//! crates), or on a checkout by path. `docs/publishing.md` of the repository has the details and
//! the publishing steps.
//!
//! ```toml
//! [dependencies]
//! ascendcl = { git = "https://github.com/ascendcl-rs/ascendcl-rs" }
//! # or: ascendcl = { path = "../ascendcl-rs/crates/ascendcl" }
//! ```
//!
//! No CANN is needed to build, test or run: where none is installed, the runtime is the host
//! emulator that the default `emulator` feature embeds. The same program runs unchanged on an NPU
//! once CANN is installed.
//!
//! ## Production builds
//!
//! A program shipped to NPU machines can leave the emulator out (`default-features = false`;
//! keep the feature for its tests, in `[dev-dependencies]`): smaller, and never on the emulator
//! by mistake. On a machine without CANN, [`Runtime::new`] of such a build is
//! [`Error::Load`]`(`[`LoadError::NoBackend`]`)`: the message says that no CANN runtime library
//! was found, that the build has no emulator, what to do (source CANN's `set_env.sh`, or set
//! `ASCENDCL_LIB`) and every path tried.
//!
//! ## The emulator's settings
//!
//! Read once, at the emulator's first use:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `ASCENDCL_EMU_DEVICES` | number of devices (1–64) | `2` |
//! | `ASCENDCL_EMU_SOC` | the SoC it claims to be; sets the core counts | `Ascend910B2` |
//! | `ASCENDCL_EMU_MEMORY` | capacity of each device (`K`/`M`/`G`/`T` suffixes) | `8G` |
//! | `ASCENDCL_EMU_HOST_MEMORY` | budget of pinned host memory for the process | half the machine's memory |
//! | `ASCENDCL_EMU_KERNEL_THREADS` | host threads that run kernel blocks (1–1024) | available parallelism |
//! | `ASCENDCL_EMU_HUGEPAGES` | `auto` or `off` | `auto` |
//! | `ASCENDCL_EMU_FAULTS` | fault injection (`aclrtMalloc:2`, `aclrtMemcpy:*=507053`) | none |
//! | `ASCENDCL_EMU_LEAK_REPORT` | `1`: leak reports on stderr | off |
//! | `ASCENDCL_EMU_HOST_ACCESS` | `1`: host code may touch device memory | off |
//! | `ASCENDCL_EMU_TRACE` | a file: every stream task and [`profile`] range of the program, as a Chrome trace / Perfetto JSON timeline | off |
//!
//! The emulated device reports its SoC's core counts ([`Device::capability`] with
//! [`DeviceCapability::AiCoreNum`] / [`DeviceCapability::VectorCoreNum`]): 24 AI and 48 vector
//! cores on the default Ascend910B2, 20 and 40 on the 910B3/B4. A kernel launch should use as many
//! blocks as the cores its kernel runs on, read from the device, so that the same code fills an
//! NPU; on the host its blocks run `ASCENDCL_EMU_KERNEL_THREADS` at a time, with the same
//! results for any block count.
//!
//! ## The h2d lifecycle
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
//!
//! `examples/` has more, numbered in reading order: `01-device-info`, `02-h2d-copy`,
//! `03-async-scope`, `04-events-timing`, `05-host-function`
//! (`cargo run -p ascendcl --example 01-device-info`).
//!
//! ## How the backend is chosen
//!
//! Once per process. [`Runtime::new`] uses the backend named by `ASCENDCL_BACKEND`:
//!
//! | `ASCENDCL_BACKEND` | backend |
//! |---|---|
//! | unset | CANN when its runtime library is found, otherwise the host emulator |
//! | `cann` | the CANN runtime library; an error listing every path tried when it is not found |
//! | `emulator` | the host emulator (crate `ascendcl-emu`, feature `emulator`) |
//! | `auto` | CANN when found; otherwise an error that explains how to choose the emulator |
//!
//! [`Runtime::with_backend`] chooses explicitly. The CANN library is found at run time:
//! `ASCENDCL_LIB`, then the install roots (`ASCEND_HOME_PATH`, which CANN's `set_env.sh` sets,
//! and the usual install directories), then the dynamic loader's path. A CANN install that is
//! found but does not load is an error ([`LoadError::Unusable`]), never a silent switch to the
//! emulator. [`Runtime::backend`] tells which backend is active, why it was chosen
//! ([`BackendInfo::reason`]) and what it found: library path, SoC name (`aclrtGetSocName`), ACL
//! version (`aclrtGetVersion`).
//!
//! # The API at a glance
//!
//! | runtime concept | Rust type | C functions |
//! |---|---|---|
//! | process initialisation | [`Runtime`] (clonable; last drop finalises) | `aclInit`, `aclFinalize` |
//! | backend (CANN / emulator) | [`BackendChoice`], [`BackendInfo`], [`Runtime::run_mode`] ([`RunMode`]) | `aclrtGetSocName`, `aclrtGetVersion`, `aclrtGetRunMode` |
//! | device selected on a thread | [`Device`] | `aclrtSetDevice`, `aclrtResetDevice[Force]`, `aclrtSynchronizeDevice`, `aclrtGetMemInfo` |
//! | device information and limits | [`Device::capability`], [`Device::attribute`], [`Device::utilization`], [`Device::status`], [`Device::res_limit`], [`Device::uuid`], [`Device::maps_host_memory`] | `aclGetDeviceCapability`, `aclrtGetDeviceInfo`, `aclrtGetDeviceUtilizationRate`, `aclrtQueryDeviceStatus`, `aclrt*DeviceResLimit`, `aclrtDeviceGetUuid`, `aclrtHostMemMapCapabilities` |
//! | context | [`Context`], [`Context::bind`], [`CurrentContext::default_stream`] | `aclrtCreateContext`, `aclrtDestroyContext`, `aclrtSetCurrentContext`, `aclrtCtxGetCurrentDefaultStream` |
//! | stream | [`Stream`] | `aclrtCreateStreamWithConfig`, `aclrtDestroyStream[Force]`, `aclrtSynchronizeStream[WithTimeout]`, `aclrtStreamQuery`, `aclrtSetStreamFailureMode` |
//! | event | [`Event`] | `aclrtCreateEvent[WithFlag]`, `aclrtRecordEvent`, `aclrtQueryEventStatus`, `aclrtSynchronizeEvent`, `aclrtEventElapsedTime`, `aclrtStreamWaitEvent` |
//! | device memory | [`DeviceBuffer`] + [`MallocPolicy`], [`DeviceAlloc`] ([`MallocAttrs`]), [`DeviceBuffer::fill`] | `aclrtMalloc[WithCfg]`, `aclrtFree`, `aclrtMemset`, `aclrtMemsetD32` |
//! | pinned host memory | [`HostBuffer`] | `aclrtMallocHost`, `aclrtFreeHost` |
//! | registered host memory | [`HostRegistration`], [`HostRegistration::device_view`] (zero copy) | `aclrtHostRegister[V2]`, `aclrtHostGetDevicePointer`, `aclrtHostUnregister` |
//! | managed memory | [`ManagedBuffer`], [`ManagedView`], [`MemAdvice`], [`Scope::prefetch`] | `aclrtMemAllocManaged`, `aclrtMemManagedAdvise`, `aclrtMemManagedGetAttr[s]`, `aclrtMemManagedPrefetch[Batch]Async` |
//! | user allocators | [`Allocator`], [`Stream::register_allocator`], [`RegisteredAllocator`] | `aclrtAllocator*` |
//! | synchronous copies | [`copy()`], [`DeviceBuffer::copy_from_host`], [`DeviceBuffer::copy_to_host`], [`copy_2d`], [`copy_batch`] | `aclrtMemcpy`, `aclrtMemcpy2d`, `aclrtMemcpyBatch` |
//! | peer copies | [`PeerAccess`] | `aclrtDeviceCanAccessPeer`, `aclrtDeviceEnablePeerAccess`, `aclrtMemcpy` |
//! | asynchronous copies | [`Stream::scope`], [`Scope`], [`Scope::copy_batch`], [`Scope::copy_with_desc`] ([`MemcpyDescriptor`]) | `aclrtMemcpyAsync`, `aclrtMemsetAsync`, `aclrtMemcpy2dAsync`, `aclrtMemcpyBatchAsync`, `aclrtMemcpyAsyncWithDesc` |
//! | host functions | [`Stream::launch_host_fn`], [`ReportSubscription`] | `aclrtLaunchHostFunc`, `aclrtSubscribeReport`, `aclrtLaunchCallback`, `aclrtProcessReport` |
//! | errors | [`Error`], [`AclError`], [`ReleaseError`], [`last_error`], [`peek_last_error`], [`recent_error_message`] | `aclGetRecentErrMsg`, `aclrtGetLastError`, `aclrtPeekAtLastError` |
//! | built-in tasks | [`Scope::reduce`] ([`ReduceKind`]), [`Scope::random`] ([`Distribution`], [`RandomState`]) | `aclrtReduceAsync`, `aclrtRandomNumAsync` |
//! | failed device tasks | [`ExceptionCallback`], [`ExceptionInfo`] | `aclrtSetExceptionInfoCallback`, `aclrtGet*FromExceptionInfo` |
//! | stream control | [`Stream::id`], [`Stream::stop`], [`Stream::abort`], [`StreamStateCallback`] | `aclrtStreamGetId`, `aclrtStreamStop`, `aclrtStreamAbort`, `aclrtRegStreamStateCallback` |
//! | value writes, waits, notifies | [`Scope::write_value`], [`Scope::wait_value`], [`DeviceWord`], [`Notify`] | `aclrtValueWrite`, `aclrtValueWait`, `aclrt*Notify` |
//! | one scope over several streams, ordered by the scope | [`scope()`], [`Scope::on`], [`Scope::enqueue`] ([`Access`]), [`Scope::stats`], [`Lane`], [`Scope::hand_off`] ([`Handoff`]), [`Stream::wait_event_timeout`], [`Event::wait_status`] | `aclrtRecordEvent`, `aclrtStreamWaitEvent[WithTimeout]`, `aclrtQueryEventWaitStatus`, `aclrtRecordNotify`, `aclrtWaitAndResetNotify` |
//! | work that does not wait (`async`) | [`Stream::submit`], [`submit()`], [`Submission`] (`Future`), [`SubmissionError`] | `aclrtLaunchHostFunc` (the completion) |
//! | stream configuration | [`Stream::config`] ([`StreamConfig`]), [`StreamConfigHandle`] | `aclrtStreamGet{Id,Flags,Priority}`, `aclrtCreateStreamConfigHandle`, `aclrtCreateStreamV2` |
//! | init and finalize callbacks | [`InitCallback`], [`FinalizeCallback`] ([`CallbackKind`]) | `aclInitCallbackRegister`, `aclFinalizeCallbackRegister` |
//! | installed software | [`Runtime::package_version`] ([`PackageVersion`], [`VersionNumber`]), [`Runtime::supports`] ([`CannAttr`]) | `aclsysGetVersionStr`, `aclsysGetVersionNum`, `aclGetCannAttribute[List]` |
//! | virtual memory | [`VirtualRange`], [`PhysicalMemory`] ([`PhysicalMemProp`]), [`Mapping`] | `aclrtReserveMemAddress`, `aclrtMallocPhysical`, `aclrtMapMem`, `aclrtUnmapMem`, `aclrtFreePhysical`, `aclrtReleaseMemAddress`, `aclrtMemSet/GetAccess`, `aclrtMemGetAllocationGranularity` |
//! | sharing between processes | [`Pid`], [`PhysicalMemory::export`] ([`ShareableHandle`]), [`IpcMemExport`] / [`IpcMemImport`] ([`IpcMemKey`]), [`Notify::export`] / [`ImportedNotify`] ([`NotifyKey`]), [`Event::ipc_handle`] ([`IpcEventHandle`]) | `aclrtDeviceGetBareTgid`, `aclrtMem*ShareableHandle*`, `aclrtIpcMem*`, `aclrtNotify*Key`, `aclrtNotify*ImportPid`, `aclrtIpc*EventHandle` |
//! | model runtime instances (capture, build, labels) | [`Model`] ([`Slot`]), [`Recorder`], [`TaskGroup`], [`Builder`], [`Label`], [`LabelList`], [`Scope::execute`] | `aclmdlRICapture*`, `aclmdlRIBuild*`, `aclmdlRIBindStream`, `aclmdlRIExecute[Async]`, `aclrtSetLabel`, `aclrtSwitchLabelByIndex`, `aclrtActiveStream`, `aclrtSwitchStream` |
//! | host-function subscription | [`HostFnSubscription`] | `aclrtSubscribeHostFunc`, `aclrtProcessHostFunc`, `aclrtUnSubscribeHostFunc` |
//! | kernel binaries and launches | [`Module`], [`KernelFunction`], [`KernelArgs`], [`Scope::launch`], [`Scope::launch_builder`], [`LaunchConfig`] | `aclrtBinaryLoad*`, `aclrtBinaryGetFunction`, `aclrtKernelArgs*`, `aclrtLaunchKernelWithConfig` |
//! | profiling ranges, marks, collections | [`profile::range`] ([`profile::Range`]), [`profile::mark`], [`profile::mark_on`], [`profile::Session`] | `aclprofRangeStart/Stop`, `aclprofMark[Ex]`, `aclprofInit`, `aclprofCreateConfig`, `aclprofStart/Stop`, `aclprofFinalize` |
//! | every C function, checked | [`raw`] | all of `acl/acl_rt.h` and of its companions: profiling (`acl_prof.h`), data channels and queues (`acl_tdt.h`, `acl_tdt_queue.h`), dump (`acl_dump.h`) |
//!
//! Each wrapped C function and the Rust that calls it (`docs/api-map.md` also lists the
//! functions reachable only through [`raw`] and [`sys`], each with the reason it has no wrapper):
//!
#![doc = include_str!("api_table.md")]
//!
//!
//! # Ownership and threads
//!
//! Handles own what they depend on, by reference counting: [`Device`], [`Context`], [`Stream`]
//! and [`Event`] are cheap to clone, and every stream, event, context and buffer
//! ([`DeviceBuffer<T>`](DeviceBuffer), [`HostBuffer<T>`](HostBuffer),
//! [`HostRegistration<T>`](HostRegistration)) and every [`PeerAccess`] token holds a handle on
//! its device; each open device holds a [`Runtime`] handle. A resource is released when its last
//! handle goes, dependants first by construction: a device is reset only after its last buffer,
//! stream and event are gone, and `aclFinalize` runs only after the last device is reset. No
//! handle has a lifetime parameter: a model struct holds its device, weights and stream side by
//! side, a function returns a buffer, a server moves a stream into a worker thread.
//!
//! | type | `Send` | `Sync` | why |
//! |---|---|---|---|
//! | `Runtime`, `Device`, `Context` | yes | yes | immutable once created; every call makes the right context current first |
//! | `Stream` | yes | yes | the runtime serialises enqueues on one stream; the order between threads is theirs to arrange |
//! | `Event` | yes | yes | recording, querying and waiting are synchronised by the runtime |
//! | `DeviceBuffer<T>`, `HostBuffer<T>`, `HostRegistration<T>` | yes | yes | own their memory like a `Vec<T>` (`T: DeviceRepr` is `Send + Sync`) |
//! | `PeerAccess`, `HostFnHandle` | yes | yes | hold handles and shared state only |
//! | [`ManagedBuffer<T>`](ManagedBuffer) | yes | yes | owns its memory like a `Vec<T>`; device work borrows it exclusively through a [`ManagedView`] |
//! | [`AllocatorRegistration<A>`](AllocatorRegistration) | yes | yes | `A: Allocator` is `Send + Sync`: executors call it from runtime threads |
//! | [`RegisteredAllocator`], [`ExecutorBlock`] | no | no | borrowed views of one registration, for the calling executor |
//! | [`Scope`], [`Claimed`], [`Lane`] | no | no | belong to the one scope call (and thread) that waits for them |
//! | [`Submission<B>`](Submission) | when `B` is | yes | owns the buffers until its streams are past them |
//! | [`CurrentContext`] | no | no | proves that a context is current on *this* thread |
//! | `VirtualRange`, `PhysicalMemory`, `Mapping<T>` | yes | yes | own address space and memory the host never dereferences |
//! | `IpcMemExport<T>`, `IpcMemImport<T>`, `ImportedNotify` | yes | yes | own an export or an import; the host never dereferences the memory |
//! | [`ReportSubscription`], [`HostFnSubscription`] | no | no | own their thread; closed by the thread that opened them |
//! | [`Model`], [`Label`], [`LabelList`], [`TaskGroup`] | yes | yes | a model's instance is used only through `&mut Model` (executions borrow it exclusively); labels are plain handles |
//! | [`Recorder`], [`Builder`] | no | no | belong to the one capture, update or build call that records through them |
//!
//! The process holds one open device per id: [`Runtime::device`] on an id that is open returns
//! another handle on it. Releases that would destroy what other handles use need the only
//! handle: [`Device::reset_force`] and [`Stream::destroy_force`] refuse with [`Error::Shared`]
//! (giving the handle back) while a clone, a buffer or a stream holds the resource. The plain
//! releases ([`Device::reset`], [`Stream::destroy`], [`Event::destroy`], [`Context::destroy`])
//! release their own handle and the resource with it when it was the last.
//!
//! # The current context
//!
//! The runtime acts on the calling thread's *current context*. Every call of this crate makes
//! its handle's context current first — a thread-local compare, and `aclrtSetCurrentContext`
//! only when this thread's current context is another — so a handle used from any thread acts
//! on its own device. What a thread remembers is never trusted after any thread destroyed a
//! context or reset a device (a process-wide epoch), since the runtime may give a new context
//! the address of a destroyed one. [`Context::bind`] runs a closure with an explicit context
//! current and restores the previous one afterwards; [`Device::make_current`] and
//! [`Stream::make_current`] prepare raw FFI (kernel launches) on [`Stream::as_raw`].
//!
//! # Memory and copies
//!
//! [`DeviceBuffer`] is device memory (`aclrtMalloc` with a [`MallocPolicy`], optionally with
//! [`MallocFlags`]), never dereferenced on the host; [`DeviceSlice`]/[`DeviceSliceMut`] view parts
//! of it. [`Device::alloc_zeros`], [`Device::clone_htod`] and [`DeviceBuffer::copy_to_vec`] are
//! the short forms with the default policy. [`HostBuffer`] is pinned host memory that derefs to
//! `[T]`; [`HostRegistration`] registers an ordinary `Vec` with the runtime for as long as it
//! owns it. Element types implement [`DeviceRepr`] (plain data, every bit pattern valid): the
//! primitive numbers and arrays of them, `half::f16` and `half::bf16` with the `half` feature,
//! and a user's `#[repr(C)]` struct that implements `bytemuck::Pod` through `device_repr!` with
//! the `bytemuck` feature. Safe constructors zero-initialise; `unsafe` `uninit` constructors
//! (and [`Device::alloc`]) skip it.
//!
//! Any [`CopySource`] copies into any [`CopyDest`] of the same element type ([`copy()`] and the
//! `copy_*` methods, which take slices, arrays and `Vec`s as well as buffers): the direction
//! ([`MemcpyKind`]) follows from where each side lives, lengths must be equal and are checked
//! before the runtime is called, and buffers of two devices are refused — copies between devices
//! go through a [`PeerAccess`] token from [`Device::enable_peer_access`]. The copy path adds no
//! allocation, no lock and no runtime call to `aclrtMemcpy` beyond making the buffer's context
//! current when this thread's is another.
//!
//! # Asynchronous work
//!
//! The hazard of an asynchronous copy is a host that frees, moves or writes a buffer while the
//! device still uses it. A guard returned to the caller cannot prevent that (`mem::forget`
//! defeats it). Like `std::thread::scope`, [`Stream::scope`] runs a closure that enqueues copies,
//! memsets, 2D copies, kernel launches and host functions through a [`Scope`], and **itself**
//! waits for the stream before returning — on success, on error and on panic. Everything handed
//! to the scope is borrowed until then: sources shared (the host cannot write or free them),
//! destinations exclusively (the host cannot read or touch them); [`Scope::claim`] takes a buffer
//! for the whole scope and hands out a copyable [`Claimed`] region that several operations of
//! that scope may use. A claimed region is branded with its scope: no other scope accepts it.
//! Buffers created inside the closure are rejected by the borrow checker. `docs/soundness.md`
//! gives the whole argument. Pageable host memory is accepted as well: the runtime completes such
//! copies before the enqueue returns (pinned [`HostBuffer`]s are what overlaps). If the
//! synchronisation fails, the scope keeps waiting (polling `aclrtStreamQuery`) until the stream
//! reports its work complete; if the runtime cannot tell at all, the process aborts rather than
//! hand back memory the device may still use. The unchecked fast path is
//! [`Stream::copy_async_unchecked`] (`unsafe`, with its contract in `# Safety`).
//!
//! ## Several streams: copy/compute overlap
//!
//! [`scope()`] opens one scope over several streams (and [`Scope::on`] adds one), of one device or
//! of peer devices; its claimed regions are usable on every one of them. The scope orders the uses
//! itself: each claim remembers the stream of its last write and the streams that read it since,
//! and a use on another stream first makes that stream wait (`aclrtStreamWaitEvent`) for an event
//! recorded after the uses it conflicts with — unless they are ordered already, by an earlier
//! wait or by the caller's own [`Scope::record_event`] / [`Scope::wait_event`], which the scope
//! recognises ([`Scope::stats`] counts the waits it queued). The double-buffered pipeline, loads on
//! one stream, computation on a second, stores on a third:
//!
//! ```
//! use ascendcl::{HostBuffer, ReduceKind};
//! # let rt = ascendcl::Runtime::new()?;
//! let dev = rt.device(0)?;
//! let (load, compute, store) = (dev.create_stream()?, dev.create_stream()?, dev.create_stream()?);
//! let input = HostBuffer::from_slice(&dev, &(0..1024).collect::<Vec<i32>>())?;
//! let mut output = HostBuffer::<i32>::zeroed(&dev, 1024)?;
//! let ones = dev.clone_htod(&[1i32; 256])?;
//! let mut slots = [dev.alloc_zeros::<i32>(256)?, dev.alloc_zeros::<i32>(256)?];
//! ascendcl::scope([&load, &compute, &store], |[l, c, s]| {
//!     let [a, b] = &mut slots;
//!     let slots = [l.claim(a), l.claim(b)];
//!     for (i, (inp, out)) in input.chunks(256).zip(output.chunks_mut(256)).enumerate() {
//!         let x = slots[i % 2];
//!         l.copy(x, inp)?;                      // after the store that last read this slot
//!         c.reduce(x, &ones, ReduceKind::Sum)?; // after the load (a kernel launch works alike)
//!         s.copy(out, x)?;                      // after the computation
//!     }
//!     Ok(())
//! })?;
//! assert!(output.iter().enumerate().all(|(i, &v)| v == i as i32 + 1));
//! # Ok::<(), ascendcl::Error>(())
//! ```
//!
//! While chunk `i` is computed, chunk `i + 1` is loaded and chunk `i - 1` stored. The scope's end
//! waits for all three streams; a failure names its stream ([`Error::OnStream`]).
//!
//! ## Work that does not wait: submissions and `async`
//!
//! [`Stream::submit`] (and [`submit()`] over several streams) returns at once: the buffers move
//! into a [`Submission`], the closure enqueues work on them — copies, kernel launches,
//! collectives — and the submission gives them back once the streams have passed that work:
//! [`Submission::wait`], [`Submission::is_done`], or `.await` (a `Future` woken by the runtime's
//! host-function callback: no polling thread, any executor). Dropping it never blocks and never
//! frees the buffers before the streams are past them. A server can share one stream between
//! requests and have each await its own work only:
//!
//! ```
//! # let rt = ascendcl::Runtime::new()?;
//! # let dev = rt.device(0)?;
//! # let stream = dev.create_stream()?;
//! # async fn serve(stream: &ascendcl::Stream, dev: &ascendcl::Device) -> ascendcl::Result<()> {
//! let request = (ascendcl::HostBuffer::from_slice(dev, &[1.0f32; 64])?, dev.alloc_zeros(64)?);
//! let (input, output) = stream
//!     .submit(request, |s, (input, output)| s.copy(output, &*input))
//!     .await?;
//! # let _ = (input, output); Ok(()) }
//! # let _ = serve(&stream, &dev);
//! # Ok::<(), ascendcl::Error>(())
//! ```
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
//! A closure may capture handles: the runtime forbids freeing or destroying anything on its
//! callback thread, so releases requested there run on a release thread of this crate.
//!
//! # Errors and `Drop`
//!
//! Every fallible call returns [`Error`]: the C function's name, the `aclError`, its symbolic
//! name from the headers' error tables ([`error_name`]) and the text of `aclGetRecentErrMsg`
//! read right after the failure, e.g. `aclrtMalloc failed: ACL_ERROR_RT_MEMORY_ALLOCATION
//! (207001): <runtime message>`. A function the backend lacks is [`Error::MissingSymbol`], a
//! backend that cannot be loaded [`Error::Load`] (listing every path tried), an argument refused
//! in Rust [`Error::Argument`]. The safe API never panics on user input.
//!
//! Every handle has an explicit consuming release (`free`, `destroy`, `destroy_force`, `reset`,
//! `reset_force`, `unregister`, `finalize`; `close` and `disable`, which make several calls,
//! return a plain `Result`). For shared handles it releases the resource when it was the last
//! handle (the forced forms insist on being the only one). When the runtime refuses a release
//! the resource is still alive, so the handle comes back with the error in a [`ReleaseError`]:
//! retry, or give up on it explicitly (`?` converts it into [`Error`] and drops the handle). A
//! handle that is merely dropped releases itself on a best-effort basis: `Drop` never panics
//! and pushes a failure onto a process-wide list read with [`take_drop_errors`].
//!
//! # Tracing
//!
//! With the `tracing` feature (off by default) the crate reports through the
//! [`tracing`](https://docs.rs/tracing) crate, target `ascendcl`, to whatever subscriber the
//! program installs:
//!
//! | what | kind | fields |
//! |---|---|---|
//! | [`Stream::scope`], [`scope()`] | `INFO` span `scope` | `streams`, `device` |
//! | [`Stream::submit`], [`submit()`] (the enqueuing) | `INFO` span `submit` | `streams`, `device` |
//! | [`Scope::launch`], the launch builder, `ascendc-build`'s generated launchers | `INFO` span `launch` | `kernel`, `blocks`, `device` |
//! | a runtime call that failed | `WARN` event `runtime call failed` | `api`, `code`, `error` |
//! | a release that failed in `Drop` (also kept for [`take_drop_errors`]) | `ERROR` event | `api`, `error` |
//! | the backend chosen, once per process, and why | `INFO` event `backend chosen` | `backend`, `description`, `library`, `reason` |
//! | no backend could be chosen | `ERROR` event | `error` |
//!
//! Without the feature the `tracing` crate is not a dependency and every one of these points
//! compiles to nothing (the field expressions are not even evaluated): no cost at all. With it
//! and no subscriber, each span costs `tracing`'s check of a global flag: the `kernels` bench's
//! interleaved rounds (a one-block launch in a scope, against the raw FFI launch in the same
//! process) gave safe/raw 1.022 without the feature and 1.021 with it, on the project's 2-core
//! machine — no difference beyond noise.
//!
//! # Example: a model owned by a worker thread
//!
//! ```
//! use ascendcl::{Device, DeviceBuffer, Runtime, Stream};
//!
//! struct Model {
//!     device: Device,
//!     weights: DeviceBuffer<f32>,
//!     stream: Stream,
//! }
//!
//! let device = Runtime::new()?.device(0)?;
//! let model = Model {
//!     weights: device.clone_htod(&[0.5f32; 256])?,
//!     stream: device.create_stream()?,
//!     device,
//! };
//! let worker = std::thread::spawn(move || -> ascendcl::Result<Model> {
//!     let mut model = model;
//!     let mut input = model.device.alloc_zeros::<f32>(256)?;
//!     let mut out = vec![0f32; 256];
//!     model.stream.scope(|s| {
//!         let x = s.claim(&mut input); // used by two copies of the stream
//!         s.copy(x, &model.weights)?;
//!         s.copy(&mut out, x)
//!     })?;
//!     assert_eq!(out, [0.5; 256]);
//!     Ok(model)
//! });
//! let model = worker.join().expect("the worker ran")?;
//! assert_eq!(model.weights.len(), 256);
//! # Ok::<(), ascendcl::Error>(())
//! ```
#![warn(missing_docs)]

mod allocator;
mod batch_copy;
mod builtin;
mod cann_info;
mod context;
mod copy;
mod current;
mod deferred;
mod device;
mod device_info;
mod drop_errors;
mod error;
mod event;
mod exception;
mod fill;
mod handoff;
mod host_fn;
mod host_fn_subscription;
mod init_callbacks;
mod kernel_args;
mod launch;
mod memcpy_desc;
mod memory;
mod model;
mod module;
mod notify;
mod peer;
pub mod profile;
pub mod raw;
mod raw_enum;
mod release;
mod runtime;
mod scope;
mod sharing;
mod stream;
mod stream_config;
mod stream_control;
mod subscribed_thread;
mod trace;
mod value;
mod vmm;

pub use allocator::{Allocator, AllocatorRegistration, ExecutorBlock, RegisteredAllocator};
pub use ascendcl_sys::AclError;
pub use builtin::{Distribution, RandomElem, RandomFloat, RandomState, ReduceElem, ReduceKind};
pub use cann_info::{CannAttr, PackageVersion, VersionNumber};
pub use context::{Context, CurrentContext};
pub use copy::{
    Access, Copy2d, CopyDest, CopySource, MemcpyKind, MemoryLocation, PointerAttributes,
    PointerLocation, RawRegion, copy, copy_2d, copy_batch, copy_with_kind, pointer_attributes,
    to_vec,
};
pub use current::current_context;
pub use device::{Device, MemAttr, MemInfo};
pub use device_info::{
    Accelerator, DeviceAttr, DeviceCapability, DeviceErrorType, DeviceFeature, DeviceStatus,
    DeviceUuid, ErrorVerbose, PriorityRange, ResourceKind, Utilization,
};
pub use drop_errors::{drop_errors_overflow, take_drop_errors};
pub use error::{Error, IntoAclError, Result, error_code, error_codes, error_name};
pub use event::{Event, EventFlags, EventWaitStatus};
pub use exception::{
    ExceptionCallback, ExceptionInfo, last_error, last_task_id, peek_last_error,
    recent_error_message,
};
pub use handoff::Handoff;
pub use host_fn::{CallbackBlock, HostFnHandle, ReportSubscription};
pub use host_fn_subscription::HostFnSubscription;
pub use init_callbacks::{CallbackKind, FinalizeCallback, InitCallback, MAX_LIFECYCLE_CALLBACKS};
pub use kernel_args::{DEFAULT_ARGS_BYTES, KernelArg, KernelArgs, KernelParam};
pub use launch::{LaunchBuilder, LaunchConfig, MAX_BLOCKS, ScheduleMode};
pub use memcpy_desc::{MAX_DESC_COPY, MemcpyDescriptor, memcpy_desc_size};
pub use memory::{
    DeviceAlloc, DeviceBuffer, DeviceRepr, DeviceSlice, DeviceSliceMut, HostBuffer,
    HostRegisterFlags, HostRegisterType, HostRegistration, MANAGED_PAGE, MallocAttrs, MallocConfig,
    MallocFlags, MallocPolicy, ManagedBuffer, ManagedLocation, ManagedView, MemAdvice,
};
pub use model::{
    BoundStream, Builder, CaptureMode, CaptureStatus, Condition, Label, LabelList, Model,
    ModelKind, Recorder, Resident, Slot, StreamRole, SwitchValue, TaskGroup,
};
pub use module::{BinaryCore, KernelFunction, LoadOptions, Module};
pub use notify::Notify;
pub use peer::PeerAccess;
pub use release::{ReleaseError, ReleaseResult};
pub use runtime::{
    AclVersion, BackendChoice, BackendInfo, BackendKind, LoadError, LoadFailure, RunMode, Runtime,
    install_backend,
};
pub use scope::{
    AsyncDest, AsyncSource, Claimed, Lane, Scope, ScopeStats, Submission, SubmissionError, scope,
    submit,
};
pub use sharing::{
    FabricHandle, ImportedNotify, Importers, IpcEventHandle, IpcImportFlags, IpcMemExport,
    IpcMemImport, IpcMemKey, NotifyImportFlags, NotifyKey, Pid, ShareableHandle,
};
pub use stream::{FailureMode, Stream, StreamFlags, StreamStatus};
pub use stream_config::{StreamConfig, StreamConfigHandle};
pub use stream_control::{StreamState, StreamStateCallback, StreamStateEvent, ThreadResLimits};
#[doc(hidden)]
pub use trace::{LaunchSpan, launch_span};
pub use value::{DeviceWord, ValueCompare};
pub use vmm::{
    AccessFlags, AccessLocation, GranularityOption, Mapping, MemAccess, PhysicalLocation,
    PhysicalMemProp, PhysicalMemory, VirtualRange,
};

/// The raw bindings this crate is built on: types, constants and the function table. [`raw`]
/// calls the same functions with a checked status.
pub use ascendcl_sys as sys;

/// The `half` crate, whose `f16` and `bf16` are [`DeviceRepr`] element types (feature `half`).
#[cfg(feature = "half")]
pub use half;

/// The `bytemuck` crate that [`device_repr!`] checks `Pod` with (feature `bytemuck`).
#[cfg(feature = "bytemuck")]
pub use bytemuck;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
