//! Collectives as operations of [`ascendcl::Stream::scope`]: the [`Collectives`] extension
//! trait on [`Scope`], and [`scope`], which keeps this crate's error type.

use crate::backend;
use crate::comm::Comm;
use crate::element::{Element, ReduceOp};
use crate::error::{Error, Result, check};
use ascendcl::{AsyncDest, AsyncSource, RawRegion, Scope, Stream};
use std::ffi::c_void;

/// Collectives enqueued on a scope's stream.
///
/// The scope's rules apply: sources are borrowed shared and destinations exclusively until the
/// scope has waited for its stream, so no buffer can be freed, written or read by the host while
/// a collective may use it; a buffer used by several operations is
/// [`claim`](Scope::claim)ed once. The communicator is borrowed for the whole scope too, so it
/// cannot be destroyed under a running collective.
///
/// Checked before the C call: the stream's device is the communicator's; buffers are device
/// memory of that device; each length relation (given per method) holds; roots and peers are
/// ranks of the communicator. In-place forms are separate methods.
///
/// Every rank must issue the same collectives in the same order with matching lengths, types,
/// operation and root. A collective whose peers never arrive fails on the stream: the scope's
/// synchronisation reports it, and [`Comm::async_error`] tells the link error.
pub trait Collectives<'scope> {
    /// `HcclAllReduce`: `recv` on every rank gets `op` over every rank's `send`;
    /// `send.len() == recv.len()`.
    fn all_reduce<S, D>(&self, comm: &'scope Comm, send: S, recv: D, op: ReduceOp) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>;

    /// `HcclAllReduce` in place: `buf` is both input and output.
    fn all_reduce_in_place<D>(&self, comm: &'scope Comm, buf: D, op: ReduceOp) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element;

    /// `HcclBroadcast`: `buf` of rank `root` is copied into `buf` of every rank.
    fn broadcast<D>(&self, comm: &'scope Comm, buf: D, root: u32) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element;

    /// `HcclReduce`: `recv` of rank `root` gets `op` over every rank's `send`;
    /// `send.len() == recv.len()` (other ranks' `recv` is left alone by HCCL's contract).
    fn reduce_to_root<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        recv: D,
        op: ReduceOp,
        root: u32,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>;

    /// `HcclReduceScatter`: rank `r`'s `recv` gets `op` over every rank's block `r` of `send`;
    /// `send.len() == recv.len() * size`.
    fn reduce_scatter<S, D>(
        &self,
        comm: &'scope Comm,
        send: S,
        recv: D,
        op: ReduceOp,
    ) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>;

    /// `HcclAllGather`: block `r` of every rank's `recv` gets rank `r`'s `send`;
    /// `recv.len() == send.len() * size`.
    fn all_gather<S, D>(&self, comm: &'scope Comm, send: S, recv: D) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>;

    /// `HcclAlltoAll`: block `j` of rank `i`'s `send` lands in block `i` of rank `j`'s `recv`;
    /// `send.len() == recv.len()`, a multiple of `size`.
    fn all_to_all<S, D>(&self, comm: &'scope Comm, send: S, recv: D) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>;

    /// `HcclScatter`: block `r` of `root`'s `send` lands in rank `r`'s `recv`. `send` is read on
    /// the root only, where it is required and `send.len() == recv.len() * size`; other ranks
    /// pass `None`.
    fn scatter<S, D>(&self, comm: &'scope Comm, send: Option<S>, recv: D, root: u32) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>;

    /// `HcclSend`: `buf` to rank `peer`, which must issue the matching [`recv`](Self::recv)
    /// of the same length. `peer` is another rank.
    fn send<S>(&self, comm: &'scope Comm, buf: S, peer: u32) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element;

    /// `HcclRecv`: `buf` from rank `peer`. `peer` is another rank.
    fn recv<D>(&self, comm: &'scope Comm, buf: D, peer: u32) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element;

    /// `HcclBarrier`: the stream waits until every rank's stream reached the barrier.
    fn barrier(&self, comm: &'scope Comm) -> Result<()>;
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

/// Checks shared by every collective: the stream's device and the buffers' location.
struct Call<'a> {
    api: &'static str,
    comm: &'a Comm,
}

impl<'a> Call<'a> {
    /// A call of `api` on `comm`, from a scope whose stream is on `scope_device`: the stream must
    /// be on the communicator's device.
    fn new(api: &'static str, comm: &'a Comm, scope_device: i32) -> Result<Self> {
        let c = Call { api, comm };
        c.stream(scope_device)?;
        Ok(c)
    }

    /// `whole` must hold `part` times the communicator's size elements.
    fn size_times(&self, whole: (&str, usize), part: (&str, usize)) -> Result<()> {
        let n = self.comm.size();
        if part.1.checked_mul(n as usize) != Some(whole.1) {
            return Err(self.arg(format!(
                "{} has {} elements; it must be {}'s {} times the size {n}",
                whole.0, whole.1, part.0, part.1
            )));
        }
        Ok(())
    }

    /// The HCCL table, with the scope's stream's context made current for the call.
    fn ready(&self, scope: &Scope<'_, '_>) -> Result<&'static hccl_sys::HcclApi> {
        let api = backend::api()?;
        scope.stream().make_current()?;
        Ok(api)
    }

    fn arg(&self, reason: impl Into<std::borrow::Cow<'static, str>>) -> Error {
        Error::argument(self.api, reason)
    }

    fn stream(&self, scope_device: i32) -> Result<()> {
        let d = self.comm.device().id();
        if scope_device != d {
            return Err(self.arg(format!(
                "the stream is on device {scope_device}, the communicator on device {d}"
            )));
        }
        Ok(())
    }

    fn buffer<T>(&self, what: &str, r: &RawRegion<T>) -> Result<*mut c_void> {
        let d = self.comm.device().id();
        match r.location().device() {
            Some(x) if x == d => Ok(r.ptr().cast()),
            Some(x) => Err(self.arg(format!(
                "the {what} buffer is on device {x}, the communicator on device {d}"
            ))),
            None => Err(self.arg(format!("the {what} buffer must be device memory"))),
        }
    }

    fn rank(&self, what: &str, r: u32) -> Result<()> {
        if r >= self.comm.size() {
            return Err(self.arg(format!(
                "{what} {r} is not a rank of a communicator of size {}",
                self.comm.size()
            )));
        }
        Ok(())
    }

    fn peer(&self, peer: u32) -> Result<()> {
        self.rank("peer", peer)?;
        if peer == self.comm.rank() {
            return Err(self.arg(format!("rank {peer} cannot send to or receive from itself")));
        }
        Ok(())
    }
}

fn count(n: usize) -> u64 {
    n as u64
}

impl<'scope, 'env> Collectives<'scope> for Scope<'scope, 'env> {
    fn all_reduce<S, D>(&self, comm: &'scope Comm, send: S, mut recv: D, op: ReduceOp) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAllReduce", comm, self.device_id())?;
        let (s, r) = (send.region(), recv.region());
        let (sp, rp) = (c.buffer("send", &s)?, c.buffer("receive", &r)?);
        if s.len() != r.len() {
            return Err(c.arg(format!(
                "send has {} elements, receive {}; they must be equal",
                s.len(),
                r.len()
            )));
        }
        let api = c.ready(self)?;
        // SAFETY: both regions are borrowed for 'scope, the scope waits for the stream before
        // 'scope ends; the communicator is borrowed for 'scope too.
        check(c.api, unsafe {
            (api.HcclAllReduce)(
                sp,
                rp,
                count(s.len()),
                S::Elem::DATA_TYPE,
                op.raw(),
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

    fn all_reduce_in_place<D>(&self, comm: &'scope Comm, mut buf: D, op: ReduceOp) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element,
    {
        let c = Call::new("HcclAllReduce", comm, self.device_id())?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`; input and output are one exclusively borrowed region.
        check(c.api, unsafe {
            (api.HcclAllReduce)(
                p,
                p,
                count(b.len()),
                D::Elem::DATA_TYPE,
                op.raw(),
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

    fn broadcast<D>(&self, comm: &'scope Comm, mut buf: D, root: u32) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element,
    {
        let c = Call::new("HcclBroadcast", comm, self.device_id())?;
        c.rank("root", root)?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`.
        check(c.api, unsafe {
            (api.HcclBroadcast)(
                p,
                count(b.len()),
                D::Elem::DATA_TYPE,
                root,
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

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
        let c = Call::new("HcclReduce", comm, self.device_id())?;
        c.rank("root", root)?;
        let (s, r) = (send.region(), recv.region());
        let (sp, rp) = (c.buffer("send", &s)?, c.buffer("receive", &r)?);
        if s.len() != r.len() {
            return Err(c.arg(format!(
                "send has {} elements, receive {}; they must be equal",
                s.len(),
                r.len()
            )));
        }
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`.
        check(c.api, unsafe {
            (api.HcclReduce)(
                sp,
                rp,
                count(s.len()),
                S::Elem::DATA_TYPE,
                op.raw(),
                root,
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

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
        let c = Call::new("HcclReduceScatter", comm, self.device_id())?;
        let (s, r) = (send.region(), recv.region());
        let (sp, rp) = (c.buffer("send", &s)?, c.buffer("receive", &r)?);
        c.size_times(("send", s.len()), ("receive", r.len()))?;
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`.
        check(c.api, unsafe {
            (api.HcclReduceScatter)(
                sp,
                rp,
                count(r.len()),
                S::Elem::DATA_TYPE,
                op.raw(),
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

    fn all_gather<S, D>(&self, comm: &'scope Comm, send: S, mut recv: D) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAllGather", comm, self.device_id())?;
        let (s, r) = (send.region(), recv.region());
        let (sp, rp) = (c.buffer("send", &s)?, c.buffer("receive", &r)?);
        c.size_times(("receive", r.len()), ("send", s.len()))?;
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`.
        check(c.api, unsafe {
            (api.HcclAllGather)(
                sp,
                rp,
                count(s.len()),
                S::Elem::DATA_TYPE,
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

    fn all_to_all<S, D>(&self, comm: &'scope Comm, send: S, mut recv: D) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
        D: AsyncDest<'scope, Elem = S::Elem>,
    {
        let c = Call::new("HcclAlltoAll", comm, self.device_id())?;
        let (s, r) = (send.region(), recv.region());
        let (sp, rp) = (c.buffer("send", &s)?, c.buffer("receive", &r)?);
        let n = comm.size() as usize;
        if s.len() != r.len() || s.len() % n != 0 {
            return Err(c.arg(format!(
                "send has {} elements, receive {}; they must be equal and a multiple of the \
                 size {n}",
                s.len(),
                r.len()
            )));
        }
        let per = count(s.len() / n);
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`.
        check(c.api, unsafe {
            (api.HcclAlltoAll)(
                sp,
                per,
                S::Elem::DATA_TYPE,
                rp,
                per,
                S::Elem::DATA_TYPE,
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

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
        let c = Call::new("HcclScatter", comm, self.device_id())?;
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
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`; a NULL send buffer is read by no rank.
        check(c.api, unsafe {
            (api.HcclScatter)(
                sp,
                rp,
                count(r.len()),
                S::Elem::DATA_TYPE,
                root,
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

    fn send<S>(&self, comm: &'scope Comm, buf: S, peer: u32) -> Result<()>
    where
        S: AsyncSource<'scope>,
        S::Elem: Element,
    {
        let c = Call::new("HcclSend", comm, self.device_id())?;
        c.peer(peer)?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`.
        check(c.api, unsafe {
            (api.HcclSend)(
                p,
                count(b.len()),
                S::Elem::DATA_TYPE,
                peer,
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

    fn recv<D>(&self, comm: &'scope Comm, mut buf: D, peer: u32) -> Result<()>
    where
        D: AsyncDest<'scope>,
        D::Elem: Element,
    {
        let c = Call::new("HcclRecv", comm, self.device_id())?;
        c.peer(peer)?;
        let b = buf.region();
        let p = c.buffer("", &b)?;
        let api = c.ready(self)?;
        // SAFETY: as for `all_reduce`.
        check(c.api, unsafe {
            (api.HcclRecv)(
                p,
                count(b.len()),
                D::Elem::DATA_TYPE,
                peer,
                comm.as_raw(),
                self.as_raw(),
            )
        })
    }

    fn barrier(&self, comm: &'scope Comm) -> Result<()> {
        let c = Call::new("HcclBarrier", comm, self.device_id())?;
        let api = c.ready(self)?;
        // SAFETY: live communicator and stream, both borrowed beyond the call.
        check(c.api, unsafe {
            (api.HcclBarrier)(comm.as_raw(), self.as_raw())
        })
    }
}
