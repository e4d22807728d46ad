//! Synchronous copies between host slices, pinned buffers and device buffers.
//!
//! Any [`CopySource`] can be copied into any [`CopyDest`] of the same element type with [`copy`]:
//! the direction ([`MemcpyKind`]) follows from where each side lives ([`MemoryLocation`]),
//! lengths must be equal and are checked before the runtime is called, and buffers of two
//! different devices are rejected (that copy needs a [`PeerAccess`](crate::PeerAccess) token).
//! The copy path costs one length compare, one location match, the thread-local compare that
//! makes the endpoints' context current, and the `aclrtMemcpy` call: no allocation, no lock, no
//! other runtime call (unless this thread's current context must change).
//!
//! | function | C function |
//! |---|---|
//! | [`copy`], [`copy_with_kind`] | `aclrtMemcpy` |
//! | [`copy_2d`] | `aclrtMemcpy2d` |
//! | [`copy_batch`] | `aclrtMemcpyBatch` |
//!
//! Asynchronous copies live on [`Stream::scope`](crate::Stream::scope).

use crate::current;
use crate::error::{Error, Result};
use crate::memory::DeviceRepr;
use crate::raw;
use crate::raw_enum::raw_enum;
use ascendcl_sys as sys;
use std::ffi::c_void;

raw_enum! {
    /// The direction of a copy (`aclrtMemcpyKind`).
    pub enum MemcpyKind: sys::aclrtMemcpyKind {
        /// `ACL_MEMCPY_HOST_TO_HOST`
        HostToHost = sys::ACL_MEMCPY_HOST_TO_HOST,
        /// `ACL_MEMCPY_HOST_TO_DEVICE`
        HostToDevice = sys::ACL_MEMCPY_HOST_TO_DEVICE,
        /// `ACL_MEMCPY_DEVICE_TO_HOST`
        DeviceToHost = sys::ACL_MEMCPY_DEVICE_TO_HOST,
        /// `ACL_MEMCPY_DEVICE_TO_DEVICE`
        DeviceToDevice = sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
        /// `ACL_MEMCPY_DEFAULT`: the runtime takes the direction from the addresses.
        Default = sys::ACL_MEMCPY_DEFAULT,
        /// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: host bytes staged at enqueue time.
        HostToBufToDevice = sys::ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
        /// `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` (descriptor APIs only).
        InnerDeviceToDevice = sys::ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
        /// `ACL_MEMCPY_INTER_DEVICE_TO_DEVICE` (descriptor APIs only).
        InterDeviceToDevice = sys::ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
    }
}

impl MemcpyKind {
    /// Whether `aclrtMemcpy` / `aclrtMemcpyAsync` accept this kind (values 0–5).
    pub fn is_memcpy_kind(self) -> bool {
        !matches!(
            self,
            MemcpyKind::InnerDeviceToDevice | MemcpyKind::InterDeviceToDevice
        )
    }

    /// The kind for a copy from `src` to `dst`.
    pub fn between(src: MemoryLocation, dst: MemoryLocation) -> MemcpyKind {
        match (src.device(), dst.device()) {
            (None, None) => MemcpyKind::HostToHost,
            (None, Some(_)) => MemcpyKind::HostToDevice,
            (Some(_), None) => MemcpyKind::DeviceToHost,
            (Some(_), Some(_)) => MemcpyKind::DeviceToDevice,
        }
    }
}

/// Where the memory of a copy endpoint lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemoryLocation {
    /// Ordinary (pageable) host memory: asynchronous copies from it complete before the enqueue
    /// returns.
    Pageable,
    /// Pinned host memory (`aclrtMallocHost`) or registered host memory.
    Pinned,
    /// Memory of the device with this id.
    Device(i32),
}

impl MemoryLocation {
    /// The device id, for device memory.
    pub fn device(self) -> Option<i32> {
        match self {
            MemoryLocation::Device(d) => Some(d),
            _ => None,
        }
    }
}

/// A raw description of copy endpoint memory: address, element count, location, the context
/// to make current before the runtime touches it, and — for a region of a scope's
/// [`Claimed`](crate::Claimed) memory — which claim it belongs to, so that the scope can order
/// its uses across streams ([`RawRegion::read`], [`RawRegion::write`]).
#[derive(Debug)]
pub struct RawRegion<T> {
    ptr: *mut T,
    len: usize,
    location: MemoryLocation,
    ctx: sys::aclrtContext,
    claim: ClaimTag,
}

/// Which claim of which scope a region belongs to (`serial` 0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ClaimTag {
    /// The scope's serial number (never 0 for a scope).
    pub(crate) serial: u32,
    /// The claim's index in that scope.
    pub(crate) index: u32,
}

/// One use of memory by a task about to be enqueued through a scope ([`Scope::enqueue`]): a
/// read or a write of a region, made with [`RawRegion::read`] or [`RawRegion::write`]. The scope
/// orders the task after every earlier use of the same claimed memory on its other streams that
/// conflicts with it (a write after reads and writes, a read after writes), and checks that the
/// memory is the stream's device's or reachable from it ([`PeerAccess`](crate::PeerAccess)).
///
/// [`Scope::enqueue`]: crate::Scope::enqueue
#[derive(Debug, Clone, Copy)]
pub struct Access {
    pub(crate) claim: ClaimTag,
    pub(crate) device: Option<i32>,
    pub(crate) write: bool,
}

impl<T> Clone for RawRegion<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawRegion<T> {}

impl<T> RawRegion<T> {
    /// A region of `len` elements at `ptr`, naming no context (copies use the thread's current
    /// context unless the other endpoint names one).
    #[inline]
    pub fn new(ptr: *mut T, len: usize, location: MemoryLocation) -> Self {
        RawRegion {
            ptr,
            len,
            location,
            ctx: std::ptr::null_mut(),
            claim: ClaimTag {
                serial: 0,
                index: 0,
            },
        }
    }
    /// The same region, tagged as memory of a scope's claim.
    #[inline]
    pub(crate) fn with_claim(self, claim: ClaimTag) -> Self {
        RawRegion { claim, ..self }
    }
    /// The claim the region belongs to (serial 0: none).
    #[inline]
    pub(crate) fn claim(&self) -> ClaimTag {
        self.claim
    }
    /// A read of this region by a task ([`Access`]).
    #[inline]
    pub fn read(&self) -> Access {
        Access {
            claim: self.claim,
            device: self.location.device(),
            write: false,
        }
    }
    /// A write (or a read and a write) of this region by a task ([`Access`]).
    #[inline]
    pub fn write(&self) -> Access {
        Access {
            write: true,
            ..self.read()
        }
    }
    /// The same region, naming the context a copy makes current before it runs: the default
    /// context of the memory's device (NULL: none).
    #[inline]
    pub fn with_context(self, ctx: sys::aclrtContext) -> Self {
        RawRegion { ctx, ..self }
    }
    /// The context the region names (NULL: none).
    #[inline]
    pub fn context(&self) -> sys::aclrtContext {
        self.ctx
    }
    /// The address.
    #[inline]
    pub fn ptr(&self) -> *mut T {
        self.ptr
    }
    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the region is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Where the memory lives.
    #[inline]
    pub fn location(&self) -> MemoryLocation {
        self.location
    }
    /// The size in bytes (saturating: a region built by [`RawRegion::new`] with a length whose
    /// byte size overflows `usize` cannot describe real memory, and must not panic here).
    #[inline]
    pub fn bytes(&self) -> usize {
        self.len.saturating_mul(size_of::<T>())
    }
}

/// Memory a copy can read: host slices, [`HostBuffer`](crate::HostBuffer),
/// [`DeviceBuffer`](crate::DeviceBuffer) and their views.
///
/// # Safety
/// `source_region` describes memory at the stated location, valid for reads of `len` elements
/// for as long as the borrow of `self` lasts, and not written by anyone else during it. The
/// context it names, if any, is a live context of that memory's device for as long as the
/// borrow.
pub unsafe trait CopySource {
    /// The element type.
    type Elem: DeviceRepr;
    /// The memory.
    fn source_region(&self) -> RawRegion<Self::Elem>;
}

/// Memory a copy can write.
///
/// # Safety
/// `dest_region` describes memory at the stated location, valid for writes of `len` elements
/// for as long as the mutable borrow of `self` lasts, and not accessed by anyone else during it.
/// The context it names, if any, is a live context of that memory's device for as long as the
/// borrow.
pub unsafe trait CopyDest {
    /// The element type.
    type Elem: DeviceRepr;
    /// The memory.
    fn dest_region(&mut self) -> RawRegion<Self::Elem>;
}

// SAFETY: a slice is valid host memory for its length while borrowed.
unsafe impl<T: DeviceRepr> CopySource for [T] {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        RawRegion::new(
            self.as_ptr().cast_mut(),
            self.len(),
            MemoryLocation::Pageable,
        )
    }
}
// SAFETY: as above, exclusively borrowed.
unsafe impl<T: DeviceRepr> CopyDest for [T] {
    type Elem = T;
    #[inline]
    fn dest_region(&mut self) -> RawRegion<T> {
        RawRegion::new(self.as_mut_ptr(), self.len(), MemoryLocation::Pageable)
    }
}
// SAFETY: as for slices.
unsafe impl<T: DeviceRepr, const N: usize> CopySource for [T; N] {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        self.as_slice().source_region()
    }
}
// SAFETY: as for slices.
unsafe impl<T: DeviceRepr, const N: usize> CopyDest for [T; N] {
    type Elem = T;
    #[inline]
    fn dest_region(&mut self) -> RawRegion<T> {
        self.as_mut_slice().dest_region()
    }
}
// SAFETY: as for slices (the Vec cannot reallocate while borrowed).
unsafe impl<T: DeviceRepr> CopySource for Vec<T> {
    type Elem = T;
    #[inline]
    fn source_region(&self) -> RawRegion<T> {
        self.as_slice().source_region()
    }
}
// SAFETY: as for slices.
unsafe impl<T: DeviceRepr> CopyDest for Vec<T> {
    type Elem = T;
    #[inline]
    fn dest_region(&mut self) -> RawRegion<T> {
        self.as_mut_slice().dest_region()
    }
}

#[cold]
#[inline(never)]
fn length_mismatch(api: &'static str, dst: usize, src: usize) -> Error {
    Error::argument(
        api,
        format!("length mismatch: destination holds {dst} elements, source {src}"),
    )
}

#[cold]
#[inline(never)]
fn cross_device(api: &'static str, dst: i32, src: i32) -> Error {
    Error::argument(
        api,
        format!(
            "source is on device {src} and destination on device {dst}: copies between devices \
             need a PeerAccess token (Device::enable_peer_access)"
        ),
    )
}

/// The context a copy between `d` and `s` makes current: the destination's, else the source's
/// (NULL when neither names one).
#[inline(always)]
fn context_of<T>(d: &RawRegion<T>, s: &RawRegion<T>) -> sys::aclrtContext {
    if d.ctx.is_null() { s.ctx } else { d.ctx }
}

/// Checks and performs one synchronous copy between regions.
#[inline(always)]
pub(crate) fn copy_regions<T: DeviceRepr>(
    d: RawRegion<T>,
    s: RawRegion<T>,
    kind: Option<MemcpyKind>,
    peer_ok: bool,
) -> Result<()> {
    if d.len != s.len {
        return Err(length_mismatch("aclrtMemcpy", d.len, s.len));
    }
    if !peer_ok
        && let (Some(x), Some(y)) = (d.location.device(), s.location.device())
        && x != y
    {
        return Err(cross_device("aclrtMemcpy", x, y));
    }
    let kind = match kind {
        Some(k) if !k.is_memcpy_kind() => {
            return Err(Error::argument(
                "aclrtMemcpy",
                format!("{k:?} is not accepted by aclrtMemcpy"),
            ));
        }
        Some(k) => k,
        None => MemcpyKind::between(s.location, d.location),
    };
    current::ensure_known(context_of(&d, &s))?;
    let bytes = s.bytes();
    // SAFETY: both regions come from CopySource/CopyDest borrows that outlive this call and
    // describe `bytes` valid bytes at their locations; the copy is synchronous.
    unsafe {
        raw::aclrtMemcpy(
            d.ptr.cast::<c_void>(),
            bytes,
            s.ptr.cast::<c_void>().cast_const(),
            bytes,
            kind.into(),
        )
    }
}

/// Refuses managed memory reached through a pageable region (a slice of a
/// [`ManagedBuffer`](crate::ManagedBuffer), which derefs to one for the host): device work
/// reaches managed memory only through a [`ManagedView`](crate::ManagedView), which borrows the
/// buffer exclusively, so that the host does not even read it while the device may use it. One
/// `aclrtPointerGetAttributes` for a pageable region; none for any other.
pub(crate) fn refuse_managed<T>(api: &'static str, r: &RawRegion<T>) -> Result<()> {
    if r.location != MemoryLocation::Pageable || r.is_empty() {
        return Ok(());
    }
    match pointer_attributes(r.ptr) {
        Ok(a) if matches!(a.location, PointerLocation::Managed(_)) => Err(Error::argument(
            api,
            "the host memory is a managed buffer's: asynchronous work reaches it through a \
             ManagedView (ManagedBuffer::view), which keeps the host off it meanwhile",
        )),
        _ => Ok(()),
    }
}

/// Enqueues one asynchronous copy between regions (lengths checked; devices too, unless
/// `peer_ok`: the caller checked that the stream reaches both).
///
/// # Safety
/// Both regions stay valid, unmoved, and untouched by the host (the source unwritten, the
/// destination neither read nor written) until the stream's work is done; `stream` is live.
pub(crate) unsafe fn copy_regions_async<T: DeviceRepr>(
    d: RawRegion<T>,
    s: RawRegion<T>,
    stream: sys::aclrtStream,
    peer_ok: bool,
) -> Result<()> {
    if d.len != s.len {
        return Err(length_mismatch("aclrtMemcpyAsync", d.len, s.len));
    }
    if !peer_ok
        && let (Some(x), Some(y)) = (d.location.device(), s.location.device())
        && x != y
    {
        return Err(cross_device("aclrtMemcpyAsync", x, y));
    }
    let kind = MemcpyKind::between(s.location, d.location);
    let bytes = s.bytes();
    // SAFETY: the caller's guarantee.
    unsafe {
        raw::aclrtMemcpyAsync(
            d.ptr.cast(),
            bytes,
            s.ptr.cast::<c_void>().cast_const(),
            bytes,
            kind.into(),
            stream,
        )
    }
}

/// Copies `src` into `dst` (`aclrtMemcpy`), the direction following from the two types.
/// Lengths must be equal; buffers of two different devices are an error (use
/// [`PeerAccess::copy`](crate::PeerAccess::copy)).
///
/// ```
/// use ascendcl::{DeviceBuffer, MallocPolicy, copy};
/// # let rt = ascendcl::Runtime::new()?;
/// let dev = rt.device(0)?;
/// let mut d = DeviceBuffer::<u32>::zeroed(&dev, 4, MallocPolicy::NormalOnly)?;
/// copy(&mut d, &[1, 2, 3, 4])?;          // host to device
/// let mut back = vec![0u32; 4];
/// copy(&mut back, &d)?;                  // device to host
/// assert_eq!(back, [1, 2, 3, 4]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[inline]
pub fn copy<D, S>(dst: &mut D, src: &S) -> Result<()>
where
    D: CopyDest + ?Sized,
    S: CopySource<Elem = D::Elem> + ?Sized,
{
    copy_regions(dst.dest_region(), src.source_region(), None, false)
}

/// As [`copy`] with an explicit kind, e.g. [`MemcpyKind::Default`] (direction from the
/// addresses) or [`MemcpyKind::HostToHost`]. The kinds `aclrtMemcpy` rejects (6, 7) are refused
/// before the call.
pub fn copy_with_kind<D, S>(dst: &mut D, src: &S, kind: MemcpyKind) -> Result<()>
where
    D: CopyDest + ?Sized,
    S: CopySource<Elem = D::Elem> + ?Sized,
{
    copy_regions(dst.dest_region(), src.source_region(), Some(kind), false)
}

/// Copies a source into a new `Vec`.
pub fn to_vec<S: CopySource + ?Sized>(src: &S) -> Result<Vec<S::Elem>> {
    let s = src.source_region();
    let mut v: Vec<S::Elem> = Vec::new();
    v.try_reserve_exact(s.len)
        .map_err(|e| Error::argument("aclrtMemcpy", format!("cannot allocate the Vec: {e}")))?;
    let d = RawRegion::new(v.as_mut_ptr(), s.len, MemoryLocation::Pageable);
    copy_regions(d, s, None, false)?;
    // SAFETY: the copy succeeded, so the first `s.len` elements (within the capacity) were
    // written; every bit pattern is a valid `DeviceRepr`.
    unsafe { v.set_len(s.len) };
    Ok(v)
}

/// Geometry of a 2D copy, in elements: `height` rows of `width` elements, rows `pitch` elements
/// apart on each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copy2d {
    /// Elements between the starts of two destination rows.
    pub dst_pitch: usize,
    /// Elements between the starts of two source rows.
    pub src_pitch: usize,
    /// Elements copied per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

pub(crate) fn check_2d<T>(
    api: &'static str,
    d: &RawRegion<T>,
    s: &RawRegion<T>,
    g: Copy2d,
) -> Result<Option<[usize; 4]>> {
    if g.width == 0 || g.height == 0 {
        return Ok(None);
    }
    if g.width > g.dst_pitch || g.width > g.src_pitch {
        return Err(Error::argument(api, "width exceeds a pitch"));
    }
    let need = |pitch: usize| {
        (g.height - 1)
            .checked_mul(pitch)
            .and_then(|x| x.checked_add(g.width))
    };
    match (need(g.dst_pitch), need(g.src_pitch)) {
        (Some(nd), Some(ns)) if nd <= d.len && ns <= s.len => {}
        _ => {
            return Err(Error::argument(
                api,
                format!(
                    "{}x{} elements with pitches {}/{} exceed the buffers ({} / {} elements)",
                    g.height, g.width, g.dst_pitch, g.src_pitch, d.len, s.len
                ),
            ));
        }
    }
    let sz = size_of::<T>();
    match (
        g.dst_pitch.checked_mul(sz),
        g.src_pitch.checked_mul(sz),
        g.width.checked_mul(sz),
    ) {
        (Some(dp), Some(sp), Some(w)) => Ok(Some([dp, sp, w, g.height])),
        _ => Err(Error::argument(
            api,
            "a pitch or the width overflows usize bytes",
        )),
    }
}

/// Copies a 2D block (`aclrtMemcpy2d`): host to device or device to host. Bounds are checked
/// against both buffers before the call.
pub fn copy_2d<D, S>(dst: &mut D, src: &S, geometry: Copy2d) -> Result<()>
where
    D: CopyDest + ?Sized,
    S: CopySource<Elem = D::Elem> + ?Sized,
{
    let (d, s) = (dst.dest_region(), src.source_region());
    if let (Some(x), Some(y)) = (d.location.device(), s.location.device())
        && x != y
    {
        return Err(cross_device("aclrtMemcpy2d", x, y));
    }
    let Some([dp, sp, w, h]) = check_2d("aclrtMemcpy2d", &d, &s, geometry)? else {
        return Ok(());
    };
    let kind = MemcpyKind::between(s.location, d.location);
    current::ensure_known(context_of(&d, &s))?;
    // SAFETY: the pitched regions were checked to lie within both borrowed buffers.
    unsafe {
        raw::aclrtMemcpy2d(
            d.ptr.cast(),
            dp,
            s.ptr.cast::<c_void>().cast_const(),
            sp,
            w,
            h,
            kind.into(),
        )
    }
}

/// Performs several copies of one direction in one call (`aclrtMemcpyBatch`): `dsts[i]` receives
/// `srcs[i]`. All pairs must be host to device, or all device to host; lengths are checked. On a
/// runtime failure the error message names the failing index.
pub fn copy_batch<D, S>(dsts: &mut [&mut D], srcs: &[&S]) -> Result<()>
where
    D: CopyDest + ?Sized,
    S: CopySource<Elem = D::Elem> + ?Sized,
{
    const API: &str = "aclrtMemcpyBatch";
    if dsts.len() != srcs.len() {
        return Err(length_mismatch(API, dsts.len(), srcs.len()));
    }
    if dsts.is_empty() {
        return Ok(());
    }
    let n = dsts.len();
    let (mut dp, mut dm, mut sp, mut sz) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let mut dir: Option<(MemcpyKind, u32)> = None;
    let mut ctx: sys::aclrtContext = std::ptr::null_mut();
    for (d, s) in dsts.iter_mut().zip(srcs) {
        let (d, s) = (d.dest_region(), s.source_region());
        if ctx.is_null() {
            ctx = context_of(&d, &s);
        }
        if d.len != s.len {
            return Err(length_mismatch(API, d.len, s.len));
        }
        let kind = MemcpyKind::between(s.location, d.location);
        let device = match kind {
            MemcpyKind::HostToDevice => d.location.device(),
            MemcpyKind::DeviceToHost => s.location.device(),
            _ => None,
        };
        let Some(device) = device else {
            return Err(Error::argument(
                API,
                "every pair must be host to device, or every pair device to host",
            ));
        };
        match dir {
            None => dir = Some((kind, device as u32)),
            Some((k, dev)) if k == kind && dev == device as u32 => {}
            Some(_) => {
                return Err(Error::argument(
                    API,
                    "all pairs of a batch must have one direction and one device",
                ));
            }
        }
        dp.push(d.ptr.cast::<c_void>());
        dm.push(d.bytes());
        sp.push(s.ptr.cast::<c_void>());
        sz.push(s.bytes());
    }
    let (kind, device) = dir.unwrap_or((MemcpyKind::HostToDevice, 0));
    let host = sys::aclrtMemLocation {
        id: 0,
        type_: sys::ACL_MEM_LOCATION_TYPE_HOST,
    };
    let dev = sys::aclrtMemLocation {
        id: device,
        type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
    };
    let (dst_loc, src_loc) = if kind == MemcpyKind::HostToDevice {
        (dev, host)
    } else {
        (host, dev)
    };
    let mut attrs = [sys::aclrtMemcpyBatchAttr {
        dstLoc: dst_loc,
        srcLoc: src_loc,
        rsv: [0; 16],
    }];
    let mut idx = [0usize];
    current::ensure_known(ctx)?;
    let mut fail = usize::MAX;
    // SAFETY: every pointer/size pair comes from a borrowed CopySource/CopyDest checked above;
    // the arrays have equal lengths, passed alongside; the call is synchronous.
    unsafe {
        raw::aclrtMemcpyBatch(
            dp.as_mut_ptr(),
            dm.as_mut_ptr(),
            sp.as_mut_ptr(),
            sz.as_mut_ptr(),
            dp.len(),
            attrs.as_mut_ptr(),
            idx.as_mut_ptr(),
            attrs.len(),
            &mut fail,
        )
    }
    .map_err(|e| match e {
        Error::Acl {
            api,
            code,
            name,
            message,
        } if fail != usize::MAX => Error::Acl {
            api,
            code,
            name,
            message: Some(format!(
                "pair {fail} failed{}",
                message.map(|m| format!(": {m}")).unwrap_or_default()
            )),
        },
        other => other,
    })
}

/// What the runtime knows about an address ([`pointer_attributes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PointerAttributes {
    /// Where the memory is.
    pub location: PointerLocation,
    /// The page size backing it, in bytes.
    pub page_size: u32,
}

/// The location type of an address (`aclrtMemLocationType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PointerLocation {
    /// `ACL_MEM_LOCATION_TYPE_HOST`: host memory allocated or registered through the runtime.
    Host,
    /// `ACL_MEM_LOCATION_TYPE_DEVICE`: memory of this device.
    Device(u32),
    /// `ACL_MEM_LOCATION_TYPE_UNREGISTERED`: host memory the runtime does not know.
    Unregistered,
    /// `ACL_MEM_LOCATION_TYPE_HOST_NUMA`: host memory of this NUMA node.
    HostNuma(u32),
    /// Location type 3: managed memory ([`ManagedBuffer`](crate::ManagedBuffer)) of this device.
    Managed(u32),
    /// A location type this crate does not know (the raw type and id).
    Other(u32, u32),
}

/// The location type of managed memory (the headers' enum does not name it).
const MANAGED_LOCATION: u32 = 3;

/// `aclrtPointerGetAttributes`: where `ptr` lives. The pointer is only looked up, never
/// dereferenced.
pub fn pointer_attributes<T>(ptr: *const T) -> Result<PointerAttributes> {
    if ptr.is_null() {
        return Err(Error::argument("aclrtPointerGetAttributes", "NULL pointer"));
    }
    // SAFETY: the runtime only looks the address up.
    let a = raw::out(|a| unsafe { raw::aclrtPointerGetAttributes(ptr.cast(), a) })?;
    let id = a.location.id;
    let location = match a.location.type_ {
        sys::ACL_MEM_LOCATION_TYPE_HOST => PointerLocation::Host,
        sys::ACL_MEM_LOCATION_TYPE_DEVICE => PointerLocation::Device(id),
        sys::ACL_MEM_LOCATION_TYPE_UNREGISTERED => PointerLocation::Unregistered,
        sys::ACL_MEM_LOCATION_TYPE_HOST_NUMA => PointerLocation::HostNuma(id),
        MANAGED_LOCATION => PointerLocation::Managed(id),
        other => PointerLocation::Other(other, id),
    };
    Ok(PointerAttributes {
        location,
        page_size: a.pageSize,
    })
}
