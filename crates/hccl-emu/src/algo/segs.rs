//! Data layouts shared by the algorithms: a buffer cut into per-rank segments, where each
//! segment lies in the input and the output, and its slot-sized chunks.

use crate::devmem::Buf;
use ascendcl_emu::extension::AclFailure;

/// `count` elements of `es` bytes in `parts` segments as equal as possible (the first ones one
/// element longer): the byte offset and length of each.
pub(crate) fn split(count: u64, es: usize, parts: usize) -> Vec<(usize, usize)> {
    let count = count as usize;
    let (q, rem) = (count / parts, count % parts);
    let mut at = 0;
    (0..parts)
        .map(|g| {
            let len = (q + usize::from(g < rem)) * es;
            let s = (at, len);
            at += len;
            s
        })
        .collect()
}

/// The bytes of a chunk: the largest multiple of the element size within a slot.
pub(crate) fn chunk_bytes(slot: usize, es: usize) -> usize {
    (slot / es).max(1) * es
}

/// Chunk `j` of a segment of `len` bytes in chunks of `cb`: its offset and length, or `None`
/// past the end (a segment of no bytes has one empty chunk, so that every segment is sent).
pub(crate) fn chunk(len: usize, j: usize, cb: usize) -> Option<(usize, usize)> {
    if len == 0 {
        return (j == 0).then_some((0, 0));
    }
    let off = j * cb;
    (off < len).then(|| (off, cb.min(len - off)))
}

/// The number of chunks of a segment of `len` bytes.
pub(crate) fn chunks(len: usize, cb: usize) -> usize {
    len.div_ceil(cb).max(1)
}

/// Where each segment lies in a device buffer: segment `g` at byte `at[g]`, when this rank
/// has it there.
#[derive(Debug)]
pub(crate) struct Place<'a> {
    pub buf: &'a Buf,
    pub at: Vec<Option<usize>>,
    /// Whether writes bypass the caches (outputs too large to stay cached).
    pub streaming: bool,
}

/// The output bytes of the ranks of one server from which outputs are written with streaming
/// stores: beyond what the caches of a host hold, they are only slowed by being read first.
const STREAMING_BYTES: usize = 16 << 20;

/// Whether an output of `bytes` per rank, on a server of `local` ranks, is streamed.
pub(crate) fn streams(bytes: usize, local: usize) -> bool {
    bytes.saturating_mul(local) >= STREAMING_BYTES
}

impl<'a> Place<'a> {
    /// Every segment at its offset.
    pub fn all(buf: &'a Buf, offsets: impl IntoIterator<Item = usize>) -> Place<'a> {
        Place {
            buf,
            at: offsets.into_iter().map(Some).collect(),
            streaming: false,
        }
    }

    /// Only segment `g`, at `off`, of `n`.
    pub fn only(buf: &'a Buf, n: usize, g: usize, off: usize) -> Place<'a> {
        let mut at = vec![None; n];
        at[g] = Some(off);
        Place {
            buf,
            at,
            streaming: false,
        }
    }

    /// With streaming writes when `on`.
    pub fn streaming(mut self, on: bool) -> Place<'a> {
        self.streaming = on;
        self
    }

    fn at(&self, g: usize) -> usize {
        self.at[g].expect("the algorithm touches only segments this rank holds")
    }

    /// Runs `f` on `len` bytes at `off` of segment `g`.
    pub fn with<T>(
        &self,
        g: usize,
        off: usize,
        len: usize,
        f: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, AclFailure> {
        self.buf.with(self.at(g) + off, len, f)
    }

    /// Writes `data` at `off` of segment `g`.
    pub fn write(&self, g: usize, off: usize, data: &[u8]) -> Result<(), AclFailure> {
        if self.streaming {
            self.buf.write_streaming(self.at(g) + off, data)
        } else {
            self.buf.write(self.at(g) + off, data)
        }
    }

    /// The address of segment `g` (to tell when an input segment is the output's).
    pub fn addr(&self, g: usize) -> Option<usize> {
        Some(self.buf.addr()? + self.at[g]?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_the_buffer_and_chunks_cover_segments() {
        let s = split(10, 4, 3);
        assert_eq!(s, vec![(0, 16), (16, 12), (28, 12)]);
        assert_eq!(split(2, 4, 4), vec![(0, 4), (4, 4), (8, 0), (8, 0)]);
        assert_eq!(chunk_bytes(10, 4), 8);
        assert_eq!(chunk(20, 0, 8), Some((0, 8)));
        assert_eq!(chunk(20, 2, 8), Some((16, 4)));
        assert_eq!(chunk(20, 3, 8), None);
        assert_eq!(chunk(0, 0, 8), Some((0, 0)));
        assert_eq!(chunks(0, 8), 1);
        assert_eq!(chunks(17, 8), 3);
    }
}
