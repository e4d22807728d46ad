//! The device address space. Device memory lives at the addresses the program was given, where
//! host code cannot touch it (as on an NPU), and at an alias where the emulator's own code (the
//! copy engine, built-in tasks, value waits, the libraries layered on the runtime) reads and
//! writes it through [`super::access`]. Kernels, which dereference the program's addresses, run
//! with the device memory they touch accessible ([`KernelAccess`]).
//!
//! Both views map the same pages of one memory file (the [`arena`] for allocations; a file of
//! their own for physical allocations, exports and imports), so nothing is copied between them.
//! How the program side is guarded is decided once per process ([`mode`]): protection keys
//! where the CPU has them, page protection otherwise, nothing with
//! `ASCENDCL_EMU_HOST_ACCESS=1`. A host access to device memory faults, and the handler
//! ([`fault`]) names the allocation on stderr before the process ends as it would have.

pub(crate) mod arena;
mod fault;
pub(crate) mod map;
mod open;
mod pkey;
pub(crate) mod regions;

pub(crate) use open::KernelAccess;

use std::sync::OnceLock;

/// How the program side of device memory is guarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Not guarded (`ASCENDCL_EMU_HOST_ACCESS=1`): host code may touch device memory.
    Open,
    /// Page protection: the program side is inaccessible, and opened for kernel tasks while they
    /// run (other threads are not caught while it is open).
    Protect,
    /// Protection keys: device pages carry this key, which only threads running kernel blocks
    /// hold.
    Pkey(u32),
}

/// The guard of this process, decided on first use: [`Mode::Open`] when
/// [`crate::config::ENV_HOST_ACCESS`] is `1`, else [`Mode::Pkey`] where `pkey_alloc` succeeds,
/// else [`Mode::Protect`]. A guarded mode installs the fault handler.
pub(crate) fn mode() -> Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    *MODE.get_or_init(|| {
        let open = std::env::var(crate::config::ENV_HOST_ACCESS)
            .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"));
        // Elsewhere than Linux, a protection fault may arrive as SIGBUS, which the handler does
        // not take: the guard is off there.
        if open || cfg!(not(target_os = "linux")) {
            return Mode::Open;
        }
        let m = match pkey::probe() {
            Ok(key) => Mode::Pkey(key),
            Err(_) => Mode::Protect,
        };
        fault::install();
        m
    })
}

#[cfg(test)]
pub(crate) mod tests;
