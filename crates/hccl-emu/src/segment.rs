//! Shared-memory segments through which ranks exchange data: each rank writes its contributions
//! into its own segment (POSIX shared memory, `/dev/shm`), and the other ranks map it read-only
//! to take what they need. A segment that must grow is replaced by a new generation under a new
//! name; a name is unlinked as soon as it is replaced, and when the communicator is destroyed.

use crate::wire::Part;
use std::collections::HashMap;
use std::ffi::CString;
use std::io;

/// The name of generation `generation` of the segment tagged `tag`.
fn name(tag: u64, generation: u64) -> CString {
    CString::new(format!("/hccl-emu-{tag:016x}-{generation}")).expect("no NUL")
}

fn page_round(n: usize) -> usize {
    n.div_ceil(4096).max(1) * 4096
}

/// Maps a shared-memory object; returns the address and length.
fn map(fd: libc::c_int, len: usize, writable: bool) -> io::Result<*mut u8> {
    let prot = if writable {
        libc::PROT_READ | libc::PROT_WRITE
    } else {
        libc::PROT_READ
    };
    // SAFETY: a shared mapping of an fd we opened, at an address the kernel chooses.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p.cast())
}

/// A rank's own segment.
#[derive(Debug)]
pub(crate) struct Segment {
    tag: u64,
    generation: u64,
    ptr: *mut u8,
    cap: usize,
}

// SAFETY: the mapping is owned by the segment and only reached through `&mut self`.
unsafe impl Send for Segment {}

impl Segment {
    /// A segment with a fresh random tag and no memory yet.
    pub fn new() -> Segment {
        let id = crate::rootinfo::random_id();
        Segment {
            tag: u64::from_le_bytes(id[..8].try_into().expect("8 bytes")),
            generation: 0,
            ptr: std::ptr::null_mut(),
            cap: 0,
        }
    }

    pub fn tag(&self) -> u64 {
        self.tag
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Makes room for `need` bytes, replacing the segment by a larger generation when needed
    /// (its contents are not kept).
    pub fn ensure(&mut self, need: usize) -> io::Result<()> {
        if need <= self.cap {
            return Ok(());
        }
        let cap = page_round(need.max(self.cap * 2).max(1 << 20));
        let generation = self.generation + 1;
        let n = name(self.tag, generation);
        // SAFETY: shm_open with a NUL-terminated name; the fd is closed below.
        let fd = unsafe {
            libc::shm_open(
                n.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
                0o600,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is the shared-memory object just created.
        let sized = unsafe { libc::ftruncate(fd, cap as libc::off_t) } == 0;
        let mapped = if sized {
            map(fd, cap, true)
        } else {
            Err(io::Error::last_os_error())
        };
        // SAFETY: fd is ours; the mapping (if any) keeps the object alive.
        unsafe { libc::close(fd) };
        let ptr = match mapped {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the name was created just above.
                unsafe { libc::shm_unlink(n.as_ptr()) };
                return Err(e);
            }
        };
        self.release();
        self.ptr = ptr;
        self.cap = cap;
        self.generation = generation;
        Ok(())
    }

    /// The segment's bytes.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        if self.cap == 0 {
            return &mut [];
        }
        // SAFETY: ptr maps cap writable bytes owned by this segment; `&mut self` is exclusive
        // within the process; other processes read the segment only between a meeting's Go and
        // Free, while this rank does not write it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.cap) }
    }

    /// Unmaps and unlinks the current generation.
    fn release(&mut self) {
        if self.cap == 0 {
            return;
        }
        // SAFETY: ptr/cap is this segment's mapping, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.cap) };
        let n = name(self.tag, self.generation);
        // SAFETY: unlinking our own name.
        unsafe { libc::shm_unlink(n.as_ptr()) };
        self.ptr = std::ptr::null_mut();
        self.cap = 0;
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        self.release();
    }
}

#[derive(Debug)]
struct Mapped {
    generation: u64,
    ptr: *mut u8,
    len: usize,
}

/// The other ranks' segments, mapped read-only on demand.
#[derive(Debug, Default)]
pub(crate) struct Peers {
    maps: HashMap<u64, Mapped>,
}

// SAFETY: the mappings are owned by this value and only read.
unsafe impl Send for Peers {}

impl Peers {
    /// Maps the segment generation `part` lies in, if not mapped yet, and checks the range.
    pub fn map(&mut self, part: &Part) -> io::Result<()> {
        if part.len == 0 {
            return Ok(());
        }
        if self
            .maps
            .get(&part.tag)
            .is_none_or(|m| m.generation != part.generation)
        {
            let n = name(part.tag, part.generation);
            // SAFETY: shm_open with a NUL-terminated name; fd closed below.
            let fd = unsafe { libc::shm_open(n.as_ptr(), libc::O_RDONLY, 0) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: fstat into a zeroed stat of the fd just opened.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            let r = unsafe { libc::fstat(fd, &mut st) };
            let len = st.st_size as usize;
            let mapped = if r == 0 && len > 0 {
                map(fd, len, false)
            } else {
                Err(io::Error::other("empty shared-memory segment"))
            };
            // SAFETY: fd is ours.
            unsafe { libc::close(fd) };
            let ptr = mapped?;
            if let Some(old) = self.maps.insert(
                part.tag,
                Mapped {
                    generation: part.generation,
                    ptr,
                    len,
                },
            ) {
                // SAFETY: the replaced mapping is ours and no longer referenced.
                unsafe { libc::munmap(old.ptr.cast(), old.len) };
            }
        }
        let m = &self.maps[&part.tag];
        if (part.offset as usize).saturating_add(part.len as usize) > m.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a contribution lies outside its segment",
            ));
        }
        Ok(())
    }

    /// The bytes of a part mapped with [`Peers::map`].
    pub fn slice(&self, part: &Part) -> &[u8] {
        if part.len == 0 {
            return &[];
        }
        let m = &self.maps[&part.tag];
        // SAFETY: `map` checked the range lies in the mapping; the owner does not write it
        // until every participant is done (the meeting's Free).
        unsafe { std::slice::from_raw_parts(m.ptr.add(part.offset as usize), part.len as usize) }
    }
}

impl Drop for Peers {
    fn drop(&mut self) {
        for m in self.maps.values() {
            // SAFETY: each mapping is ours, unmapped once.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_sees_what_the_owner_wrote_and_growth_unlinks_the_old_name() {
        let mut s = Segment::new();
        s.ensure(10).unwrap();
        s.bytes_mut()[..3].copy_from_slice(b"abc");
        let first = Part {
            rank: 0,
            tag: s.tag(),
            generation: s.generation(),
            offset: 0,
            len: 3,
        };
        let mut p = Peers::default();
        p.map(&first).unwrap();
        assert_eq!(p.slice(&first), b"abc");
        let old = name(s.tag(), s.generation());
        s.ensure(8 << 20).unwrap();
        assert_eq!(s.generation(), 2);
        // SAFETY: a probe open of a name that must be gone.
        let fd = unsafe { libc::shm_open(old.as_ptr(), libc::O_RDONLY, 0) };
        assert!(fd < 0, "the old generation was not unlinked");
        s.bytes_mut()[(8 << 20) - 1] = 9;
        let second = Part {
            offset: (8 << 20) - 1,
            len: 1,
            generation: s.generation(),
            ..first
        };
        p.map(&second).unwrap();
        assert_eq!(p.slice(&second), [9]);
        let past = Part {
            len: 4096,
            ..second
        };
        assert!(p.map(&past).is_err());
        // Dropping the segment unlinks its name.
        let last = name(s.tag(), s.generation());
        drop(s);
        // SAFETY: a probe open of a name that must be gone.
        let fd = unsafe { libc::shm_open(last.as_ptr(), libc::O_RDONLY, 0) };
        assert!(fd < 0, "a dropped segment's name was not unlinked");
        // What was mapped stays readable until the peer drops its mapping.
        assert_eq!(p.slice(&second), [9]);
    }
}
