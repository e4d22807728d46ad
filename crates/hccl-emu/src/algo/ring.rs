//! The ring: rank `r` sends to `r + 1` and receives from `r − 1`. The data is cut into `n`
//! segments, each into slot-sized chunks; for every chunk index, the reduce-scatter passes each
//! segment's partial reduction around the ring (rank `g + 1` starts segment `g`, each rank adds
//! its own input, rank `g` ends with the result), then the all-gather passes every finished
//! segment around once more. All ranks work at once: while one reduces a chunk, its neighbours
//! send and reduce theirs, up to the channel's window ahead.
//!
//! Segment `g` is reduced in the order `g + 1, g + 2, …, g` (around the ring), deterministic
//! for a given size and number of ranks, and every rank receives the same bits.

use super::direct::{self, Recv, Send};
use super::segs::{Place, chunk, chunk_bytes, chunks, split, streams};
use crate::dtype::{DType, RedOp};
use crate::fabric::Fabric;
use crate::ops::Op;
use crate::reduce;
use crate::transport::channel::{Chunk, relay};
use crate::transport::region::Class;
use crate::transport::{Stop, Waiter};
use crate::wire::Tag;
use ascendcl_emu::extension::AclFailure;

/// Where a rank's reduced segment goes.
pub(crate) enum Out<'a> {
    /// Device memory.
    Dev(Place<'a>),
    /// A host buffer holding only this rank's segment (a reduce's non-root ranks).
    Host(&'a mut [u8]),
}

impl Out<'_> {
    fn write(&mut self, g: usize, off: usize, data: &[u8]) -> Result<(), AclFailure> {
        match self {
            Out::Dev(p) => p.write(g, off, data),
            Out::Host(h) => {
                h[off..off + data.len()].copy_from_slice(data);
                Ok(())
            }
        }
    }

    fn addr(&self, g: usize) -> Option<usize> {
        match self {
            Out::Dev(p) => p.addr(g),
            Out::Host(_) => None,
        }
    }
}

/// The ring over segments of `lens` bytes (elements of `es` bytes): reduce-scatter when `red`
/// is given, then all-gather when `gather`. `src` holds the segments this rank contributes,
/// `out` receives the ones it ends with.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ring(
    f: &Fabric,
    w: &Waiter<'_>,
    tag: Tag,
    lens: &[usize],
    es: usize,
    red: Option<(DType, RedOp)>,
    gather: bool,
    src: &Place<'_>,
    out: &mut Out<'_>,
) -> Result<(), Stop> {
    let (r, n) = (f.rank as usize, f.n as usize);
    let tx = f.tx(((r + 1) % n) as u32, Class::Coll);
    let rx = f.rx(((r + n - 1) % n) as u32, Class::Coll);
    let cb = chunk_bytes(tx.slot_len(), es);
    let nch = lens.iter().map(|l| chunks(*l, cb)).max().unwrap_or(1);
    let mk = |g: usize, len: usize| Chunk {
        tag,
        len,
        total: lens[g],
    };
    for j in 0..nch {
        if let Some((dt, op)) = red {
            for t in 0..n {
                let g = (r + 2 * n - 1 - t) % n;
                let Some((off, len)) = chunk(lens[g], j, cb) else {
                    continue;
                };
                let c = mk(g, len);
                if t == 0 {
                    tx.send(w, c, |slot| {
                        src.with(g, off, len, |b| slot.copy_from_slice(b))
                    })?;
                } else if t < n - 1 {
                    relay(w, &rx, &tx, c, |got, slot| {
                        src.with(g, off, len, |mine| {
                            reduce::reduce_to(dt, op, slot, got, mine)
                        })
                    })?;
                } else if gather {
                    // This rank's segment is done: keep it, and send it on as the all-gather's
                    // first step.
                    relay(w, &rx, &tx, c, |got, slot| {
                        src.with(g, off, len, |mine| {
                            reduce::reduce_to(dt, op, slot, got, mine)
                        })?;
                        out.write(g, off, slot)
                    })?;
                } else {
                    rx.recv(w, c, |got| {
                        src.with(g, off, len, |mine| reduce::reduce_into(dt, op, got, mine))?;
                        out.write(g, off, got)
                    })?;
                }
            }
        } else if let Some((off, len)) = chunk(lens[r], j, cb) {
            // The all-gather alone starts with this rank's own segment.
            let in_place = src.addr(r).is_some() && src.addr(r) == out.addr(r);
            tx.send(w, mk(r, len), |slot| {
                src.with(r, off, len, |b| slot.copy_from_slice(b))?;
                if in_place {
                    Ok(())
                } else {
                    out.write(r, off, slot)
                }
            })?;
        }
        if gather {
            for t in 1..n {
                let g = (r + n - t) % n;
                let Some((off, len)) = chunk(lens[g], j, cb) else {
                    continue;
                };
                let c = mk(g, len);
                if t < n - 1 {
                    relay(w, &rx, &tx, c, |got, slot| {
                        slot.copy_from_slice(got);
                        out.write(g, off, got)
                    })?;
                } else {
                    rx.recv(w, c, |got| out.write(g, off, got))?;
                }
            }
        }
    }
    Ok(())
}

/// Runs the ring forms of the operations.
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
            let lens: Vec<usize> = segs.iter().map(|s| s.1).collect();
            let src = Place::all(send, segs.iter().map(|s| s.0));
            let stream = streams(*count as usize * dt.size(), f.local.len());
            let mut out = Out::Dev(Place::all(recv, segs.iter().map(|s| s.0)).streaming(stream));
            ring(
                f,
                w,
                tag,
                &lens,
                dt.size(),
                Some((*dt, *op)),
                true,
                &src,
                &mut out,
            )
        }
        Op::ReduceScatter {
            send,
            recv,
            count,
            dt,
            op,
        } => {
            let blk = *count as usize * dt.size();
            let src = Place::all(send, (0..n).map(|g| g * blk));
            let mut out = Out::Dev(Place::only(recv, n, r, 0));
            ring(
                f,
                w,
                tag,
                &vec![blk; n],
                dt.size(),
                Some((*dt, *op)),
                false,
                &src,
                &mut out,
            )
        }
        Op::ReduceScatterV {
            send,
            counts,
            displs,
            recv,
            dt,
            op,
        } => {
            let es = dt.size();
            let lens: Vec<usize> = counts.iter().map(|c| *c as usize * es).collect();
            let src = Place::all(send, displs.iter().map(|d| *d as usize * es));
            let mut out = Out::Dev(Place::only(recv, n, r, 0));
            ring(
                f,
                w,
                tag,
                &lens,
                es,
                Some((*dt, *op)),
                false,
                &src,
                &mut out,
            )
        }
        Op::AllGather {
            send,
            recv,
            count,
            dt,
        } => {
            let blk = *count as usize * dt.size();
            let src = Place::only(send, n, r, 0);
            let stream = streams(blk * n, f.local.len());
            let mut out = Out::Dev(Place::all(recv, (0..n).map(|g| g * blk)).streaming(stream));
            ring(
                f,
                w,
                tag,
                &vec![blk; n],
                dt.size(),
                None,
                true,
                &src,
                &mut out,
            )
        }
        Op::AllGatherV {
            send,
            recv,
            counts,
            displs,
            dt,
            ..
        } => {
            let es = dt.size();
            let lens: Vec<usize> = counts.iter().map(|c| *c as usize * es).collect();
            let src = Place::only(send, n, r, 0);
            let mut out = Out::Dev(Place::all(recv, displs.iter().map(|d| *d as usize * es)));
            ring(f, w, tag, &lens, es, None, true, &src, &mut out)
        }
        Op::Reduce {
            send,
            recv,
            count,
            dt,
            op,
            root,
        } => {
            // A reduce-scatter around the ring, then every rank's segment to the root.
            let root = *root as usize;
            let segs = split(*count, dt.size(), n);
            let lens: Vec<usize> = segs.iter().map(|s| s.1).collect();
            let src = Place::all(send, segs.iter().map(|s| s.0));
            let mut mine = vec![0u8; if r == root { 0 } else { lens[r] }];
            {
                let mut out = if r == root {
                    Out::Dev(Place::only(recv, n, r, segs[r].0))
                } else {
                    Out::Host(&mut mine)
                };
                ring(
                    f,
                    w,
                    tag,
                    &lens,
                    dt.size(),
                    Some((*dt, *op)),
                    false,
                    &src,
                    &mut out,
                )?;
            }
            if r == root {
                let segs = &segs;
                let recvs = (0..n)
                    .filter(|g| *g != root)
                    .map(|g| Recv {
                        from: g as u32,
                        tag,
                        total: lens[g],
                        dst: Box::new(move |off: usize, b: &mut [u8]| {
                            recv.write(segs[g].0 + off, b)
                        }),
                    })
                    .collect();
                direct::exchange(f, w, Class::Coll, Vec::new(), recvs, false)
            } else {
                let mine = &mine;
                let send = Send {
                    to: root as u32,
                    tag,
                    total: lens[r],
                    src: Box::new(move |off: usize, b: &mut [u8]| {
                        b.copy_from_slice(&mine[off..off + b.len()]);
                        Ok(())
                    }),
                };
                direct::exchange(f, w, Class::Coll, vec![send], Vec::new(), false)
            }
        }
        _ => unreachable!("not a ring operation"),
    }
}
