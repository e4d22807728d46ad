//! Every access the HCCL emulator makes to emulated device memory: the buffers of an operation
//! are validated when it is issued, and read or written only here, when its stream task runs.
//! A buffer that is not device memory of the communicator's device, or was freed before the
//! task ran, fails the task (as it fails on the device), not the call.
//!
//! Accesses hold the runtime's allocation table for their duration (no allocation can be freed
//! meanwhile), one range at a time: an access never nests another, and never waits for a peer.

use crate::error::stream_code;
use ascendcl_emu::extension::{self, AclFailure, MemoryLocation, MemoryRange};

/// A device buffer of an operation: validated when issued, accessed when the task runs.
#[derive(Debug, Clone)]
pub(crate) struct Buf(Result<MemoryRange, AclFailure>);

impl Buf {
    /// Validates `len` bytes at `addr` as device memory of `device`.
    pub fn new(what: &str, addr: usize, len: usize, device: i32) -> Buf {
        let r = extension::check_range(what, addr, len)
            .map_err(|f| AclFailure::new(stream_code::MEMORY, f.message))
            .and_then(|m| match m.location() {
                MemoryLocation::Device(d) if d == device => Ok(m),
                other => {
                    let is = match other {
                        MemoryLocation::Device(d) => format!("device {d} memory"),
                        MemoryLocation::PinnedHost => "pinned host memory".to_string(),
                        MemoryLocation::Pageable => {
                            "host memory the runtime did not allocate".to_string()
                        }
                    };
                    Err(AclFailure::new(
                        stream_code::MEMORY,
                        format!(
                            "{what} {addr:#x} is {is}; the buffers of a collective must be \
                             device memory of the communicator's device {device} (the call \
                             succeeds and the operation fails on the device, as on hardware)"
                        ),
                    ))
                }
            });
        Buf(r)
    }

    /// A buffer of no bytes (a NULL pointer where the operation allows one).
    pub fn none() -> Buf {
        Buf(Err(AclFailure::new(
            stream_code::MEMORY,
            "a NULL buffer was used".to_string(),
        )))
    }

    /// Fails as an access would when the buffer is not usable.
    pub fn check(&self) -> Result<(), AclFailure> {
        self.0.as_ref().map(|_| ()).map_err(Clone::clone)
    }

    /// The first byte's address, for a usable buffer (to tell operations in place).
    pub fn addr(&self) -> Option<usize> {
        self.0.as_ref().ok().map(|m| m.addr())
    }

    fn range(&self, off: usize, len: usize) -> Result<&MemoryRange, AclFailure> {
        let m = self.0.as_ref().map_err(Clone::clone)?;
        if off.checked_add(len).is_none_or(|end| end > m.len()) {
            return Err(AclFailure::new(
                stream_code::MEMORY,
                format!(
                    "an access of {len} bytes at offset {off} runs past the {}-byte buffer at \
                     {:#x}",
                    m.len(),
                    m.addr()
                ),
            ));
        }
        Ok(m)
    }

    /// Runs `f` on `len` bytes from offset `off`.
    pub fn with<T>(
        &self,
        off: usize,
        len: usize,
        f: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, AclFailure> {
        if len == 0 {
            return Ok(f(&[]));
        }
        let m = self.range(off, len)?;
        m.with_live(|p| {
            // SAFETY: the range was validated as a live device allocation holding off+len bytes
            // (checked above), and `with_live` keeps it from being freed while `f` runs. Nothing
            // else writes it meanwhile: the caller's contract (HCCL's) reserves an operation's
            // buffers to it until the stream has run it.
            f(unsafe { std::slice::from_raw_parts(p.add(off), len) })
        })
    }

    /// Runs `f` on `len` writable bytes from offset `off`.
    pub fn with_mut<T>(
        &self,
        off: usize,
        len: usize,
        f: impl FnOnce(&mut [u8]) -> T,
    ) -> Result<T, AclFailure> {
        if len == 0 {
            return Ok(f(&mut []));
        }
        let m = self.range(off, len)?;
        m.with_live(|p| {
            // SAFETY: as in `with`; the caller's contract also gives the operation exclusive use
            // of its output while it runs, and no other access of this emulator is live (accesses
            // never nest).
            f(unsafe { std::slice::from_raw_parts_mut(p.add(off), len) })
        })
    }

    /// Copies `out.len()` bytes from offset `off` of the buffer.
    pub fn read(&self, off: usize, out: &mut [u8]) -> Result<(), AclFailure> {
        self.with(off, out.len(), |b| out.copy_from_slice(b))
    }

    /// Copies `data` to offset `off` of the buffer.
    pub fn write(&self, off: usize, data: &[u8]) -> Result<(), AclFailure> {
        self.with_mut(off, data.len(), |b| b.copy_from_slice(data))
    }

    /// As [`Buf::write`], with stores that bypass the caches: for outputs too large to stay
    /// cached, which would otherwise be read from memory before each line is overwritten.
    pub fn write_streaming(&self, off: usize, data: &[u8]) -> Result<(), AclFailure> {
        self.with_mut(off, data.len(), |b| stream_copy(b, data))
    }
}

/// `dst.copy_from_slice(src)` with non-temporal stores where the target has them.
fn stream_copy(dst: &mut [u8], src: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        const LINE: usize = 64;
        if dst.len() >= 4 * LINE {
            // The unaligned head and tail go the ordinary way, the lines between streamed.
            let head = dst.as_ptr().align_offset(16).min(dst.len());
            let body = (dst.len() - head) / LINE * LINE;
            dst[..head].copy_from_slice(&src[..head]);
            let (d, s) = (&mut dst[head..head + body], &src[head..head + body]);
            for (dl, sl) in d.chunks_exact_mut(LINE).zip(s.chunks_exact(LINE)) {
                let (dp, sp) = (
                    dl.as_mut_ptr().cast::<__m128i>(),
                    sl.as_ptr().cast::<__m128i>(),
                );
                // SAFETY: SSE2 is part of x86-64; the source line is 64 readable bytes (loads
                // need no alignment), the destination line 64 writable bytes aligned to 16 (the
                // head was copied up to that), as the streaming stores need.
                unsafe {
                    for k in 0..4 {
                        _mm_stream_si128(dp.add(k), _mm_loadu_si128(sp.add(k)));
                    }
                }
            }
            dst[head + body..].copy_from_slice(&src[head + body..]);
            // SAFETY: SSE2; orders the streaming stores before whatever follows.
            unsafe { _mm_sfence() };
            return;
        }
    }
    dst.copy_from_slice(src);
}

/// Copies `len` bytes from `src` at `soff` to `dst` at `doff` (nothing when they are the same
/// bytes), through a bounce buffer of the calling thread, since accesses never nest.
pub(crate) fn copy(
    src: &Buf,
    soff: usize,
    dst: &Buf,
    doff: usize,
    len: usize,
) -> Result<(), AclFailure> {
    if len == 0 {
        return Ok(());
    }
    if let (Some(s), Some(d)) = (src.addr(), dst.addr())
        && s + soff == d + doff
    {
        return src
            .with(soff, len, |_| ())
            .and_then(|()| dst.with(doff, len, |_| ()));
    }
    const BOUNCE: usize = 256 << 10;
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUF.with(|b| {
        let mut b = b.borrow_mut();
        b.resize(BOUNCE.min(len), 0);
        let mut at = 0;
        while at < len {
            let k = (len - at).min(b.len());
            src.read(soff + at, &mut b[..k])?;
            dst.write(doff + at, &b[..k])?;
            at += k;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::stream_copy;

    #[test]
    fn streaming_copies_equal_ordinary_ones_at_every_alignment_and_length() {
        let src: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
        for start in [0usize, 1, 7, 16, 33] {
            for len in [0usize, 1, 63, 64, 255, 256, 257, 1000, 4096 + 17] {
                let mut dst = vec![0xEEu8; 5000 + 64];
                stream_copy(&mut dst[start..start + len], &src[3..3 + len]);
                assert_eq!(&dst[start..start + len], &src[3..3 + len], "{start} {len}");
                assert!(
                    dst[..start].iter().all(|b| *b == 0xEE),
                    "before {start} {len}"
                );
                assert!(
                    dst[start + len..].iter().all(|b| *b == 0xEE),
                    "after {start} {len}"
                );
            }
        }
    }
}
