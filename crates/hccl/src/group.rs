//! Groups (`HcclGroupStart` … `HcclGroupEnd`): [`group`] runs a closure whose collectives,
//! sends and receives, issued through [`Group::on`], are captured and made together when it
//! ends; it then waits for every stream they used, like a scope over several streams.

use crate::backend;
use crate::error::{Error, Result, check};
use crate::gate;
use ascendcl::Stream;
use std::cell::RefCell;
use std::marker::PhantomData;

/// The handle a [`group`] closure issues its operations through.
///
/// `'g` is the group's own lifetime, `'env` what it borrows from outside: buffers, layouts,
/// communicators and streams handed to the group are borrowed for `'g`, so they must come from
/// outside the closure and stay untouched until the group has ended and its streams are idle.
#[derive(Debug)]
pub struct Group<'g, 'env: 'g> {
    streams: RefCell<Vec<&'env Stream>>,
    _g: PhantomData<&'g mut &'g ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// One stream of a [`group`]: its [`Collectives`](crate::Collectives) are captured, not made,
/// and run when the group ends. Neither `Send` nor `Sync`: a group belongs to its thread.
#[derive(Debug, Clone, Copy)]
pub struct GroupStream<'g, 'env> {
    stream: &'env Stream,
    _group: PhantomData<&'g Group<'g, 'env>>,
}

impl<'g, 'env> Group<'g, 'env> {
    /// The collectives of `stream` in this group. The stream is synchronised when the group
    /// ends.
    pub fn on(&'g self, stream: &'env Stream) -> GroupStream<'g, 'env> {
        let mut streams = self.streams.borrow_mut();
        if !streams.iter().any(|s| std::ptr::eq(*s, stream)) {
            streams.push(stream);
        }
        GroupStream {
            stream,
            _group: PhantomData,
        }
    }
}

impl<'g, 'env> GroupStream<'g, 'env> {
    /// The stream.
    pub fn stream(&self) -> &'env Stream {
        self.stream
    }
}

/// Ends the group: `HcclGroupEnd`, then opens the gate to the other threads, then waits for every
/// stream of the group. Runs on every exit of [`group`], unwinding included.
struct EndOnExit<'a, 'env> {
    api: &'static hccl_sys::HcclApi,
    streams: &'a RefCell<Vec<&'env Stream>>,
    gate: Option<gate::GroupGuard>,
    armed: bool,
}

impl EndOnExit<'_, '_> {
    fn end(&mut self) -> Result<()> {
        self.armed = false;
        // SAFETY: no arguments; the group was started by `group`, on this thread.
        let ended = check("HcclGroupEnd", unsafe { (self.api.HcclGroupEnd)() });
        // HCCL captures nothing more: other threads may call it again while this one waits (a
        // peer's matching receive, for instance, may be what the streams wait for).
        self.gate = None;
        // Every captured operation is on its stream now: wait for each before the borrows end.
        // An empty scope waits the way every scope does, and never returns while the stream
        // may still use memory.
        let mut synced = Ok(());
        for s in self.streams.borrow().iter() {
            let r = s.scope(|_| Ok(()));
            if synced.is_ok() {
                synced = r.map_err(Error::Acl);
            }
        }
        ended.and(synced)
    }
}

impl Drop for EndOnExit<'_, '_> {
    fn drop(&mut self) {
        if self.armed {
            // Unwinding out of the closure: the captured operations still run (HCCL has no way
            // to drop them) and the streams are waited for; a failure cannot be returned here.
            let _ = self.end();
        }
    }
}

/// Runs `f` inside an HCCL group (`HcclGroupStart`, then `HcclGroupEnd` when `f` returns, on
/// success, error or panic), then waits for every stream the group used.
///
/// Operations issued through [`Group::on`] are checked in Rust at once (the same checks as
/// outside a group) and captured by HCCL; at the end HCCL makes them together, so that one
/// thread can drive the ranks of several devices (a collective on rank 0 no longer waits for
/// ranks that this thread has yet to reach), and fuses each communicator's sends and receives
/// into one batch.
///
/// ```
/// use hccl::{Collectives, Comm, ReduceOp};
/// let rt = ascendcl::Runtime::new()?;
/// let comms = Comm::init_all(&[rt.device(0)?, rt.device(1)?])?;
/// let streams = comms.iter().map(|c| c.device().create_stream()).collect::<Result<Vec<_>, _>>()?;
/// let mut bufs = comms
///     .iter()
///     .map(|c| c.device().clone_htod(&[c.rank() as i32 + 1; 3]))
///     .collect::<Result<Vec<_>, _>>()?;
/// // One thread, both ranks.
/// hccl::group(|g| {
///     for ((comm, stream), buf) in comms.iter().zip(&streams).zip(bufs.iter_mut()) {
///         g.on(stream).all_reduce_in_place(comm, buf, ReduceOp::Sum)?;
///     }
///     Ok(())
/// })?;
/// assert_eq!(bufs[1].copy_to_vec()?, [3; 3]);
/// # Ok::<(), hccl::Error>(())
/// ```
///
/// Rules, following HCCL's:
///
/// * Groups do not nest, and a group belongs to the thread that opened it: on that thread, until
///   the group ends, the operations of an ordinary [`Scope`](ascendcl::Scope), communicator
///   creation and destruction are refused ([`Error::Argument`]), and
///   [`batch_send_recv`](crate::Collectives::batch_send_recv) too (HCCL refuses it in a group).
/// * While a group is open, the HCCL calls of other threads of the process (collectives, sends,
///   receives, communicator creation and destruction) wait for it to end, and a group waits for
///   those in progress: some HCCL versions count groups per process and would otherwise capture
///   them. So the ranks of one process that the group's collectives meet must all be issued
///   inside the group; ranks in other processes are not affected.
/// * HCCL does not report the failure of a captured operation (`HcclGroupEnd` succeeds): the
///   Rust checks run before capture, but what only the library checks (a type it does not
///   reduce, for example) is then only logged, and the output is left unwritten.
pub fn group<'env, R, F>(f: F) -> Result<R>
where
    F: for<'g> FnOnce(&'g Group<'g, 'env>) -> Result<R>,
{
    let api = backend::api()?;
    let gate = gate::open_group()?;
    // SAFETY: no arguments.
    check("HcclGroupStart", unsafe { (api.HcclGroupStart)() })?;
    let group = Group {
        streams: RefCell::new(Vec::new()),
        _g: PhantomData,
        _env: PhantomData,
    };
    let mut end = EndOnExit {
        api,
        streams: &group.streams,
        gate: Some(gate),
        armed: true,
    };
    let r = f(&group);
    let ended = end.end();
    match (r, ended) {
        (Ok(v), Ok(())) => Ok(v),
        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
    }
}
