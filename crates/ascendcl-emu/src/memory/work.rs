//! The copy engine's units of stream work: queued copies (plain, staged, pitched, described by a
//! descriptor in device memory), memsets and 32-bit fills, and managed-memory prefetches. Each
//! names the memory it touches, validated when it was queued; the engine checks it is still live
//! before it runs.

use crate::base::error::*;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Work};
use crate::memory::{self, Loc, Side, access};

/// Copies `len` bytes (`aclrtMemcpyAsync`, the queued entries of a batch).
#[derive(Debug)]
pub(crate) struct Copy {
    pub dst: usize,
    pub src: usize,
    pub len: usize,
    pub sides: [Side; 2],
}

impl Work for Copy {
    fn memory(&self) -> &[Side] {
        &self.sides
    }

    fn run(&self, _: &Cx<'_>) -> R {
        let [ds, ss] = self.sides;
        // SAFETY: both ranges were validated against the allocation table when queued (live
        // allocations, or caller-vouched pinned memory) and their allocations are still live;
        // the copy tolerates overlap.
        unsafe { access::copy(self.dst, ds, self.src, ss, self.len) };
        Ok(())
    }

    fn describe(&self) -> Task {
        copy_task(self.sides, self.len as u64)
    }
}

/// The direction of a copy from `src` to `dst`, as the runtime's kinds name it.
fn direction(dst: Side, src: Side) -> &'static str {
    match (
        matches!(src.loc, Loc::Device(_)),
        matches!(dst.loc, Loc::Device(_)),
    ) {
        (false, false) => "H2H",
        (false, true) => "H2D",
        (true, false) => "D2H",
        (true, true) => "D2D",
    }
}

/// A copy's description: `memcpy <direction>`, its direction and bytes.
fn copy_task([dst, src]: [Side; 2], bytes: u64) -> Task {
    let d = direction(dst, src);
    Task::new(format!("memcpy {d}"), "copy")
        .text("direction", d)
        .num("bytes", bytes)
}

/// Copies bytes staged when the copy was queued (`ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`).
#[derive(Debug)]
pub(crate) struct StagedCopy {
    pub dst: usize,
    pub data: Vec<u8>,
    pub side: Side,
}

impl Work for StagedCopy {
    fn memory(&self) -> &[Side] {
        std::slice::from_ref(&self.side)
    }

    fn run(&self, _: &Cx<'_>) -> R {
        // SAFETY: as for Copy; the source is our own staging buffer.
        unsafe { access::write(self.dst, self.side, &self.data) };
        Ok(())
    }

    fn describe(&self) -> Task {
        copy_task([self.side, Side::PAGEABLE], self.data.len() as u64).text("staged", "yes")
    }
}

/// Fills `len` bytes with `val` (`aclrtMemsetAsync`).
#[derive(Debug)]
pub(crate) struct Memset {
    pub dst: usize,
    pub val: u8,
    pub len: usize,
    pub side: Side,
}

impl Work for Memset {
    fn memory(&self) -> &[Side] {
        std::slice::from_ref(&self.side)
    }

    fn run(&self, _: &Cx<'_>) -> R {
        // SAFETY: the range was validated when queued and its allocation is still live.
        unsafe { access::fill(self.dst, self.side, self.val, self.len) };
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("memset", "memset").num("bytes", self.len as u64)
    }
}

/// A pitched 2D copy (`aclrtMemcpy2dAsync`).
#[derive(Debug)]
pub(crate) struct PitchedCopy {
    pub dst: usize,
    pub dpitch: usize,
    pub src: usize,
    pub spitch: usize,
    pub width: usize,
    pub height: usize,
    pub sides: [Side; 2],
}

impl Work for PitchedCopy {
    fn memory(&self) -> &[Side] {
        &self.sides
    }

    fn run(&self, _: &Cx<'_>) -> R {
        // SAFETY: the whole pitched ranges were validated when queued.
        let [ds, ss] = self.sides;
        // SAFETY: as just said.
        unsafe {
            access::copy_2d(
                (self.dst, ds, self.dpitch),
                (self.src, ss, self.spitch),
                self.width,
                self.height,
            )
        };
        Ok(())
    }

    fn describe(&self) -> Task {
        copy_task(self.sides, (self.width * self.height) as u64)
            .num("width", self.width as u64)
            .num("height", self.height as u64)
    }
}

/// Fills 32-bit words (`aclrtMemsetD32Async`).
#[derive(Debug)]
pub(crate) struct Fill32 {
    pub dst: usize,
    pub value: u32,
    pub words: usize,
    pub side: Side,
}

impl Work for Fill32 {
    fn memory(&self) -> &[Side] {
        std::slice::from_ref(&self.side)
    }

    fn run(&self, _: &Cx<'_>) -> R {
        // SAFETY: validated as words * 4 bytes of a live allocation when queued.
        unsafe { access::fill32(self.dst, self.side, self.value, self.words) };
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("memset D32", "memset").num("bytes", self.words as u64 * 4)
    }
}

/// A copy described by a descriptor in device memory, read when the work runs
/// (`aclrtMemcpyAsyncWithDesc`).
#[derive(Debug)]
pub(crate) struct DescribedCopy {
    pub desc: usize,
    pub side: Side,
}

impl Work for DescribedCopy {
    fn memory(&self) -> &[Side] {
        std::slice::from_ref(&self.side)
    }

    fn run(&self, _: &Cx<'_>) -> R {
        let desc = self.desc;
        // SAFETY: the descriptor was validated as 32 bytes of live device memory.
        let b: [u8; 24] = unsafe { access::read_array(desc, self.side) };
        let word = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let len = u32::from_ne_bytes(b[..4].try_into().expect("4 bytes")) as usize;
        let (src, dst) = (word(8) as usize, word(16) as usize);
        let t = memory::read();
        let d = t.check("dst", dst, len);
        let s = t.check("src", src, len);
        match (d, s) {
            (Ok(d), Ok(s))
                if matches!(d.loc, Loc::Device(_)) && matches!(s.loc, Loc::Device(_)) =>
            {
                // SAFETY: both ranges are live device memory, just validated under the table
                // lock (still held).
                unsafe { access::copy(dst, d, src, s, len) };
                Ok(())
            }
            _ => fail(
                RT_INTERNAL_ERROR,
                format!(
                    "the memcpy descriptor at {desc:#x} names {len} bytes from {src:#x} to \
                     {dst:#x}, which are not live device memory"
                ),
            ),
        }
    }

    fn describe(&self) -> Task {
        Task::new("memcpy D2D (descriptor)", "copy").text("direction", "D2D")
    }
}

/// Managed ranges prefetched (`aclrtMemManagedPrefetch[Batch]Async`): host and device share the
/// address space, so the pages stay where they are; the work only checks (as every unit of work
/// does) that the memory is still allocated.
#[derive(Debug)]
pub(crate) struct Prefetch {
    pub sides: Vec<Side>,
}

impl Work for Prefetch {
    fn memory(&self) -> &[Side] {
        &self.sides
    }

    fn run(&self, _: &Cx<'_>) -> R {
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("prefetch", "copy").num("ranges", self.sides.len() as u64)
    }
}
