//! Virtual memory management: reserved address ranges, physical allocations and the mappings
//! that join them — one type per resource, one file each.
//!
//! * [`VirtualRange`] — address space reserved on a device (`aclrtReserveMemAddress` …
//!   `aclrtReleaseMemAddress`), no memory behind it until something is mapped.
//! * [`PhysicalMemory`] — physical memory of a device or of the host (`aclrtMallocPhysical` …
//!   `aclrtFreePhysical`), described by a [`PhysicalMemProp`]; not addressable by itself.
//! * [`Mapping<T>`](Mapping) — a physical allocation mapped into part of a range
//!   (`aclrtMapMem` … `aclrtUnmapMem`): typed memory that copies and [`Stream::scope`]
//!   operations use like a [`DeviceBuffer`](crate::DeviceBuffer), with the same borrow rules.
//!
//! The order the runtime needs — unmap before freeing the physical memory and before releasing
//! the range — follows from ownership: [`VirtualRange::map`] takes the [`PhysicalMemory`] by
//! value, so it cannot be freed while mapped, and the mapping holds a handle on its range, so
//! the range is released only after its last mapping is gone. [`Mapping::unmap`] gives the
//! physical memory back. Physical memory is shared with other processes through
//! [`PhysicalMemory::export`] and [`PhysicalMemory::import`] (see [`crate::ShareableHandle`]).
//!
//! [`Stream::scope`]: crate::Stream::scope

mod mapping;
mod physical;
mod prop;
mod range;

pub use mapping::{AccessFlags, AccessLocation, Mapping, MemAccess};
pub use physical::PhysicalMemory;
pub use prop::{GranularityOption, PhysicalLocation, PhysicalMemProp};
pub use range::VirtualRange;
