//! Collectives as operations of [`ascendcl::Stream::scope`]: the [`Collectives`] extension
//! trait (implemented for [`Scope`] and for a group's [`GroupStream`]), and [`scope`], which
//! keeps this crate's error type.

use crate::batch::SendRecv;
use crate::call::{Buffers, Call, Target, count};
use crate::comm::Comm;
use crate::element::{Element, ReduceOp};
use crate::error::{Error, Result};
use crate::group::GroupStream;
use crate::layout::{Blocks, CountMatrix};
use ascendcl::{AsyncDest, AsyncSource, Scope, Stream};

/// Collectives enqueued on a scope's stream.
///
/// The scope's rules apply: sources are borrowed shared and destinations exclusively until the
/// scope has waited for its stream, so no buffer can be freed, written or read by the host while
/// a collective may use it; a buffer used by several operations is
/// [`claim`](Scope::claim)ed once. The communicator, and the layouts of the V-collectives, are
/// borrowed for the whole scope too.
///
/// Checked before the C call: the stream's device is the communicator's; buffers are device
/// memory of that device; each length relation (given per method) holds; roots and peers are
/// ranks of the communicator; layouts have one entry per rank and fit their buffers; operations
/// that do not run in place get buffers that do not overlap. In-place forms are separate
/// methods. A refused argument is an [`Error::Argument`] and no C function is called.
///
/// Every rank must issue the same collectives in the same order with matching lengths, types,
/// operation, root and layouts. A collective whose peers never arrive fails on the stream: the
/// scope's synchronisation reports it, and [`Comm::async_error`] tells the link error.
///
/// Implemented for [`ascendcl::Scope`] (the call is made at once) and for
/// [`GroupStream`] (the call is captured by an open [`group`](crate::group) and made when it
/// ends); no other type can implement it.
pub trait Collectives<'scope> {
    /// The stream the collectives go to. An implementation detail: only this crate's scope
    /// types produce a `Target`, branded with their invariant `'scope`, so an implementation
    /// elsewhere can only forward one of theirs for the very lifetime they accept.
    #[doc(hidden)]
    fn target(&self) -> Target<'scope>;

    /// `HcclAllReduce`: `recv` on every rank gets `op` over every rank's `send`;
    /// `send.len() == recv.len()`.
    fn all_reduce<S, D>(&self, comm: &'scope Comm, send: S, mut recv: D, op: ReduceOp) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAllReduce", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        c.equal(("send", s.len()), ("receive", r.len()))?;
        // SAFETY: both regions are borrowed for 'scope, and the scope (or group) waits for the
        // stream before 'scope ends; the communicator is borrowed for 'scope too.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclAllReduce)(
                sp,
                rp,
                count(s.len()),
                S::Elem::DATA_TYPE,
                op.raw(),
                comm,
                stream,
            )
        })
    }

    /// `HcclAllReduce` in place: `buf` is both input and output.
    fn all_reduce_in_place<D>(&self, comm: &'scope Comm, mut buf: D, op: ReduceOp) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element,
    {
        let c = Call::new("HcclAllReduce", comm, self.target())?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        // SAFETY: as for `all_reduce`; input and output are one exclusively borrowed region.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclAllReduce)(
                p,
                p,
                count(b.len()),
                D::Elem::DATA_TYPE,
                op.raw(),
                comm,
                stream,
            )
        })
    }

    /// `HcclBroadcast`: `buf` of rank `root` is copied into `buf` of every rank.
    fn broadcast<D>(&self, comm: &'scope Comm, mut buf: D, root: u32) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element,
    {
        let c = Call::new("HcclBroadcast", comm, self.target())?;
        c.rank("root", root)?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        // SAFETY: as for `all_reduce`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclBroadcast)(p, count(b.len()), D::Elem::DATA_TYPE, root, comm, stream)
        })
    }

    /// `HcclReduce`: `recv` of rank `root` gets `op` over every rank's `send`;
    /// `send.len() == recv.len()` (other ranks' `recv` is left alone by HCCL's contract).
    fn reduce_to_root<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        mut recv: D,
        op: ReduceOp,
        root: u32,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclReduce", comm, self.target())?;
        c.rank("root", root)?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        c.equal(("send", s.len()), ("receive", r.len()))?;
        // SAFETY: as for `all_reduce`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclReduce)(
                sp,
                rp,
                count(s.len()),
                S::Elem::DATA_TYPE,
                op.raw(),
                root,
                comm,
                stream,
            )
        })
    }

    /// `HcclReduceScatter`: rank `r`'s `recv` gets `op` over every rank's block `r` of `send`;
    /// `send.len() == recv.len() * size`.
    fn reduce_scatter<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        mut recv: D,
        op: ReduceOp,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclReduceScatter", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        c.size_times(("send", s.len()), ("receive", r.len()))?;
        // SAFETY: as for `all_reduce`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclReduceScatter)(
                sp,
                rp,
                count(r.len()),
                S::Elem::DATA_TYPE,
                op.raw(),
                comm,
                stream,
            )
        })
    }

    /// `HcclReduceScatterV`: rank `r`'s `recv` gets `op` over every rank's block `r` of `send`,
    /// block `j` being `send_blocks.count(j)` elements at `send_blocks.displacement(j)`.
    /// `recv.len() == send_blocks.count(rank)`; `send` holds every block; the two buffers do
    /// not overlap.
    fn reduce_scatter_v<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        send_blocks: &'scope Blocks,
        mut recv: D,
        op: ReduceOp,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclReduceScatterV", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        c.blocks("send", send_blocks, s.len(), false)?;
        c.own_block(("receive", r.len()), "this rank's send block", send_blocks)?;
        c.disjoint(&s, &r)?;
        // SAFETY: as for `all_reduce`; the count and displacement arrays hold one u64 per rank
        // and are borrowed for 'scope (a group reads them when it ends).
        c.issue(|api, comm, stream| unsafe {
            (api.HcclReduceScatterV)(
                sp,
                send_blocks.counts_ptr(),
                send_blocks.displs_ptr(),
                rp,
                count(r.len()),
                S::Elem::DATA_TYPE,
                op.raw(),
                comm,
                stream,
            )
        })
    }

    /// `HcclAllGather`: block `r` of every rank's `recv` gets rank `r`'s `send`;
    /// `recv.len() == send.len() * size`.
    fn all_gather<S, D>(&self, comm: &'scope Comm, send: S, mut recv: D) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAllGather", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        c.size_times(("receive", r.len()), ("send", s.len()))?;
        // SAFETY: as for `all_reduce`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclAllGather)(sp, rp, count(s.len()), S::Elem::DATA_TYPE, comm, stream)
        })
    }

    /// `HcclAllGatherV`: rank `i`'s `send` lands in block `i` of every rank's `recv`
    /// (`recv_blocks.count(i)` elements at `recv_blocks.displacement(i)`).
    /// `send.len() == recv_blocks.count(rank)`; `recv` holds every block, and the blocks do not
    /// overlap; the two buffers do not overlap.
    fn all_gather_v<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        mut recv: D,
        recv_blocks: &'scope Blocks,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAllGatherV", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        c.blocks("receive", recv_blocks, r.len(), true)?;
        c.own_block(("send", s.len()), "this rank's receive block", recv_blocks)?;
        c.disjoint(&s, &r)?;
        // SAFETY: as for `reduce_scatter_v`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclAllGatherV)(
                sp,
                count(s.len()),
                rp,
                recv_blocks.counts_ptr(),
                recv_blocks.displs_ptr(),
                S::Elem::DATA_TYPE,
                comm,
                stream,
            )
        })
    }

    /// `HcclAlltoAll`: block `j` of rank `i`'s `send` lands in block `i` of rank `j`'s `recv`;
    /// `send.len() == recv.len()`, a multiple of `size`; the two buffers do not overlap.
    fn all_to_all<S, D>(&self, comm: &'scope Comm, send: S, mut recv: D) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAlltoAll", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        let n = comm.size() as usize;
        if s.len() != r.len() || s.len() % n != 0 {
            return Err(c.arg(format!(
                "send has {} elements, receive {}; they must be equal and a multiple of the \
                 size {n}",
                s.len(),
                r.len()
            )));
        }
        c.disjoint(&s, &r)?;
        let per = count(s.len() / n);
        // SAFETY: as for `all_reduce`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclAlltoAll)(
                sp,
                per,
                S::Elem::DATA_TYPE,
                rp,
                per,
                S::Elem::DATA_TYPE,
                comm,
                stream,
            )
        })
    }

    /// `HcclAlltoAllV`: block `j` of rank `i`'s `send` (per `send_blocks`) lands in block `i`
    /// of rank `j`'s `recv` (per `recv_blocks`). Each buffer holds its blocks, the receive
    /// blocks do not overlap, nor do the two buffers. Rank `i`'s `send_blocks.count(j)` must
    /// equal rank `j`'s `recv_blocks.count(i)`: that is checked by the library (or the
    /// emulator, on the stream), as it needs every rank's layout.
    fn all_to_all_v<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        send_blocks: &'scope Blocks,
        mut recv: D,
        recv_blocks: &'scope Blocks,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAlltoAllV", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        c.blocks("send", send_blocks, s.len(), false)?;
        c.blocks("receive", recv_blocks, r.len(), true)?;
        c.disjoint(&s, &r)?;
        // SAFETY: as for `reduce_scatter_v`; the element types are one Rust type.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclAlltoAllV)(
                sp,
                send_blocks.counts_ptr(),
                send_blocks.displs_ptr(),
                S::Elem::DATA_TYPE,
                rp,
                recv_blocks.counts_ptr(),
                recv_blocks.displs_ptr(),
                S::Elem::DATA_TYPE,
                comm,
                stream,
            )
        })
    }

    /// `HcclAlltoAllVC`: rank `i` sends `counts.get(i, j)` elements to rank `j`, its blocks
    /// packed in rank order in `send`; rank `j` receives them packed in rank order in `recv`.
    /// `counts` is `size` × `size`; `send` holds at least
    /// [`counts.sent_by(rank)`](CountMatrix::sent_by) elements and `recv` at least
    /// [`counts.received_by(rank)`](CountMatrix::received_by); the two buffers do not overlap.
    fn all_to_all_vc<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        mut recv: D,
        counts: &'scope CountMatrix,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAlltoAllVC", comm, self.target())?;
        let Buffers { s, r, sp, rp } = c.buffers(&send, &mut recv)?;
        let (n, me) = (comm.size() as usize, comm.rank() as usize);
        if counts.ranks() != n {
            return Err(c.arg(format!(
                "the count matrix is for {} ranks, the communicator has {n}",
                counts.ranks()
            )));
        }
        for (what, len, need) in [
            ("send", s.len(), counts.sent_by(me)),
            ("receive", r.len(), counts.received_by(me)),
        ] {
            if len < need {
                return Err(c.arg(format!(
                    "the {what} buffer has {len} elements; rank {me} needs {need}"
                )));
            }
        }
        c.disjoint(&s, &r)?;
        // SAFETY: as for `reduce_scatter_v`; the matrix holds size × size u64 values.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclAlltoAllVC)(
                sp,
                counts.as_ptr(),
                S::Elem::DATA_TYPE,
                rp,
                S::Elem::DATA_TYPE,
                comm,
                stream,
            )
        })
    }

    /// `HcclScatter`: block `r` of `root`'s `send` lands in rank `r`'s `recv`. `send` is read on
    /// the root only, where it is required and `send.len() == recv.len() * size`; other ranks
    /// pass `None`.
    fn scatter<S, D>(
        &self,
        comm: &'scope Comm,
        send: Option<S>,
        mut recv: D,
        root: u32,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclScatter", comm, self.target())?;
        c.rank("root", root)?;
        let r = recv.region();
        let rp = c.buffer("receive", &r)?;
        let sp = match (&send, comm.rank() == root) {
            (Some(send), true) => {
                let s = send.region();
                c.size_times(("send", s.len()), ("receive", r.len()))?;
                c.buffer("send", &s)?
            }
            (None, true) => return Err(c.arg("the root needs a send buffer")),
            (Some(_), false) => return Err(c.arg("only the root passes a send buffer")),
            (None, false) => std::ptr::null_mut(),
        };
        // SAFETY: as for `all_reduce`; a NULL send buffer is read by no rank.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclScatter)(
                sp,
                rp,
                count(r.len()),
                S::Elem::DATA_TYPE,
                root,
                comm,
                stream,
            )
        })
    }

    /// `HcclSend`: `buf` to rank `peer`, which must issue the matching [`recv`](Self::recv)
    /// of the same length. `peer` is another rank.
    fn send<S>(&self, comm: &'scope Comm, buf: S, peer: u32) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
    {
        let c = Call::new("HcclSend", comm, self.target())?;
        c.peer(peer)?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        // SAFETY: as for `all_reduce`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclSend)(p, count(b.len()), S::Elem::DATA_TYPE, peer, comm, stream)
        })
    }

    /// `HcclRecv`: `buf` from rank `peer`. `peer` is another rank.
    fn recv<D>(&self, comm: &'scope Comm, mut buf: D, peer: u32) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element,
    {
        let c = Call::new("HcclRecv", comm, self.target())?;
        c.peer(peer)?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        // SAFETY: as for `all_reduce`.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclRecv)(p, count(b.len()), D::Elem::DATA_TYPE, peer, comm, stream)
        })
    }

    /// `HcclBatchSendRecv`: every item's transfer, progressing together, so that a rank may
    /// send to and receive from its peers in one step without ordering them. Each item's buffer
    /// is device memory of the communicator's device and its peer another rank; each peer
    /// issues the matching item. Not available inside a [`group`](crate::group) (HCCL refuses
    /// it there: use [`send`](Self::send) and [`recv`](Self::recv), which a group fuses).
    fn batch_send_recv<I>(&self, comm: &'scope Comm, items: I) -> Result<()>
    where
        I: IntoIterator<Item = SendRecv<'scope>>,
    {
        let c = Call::new("HcclBatchSendRecv", comm, self.target())?;
        if self.target().is_grouped() {
            return Err(
                c.arg("HcclBatchSendRecv is not allowed inside a group; use send and recv there")
            );
        }
        let items: Vec<SendRecv<'scope>> = items.into_iter().collect();
        for (i, it) in items.iter().enumerate() {
            c.location(&format!("item {i}'s"), it.location)?;
            c.peer(it.peer)?;
            c.note(it.access);
        }
        // Items of two receives into one region would race on the device.
        for (i, a) in items.iter().enumerate() {
            for (j, b) in items.iter().enumerate().skip(i + 1) {
                let (a0, b0) = (a.ptr as usize, b.ptr as usize);
                let shared = a0 < b0 + b.bytes && b0 < a0 + a.bytes && a.bytes > 0 && b.bytes > 0;
                if shared && !(a.send && b.send) {
                    return Err(c.arg(format!(
                        "items {i} and {j} overlap and one of them receives"
                    )));
                }
            }
        }
        let mut raw: Vec<hccl_sys::HcclSendRecvItem> = items.iter().map(SendRecv::raw).collect();
        let n = u32::try_from(raw.len()).map_err(|_| c.arg("more than u32::MAX items"))?;
        if n == 0 {
            return Ok(());
        }
        // SAFETY: every item's buffer is borrowed for 'scope (shared for sends, exclusive for
        // receives) and the scope waits for the stream before 'scope ends; `raw` holds `n`
        // items and lives across the call.
        c.issue(|api, comm, stream| unsafe {
            (api.HcclBatchSendRecv)(raw.as_mut_ptr(), n, comm, stream)
        })
    }

    /// `HcclBarrier`: the stream waits until every rank's stream reached the barrier.
    fn barrier(&self, comm: &'scope Comm) -> Result<()> {
        let c = Call::new("HcclBarrier", comm, self.target())?;
        // SAFETY: live communicator and stream, both borrowed beyond the call.
        c.issue(|api, comm, stream| unsafe { (api.HcclBarrier)(comm, stream) })
    }
}

impl<'scope, 'env> Collectives<'scope> for Scope<'scope, 'env> {
    fn target(&self) -> Target<'scope> {
        Target::issued(self.as_lane())
    }
}

impl<'g, 'env> Collectives<'g> for GroupStream<'g, 'env> {
    fn target(&self) -> Target<'g> {
        Target::grouped(self.stream())
    }
}

/// Runs `f` in [`Stream::scope`] and keeps this crate's error: a failure of `f` comes back as
/// it was, a failure of the final synchronisation (a collective that failed on the device) as
/// [`Error::Acl`].
///
/// ```
/// # use hccl::{Comm, Collectives, ReduceOp, RootInfo};
/// let rt = ascendcl::Runtime::new()?;
/// let dev = rt.device(0)?;
/// let info = RootInfo::new(&dev)?;
/// let comm = Comm::init_root_info(&dev, 1, &info, 0, None)?;
/// let stream = dev.create_stream()?;
/// let send = dev.clone_htod(&[1.0f32, 2.0, 3.0])?;
/// let mut recv = dev.alloc_zeros::<f32>(3)?;
/// hccl::scope(&stream, |s| s.all_reduce(&comm, &send, &mut recv, ReduceOp::Sum))?;
/// assert_eq!(recv.copy_to_vec()?, [1.0, 2.0, 3.0]);
/// # Ok::<(), hccl::Error>(())
/// ```
pub fn scope<'env, R, F>(stream: &'env Stream, f: F) -> Result<R>
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
{
    let mut failed = None;
    let r = stream.scope(|s| {
        f(s).map_err(|e| {
            failed = Some(e);
            ascendcl::Error::Argument {
                api: "hccl::scope",
                reason: "the closure failed".into(),
            }
        })
    });
    match (r, failed) {
        (_, Some(e)) => Err(e),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(Error::Acl(e)),
    }
}
