//! Memory protection keys, where the CPU and the kernel have them (x86 PKU, Arm POE): device
//! pages carry a key that threads lack by default, and a thread running a kernel block grants
//! itself access for the block (a write of its own key register, no system call): an exact,
//! per-thread guard. Probed once; without keys the guard uses page protection instead.

use std::ffi::{c_int, c_uint};
use std::io;
use std::sync::OnceLock;

/// `PKEY_DISABLE_ACCESS`: no reads, no writes.
const DISABLE_ACCESS: c_uint = 1;

/// `pkey_set` of the C library (glibc 2.27 and later), found at run time.
type PkeySet = unsafe extern "C" fn(c_int, c_uint) -> c_int;

fn pkey_set() -> Option<PkeySet> {
    static F: OnceLock<Option<PkeySet>> = OnceLock::new();
    *F.get_or_init(|| {
        // SAFETY: dlsym with the default handle and a NUL-terminated name has no precondition.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"pkey_set".as_ptr()) };
        // SAFETY: glibc's pkey_set has this signature.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, PkeySet>(p) })
    })
}

/// No keys elsewhere than Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn probe() -> io::Result<u32> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "protection keys are used on Linux only",
    ))
}

/// Allocates a key whose access the calling thread lacks (as every other thread does by
/// default); the error says why keys cannot be used (`EINVAL` without CPU support, `ENOSYS`
/// without kernel support, or no `pkey_set` in the C library).
#[cfg(target_os = "linux")]
pub(crate) fn probe() -> io::Result<u32> {
    // SAFETY: pkey_alloc takes two integers and returns a key or -1.
    let key = unsafe { libc::syscall(libc::SYS_pkey_alloc, 0 as c_uint, DISABLE_ACCESS) };
    if key < 0 {
        return Err(io::Error::last_os_error());
    }
    if pkey_set().is_none() {
        // SAFETY: freeing the key just allocated.
        unsafe { libc::syscall(libc::SYS_pkey_free, key as c_int) };
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the C library has no pkey_set",
        ));
    }
    Ok(key as u32)
}

/// Gives `[at, at+len)` (readable and writable pages) key `key` (keys exist on Linux only).
#[cfg(not(target_os = "linux"))]
pub(crate) fn protect(_at: usize, _len: usize, _key: u32) -> io::Result<()> {
    Ok(())
}

/// Gives `[at, at+len)` (readable and writable pages) key `key`.
#[cfg(target_os = "linux")]
pub(crate) fn protect(at: usize, len: usize, key: u32) -> io::Result<()> {
    // SAFETY: pkey_mprotect changes the protection of pages this module mapped; it changes no
    // memory.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pkey_mprotect,
            at,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            key as c_int,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Grants (`allow`) or drops the calling thread's access to pages of key `key`.
pub(crate) fn set(key: u32, allow: bool) {
    if let Some(f) = pkey_set() {
        // SAFETY: pkey_set writes the calling thread's key register; `key` was allocated by
        // `probe`.
        unsafe { f(key as c_int, if allow { 0 } else { DISABLE_ACCESS }) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe answers either way: a key (then the calling thread lacks access to it until it
    /// grants itself access), or the reason keys are missing.
    #[test]
    fn the_probe_gives_a_key_or_the_reason() {
        match probe() {
            Ok(key) => {
                assert!(key > 0, "key 0 is the default key of every page");
                set(key, true);
                set(key, false);
            }
            Err(e) => {
                let code = e.raw_os_error();
                assert!(
                    matches!(code, Some(libc::EINVAL | libc::ENOSYS | libc::ENOSPC))
                        || e.kind() == io::ErrorKind::Unsupported,
                    "unexpected pkey_alloc failure: {e}"
                );
            }
        }
    }
}
