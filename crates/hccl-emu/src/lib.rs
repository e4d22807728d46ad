//! HCCL (Huawei Collective Communication Library) emulated on the host CPU, on top of the
//! `ascendcl-emu` runtime emulator.
//!
//! Collectives move and reduce real data in emulated device memory, as tasks of emulated
//! streams, ordered with every other task of their stream, with the algorithms of the real
//! library (ring, recursive halving-doubling, a one-shot mesh for small operations; see
//! [`Algorithm`]), every rank working at once:
//!
//! * **within a process**, each rank is a thread with its device current
//!   (`HcclCommInitAll` starts one per device);
//! * **across processes of one emulated server**, ranks meet through the root info (or a rank
//!   table), which names a rendezvous the process calling `HcclGetRootInfo` serves, and move
//!   data through each other's shared-memory regions;
//! * **across emulated servers** (a rank table listing several, or ranks with different
//!   `HCCL_IF_IP`s), one process per server, the servers' ranks are connected over TCP, on
//!   loopback addresses (`127.0.0.x`) or addresses of this machine's interfaces only: an
//!   address that is not local is refused with a message saying so, and nothing else is ever
//!   dialled.
//!
//! A rank that dies or never comes fails the others' operations with HCCL's timeout codes after
//! `HCCL_CONNECT_TIMEOUT` / `HCCL_EXEC_TIMEOUT` (scaled down for tests by
//! `HCCL_EMU_CONNECT_TIMEOUT_MS`, `HCCL_EMU_EXEC_TIMEOUT_MS` or [`set_config`]); a failure a
//! live rank sees (a mismatch, a timeout, a bad buffer) fails the others at once.
//!
//! It is usable two ways, like the runtime emulator: **in process**, [`backend()`] is an
//! `hccl_sys::Backend` whose table ([`api()`]) points at the emulator; **as a C library**, the
//! `ascendcl-emu-capi` crate exports every function of [`capi`] under its real name in the same
//! shared library as the runtime, so ACL and HCCL share one emulated machine.
//!
//! | HCCL concept | emulated by |
//! |---|---|
//! | communicator | a rank's shared region, its channels to the other ranks, a ticket counter |
//! | collective | a stream task that runs its algorithm on the channels (or the one-shot buffers) with the other ranks' tasks |
//! | send / receive | a transfer on the point-to-point channel between two ranks; the send completes when the receiver took the data |
//! | root info | the 4108 bytes: host, port (of the rendezvous), identifier, and the rendezvous id |
//!
//! Reductions are deterministic for a given size, rank count and algorithm, and every rank
//! receives the same bits; `f16` and `bf16` are rounded after each step. Data types and
//! operations are accepted as the A2/A3 library accepts them, or as Ascend 950's does when the
//! emulated SoC (`ASCENDCL_EMU_SOC`) is an `Ascend950*`. See `docs/hccl.md` for what is not
//! modelled (topology, RDMA, timing).
#![warn(missing_docs)]

mod algo;
pub mod capi;
mod comm;
pub mod config;
mod devmem;
mod dtype;
mod error;
mod fabric;
mod group;
mod init;
pub mod net;
mod ops;
mod ranktable;
pub mod reduce;
mod rendezvous;
mod rootinfo;
mod sync;
mod transport;
mod wire;

pub use algo::{Algorithm, Collective, algorithm};
pub use comm::live_count;
pub use config::{Config, config, set_config, set_slot_bytes};
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
