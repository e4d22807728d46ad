//! IPC memory imported from other processes (`aclrtIpcMemImportByKey`): each import maps the
//! exporter's memory file anew into device address space of its own (a program range and its
//! alias), counted as device memory of the importer's current device until `aclrtIpcMemClose`.

use super::space::{self, map::Pair, regions};
use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use rustix::mm::MapFlags;
use std::collections::HashMap;
use std::os::fd::BorrowedFd;
use std::sync::LazyLock;

/// The imports of each key, latest last.
static IMPORTS: LazyLock<Mutex<HashMap<String, Vec<Pair>>>> =
    LazyLock::new(|| Mutex::new(Rank::IpcImports, HashMap::new()));

/// Maps `len` bytes of the memory file `fd` (opened from the exporter; the caller keeps
/// ownership) as device memory of `device`, recorded as an import of `key`; its address.
pub(crate) fn map(key: &str, fd: BorrowedFd<'_>, len: usize, device: i32) -> R<usize> {
    let page = super::page_size() as usize;
    let span = len.div_ceil(page) * page;
    let cannot = |e: std::io::Error| Fail {
        code: RT_MEMORY_ALLOCATION,
        msg: format!("cannot map the imported memory: {e}"),
    };
    let pair = space::map::reserve(span, page, 0).map_err(cannot)?;
    // SAFETY: the pair was just reserved for this import.
    if let Err(e) = unsafe { space::map::map_file(pair, fd, 0, space::mode(), MapFlags::empty()) } {
        // SAFETY: as above.
        unsafe { space::map::release(pair) };
        return Err(cannot(e));
    }
    let inserted = super::write().insert_external(
        pair.at,
        len,
        Some(device),
        super::page_size(),
        (pair.delta(), 0),
    );
    if let Err(e) = inserted {
        // SAFETY: as above; not registered anywhere.
        unsafe { space::map::release(pair) };
        return Err(e);
    }
    regions::add_space(pair.at, span, "the IPC import");
    regions::add(pair.at, span, len, regions::What::Import, device);
    IMPORTS
        .lock()
        .entry(key.to_string())
        .or_default()
        .push(pair);
    Ok(pair.at)
}

/// Unmaps the latest import of `key`; false when this process has none.
pub(crate) fn close(key: &str) -> bool {
    let pair = {
        let mut m = IMPORTS.lock();
        let one = m.get_mut(key).and_then(|v| v.pop());
        if m.get(key).is_some_and(|v| v.is_empty()) {
            m.remove(key);
        }
        one
    };
    let Some(pair) = pair else {
        return false;
    };
    let mut t = super::write();
    t.remove_external(pair.at);
    regions::remove(pair.at);
    // Work queued before the close (a kernel reading the import) may still touch the program
    // range: it stays reserved as device address space, inaccessible, so such a touch fails the
    // launch instead of crashing the process.
    // SAFETY: the import's own pair, no longer registered as live memory.
    if unsafe { space::map::unreserve(pair) }.is_ok() {
        super::pages::unmap(pair.alias, pair.len);
        t.bury_space(pair.at, pair.len, pair.len);
    } else {
        regions::remove_space(pair.at);
        // SAFETY: as above.
        unsafe { space::map::release(pair) };
    }
    true
}
