//! Sharing with other processes: the process's export table, and the keys and handles that name
//! its entries.
//!
//! The export table is a shared memory file (`memfd`) of fixed-size entries that the process
//! maps read-write; another process of the same user maps it read-only through
//! `/proc/<pid>/fd/<n>` (found by the file's name in that directory). An entry names the
//! shared memory file of the exported object (an allocation made shareable, a physical
//! allocation, the notify arena) by its descriptor number in the exporting process, which the
//! importer opens through `/proc/<pid>/fd` as well, and carries the export's pid whitelist.
//! Nothing is left behind when a process exits: the files vanish with their last descriptor and
//! mapping. A key is `aclemu-<pid>-<index>-<generation>`; a shareable handle packs the same three
//! numbers into a `u64`.

use super::space::map;
use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use std::os::fd::{AsFd, IntoRawFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// Entries in a process's export table.
pub(crate) const ENTRIES: usize = 4096;
/// Pids an entry's whitelist holds.
pub(crate) const MAX_PIDS: usize = 56;
/// The name of the export table's memory file.
const TABLE_NAME: &std::ffi::CStr = c"ascendcl-emu-exports";
/// What `/proc/<pid>/fd/<n>` links to for the table.
const TABLE_LINK: &str = "/memfd:ascendcl-emu-exports (deleted)";

/// What an entry exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum What {
    /// Device memory made by `aclrtMalloc` (`aclrtIpcMemGetExportKey`).
    IpcMemory = 1,
    /// A physical allocation (`aclrtMemExportToShareableHandle`).
    Physical = 2,
    /// A notify (`aclrtNotifyGetExportKey`).
    Notify = 3,
    /// An IPC event (`aclrtIpcGetEventHandle`).
    Event = 4,
}

/// One entry of the export table (shared with importers: plain C layout).
#[repr(C)]
pub(crate) struct Entry {
    /// 0 free, 1 live, 2 closed by the exporter.
    state: AtomicU32,
    generation: AtomicU32,
    what: u32,
    /// Bit 0: importers need not be whitelisted.
    open_to_all: u32,
    /// The exporter's descriptor of the shared memory file.
    pub fd: i32,
    pub device: i32,
    pub size: u64,
    /// Where the object starts in the file (the notify's word).
    pub offset: u64,
    /// The exporter's own handle of the object (to find the entry again).
    pub owner: u64,
    npids: AtomicU32,
    pids: [i32; MAX_PIDS],
}

struct Table {
    /// Kept open for the life of the process: importers find the table by this descriptor.
    _fd: i32,
    base: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(Rank::IpcTable, None);

fn entries(base: usize) -> &'static [Entry] {
    // SAFETY: `base` is a mapping of ENTRIES entries that is never unmapped; entries are read
    // through atomics or written only by the exporting process under the table lock.
    unsafe { std::slice::from_raw_parts(base as *const Entry, ENTRIES) }
}

fn own_table() -> R<&'static [Entry]> {
    let mut t = TABLE.lock();
    if t.is_none() {
        let len = ENTRIES * std::mem::size_of::<Entry>();
        let cannot = |e: std::io::Error| Fail {
            code: RT_MEMORY_ALLOCATION,
            msg: format!("cannot create the export table: {e}"),
        };
        let file = map::memory_file(TABLE_NAME, len, map::Pages::Normal).map_err(cannot)?;
        let base = map::share(file.as_fd(), len).map_err(cannot)?;
        let fd = file.into_raw_fd();
        *t = Some(Table { _fd: fd, base });
    }
    Ok(entries(t.as_ref().expect("created above").base))
}

/// A reference to an entry of some process's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub pid: u32,
    pub index: u32,
    pub generation: u32,
}

impl Key {
    /// The key's string form (at most 64 characters).
    pub(crate) fn to_string_key(self) -> String {
        format!("aclemu-{}-{}-{}", self.pid, self.index, self.generation)
    }

    /// Parses a key string.
    pub(crate) fn parse(s: &str) -> R<Key> {
        let bad = || Fail {
            code: RT_PARAM_INVALID,
            msg: format!("{s:?} is not a key made by this runtime"),
        };
        let rest = s.strip_prefix("aclemu-").ok_or_else(bad)?;
        let mut it = rest.split('-').map(|p| p.parse::<u32>());
        match (it.next(), it.next(), it.next(), it.next()) {
            (Some(Ok(pid)), Some(Ok(index)), Some(Ok(generation)), None)
                if (index as usize) < ENTRIES =>
            {
                Ok(Key {
                    pid,
                    index,
                    generation,
                })
            }
            _ => Err(bad()),
        }
    }

    /// The key packed in a shareable handle: pid in the high 32 bits, then 12 bits of index
    /// and 20 of generation.
    pub(crate) fn to_u64(self) -> u64 {
        (u64::from(self.pid) << 32)
            | (u64::from(self.index) << 20)
            | u64::from(self.generation & 0xf_ffff)
    }

    /// Unpacks a shareable handle.
    pub(crate) fn from_u64(v: u64) -> Key {
        Key {
            pid: (v >> 32) as u32,
            index: ((v >> 20) & 0xfff) as u32,
            generation: (v & 0xf_ffff) as u32,
        }
    }
}

/// This process's id (the "bare tgid" of the runtime: the host's pid).
pub(crate) fn pid() -> u32 {
    std::process::id()
}

/// Adds an export to this process's table.
pub(crate) fn export(
    what: What,
    fd: i32,
    device: i32,
    size: u64,
    offset: u64,
    owner: u64,
    open_to_all: bool,
) -> R<Key> {
    let entries = own_table()?;
    let _t = TABLE.lock();
    let (index, e) = entries
        .iter()
        .enumerate()
        .find(|(_, e)| e.state.load(Ordering::Acquire) != 1)
        .ok_or_else(|| Fail {
            code: RT_MEMORY_ALLOCATION,
            msg: format!("the process already has {ENTRIES} live exports"),
        })?;
    let generation = (e.generation.load(Ordering::Acquire) + 1) & 0xf_ffff;
    // SAFETY: the entry is not live, so no importer uses its fields; the exporting process
    // writes its entries only under the table lock.
    unsafe {
        let m = e as *const Entry as *mut Entry;
        (*m).what = what as u32;
        (*m).open_to_all = u32::from(open_to_all);
        (*m).fd = fd;
        (*m).device = device;
        (*m).size = size;
        (*m).offset = offset;
        (*m).owner = owner;
    }
    e.npids.store(0, Ordering::Release);
    e.generation.store(generation, Ordering::Release);
    e.state.store(1, Ordering::Release);
    Ok(Key {
        pid: pid(),
        index: index as u32,
        generation,
    })
}

/// The live entry of this process that exports `owner` as `what`.
pub(crate) fn find_own(what: What, owner: u64) -> Option<Key> {
    let base = TABLE.lock().as_ref()?.base;
    let entries = entries(base);
    entries.iter().enumerate().find_map(|(i, e)| {
        (e.state.load(Ordering::Acquire) == 1 && e.what == what as u32 && e.owner == owner).then(
            || Key {
                pid: pid(),
                index: i as u32,
                generation: e.generation.load(Ordering::Acquire),
            },
        )
    })
}

/// This process's live entry for `key` (107000 when the key is not one of its live exports).
fn own_entry(key: Key) -> R<&'static Entry> {
    let entries = own_table()?;
    let e = &entries[key.index as usize];
    if key.pid != pid()
        || e.state.load(Ordering::Acquire) != 1
        || e.generation.load(Ordering::Acquire) != key.generation
    {
        return fail(
            RT_PARAM_INVALID,
            format!(
                "{} is not a live export of this process",
                key.to_string_key()
            ),
        );
    }
    Ok(e)
}

/// Adds pids to the whitelist of one of this process's exports.
pub(crate) fn allow(key: Key, pids: &[i32]) -> R {
    let e = own_entry(key)?;
    let _t = TABLE.lock();
    let n = e.npids.load(Ordering::Acquire) as usize;
    let fresh: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|p| !e.pids[..n].contains(p))
        .collect();
    if n + fresh.len() > MAX_PIDS {
        return fail(
            RT_PARAM_INVALID,
            format!("an export's whitelist holds at most {MAX_PIDS} pids"),
        );
    }
    // SAFETY: only the exporter writes the whitelist, under the table lock; importers read the
    // slots below npids, which is published after the slots are written.
    unsafe {
        let m = e as *const Entry as *mut Entry;
        for (i, p) in fresh.iter().enumerate() {
            (*m).pids[n + i] = *p;
        }
    }
    e.npids.store((n + fresh.len()) as u32, Ordering::Release);
    Ok(())
}

/// Closes one of this process's exports: later imports fail.
pub(crate) fn close(key: Key) -> R {
    let e = own_entry(key)?;
    e.state.store(2, Ordering::Release);
    Ok(())
}

/// Closes every export of `owner`.
pub(crate) fn close_owner(what: What, owner: u64) {
    while let Some(k) = find_own(what, owner) {
        let _ = close(k);
    }
}

/// What an importer learns from an exporter's entry.
#[derive(Debug)]
pub(crate) struct Imported {
    /// The shared memory file, opened in this process (the caller owns it).
    pub fd: i32,
    pub device: i32,
    pub size: u64,
    pub offset: u64,
}

/// Opens the export `key` of another process as `what`, checking that it is live and that this
/// process may import it (its whitelist). Importing in the exporting process itself is 107000.
pub(crate) fn import(key: Key, what: What) -> R<Imported> {
    if key.pid == pid() {
        return fail(
            RT_PARAM_INVALID,
            "the export was made by this process; importing in the exporting process is not \
             supported",
        );
    }
    let gone = |why: String| Fail {
        code: RT_PARAM_INVALID,
        msg: format!("{} cannot be imported: {why}", key.to_string_key()),
    };
    let dir = format!("/proc/{}/fd", key.pid);
    let table_fd = std::fs::read_dir(&dir)
        .map_err(|e| {
            gone(format!(
                "the exporting process {} is not reachable ({e})",
                key.pid
            ))
        })?
        .flatten()
        .find(|d| std::fs::read_link(d.path()).is_ok_and(|l| l.to_string_lossy() == TABLE_LINK))
        .ok_or_else(|| gone(format!("process {} exports nothing", key.pid)))?
        .path();
    let len = ENTRIES * std::mem::size_of::<Entry>();
    let file = std::fs::File::open(&table_fd).map_err(|e| gone(format!("{e}")))?;
    use std::os::fd::AsRawFd;
    // SAFETY: a new read-only shared mapping of the exporter's table.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(gone("its export table cannot be mapped".to_string()));
    }
    let result = (|| {
        // SAFETY: the mapping holds ENTRIES entries; read through atomics and plain reads of
        // fields the exporter wrote before publishing the entry.
        let e = unsafe { &*(base as *const Entry).add(key.index as usize) };
        if e.state.load(Ordering::Acquire) != 1
            || e.generation.load(Ordering::Acquire) != key.generation
            || e.what != what as u32
        {
            return Err(gone("the export was closed or never existed".to_string()));
        }
        let me = pid() as i32;
        let n = (e.npids.load(Ordering::Acquire) as usize).min(MAX_PIDS);
        if e.open_to_all & 1 == 0 && !e.pids[..n].contains(&me) {
            return Err(Fail {
                code: RT_PARAM_INVALID,
                msg: format!(
                    "{}: this process ({me}) is not on the export's whitelist (the exporter adds \
                     it with aclrt*SetImportPid, or exports with pid validation disabled)",
                    key.to_string_key()
                ),
            });
        }
        let path = format!("/proc/{}/fd/{}", key.pid, e.fd);
        let data = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|err| gone(format!("its memory is gone ({err})")))?;
        use std::os::fd::IntoRawFd;
        Ok(Imported {
            fd: data.into_raw_fd(),
            device: e.device,
            size: e.size,
            offset: e.offset,
        })
    })();
    // SAFETY: unmapping the table mapping made above.
    unsafe { libc::munmap(base, len) };
    result
}

/// `aclrtIpcMemImportByKey`: maps the memory exported under `k` (anew at each import) as device
/// memory of `dev` ([`super::import`]); peer access to the exporter's device is enabled when
/// `enable_peer`, else needed for another device.
pub(crate) fn import_memory(k: Key, dev: i32, enable_peer: bool) -> R<usize> {
    let imp = import(k, What::IpcMemory)?;
    let result = (|| {
        crate::device::import_peer(dev, imp.device, enable_peer)?;
        // SAFETY: the descriptor the import opened, closed below.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(imp.fd) };
        super::import::map(&k.to_string_key(), fd, imp.size as usize, dev)
    })();
    // SAFETY: the descriptor opened by the import; the mapping keeps the file alive.
    unsafe { libc::close(imp.fd) };
    result
}

/// `aclrtIpcMemClose`: in an importing process, unmaps the latest import of `k` (the key is
/// forgotten with its last import); in the exporting process, closes the key so that later
/// imports fail.
pub(crate) fn close_memory(k: Key) -> R {
    if super::import::close(&k.to_string_key()) {
        return Ok(());
    }
    close(k)
}
