//! Copies described by descriptors in device memory ([`MemcpyDescriptor`],
//! `aclrtGetMemcpyDescSize` / `aclrtSetMemcpyDesc`) and run on a stream
//! ([`Scope::copy_with_desc`], `aclrtMemcpyAsyncWithDesc`).
//!
//! A descriptor records a source, a destination and a length; the stream task reads it when it
//! runs (a kernel could rewrite it in between). The scope operation therefore writes the
//! descriptor and enqueues the copy in one step, and borrows the descriptor exclusively, with
//! both buffers, until the scope ends: nothing rewrites or frees the descriptor, or the memory
//! it names, while the copy may still read it.

use crate::copy::RawRegion;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceRepr, MallocPolicy};
use crate::raw;
use crate::scope::{AsyncDest, AsyncSource, Scope};
use ascendcl_sys as sys;

/// The most bytes one descriptor describes.
pub const MAX_DESC_COPY: usize = 4 << 30;

/// The alignment the runtime requires of a descriptor.
const DESC_ALIGN: usize = 64;

/// A memcpy descriptor: device memory of the size `aclrtGetMemcpyDescSize` gives for copies
/// within one device (`ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`), used by
/// [`Scope::copy_with_desc`]. Holds its buffer (and so its device).
///
/// ```
/// use ascendcl::{MemcpyDescriptor, MallocPolicy, DeviceBuffer};
/// # let rt = ascendcl::Runtime::new()?;
/// let device = rt.device(0)?;
/// let stream = device.create_stream()?;
/// let src = device.clone_htod(&[7u32; 1024])?;
/// let mut dst = device.alloc_zeros::<u32>(1024)?;
/// let mut desc = MemcpyDescriptor::new(&device)?;
/// stream.scope(|s| s.copy_with_desc(&mut desc, &mut dst, &src))?;
/// assert_eq!(dst.copy_to_vec()?, vec![7; 1024]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[derive(Debug)]
pub struct MemcpyDescriptor {
    buf: DeviceBuffer<u8>,
}

/// `aclrtGetMemcpyDescSize` for copies within one device.
pub fn memcpy_desc_size() -> Result<usize> {
    let mut n = 0usize;
    // SAFETY: a valid out-pointer.
    unsafe { raw::aclrtGetMemcpyDescSize(sys::ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, &mut n) }?;
    Ok(n)
}

impl MemcpyDescriptor {
    /// Allocates a descriptor on `device` (`aclrtGetMemcpyDescSize`, `aclrtMalloc`).
    pub fn new(device: &Device) -> Result<Self> {
        device.ensure_current()?;
        let size = memcpy_desc_size()?;
        let buf = DeviceBuffer::zeroed(device, size, MallocPolicy::HugeFirst)?;
        if !(buf.as_ptr() as usize).is_multiple_of(DESC_ALIGN) {
            return Err(Error::argument(
                "aclrtSetMemcpyDesc",
                "the runtime returned descriptor memory that is not 64-byte aligned",
            ));
        }
        Ok(MemcpyDescriptor { buf })
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.buf.len()
    }

    /// The device it is on.
    pub fn device_id(&self) -> i32 {
        self.buf.device_id()
    }

    /// The descriptor's device address.
    pub fn as_ptr(&self) -> *const u8 {
        self.buf.as_ptr()
    }
}

fn on_device<T>(what: &str, r: &RawRegion<T>, device: i32) -> Result<()> {
    match r.location().device() {
        Some(d) if d == device => Ok(()),
        _ => Err(Error::argument(
            "aclrtSetMemcpyDesc",
            format!("the {what} must be device memory of the stream's device {device}"),
        )),
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Writes `desc` to describe a copy of `src` into `dst` (`aclrtSetMemcpyDesc`) and enqueues
    /// it (`aclrtMemcpyAsyncWithDesc`). Both buffers and the descriptor are device memory of the
    /// stream's device; lengths must be equal and at most [`MAX_DESC_COPY`] bytes; an empty pair
    /// is a no-op.
    pub fn copy_with_desc<D, S>(
        &self,
        desc: &'scope mut MemcpyDescriptor,
        mut dst: D,
        src: S,
    ) -> Result<()>
    where
        D: AsyncDest<'scope>,
        S: AsyncSource<'scope, Elem = D::Elem>,
        D::Elem: DeviceRepr,
    {
        const API: &str = "aclrtSetMemcpyDesc";
        let (d, s) = (dst.region(), src.region());
        let dev = self.device_id();
        if desc.device_id() != dev {
            return Err(Error::argument(
                API,
                format!(
                    "the descriptor is on device {}, the stream on device {dev}",
                    desc.device_id()
                ),
            ));
        }
        on_device("destination", &d, dev)?;
        on_device("source", &s, dev)?;
        if d.len() != s.len() {
            return Err(Error::argument(
                API,
                format!("lengths differ: {} and {}", d.len(), s.len()),
            ));
        }
        let bytes = match d.len().checked_mul(size_of::<D::Elem>()) {
            Some(0) => return Ok(()),
            Some(b) if b <= MAX_DESC_COPY => b,
            _ => {
                return Err(Error::argument(
                    API,
                    format!("a descriptor describes at most {MAX_DESC_COPY} bytes"),
                ));
            }
        };
        let p = desc.buf.as_mut_ptr().cast();
        self.enqueue_as(API, &[d.write(), s.read()], |st| {
            // SAFETY: the descriptor is device memory of the stream's device, of the size the
            // runtime asked for, borrowed exclusively for 'scope; source and destination are
            // device memory of that device borrowed for 'scope (the destination exclusively),
            // `bytes` long; the copy reads the descriptor when it runs, before the scope's
            // synchronisation ends 'scope.
            unsafe {
                raw::aclrtSetMemcpyDesc(
                    p,
                    sys::ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                    s.ptr().cast(),
                    d.ptr().cast(),
                    bytes,
                    std::ptr::null_mut(),
                )?;
                raw::aclrtMemcpyAsyncWithDesc(
                    p,
                    sys::ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
                    st.as_raw(),
                )
            }
        })
    }
}
