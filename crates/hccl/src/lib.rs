//! Safe, typed Rust API for HCCL, the Huawei Collective Communication Library: communicators
//! over the NPUs of a server or a cluster, and collectives (all-reduce, all-gather, broadcast, …)
//! on typed device buffers, ordered on [`ascendcl`] streams.
//!
//! * [`Comm`]: one rank, created by [`Comm::init_all`] (every device of the process),
//!   [`Comm::init_root_info`] (one rank per thread or process, meeting through a [`RootInfo`])
//!   or [`Comm::init_cluster_info`] (a rank table file), optionally with a [`CommConfig`].
//! * [`Collectives`]: the collectives as operations of [`ascendcl::Stream::scope`], with its
//!   guarantee that no buffer is touched while the device may use it; [`scope`] runs one and
//!   keeps this crate's [`Error`].
//!   The V-collectives take their per-rank layouts as [`Blocks`] and [`CountMatrix`], batches
//!   of sends and receives as typed [`SendRecv`] items.
//! * [`group`]: `HcclGroupStart` … `HcclGroupEnd` as a closure, with the same borrowing rules
//!   across every stream it uses ([`Group::on`]); one thread can then drive several ranks.
//! * [`Element`] and [`ReduceOp`] replace raw data-type and operation integers.
//! * [`Determinism`]: [`set_determinism`] for the process, [`Comm::set_determinism`] per
//!   communicator.
//! * [`install`] pairs the HCCL backend with the runtime's: `libhccl.so` for CANN, the
//!   emulator's table (`hccl-emu`, feature `emulator`) for the runtime emulator.
//! * Feature `tracing` (off by default): an `INFO` span `collective` (target `hccl`; fields
//!   `api`, `rank`, `device`, `grouped`) around each collective, a `WARN` event for each failed
//!   HCCL call (`api`, `code`, `error`), an `INFO` event naming the HCCL backend chosen, and
//!   `ascendcl`'s spans and events (its feature of the same name). Without the feature none of
//!   this code exists.
//!
//! ```
//! use hccl::{Collectives, Comm, ReduceOp};
//! let rt = ascendcl::Runtime::new()?;
//! let devices = [rt.device(0)?, rt.device(1)?];
//! let comms = Comm::init_all(&devices)?;
//! // One thread per rank: each enqueues its part and waits for its stream.
//! std::thread::scope(|t| {
//!     let handles: Vec<_> = comms
//!         .into_iter()
//!         .map(|comm| {
//!             t.spawn(move || -> hccl::Result<Vec<i32>> {
//!                 let dev = comm.device().clone();
//!                 let stream = dev.create_stream()?;
//!                 let send = dev.clone_htod(&[comm.rank() as i32 + 1; 4])?;
//!                 let mut recv = dev.alloc_zeros::<i32>(4)?;
//!                 hccl::scope(&stream, |s| s.all_reduce(&comm, &send, &mut recv, ReduceOp::Sum))?;
//!                 Ok(recv.copy_to_vec()?)
//!             })
//!         })
//!         .collect();
//!     for h in handles {
//!         assert_eq!(h.join().unwrap()?, [3; 4]);
//!     }
//!     Ok::<(), hccl::Error>(())
//! })?;
//! # Ok::<(), hccl::Error>(())
//! ```

mod backend;
mod batch;
mod call;
mod collectives;
mod comm;
mod config;
mod determinism;
mod element;
mod error;
mod gate;
mod group;
mod layout;
mod root_info;
mod trace;

pub use backend::install;
pub use batch::SendRecv;
pub use collectives::{Collectives, scope};
pub use comm::{Comm, DestroyError};
pub use config::{CommConfig, CommConfigBuilder};
pub use determinism::{Determinism, determinism, set_determinism};
pub use element::{Element, Fp8E4M3, Fp8E5M2, Fp8E8M0, Hif8, ReduceOp};
pub use error::{Error, Result, ResultCode, error_string};
pub use group::{Group, GroupStream, group};
pub use layout::{Blocks, CountMatrix};
pub use root_info::RootInfo;

/// Items that appear in public signatures for the crate's own use only.
#[doc(hidden)]
pub mod __private {
    pub use crate::call::Target;
}

/// The raw bindings this crate is built on.
pub use hccl_sys as sys;
