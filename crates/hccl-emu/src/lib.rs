//! HCCL (Huawei Collective Communication Library) emulated on the host CPU, on top of the
//! `ascendcl-emu` runtime emulator.
//!
//! Collectives move and reduce real data in emulated device memory, as tasks of emulated
//! streams, ordered with every other task of their stream:
//!
//! * **within a process**, each rank is a thread with its device current
//!   (`HcclCommInitAll` starts one per device);
//! * **across processes of one machine**, ranks meet through the root info, which names a
//!   rendezvous socket that the process calling `HcclGetRootInfo` serves, and exchange data
//!   through shared memory;
//! * root infos and rank tables of multi-server jobs are parsed and checked; an address that
//!   is not this machine is refused with a message saying so (no connection to another host is
//!   ever made).
//!
//! It is usable two ways, like the runtime emulator: **in process**, [`backend()`] is an
//! `hccl_sys::Backend` whose table ([`api()`]) points at the emulator; **as a C library**, the
//! `ascendcl-emu-capi` crate exports every function of [`capi`] under its real name in the same
//! shared library as the runtime, so ACL and HCCL share one emulated machine.
//!
//! | HCCL concept | emulated by |
//! |---|---|
//! | communicator | a rank's connection to the rendezvous hub, its shared-memory segment, a ticket counter |
//! | collective | a stream task: write this rank's input to shared memory, meet the other ranks, compute this rank's output from theirs |
//! | send / receive | a meeting of two ranks; the send completes when the receiver took the data |
//! | root info | the 4108 bytes: host, port, identifier, and the rendezvous id |
//!
//! Reductions run in rank order, so results are reproducible; `f16` and `bf16` are rounded
//! after each step. Data types and operations are accepted as the A2/A3 library accepts them,
//! or as Ascend 950's does when the emulated SoC (`ASCENDCL_EMU_SOC`) is an `Ascend950*`. See
//! `docs/hccl.md` for what is not modelled (topology, RDMA, timing).
#![warn(missing_docs)]

pub mod capi;
mod comm;
pub mod config;
mod dtype;
mod error;
mod group;
mod hub;
mod init;
mod link;
pub mod net;
mod ops;
mod ranktable;
pub mod reduce;
mod rootinfo;
mod segment;
mod sync;
mod wire;

pub use comm::live_count;
pub use config::{Config, config, set_config};
pub use dtype::{DType, Personality, RedOp};
pub use error::code_name;

use ascendcl_sys::BackendKind;
use hccl_sys::{Backend, HcclApi};

/// Generates [`IMPLEMENTED`] and [`api()`] from one list of the functions the emulator implements
/// (each a function of [`capi`] with the C function's name).
macro_rules! implemented {
    ($($name:ident),* $(,)?) => {
        /// The names of every HCCL function the emulator implements.
        pub const IMPLEMENTED: &[&str] = &[$(stringify!($name)),*];

        /// The emulator's function table: every implemented function; the others keep the stub
        /// of `HcclApi::unresolved` (`HCCL_E_NOT_SUPPORT`, and the name for
        /// `hccl_sys::take_missing_symbol`).
        pub fn api() -> HcclApi {
            let mut api = HcclApi::unresolved();
            $( api.$name = capi::$name; )*
            api
        }
    };
}

implemented! {
    HcclGetRootInfo,
    HcclCommInitRootInfo,
    HcclCommInitRootInfoConfig,
    HcclCommInitAll,
    HcclCommInitClusterInfo,
    HcclCommInitClusterInfoConfig,
    HcclCommDestroy,
    HcclGetRankId,
    HcclGetRankSize,
    HcclGetCommName,
    HcclGetCommAsyncError,
    HcclGetErrorString,
    HcclGetCommConfigCapability,
    HcclSetConfig,
    HcclGetConfig,
    HcclSetCommConfig,
    HcclGetCommConfig,
    HcclCommSuspend,
    HcclCommResume,
    HcclAllReduce,
    HcclBroadcast,
    HcclReduce,
    HcclReduceScatter,
    HcclReduceScatterV,
    HcclAllGather,
    HcclAllGatherV,
    HcclAlltoAll,
    HcclAlltoAllV,
    HcclAlltoAllVC,
    HcclScatter,
    HcclBarrier,
    HcclSend,
    HcclRecv,
    HcclBatchSendRecv,
    HcclGroupStart,
    HcclGroupEnd,
}

/// The emulator as an in-process HCCL backend for `hccl_sys::install`. Pair it with the runtime
/// emulator's backend (`ascendcl_emu::backend()`): both share one emulated machine.
pub fn backend() -> Backend {
    let mut b = Backend::in_process(
        BackendKind::Emulator,
        api(),
        format!(
            "hccl-emu host emulator: {} of {} functions",
            IMPLEMENTED.len(),
            HcclApi::NAMES.len()
        ),
    );
    b.missing = HcclApi::NAMES
        .iter()
        .copied()
        .filter(|n| !IMPLEMENTED.contains(n))
        .collect();
    b
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
