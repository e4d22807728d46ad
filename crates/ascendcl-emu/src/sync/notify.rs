//! Notifies: one-shot flags a stream records and another stream waits for (a wait consumes the
//! record). Each flag is a 32-bit word in the process's notify arena, a shared memory file, so
//! that another process can map it when the notify is exported (see `ipc`).

use crate::base::error::*;
use crate::base::hooks::{Hooks, Phase, Registration, Release};
use crate::base::hub::{self, Kind, Resource, registry};
use crate::base::leak::LeakReport;
use crate::base::lock::{Mutex, Rank};
use crate::base::wait;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};

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

static ARENA: Mutex<Option<Arena>> = Mutex::new(Rank::NotifyArena, None);

/// Maps `len` bytes of the memory file `fd` (which the caller keeps), shared; the address.
fn map_shared(fd: i32, len: usize) -> R<usize> {
    // SAFETY: the caller holds the descriptor for the call.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    crate::memory::space::map::share(fd, len).map_err(|e| Fail {
        code: RT_NO_NOTIFY_RESOURCE,
        msg: format!("cannot map shared memory: {e}"),
    })
}

/// A new memory file of `len` bytes (zero-filled), close-on-exec.
fn memfd(name: &std::ffi::CStr, len: usize) -> std::io::Result<i32> {
    use std::os::fd::IntoRawFd;
    crate::memory::space::map::memory_file(name, len, crate::memory::space::map::Pages::Normal)
        .map(IntoRawFd::into_raw_fd)
}

/// Takes a word of the arena: (address, slot).
fn alloc_slot() -> R<(usize, u32)> {
    let mut a = ARENA.lock();
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
    let mut a = ARENA.lock();
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
    ARENA.lock().as_ref().map(|a| addr - a.base)
}

/// The arena's file descriptor, when there is one.
pub(crate) fn arena_fd() -> Option<i32> {
    ARENA.lock().as_ref().map(|a| a.fd)
}

/// Maps another process's arena (opened as `fd`, which this call closes) once per process;
/// the base address. Arenas are never unmapped.
pub(crate) fn map_foreign_arena(pid: u32, fd: i32) -> R<usize> {
    static FOREIGN: LazyLock<Mutex<HashMap<u32, usize>>> =
        LazyLock::new(|| Mutex::new(Rank::ForeignArenas, HashMap::new()));
    let mut m = FOREIGN.lock();
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

impl Resource for Notify {
    const KIND: Kind = Kind::Notify;

    fn handle(&self) -> usize {
        self.handle
    }

    fn device(&self) -> Option<i32> {
        Some(self.device)
    }
}

/// A released device's notifies go with it.
static HOOKS: Registration = Registration::new(Hooks {
    name: "notifies",
    device_released: Some((Phase::BeforeStreams, device_released)),
    ..Hooks::NONE
});

fn device_released(r: &Release, _: &mut LeakReport) {
    release_device(r.device);
}

/// Creates a notify on `device`.
pub(crate) fn create(device: i32) -> R<usize> {
    HOOKS.ensure();
    let (word, slot) = alloc_slot()?;
    let made = registry::<Notify>().insert_within(device, MAX_PER_DEVICE, || {
        Arc::new(Notify {
            handle: hub::new_handle(),
            device,
            id: slot,
            word,
            imported: false,
        })
    });
    match made {
        Ok(n) => Ok(n.handle),
        Err(n) => {
            free_slot(slot);
            fail(
                RT_NO_NOTIFY_RESOURCE,
                format!("device {device} already has {n} notifies"),
            )
        }
    }
}

/// Registers a notify whose word lies at `word` (an import).
pub(crate) fn insert_imported(device: i32, id: u32, word: usize) -> usize {
    HOOKS.ensure();
    let n = Arc::new(Notify {
        handle: hub::new_handle(),
        device,
        id,
        word,
        imported: true,
    });
    let h = n.handle;
    registry::<Notify>().insert(n);
    h
}

/// Resolves a notify handle (107017 for anything else).
pub(crate) fn get(h: usize) -> R<Arc<Notify>> {
    registry::<Notify>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("notify {h:#x} is not a live notify (destroyed, or not a notify handle)"),
    })
}

/// Destroys a notify at once (no wait for tasks in flight, as in the runtime).
pub(crate) fn destroy(h: usize) -> R {
    let n = registry::<Notify>().remove(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("notify {h:#x} is not a live notify"),
    })?;
    release_slot(&n);
    Ok(())
}

/// Puts a word back on the arena's free list.
fn free_slot(slot: u32) {
    if let Some(a) = ARENA.lock().as_mut() {
        a.free.push(slot);
    }
}

fn release_slot(n: &Notify) {
    if !n.imported {
        // Tasks in flight keep the Arc, not the slot: the word stays mapped, but a new notify
        // may reuse it; the runtime documents that destruction does not wait either.
        free_slot(n.id);
    }
}

/// Destroys the notifies of a released device; how many there were.
pub(crate) fn release_device(device: i32) -> usize {
    let gone = registry::<Notify>().remove_where(|n| n.device == device);
    for n in &gone {
        release_slot(n);
    }
    gone.len()
}
