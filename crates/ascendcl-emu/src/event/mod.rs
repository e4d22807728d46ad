//! Events: sequence-numbered records completed when a stream reaches them, with timestamps; their
//! registry (per-device limits, IPC events opened from another process) and what a released
//! device or a finalize does to them.

pub(crate) mod work;

use crate::base::error::*;
use crate::base::hooks::{Hooks, Phase, Registration, Release};
use crate::base::hub::{self, Kind, Resource, registry};
use crate::base::leak::LeakReport;
use crate::base::lock::{Condvar, Mutex, Rank, wait_until};
use crate::base::wait;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest a waiting stream task sleeps before it looks at its stream's cancellation flag
/// again.
const SLICE: Duration = Duration::from_millis(20);

/// The shared words of an IPC event (`ACL_EVENT_IPC`): records issued and records reached, in
/// a process's notify arena, so that another process that opened the event sees them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shared {
    /// Address of the word counting records issued (the next word counts records reached).
    pub base: usize,
    /// Whether the words are this process's (freed with the event).
    pub own: bool,
}

impl Shared {
    fn issued(&self) -> &AtomicU32 {
        // SAFETY: two aligned words of an arena mapping, which is never unmapped.
        unsafe { &*(self.base as *const AtomicU32) }
    }

    fn reached(&self) -> &AtomicU32 {
        // SAFETY: as above, the second word.
        unsafe { &*((self.base + 4) as *const AtomicU32) }
    }

    /// Whether every record issued has been reached (wrap-around safe).
    fn done(&self, target: u32) -> bool {
        self.reached().load(Ordering::Acquire).wrapping_sub(target) as i32 >= 0
    }
}

/// Nanoseconds of the monotonic clock (time since boot, like the device's clock).
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer to a local.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[derive(Debug, Default)]
struct State {
    /// Records issued.
    recorded: u64,
    /// Highest record sequence reached by its stream.
    completed: u64,
    /// When the latest completed record was reached.
    ts_ns: Option<u64>,
    /// Recorded and not reset since.
    set: bool,
}

/// An event.
#[derive(Debug)]
pub(crate) struct Event {
    pub handle: usize,
    /// `aclrtGetEventId`: a small number, unique in the process.
    pub id: u32,
    pub device: i32,
    pub flags: u32,
    /// Whether elapsed time may be measured (plain events, or `ACL_EVENT_TIME_LINE`).
    pub timing: bool,
    /// The shared words of an IPC event.
    pub shared: Option<Shared>,
    /// Created by `aclrtCreateEventExWithFlag` (the runtime's "new mode" events).
    pub ex: bool,
    /// Wait tasks for this event queued on streams and not finished yet
    /// (`aclrtQueryEventWaitStatus`).
    pending_waits: AtomicU64,
    st: Mutex<State>,
    cv: Condvar,
}

impl Event {
    pub(crate) fn new(handle: usize, device: i32, flags: u32, timing: bool) -> Event {
        static NEXT_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        Event {
            handle,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            device,
            flags,
            timing,
            shared: None,
            ex: false,
            pending_waits: AtomicU64::new(0),
            st: Mutex::new(Rank::Event, State::default()),
            cv: Condvar::new(),
        }
    }

    /// The event with shared words (an IPC event).
    pub(crate) fn with_shared(mut self, shared: Shared) -> Event {
        self.shared = Some(shared);
        self
    }

    /// The event made by `aclrtCreateEventExWithFlag`.
    pub(crate) fn ex(mut self) -> Event {
        self.ex = true;
        self
    }

    /// Whether every wait task issued for the event has finished (run, timed out or been
    /// discarded); true when none was issued.
    pub(crate) fn waits_done(&self) -> bool {
        self.pending_waits.load(Ordering::Acquire) == 0
    }

    /// Issues a record; returns its sequence number for the stream task.
    pub(crate) fn begin_record(&self) -> u64 {
        if let Some(sh) = &self.shared {
            return u64::from(sh.issued().fetch_add(1, Ordering::AcqRel).wrapping_add(1));
        }
        let mut s = self.st.lock();
        s.recorded += 1;
        s.recorded
    }

    /// The sequence a wait issued now must reach.
    pub(crate) fn wait_target(&self) -> u64 {
        if let Some(sh) = &self.shared {
            return u64::from(sh.issued().load(Ordering::Acquire));
        }
        self.st.lock().recorded
    }

    /// The stream reached record `seq`.
    pub(crate) fn complete(&self, seq: u64) {
        if let Some(sh) = &self.shared {
            sh.reached().fetch_max(seq as u32, Ordering::AcqRel);
            wait::futex_wake(sh.reached());
        }
        let mut s = self.st.lock();
        s.completed = s.completed.max(seq);
        s.ts_ns = Some(now_ns());
        s.set = true;
        drop(s);
        self.cv.notify_all();
    }

    /// The stream reached a reset.
    pub(crate) fn reset(&self) {
        let mut s = self.st.lock();
        s.set = false;
        s.ts_ns = None;
    }

    /// Whether the latest record has been reached (and not reset since). An IPC event with
    /// nothing in flight is complete.
    pub(crate) fn is_complete(&self) -> bool {
        if let Some(sh) = &self.shared {
            return sh.done(sh.issued().load(Ordering::Acquire));
        }
        let s = self.st.lock();
        s.set && s.completed >= s.recorded
    }

    /// Whether record `seq` has been reached.
    pub(crate) fn reached(&self, seq: u64) -> bool {
        if let Some(sh) = &self.shared {
            return sh.done(seq as u32);
        }
        self.st.lock().completed >= seq
    }

    /// Whether the event has been recorded and not reset since (the device's flag, which waits
    /// inside built models look at).
    pub(crate) fn is_set(&self) -> bool {
        if let Some(sh) = &self.shared {
            return sh.done(sh.issued().load(Ordering::Acquire));
        }
        self.st.lock().set
    }

    /// Blocks until record `seq` has been reached, `timeout` (None: never) has passed, or
    /// `cancel` is set (the waiting stream was stopped, aborted or destroyed by force).
    pub(crate) fn wait_for(
        &self,
        seq: u64,
        timeout: Option<Duration>,
        cancel: &AtomicBool,
    ) -> wait::Outcome {
        if seq == 0 {
            return wait::Outcome::Done;
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if cancel.load(Ordering::Acquire) {
                return wait::Outcome::Cancelled;
            }
            let mut until = Instant::now() + SLICE;
            if let Some(d) = deadline {
                if Instant::now() >= d {
                    return wait::Outcome::TimedOut;
                }
                until = until.min(d);
            }
            let done = match &self.shared {
                Some(sh) => wait::wait_at_least(sh.reached(), seq as u32, Some(until)),
                None => {
                    let g = self.st.lock();
                    wait_until(&self.cv, g, Some(until), |s| s.completed >= seq).1
                }
            };
            if done {
                return wait::Outcome::Done;
            }
        }
    }

    /// Blocks until every record issued so far has been reached; false on timeout.
    pub(crate) fn synchronize(&self, timeout: Option<std::time::Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        if let Some(sh) = &self.shared {
            let target = sh.issued().load(Ordering::Acquire);
            return wait::wait_at_least(sh.reached(), target, deadline);
        }
        let g = self.st.lock();
        let target = g.recorded;
        let (g, ok) = wait_until(&self.cv, g, deadline, |s| s.completed >= target);
        drop(g);
        ok
    }

    /// The timestamp of the latest reached record, when set.
    pub(crate) fn timestamp_ns(&self) -> Option<u64> {
        let s = self.st.lock();
        if s.set && s.completed >= s.recorded {
            s.ts_ns
        } else {
            None
        }
    }
}

/// A wait task for an event (`aclrtStreamWaitEvent[WithTimeout]`): the record it waits for and
/// its timeout. It counts as pending for `aclrtQueryEventWaitStatus` from its creation until it
/// is dropped (after it ran, or when it is discarded or never queued); a clone is another
/// pending wait.
pub(crate) struct EventWait {
    pub event: Arc<Event>,
    pub seq: u64,
    pub timeout: Option<Duration>,
}

impl EventWait {
    /// A wait for the event's latest record issued so far.
    pub(crate) fn latest(event: Arc<Event>, timeout: Option<Duration>) -> EventWait {
        let seq = event.wait_target();
        event.pending_waits.fetch_add(1, Ordering::AcqRel);
        EventWait {
            event,
            seq,
            timeout,
        }
    }

    /// Runs the wait on the stream's worker; a timeout fails the task.
    pub(crate) fn run(&self, cancel: &AtomicBool) -> R {
        match self.event.wait_for(self.seq, self.timeout, cancel) {
            wait::Outcome::TimedOut => fail(
                RT_TASK_TIMEOUT,
                format!(
                    "the wait for event {:#x} timed out after {} s without the record completing",
                    self.event.handle,
                    self.timeout.map_or(0, |t| t.as_secs())
                ),
            ),
            wait::Outcome::Done | wait::Outcome::Cancelled => Ok(()),
        }
    }
}

impl Clone for EventWait {
    fn clone(&self) -> Self {
        self.event.pending_waits.fetch_add(1, Ordering::AcqRel);
        EventWait {
            event: Arc::clone(&self.event),
            seq: self.seq,
            timeout: self.timeout,
        }
    }
}

impl Drop for EventWait {
    fn drop(&mut self) {
        self.event.pending_waits.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Checks the flag of `aclrtCreateEventWithFlag`: non-zero and known bits only.
pub(crate) fn check_flags(flag: u32) -> R {
    const KNOWN: u32 = 0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x40;
    if flag == 0 {
        return fail(
            RT_PARAM_INVALID,
            "flag is 0; pass a combination of ACL_EVENT_* bits",
        );
    }
    if flag & !KNOWN != 0 {
        return fail(
            RT_PARAM_INVALID,
            format!("flag {flag:#x} has unknown bits {:#x}", flag & !KNOWN),
        );
    }
    Ok(())
}

impl Resource for Event {
    const KIND: Kind = Kind::Event;

    fn handle(&self) -> usize {
        self.handle
    }

    fn device(&self) -> Option<i32> {
        Some(self.device)
    }
}

/// Events per device beyond which creation fails with 207007.
pub(crate) const MAX_PER_DEVICE: usize = 65536;

/// `ACL_EVENT_IPC`: an event other processes may open.
pub(crate) const IPC_EVENT: u32 = 0x40;

static HOOKS: Registration = Registration::new(Hooks {
    name: "events",
    device_released: Some((Phase::BeforeStreams, device_released)),
    finalized: Some(finalized),
    live: Some(live),
    ..Hooks::NONE
});

/// A released device's events go with it.
fn device_released(r: &Release, report: &mut LeakReport) {
    report.events += registry::<Event>()
        .remove_where(|e| e.device == r.device)
        .len();
}

/// Events left at finalize (of devices never opened through `aclrtSetDevice`).
fn finalized(report: &mut LeakReport) {
    report.events += registry::<Event>().remove_where(|_| true).len();
}

fn live(device: Option<i32>, report: &mut LeakReport) {
    report.events += match device {
        Some(d) => registry::<Event>().count_on(d),
        None => registry::<Event>().len(),
    };
}

/// `aclrtCreateEvent*` on the current device; `ex` for `aclrtCreateEventExWithFlag`. The limit
/// of [`MAX_PER_DEVICE`] is checked in O(1).
pub(crate) fn create(flags: u32, timing: bool, ex: bool) -> R<usize> {
    let (dev, _) = crate::device::context::current_ids()?;
    HOOKS.ensure();
    let shared = if flags & IPC_EVENT != 0 {
        let (base, _) = crate::sync::notify::alloc_pair()?;
        Some(Shared { base, own: true })
    } else {
        None
    };
    let ev = registry::<Event>()
        .insert_within(dev, MAX_PER_DEVICE, || {
            let mut ev = Event::new(hub::new_handle(), dev, flags, timing);
            if ex {
                ev = ev.ex();
            }
            if let Some(sh) = shared {
                ev = ev.with_shared(sh);
            }
            Arc::new(ev)
        })
        .map_err(|n| Fail {
            code: RT_NO_EVENT_RESOURCE,
            msg: format!("device {dev} already has {n} events"),
        })?;
    Ok(ev.handle)
}

/// Registers an event opened from another process's IPC event handle (on the current device).
pub(crate) fn insert_opened(shared: Shared) -> R<usize> {
    let (dev, _) = crate::device::context::current_ids()?;
    HOOKS.ensure();
    let ev = Arc::new(Event::new(hub::new_handle(), dev, IPC_EVENT, false).with_shared(shared));
    let h = ev.handle;
    registry::<Event>().insert(ev);
    Ok(h)
}

/// Resolves an event handle.
pub(crate) fn get(h: usize) -> R<Arc<Event>> {
    registry::<Event>().get(h).ok_or_else(|| Fail {
        code: RT_INVALID_HANDLE,
        msg: format!("event {h:#x} is not a live event (destroyed, or not an event handle)"),
    })
}

/// `aclrtDestroyEvent`: does not wait for records in flight.
pub(crate) fn destroy(h: usize) -> R {
    match registry::<Event>().remove(h) {
        Some(ev) => {
            if ev.shared.is_some_and(|s| s.own) {
                // Later opens fail; processes that opened it keep their view of the words.
                crate::memory::ipc::close_owner(crate::memory::ipc::What::Event, h as u64);
            }
            Ok(())
        }
        None => fail(
            RT_INVALID_HANDLE,
            format!("event {h:#x} is not a live event"),
        ),
    }
}

/// The number of events the device can still create.
pub(crate) fn available(dev: i32) -> u32 {
    MAX_PER_DEVICE.saturating_sub(registry::<Event>().count_on(dev)) as u32
}
