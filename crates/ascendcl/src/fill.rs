//! Fills with a 4-byte value (`aclrtMemsetD32`, `aclrtMemsetD32Async`): every element of device
//! memory set to one `u32`, `i32`, `f32`, `[u8; 4]`, ... ([`DeviceBuffer::fill`],
//! [`DeviceSliceMut::fill`], [`Scope::fill`]), where `aclrtMemset` sets bytes only.

use crate::copy::{CopyDest, RawRegion};
use crate::current;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceRepr, DeviceSliceMut};
use crate::raw;
use crate::scope::{AsyncDest, Scope};

/// The 32-bit word `value` is, or an argument error naming `api` for an element type that is
/// not 4 bytes long.
fn word<T: DeviceRepr>(api: &'static str, value: &T) -> Result<u32> {
    if size_of::<T>() != 4 {
        return Err(Error::argument(
            api,
            format!(
                "fills elements of 4 bytes; this element type has {}",
                size_of::<T>()
            ),
        ));
    }
    let mut w = [0u8; 4];
    // SAFETY: `T` is 4 bytes (checked above) and `DeviceRepr`, so it has no padding: its 4 bytes
    // are initialised and readable as bytes.
    unsafe { std::ptr::copy_nonoverlapping((value as *const T).cast::<u8>(), w.as_mut_ptr(), 4) };
    Ok(u32::from_ne_bytes(w))
}

/// The region checked for a fill: device memory, and its element count as the word count.
fn device_region<T>(api: &'static str, r: RawRegion<T>) -> Result<RawRegion<T>> {
    if r.location().device().is_none() {
        return Err(Error::argument(
            api,
            "the destination must be device memory",
        ));
    }
    Ok(r)
}

impl<T: DeviceRepr> DeviceSliceMut<'_, T> {
    /// Sets every element of the view to `value` (`aclrtMemsetD32`). The element type must be
    /// 4 bytes long (`u32`, `i32`, `f32`, `[u8; 4]`, `[u16; 2]`, ...); another is refused with
    /// [`Error::Argument`] before the runtime is called. The word count is the view's length
    /// and the size passed its byte size, so the fill never runs past the view.
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// # let device = rt.device(0)?;
    /// let mut buf = device.alloc_zeros::<f32>(6)?;
    /// buf.slice_mut(2..5)?.fill(1.5)?;
    /// assert_eq!(buf.copy_to_vec()?, [0.0, 0.0, 1.5, 1.5, 1.5, 0.0]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn fill(&mut self, value: T) -> Result<()> {
        const API: &str = "aclrtMemsetD32";
        let w = word(API, &value)?;
        let r = device_region(API, self.dest_region())?;
        if r.is_empty() {
            return Ok(());
        }
        current::ensure_known(r.context())?;
        // SAFETY: the view is exclusive device memory of `r.bytes()` bytes, `r.len()` words of 4
        // bytes, whose device's context is alive while the buffer is borrowed.
        unsafe { raw::aclrtMemsetD32(r.ptr().cast(), r.bytes(), w, r.len()) }
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Sets every element to `value` (`aclrtMemsetD32`); the element type must be 4 bytes long
    /// (see [`DeviceSliceMut::fill`]).
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// # let device = rt.device(0)?;
    /// let mut buf = device.alloc_zeros::<u32>(4)?;
    /// buf.fill(0xdead_beef)?;
    /// assert_eq!(buf.copy_to_vec()?, [0xdead_beef; 4]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.as_view_mut().fill(value)
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Enqueues setting every element of device memory `dst` to `value`
    /// (`aclrtMemsetD32Async`); the element type must be 4 bytes long (see
    /// [`DeviceSliceMut::fill`]). The memory must be the stream's device's (or reachable from
    /// it through a [`PeerAccess`](crate::PeerAccess)).
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// # let device = rt.device(0)?;
    /// let stream = device.create_stream()?;
    /// let mut buf = device.alloc_zeros::<i32>(8)?;
    /// let mut back = vec![0i32; 8];
    /// stream.scope(|s| {
    ///     let b = s.claim(&mut buf);
    ///     s.fill(b, -7)?;
    ///     s.copy(&mut back, b)
    /// })?;
    /// assert_eq!(back, [-7; 8]);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn fill<D: AsyncDest<'scope>>(&self, mut dst: D, value: D::Elem) -> Result<()> {
        const API: &str = "aclrtMemsetD32Async";
        let w = word(API, &value)?;
        let d = device_region(API, dst.region())?;
        if d.is_empty() {
            return Ok(());
        }
        self.enqueue_as(API, &[d.write()], |st| {
            // SAFETY: the region is device memory of `d.bytes()` bytes (`d.len()` words)
            // borrowed for 'scope, reachable from the stream (checked by the ordering); the
            // scope waits for the stream before 'scope ends.
            unsafe { raw::aclrtMemsetD32Async(d.ptr().cast(), d.bytes(), w, d.len(), st.as_raw()) }
        })
    }
}
