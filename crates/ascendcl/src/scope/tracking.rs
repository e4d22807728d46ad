//! What a scope knows about the order of the work on its streams (its *lanes*): each lane's
//! position (the operations enqueued on it through the scope) and vector clock (the positions
//! of the other lanes it is known to follow), each claim's last write and the reads since, the
//! events recorded on each lane to order the others after it, and the records the scope made of
//! the caller's events. `docs/soundness.md` gives the argument.
//!
//! Every order the clock states was established by a wait the scope enqueued itself (for an
//! event it recorded, whose record it knows) or by a wait for the caller's event whose latest
//! record the scope made and nobody replaced (the event's record count, read under its lock).
//! A wait only ever waits for a record enqueued before it, so the waits can form no cycle.

use crate::copy::{Access, ClaimTag};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::raw;
use crate::stream::Stream;
use ascendcl_sys as sys;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};

/// The most streams one scope spans.
pub(crate) const MAX_LANES: usize = 16;

/// Per lane, a position of that lane.
type Clock = [u64; MAX_LANES];

/// Marks a lane keeps before those no claim can need are retired.
const MARKS_KEPT: usize = 64;

/// Retired events a lane keeps before it looks for idle ones to reuse.
const RETIRED_KEPT: usize = 64;

/// What the tracking of one scope did: how many waits it enqueued, how many uses needed none
/// because their streams were ordered already, how many events it recorded, and how many of the
/// caller's event waits it recognised as an order ([`Scope::stats`](crate::Scope::stats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScopeStats {
    /// Waits the scope enqueued (`aclrtStreamWaitEvent`) to order a use after conflicting uses
    /// on another stream.
    pub waits: u64,
    /// Conflicting uses on another stream that needed no wait: already ordered (by an earlier
    /// wait of the scope, or by the caller's recognised event).
    pub ordered: u64,
    /// Events the scope recorded (`aclrtRecordEvent`) for its waits.
    pub records: u64,
    /// Waits for the caller's events ([`Scope::wait_event`](crate::Scope::wait_event)) that
    /// the scope recognised as an order (the event's latest record was the scope's own).
    pub recognised: u64,
}

/// An event recorded on a lane after its first `pos` operations, and that lane's clock then.
struct Mark {
    pos: u64,
    event: sys::aclrtEvent,
    clock: Clock,
}

/// One stream of the scope.
pub(crate) struct Lane<'env> {
    pub(crate) stream: &'env Stream,
    device: i32,
    /// Operations enqueued on it through the scope.
    pos: u64,
    /// `clock[j]`: how many of lane `j`'s operations everything enqueued here from now on
    /// follows.
    clock: Clock,
    /// Events recorded here, by increasing position.
    marks: VecDeque<Mark>,
    /// The mark count at which to look again for marks no claim needs.
    next_retire: usize,
    /// Events of this lane that no claim needs any more; reused once idle, or at the end.
    retired: Vec<sys::aclrtEvent>,
    /// The stream's abort count when it joined the scope ([`Error::Aborted`]).
    pub(crate) aborts: u64,
}

/// The uses of one claim that later uses may conflict with.
#[derive(Clone, Copy)]
struct Uses {
    /// The lane and position of the last write.
    write: Option<(usize, u64)>,
    /// Per lane, the position of its last read since that write (0: none).
    reads: Clock,
}

/// A record of the caller's event that the scope made.
struct Known {
    event: Event,
    /// Its number among the event's records and resets ([`Event::record_on`]).
    number: u64,
    /// The lane's clock at the record, its own position included.
    clock: Clock,
}

/// The tracking state of one scope.
pub(crate) struct Tracking<'env> {
    serial: u32,
    pub(crate) lanes: Vec<Lane<'env>>,
    claims: Vec<Uses>,
    known: Vec<Known>,
    stats: ScopeStats,
}

/// The serial numbers of scopes (never 0, which tags no claim).
static SERIAL: AtomicU32 = AtomicU32::new(1);

impl<'env> Tracking<'env> {
    /// A scope over `streams` (one lane per distinct stream, in order); the lane of each.
    pub(crate) fn open(api: &'static str, streams: &[&'env Stream]) -> Result<(Self, Vec<usize>)> {
        if streams.is_empty() {
            return Err(Error::argument(api, "a scope needs at least one stream"));
        }
        // A scope's end synchronises its streams, which a runtime callback must not do.
        crate::deferred::refuse_sync_on_callback(api)?;
        let mut serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        if serial == 0 {
            serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        }
        let mut t = Tracking {
            serial,
            lanes: Vec::with_capacity(streams.len()),
            claims: Vec::new(),
            known: Vec::new(),
            stats: ScopeStats::default(),
        };
        let mut lanes = Vec::with_capacity(streams.len());
        for s in streams {
            lanes.push(t.join(api, s)?);
        }
        Ok((t, lanes))
    }

    /// The lane of `stream`, which joins the scope if it is not one of its streams yet.
    pub(crate) fn join(&mut self, api: &'static str, stream: &'env Stream) -> Result<usize> {
        if let Some(i) = self
            .lanes
            .iter()
            .position(|l| l.stream.as_raw() == stream.as_raw())
        {
            return Ok(i);
        }
        if self.lanes.len() == MAX_LANES {
            return Err(Error::argument(
                api,
                format!("a scope spans at most {MAX_LANES} streams"),
            ));
        }
        let shared = stream.shared();
        if shared.stopped.load(Ordering::Acquire) {
            return Err(Error::argument(
                api,
                "the stream is stopped (Stream::stop): its work would not run until it is \
                 aborted; abort it first",
            ));
        }
        self.lanes.push(Lane {
            stream,
            device: stream.device_id(),
            pos: 0,
            clock: [0; MAX_LANES],
            marks: VecDeque::new(),
            next_retire: MARKS_KEPT,
            retired: Vec::new(),
            aborts: shared.aborts.load(Ordering::Acquire),
        });
        Ok(self.lanes.len() - 1)
    }

    /// A new claim's tag.
    pub(crate) fn claim(&mut self) -> ClaimTag {
        let index = self.claims.len() as u32;
        self.claims.push(Uses {
            write: None,
            reads: [0; MAX_LANES],
        });
        ClaimTag {
            serial: self.serial,
            index,
        }
    }

    pub(crate) fn stats(&self) -> ScopeStats {
        self.stats
    }

    /// The claim a tag names in this scope (`None`: no claim).
    fn claim_of(&self, api: &'static str, tag: ClaimTag) -> Result<Option<usize>> {
        if tag.serial == 0 {
            return Ok(None);
        }
        match self.claims.get(tag.index as usize) {
            Some(_) if tag.serial == self.serial => Ok(Some(tag.index as usize)),
            _ => Err(Error::argument(
                api,
                "the region is memory claimed by another scope, which orders its uses",
            )),
        }
    }

    /// Makes lane `i` wait, before the task about to be enqueued on it, for every earlier use on
    /// another lane that `accesses` conflict with and that it does not follow yet; checks that
    /// lane `i`'s device reaches the memory.
    pub(crate) fn order(&mut self, api: &'static str, i: usize, accesses: &[Access]) -> Result<()> {
        let device = self.lanes[i].device;
        for a in accesses {
            if let Some(d) = a.device
                && !crate::peer::reachable(device, d)
            {
                return Err(unreachable_memory(api, device, d));
            }
            let Some(c) = self.claim_of(api, a.claim)? else {
                continue;
            };
            let u = self.claims[c];
            if let Some((j, p)) = u.write {
                self.after(i, j, p)?;
            }
            if a.write {
                for j in 0..self.lanes.len() {
                    if u.reads[j] > 0 {
                        self.after(i, j, u.reads[j])?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Records that the task of `accesses` was enqueued on lane `i`. In a scope of several
    /// lanes an event is recorded after it, so that a later use elsewhere waits for exactly
    /// this task rather than for whatever the lane has been given by then.
    pub(crate) fn commit(&mut self, i: usize, accesses: &[Access]) {
        let lane = &mut self.lanes[i];
        lane.pos += 1;
        let p = lane.pos;
        lane.clock[i] = p;
        let mut claimed = false;
        for a in accesses {
            let Ok(Some(c)) = self.claim_of("", a.claim) else {
                continue;
            };
            claimed = true;
            let u = &mut self.claims[c];
            if a.write {
                u.write = Some((i, p));
                u.reads = [0; MAX_LANES];
            } else if u.write != Some((i, p)) {
                u.reads[i] = p;
            }
        }
        if claimed && self.lanes.len() > 1 {
            // A failed record only costs precision: a later use records one then.
            let _ = self.mark(i);
        }
    }

    /// Orders lane `i` after the first `p` operations of lane `j`.
    fn after(&mut self, i: usize, j: usize, p: u64) -> Result<()> {
        if i == j {
            return Ok(());
        }
        if self.lanes[i].clock[j] >= p {
            self.stats.ordered += 1;
            return Ok(());
        }
        let k = self.mark_at_least(j, p)?;
        let (event, mark_clock) = {
            let m = &self.lanes[j].marks[k];
            (m.event, m.clock)
        };
        let lane = &mut self.lanes[i];
        lane.stream.make_current()?;
        // SAFETY: a live stream and an event of the scope's pool, recorded on lane `j`; the
        // event stays out of the pool until every lane of the scope is idle.
        unsafe { raw::aclrtStreamWaitEvent(lane.stream.as_raw(), event) }?;
        merge(&mut lane.clock, &mark_clock);
        self.stats.waits += 1;
        Ok(())
    }

    /// The index of the first mark of lane `j` at a position of at least `p` (`p` at most the
    /// lane's position), recording one now when there is none.
    fn mark_at_least(&mut self, j: usize, p: u64) -> Result<usize> {
        let k = self.lanes[j].marks.partition_point(|m| m.pos < p);
        if k < self.lanes[j].marks.len() {
            return Ok(k);
        }
        self.mark(j)?;
        Ok(self.lanes[j].marks.len() - 1)
    }

    /// Records an event on lane `j` after everything enqueued on it so far (unless its last
    /// mark is there already).
    fn mark(&mut self, j: usize) -> Result<()> {
        let lane = &mut self.lanes[j];
        if lane.marks.back().is_some_and(|m| m.pos == lane.pos) {
            return Ok(());
        }
        let event = lane.stream.take_event()?;
        let recorded = lane.stream.make_current().and_then(|()| {
            // SAFETY: a live stream and an idle event of its context, taken from its pool.
            unsafe { raw::aclrtRecordEvent(event, lane.stream.as_raw()) }
        });
        if let Err(e) = recorded {
            // Not queued: the event is idle still.
            lane.stream.give_events([event]);
            return Err(e);
        }
        let mut clock = lane.clock;
        clock[j] = lane.pos;
        lane.marks.push_back(Mark {
            pos: lane.pos,
            event,
            clock,
        });
        self.stats.records += 1;
        if self.lanes[j].marks.len() >= self.lanes[j].next_retire {
            self.retire(j);
        }
        Ok(())
    }

    /// Retires the marks of lane `j` that no claim can need any more (a wait always picks the
    /// first mark at or after a use some claim still names), keeping the newest.
    fn retire(&mut self, j: usize) {
        let mut needed = u64::MAX;
        for u in &self.claims {
            if let Some((l, p)) = u.write
                && l == j
            {
                needed = needed.min(p);
            }
            if u.reads[j] > 0 {
                needed = needed.min(u.reads[j]);
            }
        }
        let lane = &mut self.lanes[j];
        while lane.marks.len() > 1 && lane.marks[0].pos < needed {
            if let Some(m) = lane.marks.pop_front() {
                lane.retired.push(m.event);
            }
        }
        lane.next_retire = (lane.marks.len() * 2).max(MARKS_KEPT);
        if lane.retired.len() > RETIRED_KEPT {
            lane.reuse_idle();
        }
    }

    /// Notes a record of the caller's `event` on lane `i` (its `number`-th record or reset), so
    /// that a wait for it on another lane counts as an order while the record is still the
    /// event's latest.
    pub(crate) fn recorded(&mut self, i: usize, event: &Event, number: u64) {
        self.known.retain(|k| !k.event.same(event));
        if !event.is_trusted() {
            return;
        }
        let lane = &self.lanes[i];
        let mut clock = lane.clock;
        clock[i] = lane.pos;
        self.known.push(Known {
            event: event.clone(),
            number,
            clock,
        });
    }

    /// Notes that lane `i` waits (without a timeout) for `event`'s `number`-th record or
    /// reset: when that is a record the scope made, lane `i` follows what the record followed.
    pub(crate) fn waited(&mut self, i: usize, event: &Event, number: u64) {
        if !event.is_trusted() {
            return;
        }
        if let Some(k) = self
            .known
            .iter()
            .find(|k| k.event.same(event) && k.number == number)
        {
            merge(&mut self.lanes[i].clock, &k.clock);
            self.stats.recognised += 1;
        }
    }

    /// The caller's events the scope noted, to keep until its streams are past them.
    pub(crate) fn take_kept(&mut self) -> Vec<Event> {
        self.known.drain(..).map(|k| k.event).collect()
    }

    /// The events of every lane, for the pools once every lane is idle.
    pub(crate) fn take_events(&mut self) -> Vec<(&'env Stream, Vec<sys::aclrtEvent>)> {
        self.lanes
            .iter_mut()
            .map(|l| {
                let mut v = std::mem::take(&mut l.retired);
                v.extend(l.marks.drain(..).map(|m| m.event));
                (l.stream, v)
            })
            .collect()
    }
}

impl Lane<'_> {
    /// Gives the retired events whose records were reached and whose waits are all done back to
    /// the stream's pool.
    fn reuse_idle(&mut self) {
        let stream = self.stream;
        if stream.make_current().is_err() {
            return;
        }
        self.retired.retain(|&e| {
            if is_idle(e) {
                stream.give_events([e]);
                false
            } else {
                true
            }
        });
    }
}

/// Whether an event's latest record was reached and every wait for it has finished.
fn is_idle(e: sys::aclrtEvent) -> bool {
    let mut reached = sys::ACL_EVENT_RECORDED_STATUS_NOT_READY;
    let mut waits = sys::ACL_EVENT_WAIT_STATUS_NOT_READY;
    // SAFETY: a live event of the scope; valid out-pointers.
    unsafe {
        raw::aclrtQueryEventStatus(e, &mut reached).is_ok()
            && reached == sys::ACL_EVENT_RECORDED_STATUS_COMPLETE
            && raw::aclrtQueryEventWaitStatus(e, &mut waits).is_ok()
            && waits == sys::ACL_EVENT_WAIT_STATUS_COMPLETE
    }
}

fn merge(into: &mut Clock, from: &Clock) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

#[cold]
fn unreachable_memory(api: &'static str, device: i32, memory: i32) -> Error {
    Error::argument(
        api,
        format!(
            "the memory is on another device ({memory}) than the stream's ({device}): work on \
             one device uses another's memory only while a PeerAccess of the two is alive \
             (Device::enable_peer_access)"
        ),
    )
}
