//! The guard's fault handler (`SIGSEGV`): a kernel block's first touch of a region opens it
//! (page protection; the access is then retried); a host access to device memory is reported on
//! stderr, naming the allocation; every other fault goes to the handler that was installed
//! before (or to the default action, which ends the process).
//!
//! The handler is async-signal-safe: it allocates nothing, takes no blocking lock (the registry
//! with `try_read`), and calls only `mprotect`, `write` and `sigaction`.

use super::open;
use super::regions::{self, Found};
use std::ffi::{c_int, c_void};
use std::sync::{Once, OnceLock};

/// The disposition of `SIGSEGV` before the guard's handler was installed.
struct Previous(libc::sigaction);

// SAFETY: a plain C struct of integers and function addresses, written once and read after.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

static PREVIOUS: OnceLock<Previous> = OnceLock::new();

/// Installs the handler (once per process).
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sigaction with a zeroed (then filled in) structure and a handler of the
        // SA_SIGINFO signature; the previous disposition is written into `old`.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler as *const () as libc::sighandler_t;
            // On the alternate stack where the thread has one (a stack overflow must still
            // reach the runtime's own handler, to which this one chains).
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut new.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGSEGV, &new, &mut old) == 0 {
                let _ = PREVIOUS.set(Previous(old));
            }
        }
    });
}

/// Writes a message to stderr piece by piece: no allocation, no formatting machinery, little
/// stack (the handler may run on a thread's small alternate signal stack).
struct Stderr;

impl Stderr {
    fn text(&self, s: &str) -> &Self {
        // SAFETY: write(2) of a live buffer to stderr; async-signal-safe.
        unsafe { libc::write(2, s.as_ptr().cast(), s.len()) };
        self
    }

    fn hex(&self, v: usize) -> &Self {
        let mut b = [0u8; 18];
        let mut i = b.len();
        let mut v = v;
        loop {
            i -= 1;
            b[i] = b"0123456789abcdef"[v & 15];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        i -= 2;
        b[i] = b'0';
        b[i + 1] = b'x';
        self.text(std::str::from_utf8(&b[i..]).unwrap_or("?"))
    }

    fn dec(&self, v: usize) -> &Self {
        let mut b = [0u8; 20];
        let mut i = b.len();
        let mut v = v;
        loop {
            i -= 1;
            b[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.text(std::str::from_utf8(&b[i..]).unwrap_or("?"))
    }
}

/// The calling thread's `errno`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn errno_location() -> *mut c_int {
    // SAFETY: no precondition; the C library's thread-local errno.
    unsafe { libc::__errno_location() }
}

/// The calling thread's `errno`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn errno_location() -> *mut c_int {
    // SAFETY: no precondition; the C library's thread-local errno.
    unsafe { libc::__error() }
}

/// The handler.
extern "C" fn handler(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler; errno is the
    // thread's, saved and restored so the interrupted code does not see the handler's calls.
    let (addr, errno) = unsafe { ((*info).si_addr() as usize, *errno_location()) };
    let restore_errno = || {
        // SAFETY: as above.
        unsafe { *errno_location() = errno };
    };
    if open::open_for_fault(addr) {
        restore_errno();
        return;
    }
    if let Some(found) = regions::lookup_in_handler(addr) {
        let who = if open::in_kernel() {
            "a kernel"
        } else {
            "host code"
        };
        let e = Stderr;
        e.text("ascendcl-emu: ")
            .text(who)
            .text(" touched device memory at ")
            .hex(addr)
            .text(", in ");
        match found {
            Found::Region {
                what,
                start,
                size,
                device,
            } => {
                e.text(what)
                    .text(" of ")
                    .dec(size)
                    .text(" bytes at ")
                    .hex(start)
                    .text(" (device ")
                    .dec(device as usize)
                    .text(")");
            }
            Found::Space { label, start, len } => {
                e.text(label)
                    .text(" at ")
                    .hex(start)
                    .text(" (")
                    .dec(len)
                    .text(" bytes), in no live allocation (freed, or never allocated or mapped)");
            }
        }
        e.text(
            ". The host cannot dereference device memory on an NPU: copy it with aclrtMemcpy (or \
             set ASCENDCL_EMU_HOST_ACCESS=1 to let the emulator allow it).\n",
        );
    }
    restore_errno();
    // SAFETY: the arguments are the kernel's, passed on unchanged.
    unsafe { chain(sig, info, ctx) };
}

/// Passes the fault to the previous handler, or restores the default action and returns, so
/// that the faulting access runs again and ends the process as it would have without the guard.
///
/// # Safety
/// The arguments must be those the kernel passed to [`handler`].
unsafe fn chain(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let prev = PREVIOUS.get().map(|p| p.0);
    match prev {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: installed with SA_SIGINFO, so it has this signature.
                let f = unsafe {
                    std::mem::transmute::<
                        libc::sighandler_t,
                        extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void),
                    >(p.sa_sigaction)
                };
                f(sig, info, ctx);
            } else {
                // SAFETY: installed without SA_SIGINFO: a one-argument handler.
                let f = unsafe {
                    std::mem::transmute::<libc::sighandler_t, extern "C" fn(c_int)>(p.sa_sigaction)
                };
                f(sig);
            }
        }
        _ => {
            // SAFETY: sigaction with a zeroed structure asking for the default action.
            unsafe {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&mut dfl.sa_mask);
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}
