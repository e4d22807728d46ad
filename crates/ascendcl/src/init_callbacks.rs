//! Rust closures run by `aclInit` and `aclFinalize` ([`InitCallback`], [`FinalizeCallback`]):
//! the runtime's callback registry for libraries layered on it (`aclInitCallbackRegister`,
//! `aclFinalizeCallbackRegister`), each kind of library a [`CallbackKind`].
//!
//! The runtime tells registrations apart by their C function, so each live registration gets a
//! trampoline of its own from a fixed pool; panics are caught in the trampoline and never
//! unwind into C.

use crate::error::{Error, Result};
use crate::host_fn;
use crate::raw;
use crate::raw_enum::raw_enum;
use ascendcl_sys::{self as sys, AclError};
use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

raw_enum! {
    /// Which library a callback belongs to (`aclRegisterCallbackType`). `aclInit` runs the
    /// init callbacks of [`Model`](CallbackKind::Model), then (with a configuration file)
    /// [`OpExecutor`](CallbackKind::OpExecutor), then [`Dvpp`](CallbackKind::Dvpp), then
    /// [`Other`](CallbackKind::Other); `aclFinalize` the finalize callbacks of
    /// [`OpCompiler`](CallbackKind::OpCompiler), [`Model`](CallbackKind::Model),
    /// [`Dvpp`](CallbackKind::Dvpp) and [`Other`](CallbackKind::Other). Each kind holds one
    /// callback of each sort, except [`Other`](CallbackKind::Other), which holds any number.
    pub enum CallbackKind: sys::aclRegisterCallbackType {
        /// `ACL_REG_TYPE_ACL_MODEL`
        Model = sys::ACL_REG_TYPE_ACL_MODEL,
        /// `ACL_REG_TYPE_ACL_OP_EXECUTOR`
        OpExecutor = sys::ACL_REG_TYPE_ACL_OP_EXECUTOR,
        /// `ACL_REG_TYPE_ACL_OP_CBLAS`
        OpCblas = sys::ACL_REG_TYPE_ACL_OP_CBLAS,
        /// `ACL_REG_TYPE_ACL_OP_COMPILER`
        OpCompiler = sys::ACL_REG_TYPE_ACL_OP_COMPILER,
        /// `ACL_REG_TYPE_ACL_TDT_CHANNEL`
        TdtChannel = sys::ACL_REG_TYPE_ACL_TDT_CHANNEL,
        /// `ACL_REG_TYPE_ACL_TDT_QUEUE`
        TdtQueue = sys::ACL_REG_TYPE_ACL_TDT_QUEUE,
        /// `ACL_REG_TYPE_ACL_DVPP`
        Dvpp = sys::ACL_REG_TYPE_ACL_DVPP,
        /// `ACL_REG_TYPE_ACL_RETR`
        Retr = sys::ACL_REG_TYPE_ACL_RETR,
        /// `ACL_REG_TYPE_OTHER`: any number of callbacks.
        Other = sys::ACL_REG_TYPE_OTHER,
    }
}

/// How many init callbacks (and, separately, finalize callbacks) this crate can have
/// registered at once.
pub const MAX_LIFECYCLE_CALLBACKS: usize = 8;

type InitFn = dyn Fn(&str) -> std::result::Result<(), AclError> + Send + Sync + 'static;
type FinalizeFn = dyn Fn() -> std::result::Result<(), AclError> + Send + Sync + 'static;

/// One trampoline's closure (None while free) and the first panic it raised.
struct Slot<F: ?Sized> {
    f: Option<Arc<F>>,
    /// Taken by a registration (between choosing the slot and registering it).
    taken: bool,
    panic: Option<String>,
}

impl<F: ?Sized> Slot<F> {
    const FREE: Self = Slot {
        f: None,
        taken: false,
        panic: None,
    };
}

static INIT_SLOTS: [Mutex<Slot<InitFn>>; MAX_LIFECYCLE_CALLBACKS] =
    [const { Mutex::new(Slot::FREE) }; MAX_LIFECYCLE_CALLBACKS];
static FINALIZE_SLOTS: [Mutex<Slot<FinalizeFn>>; MAX_LIFECYCLE_CALLBACKS] =
    [const { Mutex::new(Slot::FREE) }; MAX_LIFECYCLE_CALLBACKS];

fn lock<F: ?Sized>(m: &Mutex<Slot<F>>) -> std::sync::MutexGuard<'_, Slot<F>> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The code a callback's `Err` (or panic) gives the runtime: never success.
fn failure_code(e: AclError) -> sys::aclError {
    if e == AclError::SUCCESS {
        AclError::FAILURE.code()
    } else {
        e.code()
    }
}

fn run_init(i: usize, cfg: *const c_char, len: usize) -> sys::aclError {
    run_caught(&INIT_SLOTS[i], |f| {
        let text = if cfg.is_null() || len == 0 {
            String::new()
        } else {
            // SAFETY: the runtime passes the configuration text and its length for the call.
            let bytes = unsafe { std::slice::from_raw_parts(cfg.cast::<u8>(), len) };
            String::from_utf8_lossy(bytes).into_owned()
        };
        f(&text)
    })
}

fn run_finalize(i: usize) -> sys::aclError {
    run_caught(&FINALIZE_SLOTS[i], |f| f())
}

/// Runs the closure of `slot` through `call` (success when the slot is free), keeping the first
/// panic in the slot: the code for the runtime, never an unwind.
fn run_caught<F: ?Sized>(
    slot: &Mutex<Slot<F>>,
    call: impl FnOnce(&F) -> std::result::Result<(), AclError>,
) -> sys::aclError {
    let Some(f) = lock(slot).f.clone() else {
        return AclError::SUCCESS.code();
    };
    match catch_unwind(AssertUnwindSafe(|| call(&f))) {
        Ok(Ok(())) => AclError::SUCCESS.code(),
        Ok(Err(e)) => failure_code(e),
        Err(p) => {
            let message = host_fn::panic_message(&*p);
            lock(slot).panic.get_or_insert(message);
            AclError::FAILURE.code()
        }
    }
}

macro_rules! trampolines {
    ($($i:literal),*) => {
        /// One init trampoline per slot: the runtime identifies a registration by its function.
        static INIT_TRAMPOLINES: [unsafe extern "C" fn(*const c_char, usize, *mut c_void) -> sys::aclError;
            MAX_LIFECYCLE_CALLBACKS] = [$({
                unsafe extern "C" fn t(cfg: *const c_char, len: usize, _: *mut c_void) -> sys::aclError {
                    run_init($i, cfg, len)
                }
                t
            }),*];
        /// One finalize trampoline per slot.
        static FINALIZE_TRAMPOLINES: [unsafe extern "C" fn(*mut c_void) -> sys::aclError;
            MAX_LIFECYCLE_CALLBACKS] = [$({
                unsafe extern "C" fn t(_: *mut c_void) -> sys::aclError {
                    run_finalize($i)
                }
                t
            }),*];
    };
}

trampolines!(0, 1, 2, 3, 4, 5, 6, 7);

/// An error when no backend is installed (the runtime's functions are not there to call).
fn no_backend_yet(api: &'static str) -> Result<()> {
    if ascendcl_sys::active().is_some() {
        return Ok(());
    }
    Err(Error::argument(
        api,
        "no backend is installed yet: call ascendcl::install_backend first (Runtime::new does \
         too, but runs aclInit)",
    ))
}

/// Takes a free slot and puts `f` in it; the slot's index.
fn take_slot<F: ?Sized>(slots: &[Mutex<Slot<F>>], f: Arc<F>, api: &'static str) -> Result<usize> {
    for (i, m) in slots.iter().enumerate() {
        let mut s = lock(m);
        if !s.taken {
            *s = Slot {
                f: Some(f),
                taken: true,
                panic: None,
            };
            return Ok(i);
        }
    }
    Err(Error::argument(
        api,
        format!("at most {MAX_LIFECYCLE_CALLBACKS} such callbacks can be registered at once"),
    ))
}

fn free_slot<F: ?Sized>(m: &Mutex<Slot<F>>) -> Option<String> {
    let mut s = lock(m);
    let panic = s.panic.take();
    *s = Slot::FREE;
    panic
}

/// Takes a slot of `slots` for `f` and registers its trampoline with `register`; the slot goes
/// free again when the runtime refuses. The slot's index.
fn register_slot<F: ?Sized, T: Copy>(
    slots: &[Mutex<Slot<F>>],
    trampolines: &[T],
    f: Arc<F>,
    api: &'static str,
    register: impl FnOnce(T) -> Result<()>,
) -> Result<usize> {
    let slot = take_slot(slots, f, api)?;
    if let Err(e) = register(trampolines[slot]) {
        free_slot(&slots[slot]);
        return Err(e);
    }
    Ok(slot)
}

/// Unregisters a registration once (`unregister` makes the C call) and frees its slot: the
/// panic its closure raised, if any. A refused call leaves it registered.
fn unregister_slot<F: ?Sized>(
    registered: &mut bool,
    slot: &Mutex<Slot<F>>,
    unregister: impl FnOnce() -> Result<()>,
) -> Result<Option<String>> {
    if !*registered {
        return Ok(None);
    }
    unregister()?;
    *registered = false;
    // A call already running holds its own reference to the closure.
    Ok(free_slot(slot))
}

/// The outcome of an explicit unregistration: the panic its closure raised, as
/// [`Error::CallbackPanicked`] of `what`.
fn panicked(what: &'static str, panic: Option<String>) -> Result<()> {
    match panic {
        None => Ok(()),
        Some(message) => Err(Error::CallbackPanicked { what, message }),
    }
}

/// A closure that `aclInit` runs (`aclInitCallbackRegister`), with the text of the
/// configuration file `aclInit` was given (empty without one), until this is dropped or
/// [`unregister`]ed (`aclInitCallbackUnRegister`).
///
/// Registered while the runtime is initialised, the closure runs at once (on this thread,
/// during [`register`]). An `Err` from the closure makes `aclInit` fail with that code; a panic
/// is caught at the FFI boundary, fails `aclInit` with `ACL_ERROR_FAILURE` and is reported by
/// [`unregister`]. The closure runs while the runtime initialises: it must not create or end a
/// [`Runtime`](crate::Runtime). The runtime must be loaded first
/// ([`install_backend`](crate::install_backend)) to register before the first `aclInit`.
///
/// [`register`]: InitCallback::register
/// [`unregister`]: InitCallback::unregister
#[derive(Debug)]
pub struct InitCallback {
    kind: CallbackKind,
    slot: usize,
    registered: bool,
}

impl InitCallback {
    /// Registers `f` for `kind`. A second callback of a kind other than
    /// [`CallbackKind::Other`] is refused by the runtime.
    pub fn register<F>(kind: CallbackKind, f: F) -> Result<InitCallback>
    where
        F: Fn(&str) -> std::result::Result<(), AclError> + Send + Sync + 'static,
    {
        const API: &str = "aclInitCallbackRegister";
        no_backend_yet(API)?;
        let slot = register_slot(&INIT_SLOTS, &INIT_TRAMPOLINES, Arc::new(f), API, |t| {
            // SAFETY: the trampoline matches the C signature and lives for the whole program;
            // it takes no argument of ours.
            unsafe { raw::aclInitCallbackRegister(kind.into(), Some(t), std::ptr::null_mut()) }
        })?;
        Ok(InitCallback {
            kind,
            slot,
            registered: true,
        })
    }

    /// The kind it was registered for.
    pub fn kind(&self) -> CallbackKind {
        self.kind
    }

    fn unregister_inner(&mut self) -> Result<Option<String>> {
        let (kind, t) = (self.kind.into(), INIT_TRAMPOLINES[self.slot]);
        unregister_slot(&mut self.registered, &INIT_SLOTS[self.slot], || {
            // SAFETY: the trampoline registered by `register` for this kind.
            unsafe { raw::aclInitCallbackUnRegister(kind, Some(t)) }
        })
    }

    /// Unregisters the closure. A panic it raised while registered is reported as
    /// [`Error::CallbackPanicked`] (it is unregistered all the same). When the runtime refuses,
    /// the registration stays and the drop of this value tries again.
    pub fn unregister(mut self) -> Result<()> {
        panicked("init callback", self.unregister_inner()?)
    }
}

impl Drop for InitCallback {
    fn drop(&mut self) {
        crate::drop_errors::report(self.unregister_inner().map(drop));
    }
}

/// A closure that `aclFinalize` runs (`aclFinalizeCallbackRegister`), until this is dropped or
/// [`unregister`]ed (`aclFinalizeCallbackUnRegister`).
///
/// An `Err` from the closure makes `aclFinalize` fail with that code, and the runtime stays
/// initialised; a panic is caught at the FFI boundary, fails `aclFinalize` with
/// `ACL_ERROR_FAILURE` and is reported by [`unregister`]. The closure runs while the runtime
/// finalises: it must not create or end a [`Runtime`](crate::Runtime).
///
/// [`unregister`]: FinalizeCallback::unregister
#[derive(Debug)]
pub struct FinalizeCallback {
    kind: CallbackKind,
    slot: usize,
    registered: bool,
}

impl FinalizeCallback {
    /// Registers `f` for `kind`. A second callback of a kind other than
    /// [`CallbackKind::Other`] is refused by the runtime.
    pub fn register<F>(kind: CallbackKind, f: F) -> Result<FinalizeCallback>
    where
        F: Fn() -> std::result::Result<(), AclError> + Send + Sync + 'static,
    {
        const API: &str = "aclFinalizeCallbackRegister";
        no_backend_yet(API)?;
        let slot = register_slot(
            &FINALIZE_SLOTS,
            &FINALIZE_TRAMPOLINES,
            Arc::new(f),
            API,
            |t| {
                // SAFETY: as for `InitCallback::register`.
                unsafe {
                    raw::aclFinalizeCallbackRegister(kind.into(), Some(t), std::ptr::null_mut())
                }
            },
        )?;
        Ok(FinalizeCallback {
            kind,
            slot,
            registered: true,
        })
    }

    /// The kind it was registered for.
    pub fn kind(&self) -> CallbackKind {
        self.kind
    }

    fn unregister_inner(&mut self) -> Result<Option<String>> {
        let (kind, t) = (self.kind.into(), FINALIZE_TRAMPOLINES[self.slot]);
        unregister_slot(&mut self.registered, &FINALIZE_SLOTS[self.slot], || {
            // SAFETY: the trampoline registered by `register` for this kind.
            unsafe { raw::aclFinalizeCallbackUnRegister(kind, Some(t)) }
        })
    }

    /// Unregisters the closure, reporting a panic it raised as [`Error::CallbackPanicked`].
    /// When the runtime refuses, the registration stays and the drop of this value tries again.
    pub fn unregister(mut self) -> Result<()> {
        panicked("finalize callback", self.unregister_inner()?)
    }
}

impl Drop for FinalizeCallback {
    fn drop(&mut self) {
        crate::drop_errors::report(self.unregister_inner().map(drop));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This unit-test binary installs no backend: registering is an error, not a panic.
    #[test]
    fn registering_before_any_backend_is_an_error() {
        assert!(ascendcl_sys::active().is_none());
        let e = InitCallback::register(CallbackKind::Other, |_| Ok(())).unwrap_err();
        assert!(matches!(e, Error::Argument { .. }), "{e}");
        let e = FinalizeCallback::register(CallbackKind::Other, || Ok(())).unwrap_err();
        assert!(matches!(e, Error::Argument { .. }), "{e}");
    }
}
