//! Memory: element types, allocation policies, device buffers and their views, pinned host
//! buffers, registered host memory — one file each — and the copy-endpoint implementations that
//! let every one of them take part in a copy.
//!
//! * [`DeviceBuffer`] — device memory (`aclrtMalloc` with a [`MallocPolicy`] / `aclrtFree`).
//!   The host cannot dereference it; data moves through copies ([`crate::copy`]) and
//!   [`Stream::scope`](crate::Stream::scope). [`DeviceSlice`] / [`DeviceSliceMut`] are views
//!   of part of a buffer.
//! * [`HostBuffer`] — pinned host memory (`aclrtMallocHost` / `aclrtFreeHost`), which derefs to a
//!   slice and is what truly asynchronous copies need.
//! * [`HostRegistration`] — an ordinary `Vec` registered with the runtime
//!   (`aclrtHostRegister` / `aclrtHostUnregister`) for as long as the registration owns it;
//!   mapped registrations lend a device view of the vector (zero copy).
//! * [`ManagedBuffer`] — managed memory both sides address (`aclrtMemAllocManaged`), host access
//!   through `Deref`, device access through a [`ManagedView`] that excludes it.
//!
//! Each of them holds a handle on its [`Device`](crate::Device): the device stays open while the
//! memory exists. Element types implement the marker trait [`DeviceRepr`]: plain data for which
//! every bit pattern is valid, so bytes written by the device can be read as `T`.

mod device;
mod host;
mod managed;
mod policy;
mod registration;
mod repr;
mod slice;

pub use device::DeviceBuffer;
pub use host::HostBuffer;
pub use managed::{MANAGED_PAGE, ManagedBuffer, ManagedLocation, ManagedView, MemAdvice};
pub use policy::{DeviceAlloc, MallocAttrs, MallocConfig, MallocFlags, MallocPolicy};
pub use registration::{HostRegisterFlags, HostRegisterType, HostRegistration};
pub use repr::DeviceRepr;
pub use slice::{DeviceSlice, DeviceSliceMut};

pub(crate) use slice::resolve_range;

use crate::error::{Error, Result};

/// `len` elements of `T` in bytes, or an argument error naming `api`.
fn byte_len<T>(api: &'static str, len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>())
        .ok_or_else(|| Error::argument(api, format!("{len} elements overflow usize bytes")))
}

/// Implements [`CopySource`](crate::CopySource) (and, for the types listed after `dest:`,
/// [`CopyDest`](crate::CopyDest)) through the type's own `region()`, which describes the memory
/// it owns or borrows. Used by every typed memory of the crate (here, and for mappings and IPC
/// memory); each invocation says why its types' regions meet the contract below.
macro_rules! copy_endpoints {
    (source: $($src:ty),* ; dest: $($dst:ty),* $(,)?) => {
        $(
            // SAFETY: `region()` describes memory owned or borrowed by `self`: valid for reads of
            // `len` elements at the stated location (with the context of its device, if any,
            // alive) for as long as the borrow of `self`, and written by nobody else meanwhile
            // (the types below give out no other access while borrowed shared).
            unsafe impl<T: $crate::memory::DeviceRepr> $crate::copy::CopySource for $src {
                type Elem = T;
                #[inline]
                fn source_region(&self) -> $crate::copy::RawRegion<T> {
                    self.region()
                }
            }
        )*
        $(
            // SAFETY: as above, valid for writes and accessed by nobody else for as long as the
            // exclusive borrow of `self`.
            unsafe impl<T: $crate::memory::DeviceRepr> $crate::copy::CopyDest for $dst {
                type Elem = T;
                #[inline]
                fn dest_region(&mut self) -> $crate::copy::RawRegion<T> {
                    self.region()
                }
            }
        )*
    };
}
pub(crate) use copy_endpoints;

/// The views of typed device memory whose `region()` describes all of it: `as_view`,
/// `as_view_mut`, `slice` and `slice_mut` of `$ty<T>`, documented as views of the `$what`.
macro_rules! device_views {
    ($ty:ident, $what:literal) => {
        impl<T: $crate::memory::DeviceRepr> $ty<T> {
            #[doc = concat!("A view of the whole ", $what, ".")]
            pub fn as_view(&self) -> $crate::memory::DeviceSlice<'_, T> {
                $crate::memory::DeviceSlice::new(self.region())
            }

            #[doc = concat!("A mutable view of the whole ", $what, ".")]
            pub fn as_view_mut(&mut self) -> $crate::memory::DeviceSliceMut<'_, T> {
                $crate::memory::DeviceSliceMut::new(self.region())
            }

            /// A view of the elements in `range`; an out-of-bounds range is an error, not a
            /// panic.
            pub fn slice(
                &self,
                range: impl ::std::ops::RangeBounds<usize>,
            ) -> $crate::error::Result<$crate::memory::DeviceSlice<'_, T>> {
                self.as_view().into_slice(range)
            }

            /// A mutable view of the elements in `range`.
            pub fn slice_mut(
                &mut self,
                range: impl ::std::ops::RangeBounds<usize>,
            ) -> $crate::error::Result<$crate::memory::DeviceSliceMut<'_, T>> {
                self.as_view_mut().into_slice_mut(range)
            }
        }
    };
}
pub(crate) use device_views;

// Each type's `region()` is memory it owns or borrows from its owner (a managed view borrows its
// buffer exclusively), unmoved while the value is borrowed.
copy_endpoints!(
    source: DeviceBuffer<T>, DeviceSlice<'_, T>, DeviceSliceMut<'_, T>, HostBuffer<T>,
        HostRegistration<T>, ManagedView<'_, T>;
    dest: DeviceBuffer<T>, DeviceSliceMut<'_, T>, HostBuffer<T>, HostRegistration<T>,
        ManagedView<'_, T>,
);
