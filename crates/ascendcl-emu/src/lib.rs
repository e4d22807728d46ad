//! A functional emulator of the CANN runtime (AscendCL) on the host CPU.
//!
//! It is usable two ways:
//!
//! * **in process**, as a backend of `ascendcl-sys`'s function table: [`backend()`] returns a
//!   [`Backend`] whose table ([`api()`]) points at the emulator; functions it does not implement
//!   get a stub that returns 207000 and records a message naming the function;
//! * **as a C shared library**: the `ascendcl-emu-capi` crate exports every function of that
//!   table under its real symbol name (`cargo xtask emu-root` installs it as `libacl_rt.so`), so
//!   C programs compiled against the CANN headers run on it unchanged.
//!
//! This crate itself defines no `acl*` symbol ([`capi`]'s functions have Rust symbol names): a
//! program that embeds it cannot interpose on a real runtime library.
//!
//! | device concept | emulated by |
//! |---|---|
//! | device memory | its own address space: a memory file mapped at the program's addresses, which host code cannot touch (a fault naming the allocation), and at an alias the emulator's copies, tasks and libraries use |
//! | pinned host memory | an anonymous `mmap`, tracked as pinned |
//! | stream | an in-order task queue run by a worker thread |
//! | event | a sequence-numbered record completed (and timestamped) by the stream |
//! | context | a per-thread current handle; per-device reference-counted default context |
//! | notify, IPC event | words in a shared memory file of the process, waited on with futexes |
//! | memory shared with other processes | shared memory files (`memfd`) found through `/proc` |
//! | model runtime instance | recorded steps per stream, run by an execution task (one thread per model stream) |
//! | captured model | the recorded tasks, cloned onto a stream at each execution |
//! | kernel binary | a host-mode shared object built by `ascendc-build`, loaded with `dlopen` |
//! | kernel launch | a stream task whose blocks run on a pool of host threads |
//! | data channel, queue | a bounded FIFO of the process, waited on with a condition variable |
//! | profiling | every stream task timed while a session (`aclprofStart`) or `ASCENDCL_EMU_TRACE` records, written as a Chrome trace / Perfetto JSON file |
//!
//! Every copy and memset is validated against the table of live allocations. The emulator is
//! configured by `ASCENDCL_EMU_*` environment variables ([`mod@config`]) or from Rust
//! ([`set_config`], [`inject_fault`]). See `docs/emulator.md` for fidelity notes.
//!
//! For Rust tests: [`leak_report`] and [`device_leak_report`] count what is alive now,
//! [`release_reports`] what was left when devices were released, [`device_refs`] a device's
//! `aclrtSetDevice` reference count, [`recent_messages`] the calling thread's error messages
//! (without clearing them). The C functions themselves are in [`capi`].
#![warn(missing_docs)]

mod base;
mod builtin;
pub mod capi;
mod data_buffer;
mod device;
mod engine;
mod event;
pub mod extension;
mod host;
mod kernel;
mod lifecycle;
mod memory;
mod model;
mod operators;
mod profiling;
mod stream;
mod sync;
mod tdt;

pub use base::{config, faults, leak};
pub use kernel::pool as kernel_pool;

pub use base::error::recent_messages;
pub use config::{Config, HugePages, config, set_config};
pub use faults::{
    FaultSpec, clear_faults, default_code, inject_fault, inject_fault_with_code,
    set_faults_from_str,
};
pub use leak::{LeakReport, release_reports};
pub use profiling::{ENV_TRACE, last_trace_file};

use ascendcl_sys::{AclApi, Backend, BackendKind};

/// Generates [`IMPLEMENTED`] and [`api()`] from one list of the functions the emulator implements
/// (each a function of [`capi`] with the C function's name).
macro_rules! implemented {
    ($($name:ident),* $(,)?) => {
        /// The names of every C function the emulator implements; the shared library built by
        /// `ascendcl-emu-capi` exports them and a "not supported" stub for every other function.
        pub const IMPLEMENTED: &[&str] = &[$(stringify!($name)),*];

        /// The function table of the emulator: every implemented function, and for the rest a
        /// stub that returns 207000 (NULL or zero for pointer and value returns), records a
        /// recent-error message naming the function and records its name for
        /// `ascendcl_sys::take_missing_symbol`.
        pub fn api() -> AclApi {
            let mut api = capi::unsupported::table();
            $( api.$name = capi::$name; )*
            api
        }
    };
}

implemented! {
    aclInit,
    aclFinalize,
    aclFinalizeReference,
    aclrtGetVersion,
    aclrtGetSocName,
    aclsysGetVersionStr,
    aclGetRecentErrMsg,
    aclrtGetLastError,
    aclrtPeekAtLastError,
    aclrtGetRunMode,
    aclrtSetDevice,
    aclrtResetDevice,
    aclrtResetDeviceForce,
    aclrtGetDevice,
    aclrtGetDeviceCount,
    aclrtSynchronizeDevice,
    aclrtSynchronizeDeviceWithTimeout,
    aclrtDeviceCanAccessPeer,
    aclrtDeviceEnablePeerAccess,
    aclrtDeviceDisablePeerAccess,
    aclrtCreateContext,
    aclrtDestroyContext,
    aclrtSetCurrentContext,
    aclrtGetCurrentContext,
    aclrtCtxGetCurrentDefaultStream,
    aclrtCreateStream,
    aclrtCreateStreamWithConfig,
    aclrtDestroyStream,
    aclrtDestroyStreamForce,
    aclrtSynchronizeStream,
    aclrtSynchronizeStreamWithTimeout,
    aclrtStreamQuery,
    aclrtStreamWaitEvent,
    aclrtSetStreamFailureMode,
    aclrtStreamGetPriority,
    aclrtStreamGetFlags,
    aclrtCreateEvent,
    aclrtCreateEventWithFlag,
    aclrtCreateEventExWithFlag,
    aclrtRecordEvent,
    aclrtResetEvent,
    aclrtQueryEventStatus,
    aclrtSynchronizeEvent,
    aclrtSynchronizeEventWithTimeout,
    aclrtEventElapsedTime,
    aclrtEventGetTimestamp,
    aclrtDestroyEvent,
    aclrtMalloc,
    aclrtMallocAlign32,
    aclrtMallocCached,
    aclrtMallocHost,
    aclrtFree,
    aclrtFreeHost,
    aclrtMemset,
    aclrtMemsetAsync,
    aclrtMemcpy,
    aclrtMemcpyAsync,
    aclrtMemcpy2d,
    aclrtMemcpy2dAsync,
    aclrtMemcpyBatch,
    aclrtGetMemInfo,
    aclrtPointerGetAttributes,
    aclrtMemGetAddressRange,
    aclrtHostRegister,
    aclrtHostRegisterV2,
    aclrtHostGetDevicePointer,
    aclrtHostUnregister,
    aclrtLaunchHostFunc,
    aclrtSubscribeReport,
    aclrtLaunchCallback,
    aclrtProcessReport,
    aclrtUnSubscribeReport,
    aclGetDeviceCapability,
    aclrtGetDeviceCapability,
    aclrtCheckArchCompatibility,
    aclrtGetDeviceInfo,
    aclrtGetDeviceUtilizationRate,
    aclrtQueryDeviceStatus,
    aclrtSetDeviceResLimit,
    aclrtGetDeviceResLimit,
    aclrtResetDeviceResLimit,
    aclrtSetStreamResLimit,
    aclrtGetStreamResLimit,
    aclrtResetStreamResLimit,
    aclrtUseStreamResInCurrentThread,
    aclrtUnuseStreamResInCurrentThread,
    aclrtGetResInCurrentThread,
    aclrtGetErrorVerbose,
    aclrtGetThreadLastTaskId,
    aclrtSetExceptionInfoCallback,
    aclrtGetTaskIdFromExceptionInfo,
    aclrtGetStreamIdFromExceptionInfo,
    aclrtGetThreadIdFromExceptionInfo,
    aclrtGetDeviceIdFromExceptionInfo,
    aclrtGetErrorCodeFromExceptionInfo,
    aclrtStreamGetId,
    aclrtDeviceGetStreamPriorityRange,
    aclrtGetStreamAvailableNum,
    aclrtGetEventAvailNum,
    aclrtRegStreamStateCallback,
    aclrtStreamStop,
    aclrtStreamAbort,
    aclrtValueWrite,
    aclrtValueWait,
    aclrtCreateNotify,
    aclrtDestroyNotify,
    aclrtRecordNotify,
    aclrtWaitAndResetNotify,
    aclrtGetNotifyId,
    aclrtNotifyBatchReset,
    aclrtDeviceGetBareTgid,
    aclrtIpcMemGetExportKey,
    aclrtIpcMemSetImportPid,
    aclrtIpcMemImportByKey,
    aclrtIpcMemClose,
    aclrtReserveMemAddress,
    aclrtReleaseMemAddress,
    aclrtMallocPhysical,
    aclrtFreePhysical,
    aclrtMapMem,
    aclrtUnmapMem,
    aclrtMemSetAccess,
    aclrtMemGetAccess,
    aclrtMemGetAllocationGranularity,
    aclrtMemExportToShareableHandle,
    aclrtMemExportToShareableHandleV2,
    aclrtMemSetPidToShareableHandle,
    aclrtMemSetPidToShareableHandleV2,
    aclrtMemImportFromShareableHandle,
    aclrtMemImportFromShareableHandleV2,
    aclrtNotifyGetExportKey,
    aclrtNotifySetImportPid,
    aclrtNotifyImportByKey,
    aclrtReduceAsync,
    aclrtRandomNumAsync,
    aclrtMemcpyBatchAsync,
    aclrtGetMemcpyDescSize,
    aclrtSetMemcpyDesc,
    aclrtMemcpyAsyncWithDesc,
    aclmdlRICaptureBegin,
    aclmdlRICaptureEnd,
    aclmdlRICaptureGetInfo,
    aclmdlRICaptureThreadExchangeMode,
    aclmdlRIExecuteAsync,
    aclmdlRIDestroy,
    aclrtMemAllocManaged,
    aclrtAllocatorCreateDesc,
    aclrtAllocatorDestroyDesc,
    aclrtAllocatorSetObjToDesc,
    aclrtAllocatorSetAllocFuncToDesc,
    aclrtAllocatorSetFreeFuncToDesc,
    aclrtAllocatorSetAllocAdviseFuncToDesc,
    aclrtAllocatorSetGetAddrFromBlockFuncToDesc,
    aclrtAllocatorRegister,
    aclrtAllocatorGetByStream,
    aclrtAllocatorUnregister,
    aclFloat16ToFloat,
    aclFloatToFloat16,
    aclDataTypeSize,
    aclCreateDataBuffer,
    aclDestroyDataBuffer,
    aclUpdateDataBuffer,
    aclGetDataBufferAddr,
    aclGetDataBufferSizeV2,
    aclGetDataBufferSize,
    aclsysGetCANNVersion,
    aclrtFreeWithDevSync,
    aclrtFreeHostWithDevSync,
    aclrtQueryEvent,
    aclrtDevicePeerAccessStatus,
    aclrtDeviceGetUuid,
    aclrtGetEventId,
    aclrtMemsetD32,
    aclrtMemsetD32Async,
    aclrtGetStreamAttribute,
    aclrtSetStreamAttribute,
    aclrtIpcGetEventHandle,
    aclrtIpcOpenEventHandle,
    aclrtMemManagedAdvise,
    aclrtMemManagedGetAttr,
    aclrtMemManagedGetAttrs,
    aclrtMemManagedPrefetchAsync,
    aclrtMemManagedPrefetchBatchAsync,
    aclrtMallocWithCfg,
    aclrtMallocForTaskScheduler,
    aclrtMallocHostWithCfg,
    aclrtMemcpyBatchV2,
    aclrtMemcpyBatchAsyncV2,
    aclrtHostMemMapCapabilities,
    aclrtStreamWaitEventWithTimeout,
    aclrtQueryEventWaitStatus,
    aclrtCntNotifyCreate,
    aclrtCntNotifyDestroy,
    aclrtCntNotifyRecord,
    aclrtCntNotifyWaitWithTimeout,
    aclrtCntNotifyReset,
    aclrtCntNotifyGetId,
    aclInitCallbackRegister,
    aclInitCallbackUnRegister,
    aclFinalizeCallbackRegister,
    aclFinalizeCallbackUnRegister,
    aclsysGetVersionNum,
    aclGetCannAttributeList,
    aclGetCannAttribute,
    aclrtCreateStreamConfigHandle,
    aclrtSetStreamConfigOpt,
    aclrtCreateStreamV2,
    aclrtDestroyStreamConfigHandle,
    aclrtSetStreamOverflowSwitch,
    aclrtGetStreamOverflowSwitch,
    aclmdlRIBuildBegin,
    aclmdlRIBindStream,
    aclmdlRIUnbindStream,
    aclmdlRIEndTask,
    aclmdlRIBuildEnd,
    aclmdlRIExecute,
    aclmdlRIAbort,
    aclmdlRICaptureTaskGrpBegin,
    aclmdlRICaptureTaskGrpEnd,
    aclmdlRICaptureTaskUpdateBegin,
    aclmdlRICaptureTaskUpdateEnd,
    aclrtActiveStream,
    aclrtSwitchStream,
    aclmdlRIDebugJsonPrint,
    aclrtCreateLabel,
    aclrtCreateLabelList,
    aclrtDestroyLabel,
    aclrtDestroyLabelList,
    aclrtSetLabel,
    aclrtSwitchLabelByIndex,
    aclrtSubscribeHostFunc,
    aclrtProcessHostFunc,
    aclrtUnSubscribeHostFunc,
    aclrtCreateBinary,
    aclrtDestroyBinary,
    aclrtBinaryLoad,
    aclrtBinaryLoadFromFile,
    aclrtBinaryLoadFromData,
    aclrtBinaryGetFunction,
    aclrtBinaryUnLoad,
    aclrtKernelArgsInit,
    aclrtKernelArgsInitByUserMem,
    aclrtKernelArgsGetHandleMemSize,
    aclrtKernelArgsGetMemSize,
    aclrtKernelArgsAppend,
    aclrtKernelArgsAppendPlaceHolder,
    aclrtKernelArgsGetPlaceHolderBuffer,
    aclrtKernelArgsParaUpdate,
    aclrtKernelArgsFinalize,
    aclrtLaunchKernelWithConfig,
    aclrtLaunchKernel,
    aclprofInit,
    aclprofFinalize,
    aclprofCreateConfig,
    aclprofDestroyConfig,
    aclprofSetConfig,
    aclprofStart,
    aclprofStop,
    aclprofCreateStamp,
    aclprofDestroyStamp,
    aclprofSetStampTraceMessage,
    aclprofMark,
    aclprofMarkEx,
    aclprofPush,
    aclprofPop,
    aclprofRangeStart,
    aclprofRangeStop,
    aclprofCreateStepInfo,
    aclprofDestroyStepInfo,
    aclprofGetStepTimestamp,
    aclprofStr2Id,
    acltdtAddDataItem,
    acltdtAddQueueRoute,
    acltdtAllocBuf,
    acltdtAppendBufChain,
    acltdtAttachQueue,
    acltdtBindQueueRoutes,
    acltdtCleanChannel,
    acltdtCopyBufRef,
    acltdtCreateChannel,
    acltdtCreateChannelWithCapacity,
    acltdtCreateDataItem,
    acltdtCreateDataset,
    acltdtCreateQueue,
    acltdtCreateQueueAttr,
    acltdtCreateQueueRoute,
    acltdtCreateQueueRouteList,
    acltdtCreateQueueRouteQueryInfo,
    acltdtDequeue,
    acltdtDequeueData,
    acltdtDestroyChannel,
    acltdtDestroyDataItem,
    acltdtDestroyDataset,
    acltdtDestroyQueue,
    acltdtDestroyQueueAttr,
    acltdtDestroyQueueRoute,
    acltdtDestroyQueueRouteList,
    acltdtDestroyQueueRouteQueryInfo,
    acltdtEnqueue,
    acltdtEnqueueData,
    acltdtFreeBuf,
    acltdtGetBufChainNum,
    acltdtGetBufData,
    acltdtGetBufDataLen,
    acltdtGetBufFromChain,
    acltdtGetBufUserData,
    acltdtGetDataAddrFromItem,
    acltdtGetDataItem,
    acltdtGetDataSizeFromItem,
    acltdtGetDataTypeFromItem,
    acltdtGetDatasetName,
    acltdtGetDatasetSize,
    acltdtGetDimNumFromItem,
    acltdtGetDimsFromItem,
    acltdtGetQueueAttr,
    acltdtGetQueueRoute,
    acltdtGetQueueRouteNum,
    acltdtGetQueueRouteParam,
    acltdtGetSliceInfoFromItem,
    acltdtGetTensorTypeFromItem,
    acltdtGrantQueue,
    acltdtQueryChannelSize,
    acltdtQueryQueueRoutes,
    acltdtReceiveTensor,
    acltdtSendTensor,
    acltdtSetBufDataLen,
    acltdtSetBufUserData,
    acltdtSetQueueAttr,
    acltdtSetQueueRouteQueryInfo,
    acltdtStopChannel,
    acltdtUnbindQueueRoutes,
}

/// The emulator as an in-process backend for `ascendcl_sys::install`.
pub fn backend() -> Backend {
    let c = config();
    let mut b = Backend::in_process(
        BackendKind::Emulator,
        api(),
        format!(
            "ascendcl-emu host emulator: {} x {} ({} bytes each), {} of {} functions",
            c.devices,
            c.soc,
            c.memory,
            IMPLEMENTED.len(),
            AclApi::NAMES.len()
        ),
    );
    b.missing = AclApi::NAMES
        .iter()
        .copied()
        .filter(|n| !IMPLEMENTED.contains(n))
        .collect();
    b
}

/// Resources alive right now in the whole process (device allocations of every device, pinned
/// and registered host memory, streams, events, user contexts).
pub fn leak_report() -> LeakReport {
    crate::device::live_report(None)
}

/// Resources alive right now on one device.
pub fn device_leak_report(device: i32) -> LeakReport {
    crate::device::live_report(Some(device))
}

/// The number of `aclrtSetDevice` references a device holds (0 when released).
pub fn device_refs(device: i32) -> u64 {
    crate::device::refs(device)
}

/// The emulator's lock ranks in the order locks are taken: (rank, what the lock guards).
#[doc(hidden)]
pub fn lock_ranks() -> Vec<(&'static str, &'static str)> {
    base::rank::Rank::ALL
        .iter()
        .map(|r| (r.variant(), r.name()))
        .collect()
}

/// The lock nestings this process has taken so far (debug builds record them): (the highest rank
/// held, or `None`, and the rank taken).
#[doc(hidden)]
pub fn lock_nestings() -> Vec<(Option<&'static str>, &'static str)> {
    base::rank::observed()
        .into_iter()
        .map(|(o, i)| (o.map(|o| o.variant()), i.variant()))
        .collect()
}

/// The concepts whose teardown hooks are registered so far, in registration order (each registers
/// when it first keeps state a device release, a stream destruction or a finalize must undo).
#[doc(hidden)]
pub fn teardown_hooks() -> Vec<&'static str> {
    base::hooks::registered()
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
