//! Streams between pairs of ranks: the exchange engine (every rank streams what each peer needs
//! straight to it, all transfers progressing together, in order per peer), the operations that
//! run on it (scatter, the all-to-alls, barrier, the gather of a reduce), and the pipelined
//! chain of a broadcast.

use super::segs::{chunk, chunks};
use crate::devmem::{self, Buf};
use crate::error::stream_code;
use crate::fabric::Fabric;
use crate::ops::Op;
use crate::transport::channel::{Chunk, relay};
use crate::transport::region::Class;
use crate::transport::{Stop, Waiter};
use crate::wire::Tag;
use ascendcl_emu::extension::AclFailure;
use std::collections::VecDeque;

/// Writes bytes `off..off + len` of a transfer into the chunk.
pub(crate) type Source<'a> = Box<dyn FnMut(usize, &mut [u8]) -> Result<(), AclFailure> + 'a>;
/// Takes bytes `off..off + len` of a transfer from the chunk.
pub(crate) type Sink<'a> = Box<dyn FnMut(usize, &mut [u8]) -> Result<(), AclFailure> + 'a>;

/// A transfer this rank sends.
pub(crate) struct Send<'a> {
    pub to: u32,
    pub tag: Tag,
    pub total: usize,
    pub src: Source<'a>,
}

/// A transfer this rank receives.
pub(crate) struct Recv<'a> {
    pub from: u32,
    pub tag: Tag,
    pub total: usize,
    pub dst: Sink<'a>,
}

struct Queue<T> {
    peer: u32,
    items: VecDeque<T>,
    /// The next chunk of the front item.
    next: usize,
}

fn queues<T>(items: Vec<T>, peer: impl Fn(&T) -> u32) -> Vec<Queue<T>> {
    let mut qs: Vec<Queue<T>> = Vec::new();
    for it in items {
        let p = peer(&it);
        match qs.iter_mut().find(|q| q.peer == p) {
            Some(q) => q.items.push_back(it),
            None => qs.push(Queue {
                peer: p,
                items: VecDeque::from([it]),
                next: 0,
            }),
        }
    }
    qs
}

/// Runs `sends` and `recvs` together on channels of `class`, each peer's in the order given;
/// with `sync`, returns only once every peer took all that was sent to it.
pub(crate) fn exchange(
    f: &Fabric,
    w: &Waiter<'_>,
    class: Class,
    sends: Vec<Send<'_>>,
    recvs: Vec<Recv<'_>>,
    sync: bool,
) -> Result<(), Stop> {
    let mut sq = queues(sends, |s| s.to);
    let mut rq = queues(recvs, |r| r.from);
    let txs: Vec<_> = sq.iter().map(|q| f.tx(q.peer, class)).collect();
    let rxs: Vec<_> = rq.iter().map(|q| f.rx(q.peer, class)).collect();
    let cb = f.layout.slot;
    loop {
        let mut moved = false;
        for (q, tx) in sq.iter_mut().zip(&txs) {
            while let Some(s) = q.items.front_mut() {
                if !tx.ready() {
                    break;
                }
                let (off, len) = chunk(s.total, q.next, cb).expect("a chunk left");
                let c = Chunk {
                    tag: s.tag,
                    len,
                    total: s.total,
                };
                tx.send(w, c, |b| (s.src)(off, b))?;
                moved = true;
                q.next += 1;
                if q.next == chunks(s.total, cb) {
                    q.items.pop_front();
                    q.next = 0;
                }
            }
        }
        for (q, rx) in rq.iter_mut().zip(&rxs) {
            while let Some(r) = q.items.front_mut() {
                if !rx.ready() {
                    break;
                }
                let (off, len) = chunk(r.total, q.next, cb).expect("a chunk left");
                let c = Chunk {
                    tag: r.tag,
                    len,
                    total: r.total,
                };
                rx.recv(w, c, |b| (r.dst)(off, b))?;
                moved = true;
                q.next += 1;
                if q.next == chunks(r.total, cb) {
                    q.items.pop_front();
                    q.next = 0;
                }
            }
        }
        let left = sq.iter().any(|q| !q.items.is_empty()) || rq.iter().any(|q| !q.items.is_empty());
        if !left {
            break;
        }
        if !moved {
            w.until(|| {
                let s = sq
                    .iter()
                    .zip(&txs)
                    .any(|(q, t)| !q.items.is_empty() && t.ready());
                let r = rq
                    .iter()
                    .zip(&rxs)
                    .any(|(q, x)| !q.items.is_empty() && x.ready());
                (s || r).then_some(())
            })?;
        }
    }
    if sync {
        for tx in &txs {
            tx.flush(w)?;
        }
    }
    Ok(())
}

/// A transfer from a device buffer.
fn from_dev<'a>(buf: &'a Buf, at: usize) -> Source<'a> {
    Box::new(move |off, b| buf.read(at + off, b))
}

/// A transfer into a device buffer.
fn into_dev<'a>(buf: &'a Buf, at: usize) -> Sink<'a> {
    Box::new(move |off, b| buf.write(at + off, b))
}

/// Broadcast as a pipelined chain from the root: each rank takes every chunk from its
/// predecessor, keeps it and passes it on.
pub(crate) fn broadcast(f: &Fabric, w: &Waiter<'_>, op: &Op, tag: Tag) -> Result<(), Stop> {
    let Op::Broadcast {
        buf,
        count,
        dt,
        root,
        ..
    } = op
    else {
        unreachable!("not a broadcast");
    };
    let (r, n) = (f.rank as usize, f.n as usize);
    let pos = (r + n - *root as usize) % n;
    let total = *count as usize * dt.size();
    let tx = (pos + 1 < n).then(|| f.tx(((r + 1) % n) as u32, Class::Coll));
    let rx = (pos > 0).then(|| f.rx(((r + n - 1) % n) as u32, Class::Coll));
    let cb = f.layout.slot;
    for j in 0..chunks(total, cb) {
        let (off, len) = chunk(total, j, cb).expect("within the buffer");
        let c = Chunk { tag, len, total };
        match (&rx, &tx) {
            (None, Some(tx)) => tx.send(w, c, |s| buf.read(off, s))?,
            (Some(rx), Some(tx)) => relay(w, rx, tx, c, |got, s| {
                s.copy_from_slice(got);
                buf.write(off, got)
            })?,
            (Some(rx), None) => rx.recv(w, c, |got| buf.write(off, got))?,
            (None, None) => {}
        }
    }
    Ok(())
}

/// Scatter, the all-to-alls and barrier, streamed pairwise.
pub(crate) fn run(f: &Fabric, w: &Waiter<'_>, op: &Op, tag: Tag) -> Result<(), Stop> {
    let (r, n) = (f.rank as usize, f.n as usize);
    let peers = || (0..n).filter(move |p| *p != r);
    let mut sends = Vec::new();
    let mut recvs = Vec::new();
    fn send(to: usize, tag: Tag, total: usize, src: Source<'_>) -> Send<'_> {
        Send {
            to: to as u32,
            tag,
            total,
            src,
        }
    }
    fn recv(from: usize, tag: Tag, total: usize, dst: Sink<'_>) -> Recv<'_> {
        Recv {
            from: from as u32,
            tag,
            total,
            dst,
        }
    }
    match op {
        Op::Scatter {
            send: s,
            recv: d,
            count,
            dt,
            root,
        } => {
            let blk = *count as usize * dt.size();
            let root = *root as usize;
            if r == root {
                for p in peers() {
                    sends.push(send(p, tag, blk, from_dev(s, p * blk)));
                }
                devmem::copy(s, r * blk, d, 0, blk)?;
            } else {
                recvs.push(recv(root, tag, blk, into_dev(d, 0)));
            }
        }
        Op::AlltoAll {
            send: s,
            recv: d,
            count,
            dt,
        } => {
            let blk = *count as usize * dt.size();
            for p in peers() {
                sends.push(send(p, tag, blk, from_dev(s, p * blk)));
                recvs.push(recv(p, tag, blk, into_dev(d, p * blk)));
            }
            devmem::copy(s, r * blk, d, r * blk, blk)?;
        }
        Op::AlltoAllV {
            send: s,
            scounts,
            sdispls,
            st,
            recv: d,
            rcounts,
            rdispls,
            rt,
        } => {
            let (ss, rs) = (st.size(), rt.size());
            for p in peers() {
                sends.push(send(
                    p,
                    tag,
                    scounts[p] as usize * ss,
                    from_dev(s, sdispls[p] as usize * ss),
                ));
                recvs.push(recv(
                    p,
                    tag,
                    rcounts[p] as usize * rs,
                    into_dev(d, rdispls[p] as usize * rs),
                ));
            }
            let (mine, room) = (scounts[r] as usize * ss, rcounts[r] as usize * rs);
            if mine != room {
                return Err(Stop::Fault(AclFailure::new(
                    stream_code::TIMEOUT,
                    format!(
                        "rank {r} sends itself {mine} bytes but expects {room} (sendCounts[{r}] \
                         and recvCounts[{r}] differ); the library checks this when the ranks \
                         exchange their counts (HCCL_E_PARA)"
                    ),
                )));
            }
            devmem::copy(
                s,
                sdispls[r] as usize * ss,
                d,
                rdispls[r] as usize * rs,
                mine,
            )?;
        }
        Op::AlltoAllVC {
            send: s,
            matrix,
            st,
            recv: d,
            rt,
        } => {
            let (ss, rs) = (st.size(), rt.size());
            let m = |i: usize, j: usize| matrix[i * n + j] as usize;
            if ss != rs && (0..n).any(|i| m(i, r) > 0) {
                return Err(Stop::Fault(AclFailure::new(
                    stream_code::MEMORY,
                    format!(
                        "sendType and recvType differ in size ({ss} and {rs} bytes): the \
                         elements rank {r} receives do not fit their place"
                    ),
                )));
            }
            let sent_at = |j: usize| (0..j).map(|k| m(r, k) * ss).sum::<usize>();
            let recv_at = |i: usize| (0..i).map(|k| m(k, r) * rs).sum::<usize>();
            for p in peers() {
                sends.push(send(p, tag, m(r, p) * ss, from_dev(s, sent_at(p))));
                recvs.push(recv(p, tag, m(p, r) * rs, into_dev(d, recv_at(p))));
            }
            devmem::copy(s, sent_at(r), d, recv_at(r), m(r, r) * ss)?;
        }
        Op::Barrier => {
            for p in peers() {
                sends.push(send(p, tag, 0, Box::new(|_, _| Ok(()))));
                recvs.push(recv(p, tag, 0, Box::new(|_, _| Ok(()))));
            }
        }
        _ => unreachable!("not a pairwise operation"),
    }
    exchange(f, w, Class::Coll, sends, recvs, false)
}
