//! User allocators (`acl_rt_allocator.h`): the [`Allocator`] trait a user implements, its
//! registration on a stream ([`AllocatorRegistration`], from [`Stream::register_allocator`]),
//! and [`RegisteredAllocator`], which reads the registration back from the runtime and calls its
//! callbacks the way the operator executors do.
//!
//! The runtime itself never calls an allocator: the executors of single operators and
//! dynamic-shape models (`aclopExecuteV2`, `aclmdlExecuteAsync`) read the stream's registration
//! and call `alloc(size) → block`, `getAddrFromBlock(block) → device address`,
//! `free(block)` and, to reuse an address, `allocAdvise(size, address) → block`. They may do so
//! from runtime threads, so an [`Allocator`] is `Send + Sync`. Every callback runs inside
//! `catch_unwind`: a panic never unwinds into C. The callback answers NULL (no block, no address)
//! instead, and a panic of `alloc`, `alloc_advise` or `free` is kept and reported by
//! [`AllocatorRegistration::take_panic`] and [`AllocatorRegistration::unregister`] (the
//! get-address callback receives no allocator object, so a panic of `address` only answers
//! NULL).
//!
//! The object the runtime holds is not a pointer to the allocator but the registration's number
//! in a process-wide table of live registrations: a callback looks the number up, and
//! unregistering removes it, so a callback that comes late finds no allocator (and answers NULL)
//! instead of a freed one, and nothing outlives the registration.

use crate::error::{Error, Result};
use crate::host_fn::panic_message;
use crate::raw;
use crate::stream::Stream;
use ascendcl_sys as sys;
use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

/// An allocator the operator executors draw device memory from (`aclrtAllocatorDesc`).
///
/// Blocks are owned values of [`Allocator::Block`]; the runtime sees each one as an opaque
/// pointer and gives it back to [`Allocator::free`] exactly once (or never: then the block is
/// leaked, not freed). [`Allocator::address`] turns a block into the device address the executor
/// writes to: the allocator vouches that the address is device memory of the stream's device,
/// valid until the block is freed.
///
/// ```
/// use ascendcl::{Allocator, DeviceBuffer, MallocPolicy, Device};
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// /// Device buffers, counted.
/// struct Counting { device: Device, allocs: AtomicUsize }
///
/// impl Allocator for Counting {
///     type Block = DeviceBuffer<u8>;
///     fn alloc(&self, size: usize) -> Option<DeviceBuffer<u8>> {
///         self.allocs.fetch_add(1, Ordering::Relaxed);
///         DeviceBuffer::zeroed(&self.device, size, MallocPolicy::HugeFirst).ok()
///     }
///     fn free(&self, block: DeviceBuffer<u8>) {
///         drop(block);
///     }
///     fn address(block: &DeviceBuffer<u8>) -> *mut std::ffi::c_void {
///         block.as_ptr().cast_mut().cast()
///     }
/// }
///
/// # let rt = ascendcl::Runtime::new()?;
/// let device = rt.device(0)?;
/// let stream = device.create_stream()?;
/// let reg = stream.register_allocator(Counting { device: device.clone(), allocs: AtomicUsize::new(0) })?;
/// // What an executor does: read the registration, allocate, use the address, free.
/// let executor = reg.query()?;
/// let block = executor.alloc(256).expect("a block");
/// assert!(!block.address().is_null());
/// block.free();
/// assert_eq!(reg.allocator().allocs.load(Ordering::Relaxed), 1);
/// reg.unregister()?;
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub trait Allocator: Send + Sync + 'static {
    /// A block of memory handed to an executor.
    type Block: Send + 'static;

    /// Allocates at least `size` bytes; `None` when it cannot (the executor sees NULL).
    fn alloc(&self, size: usize) -> Option<Self::Block>;

    /// Takes back a block the executor is done with.
    fn free(&self, block: Self::Block);

    /// Allocates at least `size` bytes, preferably at `hint` (an address of an earlier block
    /// the executor would like to reuse, or NULL). The default ignores the hint.
    fn alloc_advise(&self, size: usize, hint: *mut c_void) -> Option<Self::Block> {
        let _ = hint;
        self.alloc(size)
    }

    /// The device address of a block.
    fn address(block: &Self::Block) -> *mut c_void;
}

/// What the runtime's allocator object names: the allocator while registered, and the first
/// panic of a callback.
struct Slot<A> {
    allocator: Mutex<Option<Arc<A>>>,
    panic: Mutex<Option<String>>,
}

impl<A: Allocator> Slot<A> {
    /// Runs `f` with the allocator, catching panics; `None` when unregistered or panicked.
    fn with<R>(&self, f: impl FnOnce(&A) -> R) -> Option<R> {
        let a = self
            .allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        match catch_unwind(AssertUnwindSafe(|| f(&a))) {
            Ok(r) => Some(r),
            Err(p) => {
                let message = panic_message(&*p);
                // A payload whose own Drop panics must not unwind into C either.
                let _ = catch_unwind(AssertUnwindSafe(move || drop(p)));
                self.panic
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(message);
                None
            }
        }
    }
}

/// A block as the runtime sees it: a boxed [`Allocator::Block`].
fn into_raw<B>(block: Option<B>) -> sys::aclrtAllocatorBlock {
    block.map_or(null_mut(), |b| Box::into_raw(Box::new(b)).cast())
}

/// The live registrations, by number: the number is the allocator object the runtime holds.
static SLOTS: LazyLock<Mutex<HashMap<usize, Arc<dyn Any + Send + Sync>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The next registration number (never 0, so that no object is NULL).
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(1);

/// The object the runtime holds for registration number `id`.
fn object(id: usize) -> sys::aclrtAllocator {
    std::ptr::without_provenance_mut(id)
}

/// The slot of the registration the runtime's object `obj` names; `None` once unregistered (or
/// for an object that is not one of this module's registrations of `A`).
fn slot<A: Allocator>(obj: sys::aclrtAllocator) -> Option<Arc<Slot<A>>> {
    let slots = SLOTS.lock().unwrap_or_else(PoisonError::into_inner);
    let any = Arc::clone(slots.get(&obj.addr())?);
    drop(slots);
    any.downcast::<Slot<A>>().ok()
}

unsafe extern "C" fn alloc_fn<A: Allocator>(
    obj: sys::aclrtAllocator,
    size: usize,
) -> sys::aclrtAllocatorBlock {
    slot::<A>(obj)
        .and_then(|s| s.with(|a| into_raw(a.alloc(size))))
        .unwrap_or(null_mut())
}

unsafe extern "C" fn advise_fn<A: Allocator>(
    obj: sys::aclrtAllocator,
    size: usize,
    hint: sys::aclrtAllocatorAddr,
) -> sys::aclrtAllocatorBlock {
    slot::<A>(obj)
        .and_then(|s| s.with(|a| into_raw(a.alloc_advise(size, hint))))
        .unwrap_or(null_mut())
}

unsafe extern "C" fn free_fn<A: Allocator>(
    obj: sys::aclrtAllocator,
    block: sys::aclrtAllocatorBlock,
) {
    if block.is_null() {
        return;
    }
    // SAFETY: the executor hands back, once, a block `alloc_fn` or `advise_fn` boxed.
    let b = unsafe { Box::from_raw(block.cast::<A::Block>()) };
    // Unregistered: the block is dropped here. A panic of `free` is kept by `with`; a panic of
    // the block's own drop must not unwind into C either.
    match slot::<A>(obj) {
        Some(s) => {
            let _ = s.with(|a| a.free(*b));
        }
        None => {
            let _ = catch_unwind(AssertUnwindSafe(move || drop(b)));
        }
    }
}

unsafe extern "C" fn address_fn<A: Allocator>(
    block: sys::aclrtAllocatorBlock,
) -> sys::aclrtAllocatorAddr {
    if block.is_null() {
        return null_mut();
    }
    // SAFETY: a live block boxed by `alloc_fn` or `advise_fn` (the executor's contract).
    let b = unsafe { &*block.cast_const().cast::<A::Block>() };
    catch_unwind(AssertUnwindSafe(|| A::address(b))).unwrap_or(null_mut())
}

/// Serialises registrations made by this crate, so that the check for an earlier registration
/// and the registration itself are one step.
static REGISTRY: Mutex<()> = Mutex::new(());

/// An [`Allocator`] registered on a stream (`aclrtAllocatorRegister`), unregistered when dropped
/// (`aclrtAllocatorUnregister`). Holds the stream (which stays alive), the allocator and the
/// descriptor (`aclrtAllocatorDesc`, destroyed after the unregistration).
///
/// `Send + Sync` like the allocator.
pub struct AllocatorRegistration<A: Allocator> {
    allocator: Arc<A>,
    slot: Arc<Slot<A>>,
    /// The registration's number in [`SLOTS`] (the object the runtime holds).
    id: usize,
    desc: sys::aclrtAllocatorDesc,
    stream: Stream,
    registered: bool,
}

// SAFETY: the descriptor is a runtime handle used only by the registration's own calls (under
// REGISTRY for the registration state); the allocator is Send + Sync.
unsafe impl<A: Allocator> Send for AllocatorRegistration<A> {}
// SAFETY: `&self` methods read the registration through the runtime, which synchronises it.
unsafe impl<A: Allocator> Sync for AllocatorRegistration<A> {}

impl<A: Allocator> std::fmt::Debug for AllocatorRegistration<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllocatorRegistration")
            .field("desc", &self.desc)
            .field("stream", &self.stream.as_raw())
            .field("registered", &self.registered)
            .finish_non_exhaustive()
    }
}

impl Stream {
    /// Registers `allocator` for the operator executors that run on this stream
    /// (`aclrtAllocatorCreateDesc`, `aclrtAllocatorSet*ToDesc`, `aclrtAllocatorRegister`).
    ///
    /// The runtime keeps one allocator per stream (the last registration wins); this crate
    /// refuses a second registration on a stream that has one ([`Error::Argument`]), so that
    /// dropping one registration never removes another's.
    pub fn register_allocator<A: Allocator>(
        &self,
        allocator: A,
    ) -> Result<AllocatorRegistration<A>> {
        const API: &str = "aclrtAllocatorRegister";
        let _g = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        self.make_current()?;
        if registered_desc(self)?.is_some() {
            return Err(Error::argument(
                API,
                "the stream already has an allocator registered (unregister it first)",
            ));
        }
        let desc = raw::aclrtAllocatorCreateDesc();
        if desc.is_null() {
            return Err(Error::argument(
                "aclrtAllocatorCreateDesc",
                "the runtime could not create an allocator descriptor",
            ));
        }
        let allocator = Arc::new(allocator);
        let slot = Arc::new(Slot {
            allocator: Mutex::new(Some(Arc::clone(&allocator))),
            panic: Mutex::new(None),
        });
        let id = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
        SLOTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Arc::clone(&slot) as Arc<dyn Any + Send + Sync>);
        let obj = object(id);
        // SAFETY: a live descriptor; the object is a number the callbacks look up (never
        // dereferenced) and the functions match the C signatures and treat their arguments as
        // documented above.
        let set = unsafe {
            raw::aclrtAllocatorSetObjToDesc(desc, obj)
                .and_then(|()| raw::aclrtAllocatorSetAllocFuncToDesc(desc, Some(alloc_fn::<A>)))
                .and_then(|()| raw::aclrtAllocatorSetFreeFuncToDesc(desc, Some(free_fn::<A>)))
                .and_then(|()| {
                    raw::aclrtAllocatorSetAllocAdviseFuncToDesc(desc, Some(advise_fn::<A>))
                })
                .and_then(|()| {
                    raw::aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, Some(address_fn::<A>))
                })
                .and_then(|()| raw::aclrtAllocatorRegister(self.as_raw(), desc))
        };
        if let Err(e) = set {
            forget_slot(id);
            // SAFETY: the descriptor was created above and is registered nowhere.
            crate::drop_errors::report(unsafe { raw::aclrtAllocatorDestroyDesc(desc) });
            return Err(e);
        }
        Ok(AllocatorRegistration {
            allocator,
            slot,
            id,
            desc,
            stream: self.clone(),
            registered: true,
        })
    }

    /// Whether an allocator is registered for this stream (`aclrtAllocatorGetByStream`), by
    /// this crate or by other code: its descriptor's address, or `None`.
    pub fn registered_allocator(&self) -> Result<Option<usize>> {
        self.make_current()?;
        Ok(registered_desc(self)?.map(|d| d.desc as usize))
    }
}

/// What `aclrtAllocatorGetByStream` reports for a stream.
struct Registered {
    desc: sys::aclrtAllocatorDesc,
    obj: sys::aclrtAllocator,
    alloc: sys::aclrtAllocatorAllocFunc,
    free: sys::aclrtAllocatorFreeFunc,
    advise: sys::aclrtAllocatorAllocAdviseFunc,
    address: sys::aclrtAllocatorGetAddrFromBlockFunc,
}

/// The stream's registration, `None` when it has none. The runtime answers "none" with
/// `ACL_ERROR_INVALID_PARAM`, like a NULL argument, which this call never passes.
fn registered_desc(stream: &Stream) -> Result<Option<Registered>> {
    let mut r = Registered {
        desc: null_mut(),
        obj: null_mut(),
        alloc: None,
        free: None,
        advise: None,
        address: None,
    };
    // SAFETY: a live stream and valid out-pointers.
    let got = unsafe {
        raw::aclrtAllocatorGetByStream(
            stream.as_raw(),
            &mut r.desc,
            &mut r.obj,
            &mut r.alloc,
            &mut r.free,
            &mut r.advise,
            &mut r.address,
        )
    };
    match got {
        Ok(()) => Ok(Some(r)),
        Err(e) if e.code() == Some(sys::AclError::INVALID_PARAM) => Ok(None),
        Err(e) => Err(e),
    }
}

impl<A: Allocator> AllocatorRegistration<A> {
    /// The registered allocator.
    pub fn allocator(&self) -> &A {
        &self.allocator
    }

    /// The stream it is registered on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The descriptor's address (`aclrtAllocatorDesc`), as `aclrtAllocatorGetByStream` reports
    /// it.
    pub fn desc_addr(&self) -> usize {
        self.desc as usize
    }

    /// Reads the stream's registration back from the runtime (`aclrtAllocatorGetByStream`) and
    /// checks that it is this one; the result calls the callbacks the runtime reports, as an
    /// executor does.
    pub fn query(&self) -> Result<RegisteredAllocator<'_>> {
        const API: &str = "aclrtAllocatorGetByStream";
        self.stream.make_current()?;
        let r = registered_desc(&self.stream)?
            .ok_or_else(|| Error::argument(API, "the stream has no allocator registered"))?;
        let ours = object(self.id);
        let (Some(alloc), Some(free), Some(address)) = (r.alloc, r.free, r.address) else {
            return Err(Error::argument(API, "the registration lacks a function"));
        };
        if r.obj != ours || r.desc != self.desc {
            return Err(Error::argument(
                API,
                "the stream's registration is not this allocator's",
            ));
        }
        Ok(RegisteredAllocator {
            desc: r.desc,
            obj: r.obj,
            alloc,
            free,
            advise: r.advise,
            address,
            _registration: PhantomData,
        })
    }

    /// The first panic of a callback since the last call, as [`Error::CallbackPanicked`].
    pub fn take_panic(&self) -> Option<Error> {
        take_panic(&self.slot)
    }

    fn unregister_inner(&mut self) -> Result<()> {
        if !self.registered {
            return Ok(());
        }
        let _g = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        self.stream.make_current()?;
        // SAFETY: a live stream (held by the registration).
        unsafe { raw::aclrtAllocatorUnregister(self.stream.as_raw()) }?;
        self.registered = false;
        forget_slot(self.id);
        // SAFETY: the descriptor created by `register_allocator`, destroyed once (the runtime
        // kept a copy of it while registered).
        unsafe { raw::aclrtAllocatorDestroyDesc(self.desc) }
    }

    /// Unregisters the allocator (`aclrtAllocatorUnregister`, `aclrtAllocatorDestroyDesc`).
    /// A panic of a callback while it was registered is reported as
    /// [`Error::CallbackPanicked`] (it is unregistered all the same). When the runtime refuses,
    /// the drop of this value tries again.
    pub fn unregister(mut self) -> Result<()> {
        self.unregister_inner()?;
        take_panic(&self.slot).map_or(Ok(()), Err)
    }
}

/// Removes registration `id` from [`SLOTS`]: later callbacks find no allocator.
fn forget_slot(id: usize) {
    let gone = SLOTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&id);
    // The slot (and possibly the allocator, when the registration is gone too) drops outside
    // the lock.
    drop(gone);
}

fn take_panic<A>(slot: &Slot<A>) -> Option<Error> {
    let message = slot
        .panic
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()?;
    Some(Error::CallbackPanicked {
        what: "user allocator",
        message,
    })
}

impl<A: Allocator> Drop for AllocatorRegistration<A> {
    fn drop(&mut self) {
        let r = self.unregister_inner();
        crate::drop_errors::report(r);
    }
}

/// A stream's allocator as the runtime reports it (`aclrtAllocatorGetByStream`), checked to be
/// an [`AllocatorRegistration`] of this crate: calls its callbacks as an operator executor does.
/// Borrows the registration.
pub struct RegisteredAllocator<'r> {
    desc: sys::aclrtAllocatorDesc,
    obj: sys::aclrtAllocator,
    alloc: unsafe extern "C" fn(sys::aclrtAllocator, usize) -> sys::aclrtAllocatorBlock,
    free: unsafe extern "C" fn(sys::aclrtAllocator, sys::aclrtAllocatorBlock),
    advise: sys::aclrtAllocatorAllocAdviseFunc,
    address: unsafe extern "C" fn(sys::aclrtAllocatorBlock) -> sys::aclrtAllocatorAddr,
    _registration: PhantomData<&'r ()>,
}

impl std::fmt::Debug for RegisteredAllocator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredAllocator")
            .field("desc", &self.desc)
            .field("obj", &self.obj)
            .field("advise", &self.advise.is_some())
            .finish_non_exhaustive()
    }
}

impl RegisteredAllocator<'_> {
    /// The descriptor's address, as the runtime reports it.
    pub fn desc_addr(&self) -> usize {
        self.desc as usize
    }

    /// Whether an alloc-advise function is registered.
    pub fn has_advise(&self) -> bool {
        self.advise.is_some()
    }

    /// Calls the registered alloc function: `None` when it returned NULL.
    pub fn alloc(&self, size: usize) -> Option<ExecutorBlock<'_>> {
        // SAFETY: the object and function are this crate's registration (checked by `query`),
        // which accepts any size.
        let b = unsafe { (self.alloc)(self.obj, size) };
        self.block(b)
    }

    /// Calls the registered alloc-advise function with an address hint (falling back to the
    /// alloc function when none is registered, as executors do): `None` when it returned NULL.
    // The hint is a value handed to `Allocator::alloc_advise`, never dereferenced here (safe code
    // cannot dereference it there either).
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn alloc_advise(&self, size: usize, hint: *mut c_void) -> Option<ExecutorBlock<'_>> {
        let Some(advise) = self.advise else {
            return self.alloc(size);
        };
        // SAFETY: as for `alloc`; the hint is only passed on, never dereferenced.
        let b = unsafe { advise(self.obj, size, hint) };
        self.block(b)
    }

    fn block(&self, raw: sys::aclrtAllocatorBlock) -> Option<ExecutorBlock<'_>> {
        (!raw.is_null()).then_some(ExecutorBlock { raw, owner: self })
    }
}

/// A block an executor holds (from [`RegisteredAllocator::alloc`]): freed through the registered
/// free function by [`ExecutorBlock::free`] or when dropped.
pub struct ExecutorBlock<'a> {
    raw: sys::aclrtAllocatorBlock,
    owner: &'a RegisteredAllocator<'a>,
}

impl std::fmt::Debug for ExecutorBlock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorBlock")
            .field("raw", &self.raw)
            .finish()
    }
}

impl ExecutorBlock<'_> {
    /// The block's device address (the registered get-address function); NULL when the
    /// allocator's `address` panicked.
    pub fn address(&self) -> *mut c_void {
        // SAFETY: a live block of this registration.
        unsafe { (self.owner.address)(self.raw) }
    }

    /// Gives the block back (the registered free function).
    pub fn free(self) {
        drop(self);
    }
}

impl Drop for ExecutorBlock<'_> {
    fn drop(&mut self) {
        // SAFETY: a live block of this registration, freed once (here).
        unsafe { (self.owner.free)(self.owner.obj, self.raw) };
    }
}
