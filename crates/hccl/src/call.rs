//! The checks every collective makes before its C call ([`Call`]), and the stream a collective
//! is issued on ([`Target`]).

use crate::backend;
use crate::comm::Comm;
use crate::error::{Error, Result, check};
use crate::gate::{self, CallGuard};
use crate::layout::Blocks;
use ascendcl::{Access, AsyncDest, AsyncSource, Lane, MemoryLocation, RawRegion, Stream};
use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::c_void;
use std::marker::PhantomData;

/// Where a collective goes: a stream, issued at once ([`ascendcl::Scope`]) or captured by an
/// open group ([`GroupStream`](crate::GroupStream)).
///
/// Only this crate makes one, and it is branded with the invariant lifetime of the scope (or
/// group) whose stream it names, as [`ascendcl::Claimed`] is: it cannot pass for the target of
/// a scope with another lifetime.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    stream: &'a Stream,
    grouped: bool,
    /// The scope's stream, which orders the call after conflicting uses of its buffers on the
    /// scope's other streams (none for a group's stream).
    lane: Option<Lane<'a>>,
    _brand: PhantomData<&'a mut &'a ()>,
}

impl<'a> Target<'a> {
    /// A stream of a scope: the call runs at once, outside any group, ordered by the scope.
    pub(crate) fn issued(lane: Lane<'a>) -> Self {
        Target {
            stream: lane.stream(),
            grouped: false,
            lane: Some(lane),
            _brand: PhantomData,
        }
    }

    /// A stream of the group open on this thread: the call is captured until the group ends.
    pub(crate) fn grouped(stream: &'a Stream) -> Self {
        Target {
            stream,
            grouped: true,
            lane: None,
            _brand: PhantomData,
        }
    }

    pub(crate) fn is_grouped(&self) -> bool {
        self.grouped
    }

    pub(crate) fn stream_raw(&self) -> ascendcl::sys::aclrtStream {
        self.stream.as_raw()
    }
}

/// One collective being checked: its C name, communicator and target.
pub(crate) struct Call<'a> {
    pub(crate) api: &'static str,
    comm: &'a Comm,
    target: Target<'a>,
    /// How the call uses its buffers ([`Call::note`]).
    accesses: RefCell<Vec<Access>>,
}

impl<'a> Call<'a> {
    /// A call of `api` on `comm` from `target`, whose stream must be on the communicator's
    /// device.
    pub(crate) fn new(api: &'static str, comm: &'a Comm, target: Target<'a>) -> Result<Self> {
        let c = Call {
            api,
            comm,
            target,
            accesses: RefCell::new(Vec::new()),
        };
        let (s, d) = (target.stream.device_id(), comm.device().id());
        if s != d {
            return Err(c.arg(format!(
                "the stream is on device {s}, the communicator on device {d}"
            )));
        }
        Ok(c)
    }

    /// Makes the C call once every check has passed: `c_call` gets the HCCL table, the
    /// communicator and the stream, and runs with the stream's context current; a call issued
    /// at once passes the gate (see [`gate`]) for its duration, a captured one belongs to the
    /// thread's group. The code it returns is checked as `api`'s.
    pub(crate) fn issue(
        &self,
        c_call: impl FnOnce(
            &'static hccl_sys::HcclApi,
            hccl_sys::HcclComm,
            ascendcl::sys::aclrtStream,
        ) -> hccl_sys::HcclResult,
    ) -> Result<()> {
        crate::trace::span!(
            "collective",
            api = self.api,
            rank = self.comm.rank(),
            device = self.target.stream.device_id(),
            grouped = self.target.grouped
        );
        let api = backend::api()?;
        let _gate: Option<CallGuard> = if self.target.grouped {
            None
        } else {
            Some(gate::call(self.api)?)
        };
        let accesses = self.accesses.borrow();
        let Some(lane) = self.target.lane else {
            self.target.stream.make_current()?;
            return check(
                self.api,
                c_call(api, self.comm.as_raw(), self.target.stream_raw()),
            );
        };
        // The scope orders the call after conflicting uses of its buffers on its other streams;
        // a failing call is noted as not enqueued, and its own error returned.
        let mut failed = None;
        let ordered = lane.enqueue(self.api, &accesses, |stream| {
            check(self.api, c_call(api, self.comm.as_raw(), stream.as_raw())).map_err(|e| {
                failed = Some(e);
                ascendcl::Error::Argument {
                    api: self.api,
                    reason: Cow::Borrowed("the collective failed"),
                }
            })
        });
        match failed {
            Some(e) => Err(e),
            None => ordered.map_err(Error::from),
        }
    }

    /// Notes how the call uses a buffer, for the scope's ordering.
    pub(crate) fn note(&self, access: Access) {
        self.accesses.borrow_mut().push(access);
    }

    pub(crate) fn arg(&self, reason: impl Into<Cow<'static, str>>) -> Error {
        Error::argument(self.api, reason)
    }

    /// `whole` must hold `part` times the communicator's size elements.
    pub(crate) fn size_times(&self, whole: (&str, usize), part: (&str, usize)) -> Result<()> {
        let n = self.comm.size();
        if part.1.checked_mul(n as usize) != Some(whole.1) {
            return Err(self.arg(format!(
                "{} has {} elements; it must be {}'s {} times the size {n}",
                whole.0, whole.1, part.0, part.1
            )));
        }
        Ok(())
    }

    /// Two lengths that must be equal.
    pub(crate) fn equal(&self, a: (&str, usize), b: (&str, usize)) -> Result<()> {
        if a.1 != b.1 {
            return Err(self.arg(format!(
                "{} has {} elements, {} {}; they must be equal",
                a.0, a.1, b.0, b.1
            )));
        }
        Ok(())
    }

    /// The send and receive buffers of a collective, each device memory of the communicator's
    /// device (the send buffer checked first).
    pub(crate) fn buffers<'s, S, D>(&self, send: &S, recv: &mut D) -> Result<Buffers<S::Elem>>
    where
        S: AsyncSource<'s>,
        D: AsyncDest<'s, Elem = S::Elem>,
    {
        let (s, r) = (send.region(), recv.region());
        let (sp, rp) = (self.buffer("send", &s)?, self.buffer("receive", &r)?);
        Ok(Buffers { s, r, sp, rp })
    }

    /// The address of `r`, which must be device memory of the communicator's device.
    /// The call reads it when it is the send buffer, else it may write it.
    pub(crate) fn buffer<T>(&self, what: &str, r: &RawRegion<T>) -> Result<*mut c_void> {
        self.location(what, r.location())?;
        self.note(if what == "send" { r.read() } else { r.write() });
        Ok(r.ptr().cast())
    }

    pub(crate) fn location(&self, what: &str, at: MemoryLocation) -> Result<()> {
        let d = self.comm.device().id();
        let what = if what.is_empty() {
            "the buffer".to_string()
        } else {
            format!("the {what} buffer")
        };
        match at.device() {
            Some(x) if x == d => Ok(()),
            Some(x) => Err(self.arg(format!(
                "{what} is on device {x}, the communicator on device {d}"
            ))),
            None => Err(self.arg(format!("{what} must be device memory"))),
        }
    }

    /// The operation does not run in place: the two regions must not share a byte.
    pub(crate) fn disjoint<T>(&self, a: &RawRegion<T>, b: &RawRegion<T>) -> Result<()> {
        let span = |r: &RawRegion<T>| (r.ptr() as usize, r.ptr() as usize + r.bytes());
        let ((a0, a1), (b0, b1)) = (span(a), span(b));
        if a.bytes() > 0 && b.bytes() > 0 && a0 < b1 && b0 < a1 {
            return Err(self.arg(format!(
                "the send and receive buffers overlap; {} does not run in place",
                self.api
            )));
        }
        Ok(())
    }

    /// `blocks` lays out a buffer of `len` elements named `what`: one block per rank, all within
    /// the buffer, and (for a buffer the operation writes) no two overlapping.
    pub(crate) fn blocks(&self, what: &str, b: &Blocks, len: usize, written: bool) -> Result<()> {
        let n = self.comm.size() as usize;
        if b.ranks() != n {
            return Err(self.arg(format!(
                "the {what} blocks are {}; there must be one per rank ({n})",
                b.ranks()
            )));
        }
        if b.extent() > len {
            return Err(self.arg(format!(
                "the {what} blocks reach element {}, but the {what} buffer has {len}",
                b.extent()
            )));
        }
        if written && let Some((i, j)) = b.overlap() {
            return Err(self.arg(format!(
                "{what} blocks {i} and {j} overlap; the blocks of a buffer written by {} must \
                 be disjoint",
                self.api
            )));
        }
        Ok(())
    }

    /// A V-collective's own block: the length `len` must be this rank's count in `blocks`
    /// (named `block`; a missing count is 0).
    pub(crate) fn own_block(&self, len: (&str, usize), block: &str, blocks: &Blocks) -> Result<()> {
        let own = blocks.count(self.comm.rank() as usize).unwrap_or(0);
        self.equal(len, (block, own))
    }

    /// `r` is a rank of the communicator.
    pub(crate) fn rank(&self, what: &str, r: u32) -> Result<()> {
        if r >= self.comm.size() {
            return Err(self.arg(format!(
                "{what} {r} is not a rank of a communicator of size {}",
                self.comm.size()
            )));
        }
        Ok(())
    }

    /// `peer` is another rank of the communicator.
    pub(crate) fn peer(&self, peer: u32) -> Result<()> {
        self.rank("peer", peer)?;
        if peer == self.comm.rank() {
            return Err(self.arg(format!("rank {peer} cannot send to or receive from itself")));
        }
        Ok(())
    }
}

/// A collective's send and receive regions and their addresses, from [`Call::buffers`].
pub(crate) struct Buffers<T> {
    pub(crate) s: RawRegion<T>,
    pub(crate) r: RawRegion<T>,
    pub(crate) sp: *mut c_void,
    pub(crate) rp: *mut c_void,
}

/// An element count as the C functions take it.
pub(crate) fn count(n: usize) -> u64 {
    n as u64
}
