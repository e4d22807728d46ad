//! The process-wide runtime: backend choice, `aclInit`/`aclFinalize`, backend information.
//!
//! [`Runtime`] is a cheap, clonable handle. The first handle of a process (or the first after
//! every handle was dropped) installs the backend and calls `aclInit`; the last one to go calls
//! `aclFinalize`. Every open [`Device`] holds a `Runtime` handle, and every stream, event and
//! buffer holds its device, so `aclFinalize` runs only after the last of them is gone. Threads
//! create their own handles (or clone one: `Runtime` is `Send + Sync`) and share the one
//! initialisation.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::release::{ReleaseError, ReleaseResult};
use ascendcl_sys as sys;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;

pub use ascendcl_sys::{BackendKind, Choice as BackendChoice, LoadError, LoadFailure};

/// The live `Runtime` handles, and the thread running `aclInit` or `aclFinalize`, if any.
/// `aclInit` runs at 0 → 1 handles, `aclFinalize` at 1 → 0. The lock is never held across
/// either call: the init and finalize callbacks they run may ask for the count (or try to make
/// a handle, which is refused on that thread rather than waiting for itself).
struct Handles {
    count: usize,
    busy: Option<ThreadId>,
}

static HANDLES: Mutex<Handles> = Mutex::new(Handles {
    count: 0,
    busy: None,
});
/// Signalled when `aclInit` or `aclFinalize` has returned.
static IDLE: Condvar = Condvar::new();

fn handles() -> MutexGuard<'static, Handles> {
    HANDLES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Waits until no thread is in `aclInit` or `aclFinalize`; an error on the thread that is (an
/// init or finalize callback), which would wait for itself.
fn settled(api: &'static str) -> Result<MutexGuard<'static, Handles>> {
    let me = std::thread::current().id();
    let mut g = handles();
    while let Some(t) = g.busy {
        if t == me {
            return Err(Error::argument(
                api,
                "called from an init or finalize callback, while aclInit or aclFinalize runs on \
                 this thread",
            ));
        }
        g = IDLE.wait(g).unwrap_or_else(|p| p.into_inner());
    }
    Ok(g)
}

/// Runs `aclInit` or `aclFinalize` (`call`) with the lock released and this thread marked busy.
fn transition<T>(
    mut g: MutexGuard<'static, Handles>,
    call: impl FnOnce() -> Result<T>,
) -> (MutexGuard<'static, Handles>, Result<T>) {
    g.busy = Some(std::thread::current().id());
    drop(g);
    let r = call();
    let mut g = handles();
    g.busy = None;
    IDLE.notify_all();
    (g, r)
}

/// A handle on the initialised runtime (`aclInit` … `aclFinalize`).
///
/// Cheap to clone, `Send + Sync`. The first handle of the process initialises the runtime, the
/// last one to be dropped finalises it; a later handle initialises it again (the emulator allows
/// it; for a runtime that does not, keep one handle alive, e.g. [`Runtime::global`]).
///
/// | operation | C function |
/// |---|---|
/// | [`Runtime::new`], [`Runtime::with_backend`] | backend load, `aclInit` |
/// | drop of the last handle, [`Runtime::finalize`] | `aclFinalize` |
/// | [`Runtime::device`] | `aclrtSetDevice` |
/// | [`Runtime::device_count`] | `aclrtGetDeviceCount` |
/// | [`Runtime::backend`] | `aclrtGetSocName`, `aclrtGetVersion` |
/// | [`Runtime::run_mode`] | `aclrtGetRunMode` |
#[derive(Debug)]
pub struct Runtime {
    _private: (),
}

impl Runtime {
    /// Initialises the runtime on the backend named by `ASCENDCL_BACKEND` (`cann`, `emulator`,
    /// `auto`; unset: CANN when found, else the emulator when compiled in).
    ///
    /// ```
    /// let rt = ascendcl::Runtime::new()?;
    /// let again = rt.clone(); // shares the one aclInit
    /// # drop(again);
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn new() -> Result<Runtime> {
        Runtime::with_backend(BackendChoice::from_env()?)
    }

    /// Initialises the runtime on an explicit backend. The backend of a process is chosen once:
    /// asking for a different one later is [`LoadError::AlreadyChosen`].
    pub fn with_backend(choice: BackendChoice) -> Result<Runtime> {
        install_backend(choice)?;
        let mut g = settled("aclInit")?;
        if g.count == 0 {
            // SAFETY: a NULL configuration path means "no configuration".
            let (back, r) = transition(g, || unsafe { raw::aclInit(std::ptr::null()) });
            g = back;
            match r {
                Ok(()) => {}
                // Someone else (raw FFI) initialised the runtime: share it.
                Err(e) if e.code() == Some(sys::AclError::REPEAT_INITIALIZE) => {}
                Err(e) => return Err(e),
            }
        }
        g.count += 1;
        Ok(Runtime { _private: () })
    }

    /// `aclrtGetDeviceCount`: how many devices the backend sees.
    pub fn device_count(&self) -> Result<u32> {
        // SAFETY: a valid out-pointer.
        raw::out(|n| unsafe { raw::aclrtGetDeviceCount(n) })
    }

    /// Opens device `id` (`aclrtSetDevice`) and makes its default context current on the calling
    /// thread. When the device is already open in the process, this is another handle on it (no
    /// second `aclrtSetDevice`). `aclrtResetDevice` runs when the last handle on the device —
    /// including the ones its streams, events and buffers hold — goes.
    pub fn device(&self, id: i32) -> Result<Device> {
        Device::open(self, id)
    }

    /// What the active backend is and what it found.
    pub fn backend(&self) -> BackendInfo {
        let active = sys::active();
        BackendInfo {
            kind: active.map(|b| b.kind),
            library: active.and_then(|b| b.library.clone()),
            description: active.map(|b| b.description.clone()).unwrap_or_default(),
            reason: active.map(|b| b.reason.clone()).unwrap_or_default(),
            missing: active.map(|b| b.missing.clone()).unwrap_or_default(),
            soc_name: self.soc_name().ok(),
            version: self.version().ok(),
        }
    }

    /// The SoC name (`aclrtGetSocName`, e.g. `Ascend910B2`); a NULL answer is an error carrying
    /// the thread's last error code and the runtime's message.
    pub fn soc_name(&self) -> Result<String> {
        let p = raw::aclrtGetSocName();
        if p.is_null() {
            if let Some(symbol) = sys::take_missing_symbol() {
                return Err(Error::MissingSymbol {
                    api: "aclrtGetSocName",
                    symbol,
                });
            }
            // The code of a NULL answer is the thread's last error (which this read clears);
            // `ACL_ERROR_FAILURE` when none was set or the backend lacks the function.
            let code = match raw::aclrtGetLastError(sys::ACL_RT_THREAD_LEVEL) {
                sys::AclError::FEATURE_NOT_SUPPORT if sys::take_missing_symbol().is_some() => {
                    sys::AclError::FAILURE
                }
                sys::AclError::SUCCESS => sys::AclError::FAILURE,
                code => code,
            };
            return Err(crate::error::failure("aclrtGetSocName", code.code()));
        }
        // SAFETY: non-NULL, so a static NUL-terminated string owned by the runtime.
        Ok(unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned())
    }

    /// The ACL version (`aclrtGetVersion`).
    pub fn version(&self) -> Result<AclVersion> {
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: three valid out-pointers to local integers.
        unsafe { raw::aclrtGetVersion(&mut major, &mut minor, &mut patch) }?;
        Ok(AclVersion {
            major,
            minor,
            patch,
        })
    }

    /// Where this program runs relative to the device (`aclrtGetRunMode`): on a host that
    /// drives it ([`RunMode::Host`], the usual case and the emulator's) or on the device's own
    /// CPU ([`RunMode::Device`]).
    ///
    /// ```
    /// # let rt = ascendcl::Runtime::new()?;
    /// let mode = rt.run_mode()?;
    /// println!("Current run mode: {mode}"); // ACL_HOST
    /// # Ok::<(), ascendcl::Error>(())
    /// ```
    pub fn run_mode(&self) -> Result<RunMode> {
        let mut mode: sys::aclrtRunMode = 0;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclrtGetRunMode(&mut mode) }?;
        RunMode::try_from(mode)
    }

    /// Releases this handle, calling `aclFinalize` when it was the last one (dropping does the
    /// same, reporting a failure through [`take_drop_errors`](crate::take_drop_errors)). Open
    /// devices hold handles too, so the runtime is finalised only after the last device is
    /// reset. When `aclFinalize` fails the runtime stays initialised and the handle comes back
    /// with the error ([`ReleaseError`]): retry, or drop it.
    pub fn finalize(self) -> ReleaseResult<(), Self> {
        let mut g = match settled("aclFinalize") {
            Ok(g) => g,
            Err(e) => return Err(ReleaseError::new(e, self)),
        };
        if g.count <= 1 {
            let (back, r) = transition(g, finalize_runtime);
            g = back;
            if let Err(e) = r {
                return Err(ReleaseError::new(e, self));
            }
        }
        g.count = g.count.saturating_sub(1);
        drop(g);
        std::mem::forget(self);
        Ok(())
    }

    /// A process-wide handle that is never dropped: the runtime stays initialised until the
    /// process exits (`aclFinalize` is then not called). Handy for programs and tests that open
    /// devices from many places, and for CANN versions that refuse `aclInit` after `aclFinalize`
    /// in one process. The backend comes from `ASCENDCL_BACKEND`, as for [`Runtime::new`].
    pub fn global() -> Result<&'static Runtime> {
        static GLOBAL: OnceLock<Runtime> = OnceLock::new();
        if let Some(r) = GLOBAL.get() {
            return Ok(r);
        }
        let r = Runtime::new()?;
        // A racing thread may have set it first; `r` is then dropped (one handle fewer).
        Ok(GLOBAL.get_or_init(|| r))
    }

    /// How many `Runtime` handles are alive in this process (each open device holds one).
    pub fn handle_count() -> usize {
        handles().count
    }
}

/// `aclFinalize`, called when the last handle goes.
fn finalize_runtime() -> Result<()> {
    // SAFETY: no arguments; called only when no safe handle is left.
    unsafe { raw::aclFinalize() }
}

fn release() -> Result<()> {
    // On the thread running aclInit or aclFinalize (a callback dropping a handle it held), the
    // count goes down without a second transition.
    let mut g = settled("aclFinalize").unwrap_or_else(|_| handles());
    g.count = g.count.saturating_sub(1);
    if g.count == 0 && g.busy.is_none() {
        transition(g, finalize_runtime).1
    } else {
        Ok(())
    }
}

impl Clone for Runtime {
    fn clone(&self) -> Self {
        handles().count += 1;
        Runtime { _private: () }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        crate::deferred::release(release);
    }
}

/// Installs the backend for `choice` (once per process) without initialising the runtime.
/// [`Runtime::new`] does this itself; call it to learn early which backend would be used.
pub fn install_backend(choice: BackendChoice) -> Result<&'static sys::Backend> {
    #[cfg(feature = "emulator")]
    let emulator: Option<fn() -> sys::Backend> = Some(ascendcl_emu::backend);
    #[cfg(not(feature = "emulator"))]
    let emulator: Option<fn() -> sys::Backend> = None;
    let r = choice.install(emulator).map_err(Error::from);
    trace_choice(&r);
    r
}

/// Reports the backend chosen, once per process, or why none could be.
#[cfg(feature = "tracing")]
fn trace_choice(r: &Result<&'static sys::Backend>) {
    static REPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    match r {
        Ok(b) if !REPORTED.swap(true, std::sync::atomic::Ordering::Relaxed) => {
            crate::trace::event!(
                INFO,
                backend = %b.kind,
                description = %b.description,
                library = ?b.library,
                reason = %b.reason,
                "backend chosen"
            );
        }
        Ok(_) => {}
        Err(e) => crate::trace::event!(ERROR, error = %e, "no backend could be chosen"),
    }
}

#[cfg(not(feature = "tracing"))]
#[inline(always)]
fn trace_choice(_: &Result<&'static sys::Backend>) {}

raw_enum! {
    /// Where the program runs relative to the device ([`Runtime::run_mode`], `aclrtRunMode`).
    /// Displayed as the C name (`ACL_HOST`, `ACL_DEVICE`).
    pub enum RunMode: sys::aclrtRunMode {
        /// `ACL_DEVICE`: on the device's own CPU (a program started on the device).
        Device = sys::ACL_DEVICE,
        /// `ACL_HOST`: on a host that drives the device (over PCIe, say).
        Host = sys::ACL_HOST,
    }
}

impl std::fmt::Display for RunMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunMode::Device => "ACL_DEVICE",
            RunMode::Host => "ACL_HOST",
        })
    }
}

/// The ACL version reported by `aclrtGetVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclVersion {
    /// Major version.
    pub major: i32,
    /// Minor version.
    pub minor: i32,
    /// Patch version.
    pub patch: i32,
}

impl std::fmt::Display for AclVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// What the active backend is and what it found ([`Runtime::backend`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackendInfo {
    /// CANN (loaded or linked), the emulator, or another in-process backend.
    pub kind: Option<BackendKind>,
    /// The runtime library loaded, for CANN.
    pub library: Option<PathBuf>,
    /// One line describing the backend.
    pub description: String,
    /// Why this backend was chosen: what was named (`ASCENDCL_BACKEND` or an explicit choice)
    /// and what discovery found, e.g. `no backend was named and no CANN install was found (22
    /// places tried)`.
    pub reason: String,
    /// Functions the backend lacks (calling them gives [`Error::MissingSymbol`]).
    pub missing: Vec<&'static str>,
    /// `aclrtGetSocName`, e.g. `Ascend910B2` (`None` when it failed: [`Runtime::soc_name`]
    /// tells why).
    pub soc_name: Option<String>,
    /// `aclrtGetVersion` (`None` when it failed: [`Runtime::version`] tells why).
    pub version: Option<AclVersion>,
}

impl BackendInfo {
    /// Whether the host emulator is active.
    pub fn is_emulator(&self) -> bool {
        self.kind == Some(BackendKind::Emulator)
    }
}
