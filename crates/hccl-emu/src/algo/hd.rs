//! Recursive halving and doubling, on a power-of-two number of ranks. The data is in `n`
//! blocks (block `b` ends on rank `b`). The reduce-scatter halves: at distance `d = n/2, n/4,
//! …, 1` rank `r` and its partner `r ^ d` split the blocks they both still hold, each sends the
//! half the other keeps and reduces the half it keeps with what it receives. The all-gather
//! doubles: at distance `d = 1, 2, …, n/2` the partners swap everything they hold. Each step's
//! transfer is chunked, sends and receives interleaved. `log2 n` steps instead of the ring's
//! `n − 1`.
//!
//! A block is reduced as a balanced tree, the lower half of the ranks first at every level;
//! every rank receives the same bits.

use super::segs::{Place, chunk, chunk_bytes, chunks, split};
use crate::dtype::{DType, RedOp};
use crate::fabric::Fabric;
use crate::ops::{Op, with_scratch};
use crate::reduce;
use crate::transport::channel::Chunk;
use crate::transport::region::Class;
use crate::transport::{Stop, Waiter};
use crate::wire::Tag;
use ascendcl_emu::extension::AclFailure;

/// Where the partial reductions live between steps.
enum Acc<'a> {
    /// In the output buffer (all-reduce: block `b` at its own place).
    Dev(&'a Place<'a>),
    /// In a host buffer covering the blocks from `base` (reduce-scatter, whose output holds one
    /// block).
    Host { buf: &'a mut [u8], base: usize },
}

/// The byte range of blocks `lo..lo + k` in the logical layout of `segs`.
fn span(segs: &[(usize, usize)], lo: usize, k: usize) -> (usize, usize) {
    let start = segs[lo].0;
    let end = segs[lo + k - 1].0 + segs[lo + k - 1].1;
    (start, end - start)
}

/// Sends `send` bytes (written by `fill(off, chunk)`) to `peer` while receiving `recv` bytes
/// from it (given to `take(off, chunk)`), chunk by chunk, alternating.
#[allow(clippy::too_many_arguments)]
fn swap(
    f: &Fabric,
    w: &Waiter<'_>,
    tag: Tag,
    peer: u32,
    cb: usize,
    send: usize,
    recv: usize,
    mut fill: impl FnMut(usize, &mut [u8]) -> Result<(), AclFailure>,
    mut take: impl FnMut(usize, &mut [u8]) -> Result<(), AclFailure>,
) -> Result<(), Stop> {
    let tx = f.tx(peer, Class::Coll);
    let rx = f.rx(peer, Class::Coll);
    for j in 0..chunks(send, cb).max(chunks(recv, cb)) {
        if let Some((off, len)) = chunk(send, j, cb) {
            let c = Chunk {
                tag,
                len,
                total: send,
            };
            tx.send(w, c, |b| fill(off, b))?;
        }
        if let Some((off, len)) = chunk(recv, j, cb) {
            let c = Chunk {
                tag,
                len,
                total: recv,
            };
            rx.recv(w, c, |b| take(off, b))?;
        }
    }
    Ok(())
}

/// The halving: leaves block `r` of the reduction in `acc`. Step 0 reads the input (`src`);
/// later steps the partial reductions.
#[allow(clippy::too_many_arguments)]
fn halve(
    f: &Fabric,
    w: &Waiter<'_>,
    tag: Tag,
    segs: &[(usize, usize)],
    cb: usize,
    (dt, op): (DType, RedOp),
    src: &Place<'_>,
    acc: &mut Acc<'_>,
) -> Result<(), Stop> {
    let (r, n) = (f.rank as usize, f.n as usize);
    let (mut lo, mut blocks) = (0usize, n);
    let mut d = n / 2;
    let mut first = true;
    while d >= 1 {
        let partner = (r ^ d) as u32;
        let half = blocks / 2;
        let (keep, give) = if r & d == 0 {
            (lo, lo + half)
        } else {
            (lo + half, lo)
        };
        let (k_at, k_len) = span(segs, keep, half);
        let (g_at, g_len) = span(segs, give, half);
        // Partials combine as (lower ranks' value) op (higher ranks' value).
        let mine_first = (r as u32) < partner;
        // `theirs := mine op theirs` in that order.
        let into_theirs = |theirs: &mut [u8], mine: &[u8]| {
            if mine_first {
                reduce::reduce_into_rev(dt, op, theirs, mine)
            } else {
                reduce::reduce_into(dt, op, theirs, mine)
            }
        };
        // `acc := acc op theirs` in that order.
        let into_acc = |a: &mut [u8], theirs: &[u8]| {
            if mine_first {
                reduce::reduce_into(dt, op, a, theirs)
            } else {
                reduce::reduce_into_rev(dt, op, a, theirs)
            }
        };
        match acc {
            Acc::Dev(p) => {
                let fill = |off: usize, b: &mut [u8]| {
                    let from = if first { src.buf } else { p.buf };
                    from.read(g_at + off, b)
                };
                let take = |off: usize, theirs: &mut [u8]| {
                    if first {
                        src.buf
                            .with(k_at + off, theirs.len(), |mine| into_theirs(theirs, mine))?;
                        p.buf.write(k_at + off, theirs)
                    } else {
                        p.buf
                            .with_mut(k_at + off, theirs.len(), |a| into_acc(a, theirs))
                    }
                };
                swap(f, w, tag, partner, cb, g_len, k_len, fill, take)?;
            }
            Acc::Host { buf, base } => {
                let base = *base;
                // The kept and given halves are disjoint parts of the buffer (the given one
                // comes from the input on the first step).
                let (kept, given): (&mut [u8], &[u8]) = if first {
                    (&mut buf[k_at - base..][..k_len], &[])
                } else if k_at < g_at {
                    let (a, b) = buf.split_at_mut(g_at - base);
                    (&mut a[k_at - base..][..k_len], &b[..g_len])
                } else {
                    let (a, b) = buf.split_at_mut(k_at - base);
                    (&mut b[..k_len], &a[g_at - base..][..g_len])
                };
                let fill = |off: usize, b: &mut [u8]| {
                    if first {
                        src.buf.read(g_at + off, b)
                    } else {
                        b.copy_from_slice(&given[off..off + b.len()]);
                        Ok(())
                    }
                };
                let take = |off: usize, theirs: &mut [u8]| {
                    let a = &mut kept[off..off + theirs.len()];
                    if first {
                        src.buf
                            .with(k_at + off, theirs.len(), |mine| into_theirs(theirs, mine))?;
                        a.copy_from_slice(theirs);
                    } else {
                        into_acc(a, theirs);
                    }
                    Ok(())
                };
                swap(f, w, tag, partner, cb, g_len, k_len, fill, take)?;
            }
        }
        lo = keep;
        blocks = half;
        d /= 2;
        first = false;
    }
    Ok(())
}

/// The doubling: from block `r` in `out`, every block.
fn double(
    f: &Fabric,
    w: &Waiter<'_>,
    tag: Tag,
    segs: &[(usize, usize)],
    cb: usize,
    out: &Place<'_>,
) -> Result<(), Stop> {
    let (r, n) = (f.rank as usize, f.n as usize);
    let (mut lo, mut k) = (r, 1usize);
    let mut d = 1;
    while d < n {
        let partner = r ^ d;
        let plo = lo ^ d;
        let (m_at, m_len) = span(segs, lo, k);
        let (p_at, p_len) = span(segs, plo, k);
        swap(
            f,
            w,
            tag,
            partner as u32,
            cb,
            m_len,
            p_len,
            |off, b| out.buf.read(m_at + off, b),
            |off, b| out.buf.write(p_at + off, b),
        )?;
        lo = lo.min(plo);
        k *= 2;
        d *= 2;
    }
    Ok(())
}

/// Runs the halving-doubling forms.
pub(crate) fn run(f: &Fabric, w: &Waiter<'_>, op: &Op, tag: Tag) -> Result<(), Stop> {
    let (r, n) = (f.rank as usize, f.n as usize);
    match op {
        Op::AllReduce {
            send,
            recv,
            count,
            dt,
            op,
        } => {
            let segs = split(*count, dt.size(), n);
            let cb = chunk_bytes(f.layout.slot, dt.size());
            let src = Place::all(send, segs.iter().map(|s| s.0));
            let out = Place::all(recv, segs.iter().map(|s| s.0));
            halve(f, w, tag, &segs, cb, (*dt, *op), &src, &mut Acc::Dev(&out))?;
            double(f, w, tag, &segs, cb, &out)
        }
        Op::ReduceScatter {
            send,
            recv,
            count,
            dt,
            op,
        } => {
            let blk = *count as usize * dt.size();
            let segs: Vec<(usize, usize)> = (0..n).map(|g| (g * blk, blk)).collect();
            let cb = chunk_bytes(f.layout.slot, dt.size());
            let src = Place::all(send, segs.iter().map(|s| s.0));
            // The partials of the kept half of the first step, then of its halves.
            let half = n / 2 * blk;
            let base = if r & (n / 2) == 0 { 0 } else { half };
            with_scratch(half, |buf| {
                halve(
                    f,
                    w,
                    tag,
                    &segs,
                    cb,
                    (*dt, *op),
                    &src,
                    &mut Acc::Host { buf, base },
                )?;
                let own = &buf[r * blk - base..][..blk];
                recv.write(0, own).map_err(Stop::Fault)
            })
        }
        Op::AllGather {
            send,
            recv,
            count,
            dt,
        } => {
            let blk = *count as usize * dt.size();
            let segs: Vec<(usize, usize)> = (0..n).map(|g| (g * blk, blk)).collect();
            let cb = chunk_bytes(f.layout.slot, dt.size());
            crate::devmem::copy(send, 0, recv, r * blk, blk)?;
            double(
                f,
                w,
                tag,
                &segs,
                cb,
                &Place::all(recv, segs.iter().map(|s| s.0)),
            )
        }
        _ => unreachable!("not a halving-doubling operation"),
    }
}
