//! The memory concept: device, pinned, registered and managed memory, the table of live
//! allocations every copy is validated against, virtual memory, copies and memsets, usage hints
//! of managed memory and the registry of user allocators.
//!
//! | file | owns |
//! |---|---|
//! | `table.rs` | the table of live allocations and range validation |
//! | `freed.rs` | the record of freed ranges (use after free, double free) |
//! | `reserved.rs` | the ranges reserved for virtual memory, as copies see them |
//! | `access.rs` | the one accessor: how the emulator's code reads and writes memory |
//! | `host.rs` | host memory registration (`aclrtHostRegister`) in the table |
//! | `export.rs` | making an allocation shareable with other processes |
//! | `import.rs` | IPC memory imported from other processes |
//! | `ipc.rs` | the export table: keys, pid whitelists, imports by other processes |
//! | `pages.rs` | page-level mappings: page size, huge pages, reservations |
//! | `policy.rs` | the malloc functions and their policies |
//! | `space/` | the device address space: program and alias views, the guard, kernel access |
//! | `vmm.rs` | virtual memory: reservations, physical allocations, mappings |
//! | `copy.rs` | copies and memsets: checks in the runtime's order, the synchronous paths |
//! | `managed.rs` | usage hints of managed memory |
//! | `allocator.rs` | the registry of user allocators (`acl_rt_allocator.h`) |
//! | `work.rs` | the copy engine's units of stream work |
//! | `teardown.rs` | what a released device, a finalize and the engine's liveness check ask of the table |

pub(crate) mod access;
pub(crate) mod allocator;
pub(crate) mod copy;
mod export;
mod freed;
mod host;
pub(crate) mod import;
pub(crate) mod ipc;
pub(crate) mod managed;
mod pages;
mod policy;
mod reserved;
pub(crate) mod space;
mod table;
mod teardown;
pub(crate) mod vmm;
pub(crate) mod work;

pub(crate) use pages::page_size;
pub(crate) use policy::{Sizing, malloc_device, malloc_host, malloc_managed};
pub(crate) use table::{Kind, Loc, Side, Table, read, write};
