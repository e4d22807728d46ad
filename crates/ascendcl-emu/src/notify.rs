//! Notifies: one-shot flags a stream records and another stream waits for (a wait consumes the
//! record). Each flag is a 32-bit word in the process's notify arena, a shared memory file, so
//! that another process can map it when the notify is exported (see `ipc`).

use crate::error::*;
use crate::sync::lock;
use crate::wait;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

/// Notifies per device beyond which creation fails with 207009 (A2/A3 hardware has 8192).
pub(crate) const MAX_PER_DEVICE: usize = 8192;
/// Words in a process's arena.
pub(crate) const ARENA_SLOTS: usize = 1 << 16;

/// The process's notify arena: a memory file of [`ARENA_SLOTS`] words, mapped shared.
pub(crate) struct Arena {
    /// The file descriptor (kept open: importers open it through `/proc/<pid>/fd`).
    pub fd: i32,
    base: usize,
    free: Vec<u32>,
    next: u32,
}

static ARENA: Mutex<Option<Arena>> = Mutex::new(None);

/// Maps `len` bytes of the memory file `fd`, shared; the address.
pub(crate) fn map_shared(fd: i32, len: usize) -> R<usize> {
    // SAFETY: a new shared mapping of a file we hold, at an address the kernel chooses.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return fail(
            RT_NO_NOTIFY_RESOURCE,
            format!(
                "cannot map shared memory: {}",
                std::io::Error::last_os_error()
            ),
        );
    }
    Ok(p as usize)
}

/// Memory shared between processes needs `memfd_create` and `/proc` (Linux); elsewhere sharing
/// fails with this error.
#[cfg(not(target_os = "linux"))]
pub(crate) fn memfd(_name: &std::ffi::CStr, _len: usize) -> std::io::Result<i32> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "memory shared between processes is emulated on Linux only (memfd and /proc)",
    ))
}

/// A new memory file of `len` bytes (zero-filled), close-on-exec.
#[cfg(target_os = "linux")]
pub(crate) fn memfd(name: &std::ffi::CStr, len: usize) -> std::io::Result<i32> {
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: ftruncate on the descriptor just created.
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: closing the descriptor we own.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    Ok(fd)
}

/// Takes a word of the arena: (address, slot).
fn alloc_slot() -> R<(usize, u32)> {
    let mut a = lock(&ARENA);
    if a.is_none() {
        let fd = memfd(c"ascendcl-emu-notifies", ARENA_SLOTS * 4).map_err(|e| Fail {
            code: RT_NO_NOTIFY_RESOURCE,
            msg: format!("cannot create the notify arena: {e}"),
        })?;
        let base = map_shared(fd, ARENA_SLOTS * 4)?;
        *a = Some(Arena {
            fd,
            base,
            free: Vec::new(),
            next: 0,
        });
    }
    let a = a.as_mut().expect("created above");
    let slot = match a.free.pop() {
        Some(s) => s,
        None if (a.next as usize) < ARENA_SLOTS => {
            a.next += 1;
            a.next - 1
        }
        None => {
            return fail(
                RT_NO_NOTIFY_RESOURCE,
                format!("the process already has {ARENA_SLOTS} notifies"),
            );
        }
    };
    let addr = a.base + slot as usize * 4;
    // SAFETY: the word lies in the arena mapping, which is never unmapped.
    unsafe { &*(addr as *const AtomicU32) }.store(0, Ordering::Release);
    Ok((addr, slot))
}

/// Takes two adjacent words of the arena (an IPC event's counters): their address and first
/// slot.
pub(crate) fn alloc_pair() -> R<(usize, u32)> {
    let first = alloc_slot()?;
    let mut a = lock(&ARENA);
    let a = a.as_mut().expect("made by alloc_slot");
    // The pair takes fresh slots from the end of the arena (the free list is for single words).
    a.free.push(first.1);
    if (a.next as usize) + 2 > ARENA_SLOTS {
        return fail(
            RT_NO_EVENT_RESOURCE,
            "the process's shared event words are exhausted",
        );
    }
    let slot = a.next;
    a.next += 2;
    let addr = a.base + slot as usize * 4;
    for i in 0..2 {
        // SAFETY: the words lie in the arena mapping, which is never unmapped.
        unsafe { &*((addr + 4 * i) as *const AtomicU32) }.store(0, Ordering::Release);
    }
    Ok((addr, slot))
}

/// The offset of an address in this process's arena.
pub(crate) fn arena_offset(addr: usize) -> Option<usize> {
    lock(&ARENA).as_ref().map(|a| addr - a.base)
}

/// The arena's file descriptor, when there is one.
pub(crate) fn arena_fd() -> Option<i32> {
    lock(&ARENA).as_ref().map(|a| a.fd)
}

/// Maps another process's arena (opened as `fd`, which this call closes) once per process;
/// the base address. Arenas are never unmapped.
pub(crate) fn map_foreign_arena(pid: u32, fd: i32) -> R<usize> {
    static FOREIGN: LazyLock<Mutex<HashMap<u32, usize>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    let mut m = lock(&FOREIGN);
    let r = match m.get(&pid) {
        Some(b) => Ok(*b),
        None => map_shared(fd, ARENA_SLOTS * 4).inspect(|b| {
            m.insert(pid, *b);
        }),
    };
    // SAFETY: the caller hands over the descriptor; the mapping (if any) keeps the file alive.
    unsafe { libc::close(fd) };
    r
}

/// A notify.
#[derive(Debug)]
pub(crate) struct Notify {
    pub handle: usize,
    pub device: i32,
    /// `aclrtGetNotifyId`: the slot in the creating process's arena.
    pub id: u32,
    /// The flag word (in this process's arena, or in another process's for an import).
    word: usize,
    /// Whether this notify was imported from another process (it may only be recorded).
    pub imported: bool,
}

impl Notify {
    fn word(&self) -> &AtomicU32 {
        // SAFETY: the word lies in an arena mapping that stays mapped for the life of the
        // process (arenas are never unmapped).
        unsafe { &*(self.word as *const AtomicU32) }
    }

    /// Records the notify (a stream task): sets the flag and wakes the waiters.
    pub(crate) fn record(&self) {
        self.word().store(1, Ordering::Release);
        wait::futex_wake(self.word());
    }

    /// Resets the flag.
    pub(crate) fn reset(&self) {
        self.word().store(0, Ordering::Release);
    }

    /// Waits for a record and consumes it (a stream task).
    pub(crate) fn wait(
        &self,
        timeout: Option<std::time::Duration>,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> wait::Outcome {
        wait::consume_flag(self.word(), timeout, cancel)
    }
}

static NOTIFIES: LazyLock<Mutex<HashMap<usize, Arc<Notify>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Creates a notify on `device`.
pub(crate) fn create(device: i32) -> R<usize> {
    let n = lock(&NOTIFIES)
        .values()
        .filter(|n| n.device == device)
        .count();
    if n >= MAX_PER_DEVICE {
        return fail(
            RT_NO_NOTIFY_RESOURCE,
            format!("device {device} already has {n} notifies"),
        );
    }
    let (word, slot) = alloc_slot()?;
    Ok(insert(Notify {
        handle: crate::state::new_handle(),
        device,
        id: slot,
        word,
        imported: false,
    }))
}

/// Registers a notify whose word lies at `word` (an import).
pub(crate) fn insert_imported(device: i32, id: u32, word: usize) -> usize {
    insert(Notify {
        handle: crate::state::new_handle(),
        device,
        id,
        word,
        imported: true,
    })
}

fn insert(n: Notify) -> usize {
    let h = n.handle;
    lock(&NOTIFIES).insert(h, Arc::new(n));
    h
}

/// Resolves a notify handle (107017 for anything else).
pub(crate) fn get(h: usize) -> R<Arc<Notify>> {
    lock(&NOTIFIES).get(&h).cloned().ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("notify {h:#x} is not a live notify (destroyed, or not a notify handle)"),
    })
}

/// Destroys a notify at once (no wait for tasks in flight, as in the runtime).
pub(crate) fn destroy(h: usize) -> R {
    let n = lock(&NOTIFIES).remove(&h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("notify {h:#x} is not a live notify"),
    })?;
    release_slot(&n);
    Ok(())
}

fn release_slot(n: &Notify) {
    if !n.imported {
        // Tasks in flight keep the Arc, not the slot: the word stays mapped, but a new notify
        // may reuse it; the runtime documents that destruction does not wait either.
        if let Some(a) = lock(&ARENA).as_mut() {
            a.free.push(n.id);
        }
    }
}

/// Destroys the notifies of a released device; how many there were.
pub(crate) fn release_device(device: i32) -> usize {
    let gone: Vec<Arc<Notify>> = {
        let mut m = lock(&NOTIFIES);
        let keys: Vec<usize> = m
            .values()
            .filter(|n| n.device == device)
            .map(|n| n.handle)
            .collect();
        keys.iter().filter_map(|k| m.remove(k)).collect()
    };
    for n in &gone {
        release_slot(n);
    }
    gone.len()
}
