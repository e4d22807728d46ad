//! Device, host and stream resources owned through the checked raw layer (`ascendcl::raw`):
//! the runtime's C functions, each call's status turned into an `ascendcl::Error`.
//!
//! Every type frees what it allocated when dropped. Nothing here is timed: the benchmarks
//! allocate once, outside criterion's loop, and time only the copy calls.

use ascendcl::raw as acl;
use ascendcl::{AclError, Result};
use ascendcl_sys::{
    ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_FIRST_P2P, ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_HUGE1G_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
    ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY_P2P, ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
    aclrtMemMallocPolicy, aclrtMemcpyKind, aclrtStream,
};
use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::NonNull;

/// The device every benchmark runs on.
pub const DEVICE_ID: i32 = 0;

/// A copy direction and its `aclrtMemcpyKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host to device.
    H2D,
    /// Device to host.
    D2H,
    /// Device to device.
    D2D,
    /// Host to host.
    H2H,
}

impl Direction {
    /// Every direction, in report order.
    pub const ALL: [Direction; 4] = [
        Direction::H2D,
        Direction::D2H,
        Direction::D2D,
        Direction::H2H,
    ];

    /// The `aclrtMemcpyKind` of this direction.
    pub fn kind(self) -> aclrtMemcpyKind {
        match self {
            Direction::H2D => ACL_MEMCPY_HOST_TO_DEVICE,
            Direction::D2H => ACL_MEMCPY_DEVICE_TO_HOST,
            Direction::D2D => ACL_MEMCPY_DEVICE_TO_DEVICE,
            Direction::H2H => ACL_MEMCPY_HOST_TO_HOST,
        }
    }

    /// The lower-case name used in benchmark IDs: `h2d`, `d2h`, `d2d`, `h2h`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::H2D => "h2d",
            Direction::D2H => "d2h",
            Direction::D2D => "d2d",
            Direction::H2H => "h2h",
        }
    }

    /// Whether the source is device memory.
    pub fn from_device(self) -> bool {
        matches!(self, Direction::D2H | Direction::D2D)
    }

    /// Whether the destination is device memory.
    pub fn to_device(self) -> bool {
        matches!(self, Direction::H2D | Direction::D2D)
    }
}

/// A device-memory allocation policy (`aclrtMemMallocPolicy`) and its name in benchmark IDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Policy {
    /// The lower-case name used in benchmark IDs, e.g. `huge_first`.
    pub name: &'static str,
    /// The C value.
    pub value: aclrtMemMallocPolicy,
}

/// The runtime's default policy, `ACL_MEM_MALLOC_HUGE_FIRST`, used where the policy is not the
/// subject of the benchmark.
pub const DEFAULT_POLICY: Policy = Policy {
    name: "huge_first",
    value: ACL_MEM_MALLOC_HUGE_FIRST,
};

/// Every allocation policy of `acl_rt.h`, in report order.
pub const POLICIES: [Policy; 8] = [
    DEFAULT_POLICY,
    Policy {
        name: "huge_only",
        value: ACL_MEM_MALLOC_HUGE_ONLY,
    },
    Policy {
        name: "normal_only",
        value: ACL_MEM_MALLOC_NORMAL_ONLY,
    },
    Policy {
        name: "huge1g_only",
        value: ACL_MEM_MALLOC_HUGE1G_ONLY,
    },
    Policy {
        name: "huge_first_p2p",
        value: ACL_MEM_MALLOC_HUGE_FIRST_P2P,
    },
    Policy {
        name: "huge_only_p2p",
        value: ACL_MEM_MALLOC_HUGE_ONLY_P2P,
    },
    Policy {
        name: "normal_only_p2p",
        value: ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
    },
    Policy {
        name: "huge1g_only_p2p",
        value: ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
    },
];

/// The runtime initialised (`aclInit`) with device [`DEVICE_ID`] set; reset and finalised on drop.
#[derive(Debug)]
pub struct Device {
    initialised_here: bool,
}

impl Device {
    /// `aclInit(NULL)` (an already initialised runtime is accepted) and `aclrtSetDevice`.
    ///
    /// # Errors
    /// The failing call.
    pub fn open() -> Result<Device> {
        // SAFETY: a NULL config path is documented as "no configuration file". The tolerated
        // repeat's message is read (and so cleared) into the error that is dropped here.
        let initialised_here = match unsafe { acl::aclInit(std::ptr::null()) } {
            Ok(()) => true,
            Err(e) if e.code() == Some(AclError::REPEAT_INITIALIZE) => false,
            Err(e) => return Err(e),
        };
        // SAFETY: a plain value. It makes device 0's default context current, the one the safe
        // API's device 0 made current on this thread; the runtime counts this open separately
        // from the safe handle's, and `Drop` balances it.
        if let Err(e) = unsafe { acl::aclrtSetDevice(DEVICE_ID) } {
            if initialised_here {
                // SAFETY: balances the aclInit above; nothing else uses the runtime yet.
                let _ = unsafe { acl::aclFinalize() };
            }
            return Err(e);
        }
        Ok(Device { initialised_here })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: balances the aclrtSetDevice of `open`; every resource of this module borrows
        // nothing from the device handle, and the benchmarks drop theirs before the device.
        let _ = unsafe { acl::aclrtResetDevice(DEVICE_ID) };
        if self.initialised_here {
            // SAFETY: balances the aclInit of `open`.
            let _ = unsafe { acl::aclFinalize() };
        }
    }
}

/// Device memory from `aclrtMalloc`, freed with `aclrtFree`.
#[derive(Debug)]
pub struct DeviceMem {
    ptr: NonNull<c_void>,
    len: usize,
}

impl DeviceMem {
    /// Allocates `len` bytes under `policy`.
    ///
    /// # Errors
    /// The backend's refusal, e.g. `ACL_ERROR_RT_MEMORY_ALLOCATION` for a huge-page-only policy
    /// on a machine without huge pages.
    ///
    /// # Panics
    /// When the backend reports success and returns NULL, which breaks its contract.
    pub fn alloc(len: usize, policy: Policy) -> Result<DeviceMem> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // Drop any message an earlier, tolerated failure left, so a refusal reports its own.
        let _ = acl::aclGetRecentErrMsg();
        // SAFETY: `ptr` is a valid out-pointer for the duration of the call.
        unsafe { acl::aclrtMalloc(&mut ptr, len, policy.value) }?;
        let ptr = NonNull::new(ptr).expect("aclrtMalloc returned success and a NULL pointer");
        Ok(DeviceMem { ptr, len })
    }

    /// The device address.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr.as_ptr()
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the allocation is empty (never, for the sizes benchmarked).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from aclrtMalloc and is freed exactly once, here.
        let _ = unsafe { acl::aclrtFree(self.ptr.as_ptr()) };
    }
}

/// How host memory was allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostKind {
    /// Page-locked, from `aclrtMallocHost`.
    Pinned,
    /// Ordinary pageable memory from the Rust allocator (page-aligned).
    Pageable,
}

impl HostKind {
    /// The lower-case name used in benchmark IDs: `pinned` or `pageable`.
    pub fn name(self) -> &'static str {
        match self {
            HostKind::Pinned => "pinned",
            HostKind::Pageable => "pageable",
        }
    }
}

/// Host memory, pinned or pageable, filled with a byte pattern when allocated so that every page
/// is resident before any timing.
#[derive(Debug)]
pub struct HostMem {
    ptr: NonNull<u8>,
    len: usize,
    kind: HostKind,
}

const PAGE: usize = 4096;

impl HostMem {
    /// Allocates and fills `len` bytes of `kind` host memory.
    ///
    /// # Errors
    /// The backend's refusal to pin memory.
    ///
    /// # Panics
    /// When the backend reports success and returns NULL, which breaks its contract. Pageable
    /// memory that the allocator cannot provide ends the process (`handle_alloc_error`).
    pub fn alloc(len: usize, kind: HostKind) -> Result<HostMem> {
        let ptr = match kind {
            HostKind::Pinned => {
                let mut ptr: *mut c_void = std::ptr::null_mut();
                // SAFETY: `ptr` is a valid out-pointer for the duration of the call.
                unsafe { acl::aclrtMallocHost(&mut ptr, len) }?;
                NonNull::new(ptr.cast::<u8>())
                    .expect("aclrtMallocHost returned success and a NULL pointer")
            }
            HostKind::Pageable => {
                let layout = Self::layout(len);
                // SAFETY: the layout has a non-zero size (`max(1)`) and a power-of-two alignment.
                let ptr = unsafe { std::alloc::alloc(layout) };
                NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
            }
        };
        // SAFETY: `ptr` points to `len` writable bytes just allocated.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0xA5, len) };
        Ok(HostMem { ptr, len, kind })
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len.max(1), PAGE).expect("benchmark sizes fit a Layout")
    }

    /// The host address.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr.as_ptr().cast()
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the allocation is empty (never, for the sizes benchmarked).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How the memory was allocated.
    pub fn kind(&self) -> HostKind {
        self.kind
    }

    /// The bytes, e.g. for a safe-API copy from this buffer.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised bytes (filled in `alloc`) owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably, e.g. for a safe-API copy into this buffer.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        match self.kind {
            HostKind::Pinned => {
                // SAFETY: `ptr` came from aclrtMallocHost and is freed exactly once, here.
                let _ = unsafe { acl::aclrtFreeHost(self.ptr.as_ptr().cast()) };
            }
            HostKind::Pageable => {
                // SAFETY: `ptr` came from `std::alloc::alloc` with this same layout.
                unsafe { std::alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) };
            }
        }
    }
}

/// A stream from `aclrtCreateStream`, destroyed on drop.
#[derive(Debug)]
pub struct Stream(aclrtStream);

impl Stream {
    /// Creates a stream on the current device.
    ///
    /// # Errors
    /// The failing call.
    pub fn create() -> Result<Stream> {
        let mut s: aclrtStream = std::ptr::null_mut();
        // SAFETY: `s` is a valid out-pointer for the duration of the call.
        unsafe { acl::aclrtCreateStream(&mut s) }?;
        Ok(Stream(s))
    }

    /// The raw handle.
    pub fn raw(&self) -> aclrtStream {
        self.0
    }

    /// `aclrtSynchronizeStream`.
    ///
    /// # Errors
    /// The failing call.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the handle is live for as long as `self`.
        unsafe { acl::aclrtSynchronizeStream(self.0) }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the handle came from aclrtCreateStream and is destroyed exactly once, here.
        let _ = unsafe { acl::aclrtDestroyStream(self.0) };
    }
}

/// Either end of a copy: device or host memory.
#[derive(Debug)]
pub enum Mem {
    /// Device memory.
    Device(DeviceMem),
    /// Host memory.
    Host(HostMem),
}

impl Mem {
    /// The address.
    pub fn ptr(&self) -> *mut c_void {
        match self {
            Mem::Device(d) => d.ptr(),
            Mem::Host(h) => h.ptr(),
        }
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        match self {
            Mem::Device(d) => d.len(),
            Mem::Host(h) => h.len(),
        }
    }

    /// Whether the allocation is empty (never, for the sizes benchmarked).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A source and a destination of `len` bytes for one direction, allocated once; the source holds
/// a byte pattern (device sources are filled by a host-to-device copy).
#[derive(Debug)]
pub struct CopyPair {
    /// Where the bytes come from.
    pub src: Mem,
    /// Where they go.
    pub dst: Mem,
    /// The direction.
    pub direction: Direction,
}

impl CopyPair {
    /// Allocates both ends: device ends under `policy`, host ends of `host` kind.
    ///
    /// # Errors
    /// The first allocation or fill the backend refused.
    pub fn alloc(
        direction: Direction,
        len: usize,
        policy: Policy,
        host: HostKind,
    ) -> Result<CopyPair> {
        let end = |device: bool| -> Result<Mem> {
            Ok(if device {
                Mem::Device(DeviceMem::alloc(len, policy)?)
            } else {
                Mem::Host(HostMem::alloc(len, host)?)
            })
        };
        let src = end(direction.from_device())?;
        let dst = end(direction.to_device())?;
        if let Mem::Device(d) = &src {
            let fill = HostMem::alloc(len, host)?;
            // SAFETY: both ends are live allocations of `len` bytes.
            unsafe { acl::aclrtMemcpy(d.ptr(), len, fill.ptr(), len, ACL_MEMCPY_HOST_TO_DEVICE) }?;
        }
        Ok(CopyPair {
            src,
            dst,
            direction,
        })
    }

    /// One synchronous copy of the whole pair through the raw table.
    ///
    /// # Errors
    /// The copy's failure.
    pub fn copy_sync(&self) -> Result<()> {
        let len = self.src.len();
        // SAFETY: both ends are live allocations of `len` bytes, of the kinds `direction` names.
        unsafe {
            acl::aclrtMemcpy(
                self.dst.ptr(),
                len,
                self.src.ptr(),
                len,
                self.direction.kind(),
            )
        }
    }

    /// One asynchronous copy of the whole pair on `stream`, then a stream synchronise.
    ///
    /// # Errors
    /// The copy's or the synchronise's failure.
    pub fn copy_async(&self, stream: &Stream) -> Result<()> {
        let len = self.src.len();
        // SAFETY: both ends are live allocations of `len` bytes, of the kinds `direction` names,
        // and stay live until the synchronise below has completed the copy.
        unsafe {
            acl::aclrtMemcpyAsync(
                self.dst.ptr(),
                len,
                self.src.ptr(),
                len,
                self.direction.kind(),
                stream.raw(),
            )
        }?;
        stream.synchronize()
    }
}
