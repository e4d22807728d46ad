//! Making a device allocation shareable with other processes (`aclrtIpcMemGetExportKey`): an
//! allocation of the arena moves into a memory file of its own, mapped over both of its views at
//! the same addresses (contents kept); one with a file of its own already is shared as it is.

use super::space::{self, arena::Arena};
use super::table::{Backing, Kind, Table};
use crate::base::error::*;
use rustix::mm::MapFlags;
use std::os::fd::{AsFd, AsRawFd};

impl Table {
    /// Makes the device allocation that starts at `start` shareable with other processes.
    /// Returns the file's descriptor (owned by the allocation until it is freed), the
    /// allocation's size and device. Work in flight on the allocation must be finished (the
    /// emulator does not stop it while the pages move).
    pub(crate) fn share(&mut self, start: usize) -> R<(i32, usize, i32)> {
        let a = match self.live.get_mut(&start) {
            Some(a) if !a.external => a,
            _ => {
                return fail(
                    RT_PARAM_INVALID,
                    format!(
                        "{start:#x} is not the start of a device allocation made by aclrtMalloc"
                    ),
                );
            }
        };
        let Kind::Device(dev) = a.kind else {
            return fail(RT_PARAM_INVALID, format!("{start:#x} is not device memory"));
        };
        if let Some(fd) = &a.shared_fd {
            return Ok((fd.as_raw_fd(), a.size, dev));
        }
        let len = match &a.backing {
            Backing::File { fd, .. } => return Ok((fd.as_raw_fd(), a.size, dev)),
            Backing::Arena { len } => *len,
            Backing::None | Backing::Anon { .. } => {
                return fail(
                    RT_PARAM_INVALID,
                    format!("{start:#x} is managed memory, which cannot be exported"),
                );
            }
        };
        let arena = space::arena::get().expect("an arena allocation has an arena");
        let cannot = |e: std::io::Error| Fail {
            code: RT_MEMORY_ALLOCATION,
            msg: format!("cannot create shared memory for the export: {e}"),
        };
        let fd =
            space::map::memory_file(c"ascendcl-emu-ipc-memory", len, space::map::Pages::Normal)
                .map_err(cannot)?;
        // SAFETY: the alias of the allocation's `len` bytes, live while the table is held.
        let bytes = unsafe {
            std::slice::from_raw_parts(start.wrapping_add_signed(a.delta) as *const u8, len)
        };
        let mut done = 0;
        while done < len {
            done += rustix::io::pwrite(&fd, &bytes[done..], done as u64)
                .map_err(|e| cannot(e.into()))?;
        }
        // SAFETY: replaces both views of the allocation, at the same addresses, with the file
        // that now holds the same bytes.
        unsafe {
            space::map::map_file(
                arena.pair(start, len),
                fd.as_fd(),
                0,
                space::mode(),
                MapFlags::empty(),
            )
        }
        .map_err(|e| Fail {
            code: RT_MEMORY_ALLOCATION,
            msg: format!("cannot map the export into place: {e}"),
        })?;
        let raw = fd.as_raw_fd();
        a.shared_fd = Some(fd);
        Ok((raw, a.size, dev))
    }
}

/// Puts the arena's own pages back under an exported allocation being freed (the export's file
/// lives on in the importers' mappings).
pub(super) fn unshare(arena: &Arena, start: usize, len: usize) {
    // SAFETY: both views of a range of the arena that the allocation being freed owns.
    let _ = unsafe {
        space::map::map_file(
            arena.pair(start, len),
            arena.fd(),
            arena.offset(start),
            space::mode(),
            MapFlags::empty(),
        )
    };
}
