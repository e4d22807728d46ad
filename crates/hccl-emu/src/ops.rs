//! The operations: what each rank contributes to a meeting and how it computes its own output
//! from every rank's contribution. Buffers are validated when the operation is issued; a buffer
//! that is not device memory of the communicator's device fails the operation's stream task
//! when it runs (as it fails on the device), not the call.

use crate::dtype::{DType, RedOp};
use crate::error::stream_code;
use crate::link::{Compute, Fill, Meeting};
use crate::reduce;
use crate::wire::Key;
use ascendcl_emu::extension::{self, AclFailure, MemoryLocation, MemoryRange};

/// A device buffer of an operation: validated when issued, read or written when the task runs.
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

    /// Copies `out.len()` bytes from offset `off` of the buffer.
    pub fn read(&self, off: usize, out: &mut [u8]) -> Result<(), AclFailure> {
        if out.is_empty() {
            return Ok(());
        }
        let m = self.0.as_ref().map_err(Clone::clone)?;
        assert!(
            off + out.len() <= m.len(),
            "read within the validated range"
        );
        m.with_live(|p| {
            // SAFETY: the range was validated as a live device allocation holding off+len bytes
            // (asserted above), and `with_live` keeps it from being freed during the copy.
            unsafe { std::ptr::copy_nonoverlapping(p.add(off), out.as_mut_ptr(), out.len()) }
        })
    }

    /// Copies `data` to offset `off` of the buffer.
    pub fn write(&self, off: usize, data: &[u8]) -> Result<(), AclFailure> {
        if data.is_empty() {
            return Ok(());
        }
        let m = self.0.as_ref().map_err(Clone::clone)?;
        if off + data.len() > m.len() {
            return Err(AclFailure::new(
                stream_code::MEMORY,
                format!(
                    "a write of {} bytes at offset {off} runs past the {}-byte buffer at {:#x}",
                    data.len(),
                    m.len(),
                    m.addr()
                ),
            ));
        }
        m.with_live(|p| {
            // SAFETY: as in `read`; the destination is device memory no one else may use
            // while the operation runs (the caller's contract).
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(off), data.len()) }
        })
    }
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

/// The one meeting of a collective.
fn one<'a>(
    key: Key,
    desc: &str,
    len: usize,
    fill: Fill<'a>,
    compute: Compute<'a>,
) -> Vec<Meeting<'a>> {
    vec![Meeting {
        key,
        desc: desc.to_string(),
        len,
        fill,
        compute,
    }]
}

/// Runs `f` on a zeroed scratch buffer of `len` bytes that the calling thread (a stream's
/// worker) keeps between operations: a large reduction then reuses memory the thread already
/// touched instead of faulting in a fresh allocation every time.
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
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

fn fnv(v: &[u64]) -> u64 {
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

    /// The description every participant must agree on.
    fn desc(&self) -> String {
        match self {
            Op::AllReduce { count, dt, op, .. } => {
                format!("HcclAllReduce(count {count}, {}, {})", dt.name(), op.name())
            }
            Op::Broadcast {
                count, dt, root, ..
            } => format!("HcclBroadcast(count {count}, {}, root {root})", dt.name()),
            Op::Reduce {
                count,
                dt,
                op,
                root,
                ..
            } => format!(
                "HcclReduce(count {count}, {}, {}, root {root})",
                dt.name(),
                op.name()
            ),
            Op::ReduceScatter { count, dt, op, .. } => format!(
                "HcclReduceScatter(recvCount {count}, {}, {})",
                dt.name(),
                op.name()
            ),
            Op::ReduceScatterV { counts, dt, op, .. } => format!(
                "HcclReduceScatterV(sendCounts {counts:?}, {}, {})",
                dt.name(),
                op.name()
            ),
            Op::AllGather { count, dt, .. } => {
                format!("HcclAllGather(sendCount {count}, {})", dt.name())
            }
            Op::AllGatherV { counts, dt, .. } => {
                format!("HcclAllGatherV(recvCounts {counts:?}, {})", dt.name())
            }
            Op::AlltoAll { count, dt, .. } => {
                format!("HcclAlltoAll(count {count}, {})", dt.name())
            }
            Op::AlltoAllV { st, rt, .. } => {
                format!("HcclAlltoAllV({}, {})", st.name(), rt.name())
            }
            Op::AlltoAllVC { matrix, st, .. } => format!(
                "HcclAlltoAllVC(matrix hash {:016x}, {})",
                fnv(matrix),
                st.name()
            ),
            Op::Scatter {
                count, dt, root, ..
            } => format!("HcclScatter(recvCount {count}, {}, root {root})", dt.name()),
            Op::Barrier => "HcclBarrier".to_string(),
            Op::Batch(_) => String::new(),
        }
    }

    /// The meetings of this operation for rank `r` of `n`, with the keys its ticket got.
    pub fn meetings(&self, r: u32, n: u32, keys: &[Key]) -> Vec<Meeting<'_>> {
        let ru = r as usize;
        let nu = n as usize;
        let desc = self.desc();
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
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
                    keys[0],
                    &desc,
                    mine,
                    Box::new(move |b| send.read(0, b)),
                    Box::new(move |v| {
                        let root = *root as usize;
                        recv.write(0, sub(v[root], ru * block, block, root)?)
                    }),
                )
            }
            Op::Barrier => one(
                keys[0],
                &desc,
                0,
                Box::new(|_| Ok(())),
                Box::new(|_| Ok(())),
            ),
            Op::Batch(items) => items
                .iter()
                .zip(keys)
                .map(|(it, key)| {
                    let len = it.count as usize * it.dt.size();
                    let desc = format!("{} x {}", it.count, it.dt.name());
                    if it.send {
                        Meeting {
                            key: *key,
                            desc,
                            len,
                            fill: Box::new(move |b| it.buf.read(0, b)),
                            compute: Box::new(|_| Ok(())),
                        }
                    } else {
                        let peer = it.peer as usize;
                        Meeting {
                            key: *key,
                            desc,
                            len: 0,
                            fill: Box::new(|_| Ok(())),
                            compute: Box::new(move |v| {
                                it.buf.write(0, sub(v[peer], 0, len, peer)?)
                            }),
                        }
                    }
                })
                .collect(),
        }
    }
}
