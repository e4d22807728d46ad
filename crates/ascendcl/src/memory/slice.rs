//! Views of device memory: [`DeviceSlice`] (shared) and [`DeviceSliceMut`] (exclusive), borrowed
//! from a [`DeviceBuffer`](crate::DeviceBuffer) like `&[T]` and `&mut [T]` from a `Vec`.

use super::repr::DeviceRepr;
use crate::copy::{self, CopySource, RawRegion};
use crate::error::{Error, Result};
use crate::raw;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// Resolves a range against a length without panicking.
pub(crate) fn resolve_range(
    api: &'static str,
    range: impl RangeBounds<usize>,
    len: usize,
) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e - s)),
        _ => Err(Error::argument(
            api,
            format!("range out of bounds for length {len}"),
        )),
    }
}

/// The part `start..start + len` of `r` (in bounds: checked by the caller).
fn narrow<T>(r: RawRegion<T>, start: usize, len: usize) -> RawRegion<T> {
    RawRegion::new(r.ptr().wrapping_add(start), len, r.location()).with_context(r.context())
}

/// A shared view of device memory (part or all of a [`DeviceBuffer`](crate::DeviceBuffer)).
#[derive(Debug)]
pub struct DeviceSlice<'a, T: DeviceRepr> {
    region: RawRegion<T>,
    _borrow: PhantomData<&'a T>,
}

// SAFETY: a view borrows the buffer shared, like `&[T]`; the buffer is `Sync`.
unsafe impl<T: DeviceRepr> Send for DeviceSlice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: DeviceRepr> Sync for DeviceSlice<'_, T> {}

impl<T: DeviceRepr> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: DeviceRepr> Copy for DeviceSlice<'_, T> {}

impl<'a, T: DeviceRepr> DeviceSlice<'a, T> {
    pub(crate) fn new(region: RawRegion<T>) -> Self {
        DeviceSlice {
            region,
            _borrow: PhantomData,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.region.len()
    }
    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.region.is_empty()
    }
    /// The device id.
    pub fn device_id(&self) -> i32 {
        self.region.location().device().unwrap_or(-1)
    }
    /// The device address (never dereference on the host).
    pub fn as_ptr(&self) -> *const T {
        self.region.ptr()
    }
    /// A narrower view; out of bounds is an error.
    pub fn into_slice(self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'a, T>> {
        let (start, len) = resolve_range("DeviceSlice::slice", range, self.len())?;
        Ok(DeviceSlice::new(narrow(self.region, start, len)))
    }
    /// Copies the view into `dst` (host memory); lengths must be equal.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        copy::copy(dst, self)
    }
    /// Copies the view into a new `Vec`.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        copy::to_vec(self)
    }
    #[inline]
    pub(super) fn region(&self) -> RawRegion<T> {
        self.region
    }
}

/// An exclusive view of device memory (part or all of a [`DeviceBuffer`](crate::DeviceBuffer)).
#[derive(Debug)]
pub struct DeviceSliceMut<'a, T: DeviceRepr> {
    region: RawRegion<T>,
    _borrow: PhantomData<&'a mut T>,
}

// SAFETY: a view borrows the buffer exclusively, like `&mut [T]`; the buffer is `Send`.
unsafe impl<T: DeviceRepr> Send for DeviceSliceMut<'_, T> {}
// SAFETY: `&DeviceSliceMut` only reads, like `&&mut [T]`.
unsafe impl<T: DeviceRepr> Sync for DeviceSliceMut<'_, T> {}

impl<'a, T: DeviceRepr> DeviceSliceMut<'a, T> {
    pub(crate) fn new(region: RawRegion<T>) -> Self {
        DeviceSliceMut {
            region,
            _borrow: PhantomData,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.region.len()
    }
    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.region.is_empty()
    }
    /// The device id.
    pub fn device_id(&self) -> i32 {
        self.region.location().device().unwrap_or(-1)
    }
    /// The device address (never dereference on the host).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.region.ptr()
    }
    /// A shared view of the same elements.
    pub fn as_view(&self) -> DeviceSlice<'_, T> {
        DeviceSlice::new(self.region)
    }
    /// A narrower view; out of bounds is an error.
    pub fn into_slice_mut(self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'a, T>> {
        let (start, len) = resolve_range("DeviceSliceMut::slice", range, self.len())?;
        Ok(DeviceSliceMut::new(narrow(self.region, start, len)))
    }
    /// Copies `src` (host memory) into the view; lengths must be equal.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        copy::copy(self, src)
    }
    /// Copies from any source of the same device or the host; lengths must be equal.
    pub fn copy_from<S: CopySource<Elem = T> + ?Sized>(&mut self, src: &S) -> Result<()> {
        copy::copy(self, src)
    }
    /// Sets every byte of the view to `value` (`aclrtMemset`).
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        let bytes = self.region.bytes();
        if bytes == 0 {
            return Ok(());
        }
        crate::current::ensure_known(self.region.context())?;
        // SAFETY: the view is exclusive device memory of `bytes` bytes, whose device's context
        // is alive while the buffer is borrowed.
        unsafe { raw::aclrtMemset(self.region.ptr().cast(), bytes, i32::from(value), bytes) }
    }
    #[inline]
    pub(super) fn region(&self) -> RawRegion<T> {
        self.region
    }
}
