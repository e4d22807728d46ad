//! The per-rank layouts of the V-collectives: [`Blocks`] (a count and a displacement per rank)
//! and [`CountMatrix`] (what each rank sends to each), checked when built and again against the
//! communicator and the buffers by each collective.

use crate::error::{Error, Result};

/// One block per rank inside a buffer: block `i` is `count(i)` elements starting at element
/// `displacement(i)` — the `counts` and `displs` arrays of `HcclReduceScatterV`,
/// `HcclAllGatherV` and `HcclAlltoAllV`.
///
/// Built by [`Blocks::packed`] (blocks one after another) or [`Blocks::new`] (any
/// displacements). A collective checks that there is one block per rank, that the buffer holds
/// [`extent`](Blocks::extent) elements, and, for a buffer it writes, that no two blocks
/// overlap ([`overlap`](Blocks::overlap)). Every rank passes the same blocks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Blocks {
    counts: Vec<u64>,
    displs: Vec<u64>,
}

impl Blocks {
    /// Blocks of `counts[i]` elements laid out one after another from element 0.
    ///
    /// ```
    /// let b = hccl::Blocks::packed(&[2, 0, 3])?;
    /// assert_eq!((b.displacement(2), b.extent(), b.total()), (Some(2), 5, 5));
    /// # Ok::<(), hccl::Error>(())
    /// ```
    pub fn packed(counts: &[usize]) -> Result<Blocks> {
        const API: &str = "Blocks::packed";
        let mut displs = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for c in counts {
            displs.push(at);
            at = at
                .checked_add(*c)
                .ok_or_else(|| Error::argument(API, "the counts overflow usize"))?;
        }
        Blocks::build(API, counts, &displs)
    }

    /// Blocks of `counts[i]` elements at `displs[i]`; the two slices have one entry per rank.
    /// Blocks may leave gaps and come in any order.
    pub fn new(counts: &[usize], displs: &[usize]) -> Result<Blocks> {
        const API: &str = "Blocks::new";
        if counts.len() != displs.len() {
            return Err(Error::argument(
                API,
                format!(
                    "{} counts and {} displacements; there must be one of each per rank",
                    counts.len(),
                    displs.len()
                ),
            ));
        }
        Blocks::build(API, counts, displs)
    }

    fn build(api: &'static str, counts: &[usize], displs: &[usize]) -> Result<Blocks> {
        for (i, (c, d)) in counts.iter().zip(displs).enumerate() {
            if c.checked_add(*d).is_none() {
                return Err(Error::argument(
                    api,
                    format!("block {i}: displacement {d} + count {c} overflows usize"),
                ));
            }
        }
        // usize is at most 64 bits wide on every target HCCL supports: the casts are exact.
        Ok(Blocks {
            counts: counts.iter().map(|c| *c as u64).collect(),
            displs: displs.iter().map(|d| *d as u64).collect(),
        })
    }

    /// The number of blocks (one per rank).
    pub fn ranks(&self) -> usize {
        self.counts.len()
    }

    /// Block `rank`'s element count.
    pub fn count(&self, rank: usize) -> Option<usize> {
        self.counts.get(rank).map(|c| *c as usize)
    }

    /// Block `rank`'s first element.
    pub fn displacement(&self, rank: usize) -> Option<usize> {
        self.displs.get(rank).map(|d| *d as usize)
    }

    /// The elements a buffer needs to hold every block: the furthest end of a non-empty block.
    pub fn extent(&self) -> usize {
        self.spans().map(|(_, _, end)| end).max().unwrap_or(0)
    }

    /// The sum of the counts.
    pub fn total(&self) -> usize {
        self.counts.iter().map(|c| *c as usize).sum()
    }

    /// The first two non-empty blocks that share an element, if any.
    pub fn overlap(&self) -> Option<(usize, usize)> {
        let mut spans: Vec<(usize, usize, usize)> = self.spans().collect();
        spans.sort_by_key(|&(_, start, _)| start);
        spans
            .windows(2)
            .find(|w| w[1].1 < w[0].2)
            .map(|w| (w[0].0.min(w[1].0), w[0].0.max(w[1].0)))
    }

    /// `(rank, start, end)` of each non-empty block.
    fn spans(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.counts
            .iter()
            .zip(&self.displs)
            .enumerate()
            .filter(|(_, (c, _))| **c > 0)
            .map(|(i, (c, d))| (i, *d as usize, (*d + *c) as usize))
    }

    pub(crate) fn counts_ptr(&self) -> *const std::ffi::c_void {
        self.counts.as_ptr().cast()
    }

    pub(crate) fn displs_ptr(&self) -> *const std::ffi::c_void {
        self.displs.as_ptr().cast()
    }
}

/// What every rank sends to every rank in `HcclAlltoAllVC`: `get(i, j)` elements from rank `i`
/// to rank `j`. Rank `r` sends its blocks packed in rank order (block `j` starts after the
/// blocks for ranks below `j`) and receives them packed in rank order too. Every rank passes
/// the same matrix.
///
/// ```
/// // Rank 0 sends 1 element to itself and 2 to rank 1; rank 1 sends 3 to rank 0 and none to itself.
/// let m = hccl::CountMatrix::new(2, &[1, 2, 3, 0])?;
/// assert_eq!((m.sent_by(0), m.received_by(0)), (3, 4));
/// # Ok::<(), hccl::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CountMatrix {
    ranks: usize,
    counts: Vec<u64>,
}

impl CountMatrix {
    /// A matrix of `ranks` × `ranks` counts in row-major order: `counts[i * ranks + j]` elements
    /// go from rank `i` to rank `j`.
    pub fn new(ranks: usize, counts: &[usize]) -> Result<CountMatrix> {
        const API: &str = "CountMatrix::new";
        if ranks.checked_mul(ranks) != Some(counts.len()) {
            return Err(Error::argument(
                API,
                format!(
                    "{} counts for {ranks} ranks; a matrix holds ranks × ranks of them",
                    counts.len()
                ),
            ));
        }
        for i in 0..ranks {
            let row = &counts[i * ranks..(i + 1) * ranks];
            let mut col = (0..ranks).map(|k| counts[k * ranks + i]);
            if row
                .iter()
                .try_fold(0usize, |a, c| a.checked_add(*c))
                .is_none()
                || col.try_fold(0usize, |a, c| a.checked_add(c)).is_none()
            {
                return Err(Error::argument(
                    API,
                    format!("the counts of rank {i} overflow usize"),
                ));
            }
        }
        Ok(CountMatrix {
            ranks,
            counts: counts.iter().map(|c| *c as u64).collect(),
        })
    }

    /// A matrix whose entry `(i, j)` is `f(i, j)`.
    pub fn from_fn(ranks: usize, mut f: impl FnMut(usize, usize) -> usize) -> Result<CountMatrix> {
        let counts: Vec<usize> = (0..ranks * ranks)
            .map(|k| f(k / ranks, k % ranks))
            .collect();
        CountMatrix::new(ranks, &counts)
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The elements rank `from` sends to rank `to`.
    pub fn get(&self, from: usize, to: usize) -> Option<usize> {
        (from < self.ranks && to < self.ranks).then(|| self.counts[from * self.ranks + to] as usize)
    }

    /// The elements rank `rank` sends in all (its send buffer's length): the sum of its row.
    pub fn sent_by(&self, rank: usize) -> usize {
        (0..self.ranks).filter_map(|j| self.get(rank, j)).sum()
    }

    /// The elements rank `rank` receives in all (its receive buffer's length): the sum of its
    /// column.
    pub fn received_by(&self, rank: usize) -> usize {
        (0..self.ranks).filter_map(|i| self.get(i, rank)).sum()
    }

    pub(crate) fn as_ptr(&self) -> *const std::ffi::c_void {
        self.counts.as_ptr().cast()
    }
}
