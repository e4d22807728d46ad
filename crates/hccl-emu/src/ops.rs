//! The operations: what each one is (its validated arguments and its signature, which every
//! participant must agree on), and for the one-shot algorithm what each rank contributes and
//! how it computes its own output from every rank's contribution.

use crate::devmem::Buf;
use crate::dtype::{DType, RedOp};
use crate::error::stream_code;
use crate::reduce;
use crate::wire::{Kind, Sig};
use ascendcl_emu::extension::AclFailure;

/// Writes a rank's contribution to a one-shot exchange.
pub(crate) type Fill<'a> = Box<dyn FnOnce(&mut [u8]) -> Result<(), AclFailure> + 'a>;
/// Computes a rank's output from every contribution (indexed by rank).
pub(crate) type Compute<'a> = Box<dyn FnOnce(&[&[u8]]) -> Result<(), AclFailure> + 'a>;

/// A rank's part in a one-shot exchange.
pub(crate) struct Part<'a> {
    /// Bytes this rank contributes.
    pub len: usize,
    /// Writes the contribution (`len` bytes).
    pub fill: Fill<'a>,
    /// Computes this rank's output from the contributions, indexed by rank.
    pub compute: Compute<'a>,
}

/// One transfer of a batch (or a lone send or receive).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub send: bool,
    pub buf: Buf,
    pub count: u64,
    pub dt: DType,
    pub peer: u32,
}

/// A validated operation.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    AllReduce {
        send: Buf,
        recv: Buf,
        count: u64,
        dt: DType,
        op: RedOp,
    },
    Broadcast {
        buf: Buf,
        count: u64,
        dt: DType,
        root: u32,
    },
    Reduce {
        send: Buf,
        recv: Buf,
        count: u64,
        dt: DType,
        op: RedOp,
        root: u32,
    },
    ReduceScatter {
        send: Buf,
        recv: Buf,
        count: u64,
        dt: DType,
        op: RedOp,
    },
    ReduceScatterV {
        send: Buf,
        counts: Vec<u64>,
        displs: Vec<u64>,
        recv: Buf,
        dt: DType,
        op: RedOp,
    },
    AllGather {
        send: Buf,
        recv: Buf,
        count: u64,
        dt: DType,
    },
    AllGatherV {
        send: Buf,
        count: u64,
        recv: Buf,
        counts: Vec<u64>,
        displs: Vec<u64>,
        dt: DType,
    },
    AlltoAll {
        send: Buf,
        recv: Buf,
        count: u64,
        dt: DType,
    },
    AlltoAllV {
        send: Buf,
        scounts: Vec<u64>,
        sdispls: Vec<u64>,
        st: DType,
        recv: Buf,
        rcounts: Vec<u64>,
        rdispls: Vec<u64>,
        rt: DType,
    },
    AlltoAllVC {
        send: Buf,
        matrix: Vec<u64>,
        st: DType,
        recv: Buf,
        rt: DType,
    },
    Scatter {
        send: Buf,
        recv: Buf,
        count: u64,
        dt: DType,
        root: u32,
    },
    Barrier,
    Batch(Vec<Item>),
}

/// A part.
fn one<'a>(len: usize, fill: Fill<'a>, compute: Compute<'a>) -> Part<'a> {
    Part { len, fill, compute }
}

/// Runs `f` on a zeroed scratch buffer of `len` bytes that the calling thread (a stream's
/// worker) keeps between operations: a large reduction then reuses memory the thread already
/// touched instead of faulting in a fresh allocation every time.
pub(crate) fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|s| {
        let mut v = s.borrow_mut();
        v.clear();
        v.resize(len, 0);
        f(&mut v)
    })
}

pub(crate) fn fnv(v: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in v {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn fault(msg: String) -> AclFailure {
    AclFailure::new(stream_code::MEMORY, msg)
}

/// `off..off+len` of a contribution, or a failure naming the rank.
fn sub(v: &[u8], off: usize, len: usize, rank: usize) -> Result<&[u8], AclFailure> {
    v.get(off..off + len).ok_or_else(|| {
        AclFailure::new(
            stream_code::TIMEOUT,
            format!(
                "rank {rank} contributed {} bytes where {} were expected: the ranks passed \
                 different counts",
                v.len(),
                off + len
            ),
        )
    })
}

impl Op {
    /// The HCCL function the operation came from, for traces (`HcclAllReduce`).
    pub fn name(&self) -> &'static str {
        match self {
            Op::AllReduce { .. } => "HcclAllReduce",
            Op::Broadcast { .. } => "HcclBroadcast",
            Op::Reduce { .. } => "HcclReduce",
            Op::ReduceScatter { .. } => "HcclReduceScatter",
            Op::ReduceScatterV { .. } => "HcclReduceScatterV",
            Op::AllGather { .. } => "HcclAllGather",
            Op::AllGatherV { .. } => "HcclAllGatherV",
            Op::AlltoAll { .. } => "HcclAlltoAll",
            Op::AlltoAllV { .. } => "HcclAlltoAllV",
            Op::AlltoAllVC { .. } => "HcclAlltoAllVC",
            Op::Scatter { .. } => "HcclScatter",
            Op::Barrier => "HcclBarrier",
            Op::Batch(items) => match items.as_slice() {
                [one] if one.send => "HcclSend",
                [_] => "HcclRecv",
                _ => "HcclBatchSendRecv",
            },
        }
    }

    /// The meeting steps of the operation (for its ticket).
    pub fn steps(&self) -> Vec<crate::comm::Step> {
        use crate::comm::Step;
        match self {
            Op::Batch(items) => items
                .iter()
                .map(|i| {
                    if i.send {
                        Step::Send(i.peer)
                    } else {
                        Step::Recv(i.peer)
                    }
                })
                .collect(),
            _ => vec![Step::Coll],
        }
    }

    /// Fails as the first access would when a buffer this rank will touch is not usable (the
    /// rank's stream fails before it meets anyone). Buffers of no bytes are not looked at.
    pub fn check_buffers(&self, r: u32, n: u32) -> Result<(), AclFailure> {
        let (r, n) = (r as usize, n as usize);
        let any = |v: &[u64]| v.iter().any(|c| *c > 0);
        let used: Vec<&Buf> = match self {
            Op::AllReduce { send, recv, .. }
            | Op::ReduceScatter { send, recv, .. }
            | Op::AllGather { send, recv, .. }
            | Op::AlltoAll { send, recv, .. } => vec![send, recv],
            Op::Broadcast { buf, .. } => vec![buf],
            Op::Reduce {
                send, recv, root, ..
            } => {
                if r == *root as usize {
                    vec![send, recv]
                } else {
                    vec![send]
                }
            }
            Op::ReduceScatterV {
                send, counts, recv, ..
            } => {
                let mut v = Vec::new();
                if any(counts) {
                    v.push(send);
                }
                if counts[r] > 0 {
                    v.push(recv);
                }
                v
            }
            Op::AllGatherV {
                send,
                count,
                recv,
                counts,
                ..
            } => {
                let mut v = Vec::new();
                if *count > 0 {
                    v.push(send);
                }
                if any(counts) {
                    v.push(recv);
                }
                v
            }
            Op::AlltoAllV {
                send,
                scounts,
                recv,
                rcounts,
                ..
            } => {
                let mut v = Vec::new();
                if any(scounts) {
                    v.push(send);
                }
                if any(rcounts) {
                    v.push(recv);
                }
                v
            }
            Op::AlltoAllVC {
                send, matrix, recv, ..
            } => {
                let mut v = Vec::new();
                if (0..n).any(|j| matrix[r * n + j] > 0) {
                    v.push(send);
                }
                if (0..n).any(|i| matrix[i * n + r] > 0) {
                    v.push(recv);
                }
                v
            }
            Op::Scatter {
                send, recv, root, ..
            } => {
                if r == *root as usize {
                    vec![send, recv]
                } else {
                    vec![recv]
                }
            }
            Op::Barrier => Vec::new(),
            Op::Batch(items) => items.iter().map(|i| &i.buf).collect(),
        };
        used.into_iter().try_for_each(Buf::check)
    }

    /// The signature every participant must agree on.
    pub fn sig(&self) -> Sig {
        let s = |kind: Kind, dt: DType, op: Option<RedOp>, root: u32, count: u64, extra: u64| Sig {
            kind: kind as u8,
            dtype: dt.raw() as u8,
            redop: op.map_or(0, |o| o.raw() as u8),
            algo: 0,
            root,
            count,
            extra,
        };
        match self {
            Op::AllReduce { count, dt, op, .. } => s(Kind::AllReduce, *dt, Some(*op), 0, *count, 0),
            Op::Broadcast {
                count, dt, root, ..
            } => s(Kind::Broadcast, *dt, None, *root, *count, 0),
            Op::Reduce {
                count,
                dt,
                op,
                root,
                ..
            } => s(Kind::Reduce, *dt, Some(*op), *root, *count, 0),
            Op::ReduceScatter { count, dt, op, .. } => {
                s(Kind::ReduceScatter, *dt, Some(*op), 0, *count, 0)
            }
            Op::ReduceScatterV { counts, dt, op, .. } => {
                s(Kind::ReduceScatterV, *dt, Some(*op), 0, 0, fnv(counts))
            }
            Op::AllGather { count, dt, .. } => s(Kind::AllGather, *dt, None, 0, *count, 0),
            Op::AllGatherV { counts, dt, .. } => s(Kind::AllGatherV, *dt, None, 0, 0, fnv(counts)),
            Op::AlltoAll { count, dt, .. } => s(Kind::AlltoAll, *dt, None, 0, *count, 0),
            Op::AlltoAllV { st, .. } => s(Kind::AlltoAllV, *st, None, 0, 0, 0),
            Op::AlltoAllVC { matrix, st, .. } => s(Kind::AlltoAllVC, *st, None, 0, 0, fnv(matrix)),
            Op::Scatter {
                count, dt, root, ..
            } => s(Kind::Scatter, *dt, None, *root, *count, 0),
            Op::Barrier => s(Kind::Barrier, DType::I8, None, 0, 0, 0),
            Op::Batch(_) => s(Kind::Transfer, DType::I8, None, 0, 0, 0),
        }
    }

    /// The largest contribution any rank makes to a one-shot exchange of this operation on `n`
    /// ranks, when every rank can tell (not for the all-to-all-v, whose counts each rank knows
    /// only for itself, nor for transfers).
    pub fn largest_part(&self, n: usize) -> Option<usize> {
        let b = |count: u64, dt: &DType| count as usize * dt.size();
        Some(match self {
            Op::AllReduce { count, dt, .. }
            | Op::Broadcast { count, dt, .. }
            | Op::Reduce { count, dt, .. }
            | Op::AllGather { count, dt, .. } => b(*count, dt),
            Op::ReduceScatter { count, dt, .. }
            | Op::AlltoAll { count, dt, .. }
            | Op::Scatter { count, dt, .. } => b(*count, dt) * n,
            Op::ReduceScatterV { counts, dt, .. } => counts.iter().map(|c| b(*c, dt)).sum(),
            Op::AllGatherV { counts, dt, .. } => {
                counts.iter().map(|c| b(*c, dt)).max().unwrap_or(0)
            }
            Op::AlltoAllVC { matrix, st, .. } => (0..n)
                .map(|i| (0..n).map(|j| b(matrix[i * n + j], st)).sum::<usize>())
                .max()
                .unwrap_or(0),
            Op::Barrier => 0,
            Op::AlltoAllV { .. } | Op::Batch(_) => return None,
        })
    }

    /// Rank `r`'s part in a one-shot exchange of this operation on `n` ranks (not for
    /// transfers, which have their own algorithm).
    pub fn part(&self, r: u32, n: u32) -> Part<'_> {
        let ru = r as usize;
        let nu = n as usize;
        match self {
            Op::AllReduce {
                send,
                recv,
                count,
                dt,
                op,
            } => {
                let len = *count as usize * dt.size();
                one(
                    len,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        with_scratch(len, |out| {
                            reduce::reduce_all(*dt, *op, out, v.iter().copied());
                            recv.write(0, out)
                        })
                    }),
                )
            }
            Op::Broadcast {
                buf,
                count,
                dt,
                root,
            } => {
                let len = *count as usize * dt.size();
                let mine = if r == *root { len } else { 0 };
                one(
                    mine,
                    Box::new(move |b| buf.read(0, b)),
                    Box::new(move |v| {
                        if r == *root {
                            return Ok(());
                        }
                        buf.write(0, sub(v[*root as usize], 0, len, *root as usize)?)
                    }),
                )
            }
            Op::Reduce {
                send,
                recv,
                count,
                dt,
                op,
                root,
            } => {
                let len = *count as usize * dt.size();
                one(
                    len,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        if r != *root {
                            return Ok(());
                        }
                        with_scratch(len, |out| {
                            reduce::reduce_all(*dt, *op, out, v.iter().copied());
                            recv.write(0, out)
                        })
                    }),
                )
            }
            Op::ReduceScatter {
                send,
                recv,
                count,
                dt,
                op,
            } => {
                let block = *count as usize * dt.size();
                one(
                    block * nu,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        let mut blocks = Vec::with_capacity(nu);
                        for (i, x) in v.iter().enumerate() {
                            blocks.push(sub(x, ru * block, block, i)?);
                        }
                        with_scratch(block, |out| {
                            reduce::reduce_all(*dt, *op, out, blocks);
                            recv.write(0, out)
                        })
                    }),
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
                let total: usize = counts.iter().map(|c| *c as usize * es).sum();
                let off: usize = counts[..ru].iter().map(|c| *c as usize * es).sum();
                let mine = counts[ru] as usize * es;
                one(
                    total,
                    Box::new(move |b| {
                        let mut at = 0;
                        for (c, d) in counts.iter().zip(displs) {
                            let l = *c as usize * es;
                            send.read(*d as usize * es, &mut b[at..at + l])?;
                            at += l;
                        }
                        Ok(())
                    }),
                    Box::new(move |v| {
                        let mut blocks = Vec::with_capacity(nu);
                        for (i, x) in v.iter().enumerate() {
                            blocks.push(sub(x, off, mine, i)?);
                        }
                        with_scratch(mine, |out| {
                            reduce::reduce_all(*dt, *op, out, blocks);
                            recv.write(0, out)
                        })
                    }),
                )
            }
            Op::AllGather {
                send,
                recv,
                count,
                dt,
            } => {
                let len = *count as usize * dt.size();
                one(
                    len,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        // The contributions are the ranks' copies in shared memory, so each
                        // block goes straight to its place (in place too).
                        for (i, x) in v.iter().enumerate() {
                            recv.write(i * len, sub(x, 0, len, i)?)?;
                        }
                        Ok(())
                    }),
                )
            }
            Op::AllGatherV {
                send,
                count,
                recv,
                counts,
                displs,
                dt,
            } => {
                let es = dt.size();
                let len = *count as usize * es;
                one(
                    len,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        for (i, x) in v.iter().enumerate() {
                            let want = counts[i] as usize * es;
                            if x.len() != want {
                                return Err(AclFailure::new(
                                    stream_code::TIMEOUT,
                                    format!(
                                        "rank {i} sent {} elements, but recvCounts[{i}] is {} \
                                         (every rank must pass the same recvCounts)",
                                        x.len() / es,
                                        counts[i]
                                    ),
                                ));
                            }
                            recv.write(displs[i] as usize * es, x)?;
                        }
                        Ok(())
                    }),
                )
            }
            Op::AlltoAll {
                send,
                recv,
                count,
                dt,
            } => {
                let block = *count as usize * dt.size();
                one(
                    block * nu,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        for (i, x) in v.iter().enumerate() {
                            recv.write(i * block, sub(x, ru * block, block, i)?)?;
                        }
                        Ok(())
                    }),
                )
            }
            Op::AlltoAllV {
                send,
                scounts,
                sdispls,
                st,
                recv,
                rcounts,
                rdispls,
                rt,
            } => {
                let (ss, rs) = (st.size(), rt.size());
                let head = 8 * nu;
                let data: usize = scounts.iter().map(|c| *c as usize * ss).sum();
                one(
                    head + data,
                    Box::new(move |b| {
                        for (j, c) in scounts.iter().enumerate() {
                            let bytes = *c * ss as u64;
                            b[8 * j..8 * j + 8].copy_from_slice(&bytes.to_le_bytes());
                        }
                        let mut at = head;
                        for (c, d) in scounts.iter().zip(sdispls) {
                            let l = *c as usize * ss;
                            send.read(*d as usize * ss, &mut b[at..at + l])?;
                            at += l;
                        }
                        Ok(())
                    }),
                    Box::new(move |v| {
                        for (i, x) in v.iter().enumerate() {
                            let h = sub(x, 0, head, i)?;
                            let bytes = |j: usize| {
                                u64::from_le_bytes(h[8 * j..8 * j + 8].try_into().expect("8"))
                                    as usize
                            };
                            let off = head + (0..ru).map(bytes).sum::<usize>();
                            let len = bytes(ru);
                            let want = rcounts[i] as usize * rs;
                            if len != want {
                                return Err(AclFailure::new(
                                    stream_code::TIMEOUT,
                                    format!(
                                        "rank {i} sends {len} bytes to rank {r}, which expects \
                                         recvCounts[{i}] = {} elements ({want} bytes); the \
                                         library checks this when the ranks exchange their \
                                         counts (HCCL_E_PARA)",
                                        rcounts[i]
                                    ),
                                ));
                            }
                            recv.write(rdispls[i] as usize * rs, sub(x, off, len, i)?)?;
                        }
                        Ok(())
                    }),
                )
            }
            Op::AlltoAllVC {
                send,
                matrix,
                st,
                recv,
                rt,
            } => {
                let (ss, rs) = (st.size(), rt.size());
                let m = move |i: usize, j: usize| matrix[i * nu + j] as usize;
                let mine: usize = (0..nu).map(|j| m(ru, j) * ss).sum();
                one(
                    mine,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        let mut at = 0;
                        for (i, x) in v.iter().enumerate() {
                            let off: usize = (0..ru).map(|k| m(i, k) * ss).sum();
                            let len = m(i, ru) * ss;
                            let room = m(i, ru) * rs;
                            if len != room {
                                return Err(fault(format!(
                                    "sendType and recvType differ in size ({ss} and {rs} \
                                     bytes): rank {i}'s {} elements do not fit their place",
                                    m(i, ru)
                                )));
                            }
                            recv.write(at, sub(x, off, len, i)?)?;
                            at += room;
                        }
                        Ok(())
                    }),
                )
            }
            Op::Scatter {
                send,
                recv,
                count,
                dt,
                root,
            } => {
                let block = *count as usize * dt.size();
                let mine = if r == *root { block * nu } else { 0 };
                one(
                    mine,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        let root = *root as usize;
                        recv.write(0, sub(v[root], ru * block, block, root)?)
                    }),
                )
            }
            Op::Barrier => one(0, Box::new(|_| Ok(())), Box::new(|_| Ok(()))),
            Op::Batch(_) => panic!("transfers have no one-shot part"),
        }
    }
}
