//! The interface this emulator offers to emulators of other CANN libraries that run on top of it
//! (the HCCL emulator, `hccl-emu`): work queued on an emulated stream in order with its other
//! tasks, device memory ranges validated as copies validate them, the calling thread's current
//! device and context, and messages for `aclGetRecentErrMsg`.
//!
//! Nothing here is part of the C API; it is how a library layered on the runtime reaches the
//! runtime's state, as the real libraries do through the runtime's internal interfaces.

use crate::base::error::{self, Fail, R};
use crate::base::lock::{Mutex, Rank};
use crate::engine::stream::Stream;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Work};
use crate::memory::{self, Loc, Side};
use std::sync::Arc;

/// A failure as the runtime reports it: an `aclError` code and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclFailure {
    /// The `aclError` code.
    pub code: i32,
    /// What went wrong (without the API name).
    pub message: String,
}

impl AclFailure {
    /// A failure with `code` and `message`.
    pub fn new(code: i32, message: impl Into<String>) -> AclFailure {
        AclFailure {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for AclFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for AclFailure {}

impl From<Fail> for AclFailure {
    fn from(f: Fail) -> AclFailure {
        AclFailure {
            code: f.code,
            message: f.msg,
        }
    }
}

impl From<AclFailure> for Fail {
    fn from(f: AclFailure) -> Fail {
        Fail {
            code: f.code,
            msg: f.message,
        }
    }
}

/// A live emulated stream (`aclrtStream`).
#[derive(Clone)]
pub struct StreamRef(Arc<Stream>);

impl std::fmt::Debug for StreamRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamRef")
            .field("handle", &self.0.handle)
            .field("device", &self.0.device)
            .finish()
    }
}

/// Resolves a stream handle as the runtime's stream functions do: NULL is the current
/// context's default stream (which needs a current context), anything else must be a live
/// stream (107017 otherwise).
pub fn stream(handle: usize) -> Result<StreamRef, AclFailure> {
    Ok(StreamRef(crate::stream::get(handle)?))
}

impl StreamRef {
    /// The stream's handle value.
    pub fn handle(&self) -> usize {
        self.0.handle
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> i32 {
        self.0.device
    }

    /// The context the stream belongs to.
    pub fn context(&self) -> usize {
        self.0.ctx
    }

    /// Fails with 107003 unless the stream belongs to the calling thread's current context.
    pub fn check_current_context(&self) -> Result<(), AclFailure> {
        Ok(crate::stream::check_context(&self.0)?)
    }

    /// Queues `task`: the stream's worker runs it after every task queued before it, and the
    /// tasks queued after it wait for it. An `Err` it returns is the stream's error, reported by
    /// the next synchronisation as a failing copy's would be (and, in STOP failure mode, fails
    /// the context). The call itself fails as any submission does (a stream being destroyed, a
    /// failed context in STOP mode).
    pub fn enqueue<F>(&self, task: F) -> Result<(), AclFailure>
    where
        F: FnOnce() -> Result<(), AclFailure> + Send + 'static,
    {
        self.enqueue_named("library task", task)
    }

    /// [`StreamRef::enqueue`] of a task with a name: a profiling trace shows it under that name
    /// (a collective's, `HcclAllReduce`), as a task of kind `collective`.
    pub fn enqueue_named<F>(&self, name: impl Into<String>, task: F) -> Result<(), AclFailure>
    where
        F: FnOnce() -> Result<(), AclFailure> + Send + 'static,
    {
        let run: Box<dyn FnOnce() -> R + Send> = Box::new(move || task().map_err(Fail::from));
        Ok(self.0.enqueue(External {
            name: name.into(),
            run: Mutex::new(Rank::ExternalTask, Some(run)),
        })?)
    }

    /// Waits for every task queued so far and returns (and clears) the first task error, as
    /// `aclrtSynchronizeStream` does.
    pub fn synchronize(&self) -> Result<(), AclFailure> {
        Ok(self
            .0
            .synchronize(None, ascendcl_sys::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT as i32)?)
    }

    /// Whether every queued task has completed.
    pub fn is_idle(&self) -> bool {
        self.0.is_idle()
    }
}

/// Where a validated memory range lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLocation {
    /// Device memory of the given device (`aclrtMalloc*`).
    Device(i32),
    /// Pinned (`aclrtMallocHost`) or registered (`aclrtHostRegister`) host memory.
    PinnedHost,
    /// Memory the runtime knows nothing about (pageable host memory).
    Pageable,
}

/// A memory range validated against the table of live allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryRange {
    addr: usize,
    len: usize,
    side: Side,
}

/// Validates `[addr, addr + len)` with the checks copies make: inside one live allocation, or
/// outside every allocation and freed range; an overrun, a range in freed memory or one that
/// wraps the address space is 107000 with a message naming `what`.
pub fn check_range(what: &str, addr: usize, len: usize) -> Result<MemoryRange, AclFailure> {
    let side = memory::read().check(what, addr, len)?;
    Ok(MemoryRange { addr, len, side })
}

impl MemoryRange {
    /// The first byte.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the range lies.
    pub fn location(&self) -> MemoryLocation {
        match self.side.loc {
            Loc::Device(d) => MemoryLocation::Device(d),
            Loc::Host => MemoryLocation::PinnedHost,
            Loc::Unreg => MemoryLocation::Pageable,
        }
    }

    /// Runs `f` with the emulator's view of the range's first byte while no allocation can be
    /// freed, after checking that the allocation the range was validated in is still live (a
    /// task that runs after the memory was freed fails with 507000, as a queued copy does).
    ///
    /// The pointer is not the range's address for device memory: host code cannot touch device
    /// memory at the addresses the program knows (they fault, as on an NPU); the pointer is the
    /// alias the emulator's own code uses. For an allocation of the runtime, `f` may access the
    /// `len` bytes from the pointer; pageable memory is the caller's business. `f` must not
    /// call back into the runtime's memory functions. Prefer [`MemoryRange::read`] and
    /// [`MemoryRange::write`], which need no `unsafe` and access aligned words atomically.
    pub fn with_live<T>(&self, f: impl FnOnce(*mut u8) -> T) -> Result<T, AclFailure> {
        let t = memory::read();
        self.live(&t)?;
        let r = f(memory::access::ptr(self.addr, self.side));
        drop(t);
        Ok(r)
    }

    /// The 507000 of a range whose allocation was freed.
    fn live(&self, t: &memory::Table) -> Result<(), AclFailure> {
        if t.still_live(self.side) {
            return Ok(());
        }
        Err(AclFailure::new(
            error::RT_INTERNAL_ERROR,
            format!(
                "a queued task touches the allocation at {:#x}, which was freed before the task \
                 ran (free does not wait for work in flight)",
                self.side.alloc
            ),
        ))
    }

    /// Copies `out.len()` bytes from offset `off` of the range into `out`: 507000 when the
    /// allocation was freed, 107000 when the bytes run past the range. An aligned word of 1, 2,
    /// 4 or 8 bytes is read atomically.
    pub fn read(&self, off: usize, out: &mut [u8]) -> Result<(), AclFailure> {
        self.within(off, out.len())?;
        let t = memory::read();
        self.live(&t)?;
        // SAFETY: the bytes lie in the validated range (checked above) of a live allocation
        // (held live by the table's lock), or in pageable memory the range's creator vouched
        // for.
        unsafe { memory::access::read(self.addr + off, self.side, out) };
        Ok(())
    }

    /// Copies `data` to offset `off` of the range: as [`MemoryRange::read`].
    pub fn write(&self, off: usize, data: &[u8]) -> Result<(), AclFailure> {
        self.within(off, data.len())?;
        let t = memory::read();
        self.live(&t)?;
        // SAFETY: as in `read`.
        unsafe { memory::access::write(self.addr + off, self.side, data) };
        Ok(())
    }

    fn within(&self, off: usize, len: usize) -> Result<(), AclFailure> {
        if off.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(AclFailure::new(
                error::RT_PARAM_INVALID,
                format!(
                    "an access of {len} bytes at offset {off} runs past the {}-byte range at \
                     {:#x}",
                    self.len, self.addr
                ),
            ));
        }
        Ok(())
    }
}

/// A live allocation, as [`allocation_at`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    /// Its first byte.
    pub start: usize,
    /// The bytes that may be accessed from `start` (the size asked for; for virtual memory, the
    /// mappings placed back to back around the address).
    pub len: usize,
    /// Where it lies.
    pub location: MemoryLocation,
}

/// The live allocation holding byte `addr` (device memory, pinned or registered host memory),
/// or `None` (pageable memory, freed memory, an unmapped part of a reservation). For checks of
/// every access a kernel makes: one shared lock and one binary search of the sorted
/// allocations, no allocation.
#[inline]
pub fn allocation_at(addr: usize) -> Option<Allocation> {
    let (start, len, kind) = memory::read().region_of(addr)?;
    Some(Allocation {
        start,
        len,
        location: match kind {
            memory::Kind::Device(d) => MemoryLocation::Device(d),
            memory::Kind::Pinned | memory::Kind::Registered => MemoryLocation::PinnedHost,
        },
    })
}

/// The calling thread's current device (107002 without a current context).
pub fn current_device() -> Result<i32, AclFailure> {
    Ok(crate::device::context::current_ids()?.0)
}

/// The calling thread's current context handle (107002 without one).
pub fn current_context() -> Result<usize, AclFailure> {
    Ok(crate::device::context::current_ids()?.1)
}

/// Makes a live context current on the calling thread without taking a device reference, as
/// `aclrtSetCurrentContext` does (107017 for a context that is not live).
pub fn set_current_context(context: usize) -> Result<(), AclFailure> {
    Ok(crate::device::context::set_current_context(context)?)
}

/// The number of emulated devices.
pub fn device_count() -> u32 {
    crate::device::count()
}

/// Adds `line` to the calling thread's recent-error messages (returned by the next
/// `aclGetRecentErrMsg`), as the runtime's own failures do. The line is kept as given; by
/// convention it starts with the library's tag and the API name.
pub fn record_message(line: impl Into<String>) {
    let line = line.into();
    // try_with: a call from a thread-local destructor must not panic.
    let _ = error::MESSAGES.try_with(|m| {
        let mut m = m.borrow_mut();
        // The same bound as the runtime's own messages.
        if m.len() >= 64 {
            m.remove(0);
        }
        m.push(line);
    });
}

/// Work queued by a library layered on the runtime; its error is the task's error. It runs once:
/// a model that captured it and replays it finds it taken and fails.
struct External {
    /// The task's name, for traces.
    name: String,
    run: Mutex<Option<Box<dyn FnOnce() -> R + Send>>>,
}

impl Work for External {
    /// A library's task may wait for its peers (a collective): not drained.
    fn gate(&self) -> bool {
        true
    }

    fn run(&self, _: &Cx<'_>) -> R {
        // Taken out first: the lock is not held while the work runs.
        let task = self.run.lock().take();
        match task {
            Some(run) => run(),
            None => Err(Fail {
                code: error::RT_FEATURE_NOT_SUPPORT,
                msg: "a task queued by a library on the runtime (an HCCL collective) runs once; \
                      it cannot be replayed from a captured model"
                    .to_string(),
            }),
        }
    }

    fn describe(&self) -> Task {
        Task::new(self.name.clone(), "collective")
    }
}
