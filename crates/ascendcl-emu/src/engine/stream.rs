//! Streams: in-order queues of [`Work`], each run by its own worker thread. The queue knows
//! nothing of what it runs: the unit of work says what memory it touches, how it runs and how it
//! behaves when its stream fails or is torn down; a [`Recorder`] set on the stream takes its
//! submissions instead of the queue.

use super::exception;
use super::failure::CtxFailure;
use super::poll::poll;
use super::record::Recorder;
use super::trace::{self, Lane};
use super::work::{Cx, Work, device_bit};
use crate::base::error::*;
use crate::base::lock::{Condvar, Mutex, MutexGuard, Rank};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Stack size of a stream's worker thread (host functions run on it).
const WORKER_STACK: usize = 1 << 20;

/// How long `aclrtDestroyStreamForce` (and a forced device reset) waits for the stream's queued
/// work to drain. A guard against a host function that waits for the caller: past it the call
/// returns and the work finishes in the background.
const FORCE_WAIT: Duration = Duration::from_secs(1);

thread_local! {
    /// The stream whose worker the current thread is (0 on other threads).
    static WORKER_OF: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A queued task with its identity (for exception reports).
struct Queued {
    work: Arc<dyn Work>,
    /// The task's id on its stream (its submission number).
    id: u32,
    /// The submitting thread.
    tid: u32,
}

/// What a drain sees of the task a worker runs.
#[derive(Debug, Clone, Copy)]
struct Mark {
    gate: bool,
    devices: u64,
}

#[derive(Default)]
struct Queue {
    tasks: VecDeque<Queued>,
    /// The task the worker runs, if any.
    running: Option<Mark>,
    submitted: u64,
    completed: u64,
    worker: bool,
    closing: bool,
    error: Option<Fail>,
    /// The failure mode set on this stream: CONTINUE 0 (the default) or STOP 1.
    mode: u64,
    stopped: bool,
    /// Stopped by `aclrtStreamStop`: nothing more runs until `aclrtStreamAbort`.
    halted: bool,
    /// Where the stream's submissions are recorded instead of queued (capture, a built
    /// model's bound stream, a task group update).
    rec: Option<Arc<dyn Recorder>>,
    /// Stream attributes 2 to 4 (`aclrtSetStreamAttribute`): overflow check, user tag, cache
    /// of operator information.
    attrs: [u32; 3],
    /// Threads asleep on the stream's condition variable (notifications are skipped when none).
    sleepers: u32,
}

/// A stream.
pub(crate) struct Stream {
    pub handle: usize,
    /// The stream id (`aclrtStreamGetId`, exception reports).
    pub id: i32,
    pub ctx: usize,
    pub device: i32,
    pub is_default: bool,
    pub priority: u32,
    pub flags: u32,
    /// The failure state of the stream's context.
    failure: Arc<CtxFailure>,
    /// Set while the stream is aborted, stopped or destroyed by force: waiting tasks give up.
    cancel: AtomicBool,
    q: Mutex<Queue>,
    cv: Condvar,
    /// Mirrors of `Queue::submitted` / `completed` / `closing`, stored under the lock and polled
    /// without it.
    submitted: AtomicU64,
    completed: AtomicU64,
    closing: AtomicBool,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("handle", &self.handle)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

impl Stream {
    pub(crate) fn new(
        handle: usize,
        ctx: usize,
        device: i32,
        is_default: bool,
        priority: u32,
        flags: u32,
        failure: Arc<CtxFailure>,
    ) -> Arc<Stream> {
        static NEXT_ID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(1);
        Arc::new(Stream {
            handle,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            ctx,
            device,
            is_default,
            priority,
            flags,
            failure,
            cancel: AtomicBool::new(false),
            q: Mutex::new(Rank::Stream, Queue::default()),
            cv: Condvar::new(),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            closing: AtomicBool::new(false),
        })
    }

    /// Releases the lock and wakes the sleepers, if any.
    fn wake(&self, q: MutexGuard<'_, Queue>) {
        let any = q.sleepers > 0;
        drop(q);
        if any {
            self.cv.notify_all();
        }
    }

    /// Sleeps on the condition variable (until a notification or `deadline`).
    fn sleep<'a>(
        &self,
        mut q: MutexGuard<'a, Queue>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, Queue> {
        q.sleepers += 1;
        match deadline {
            None => self.cv.wait(&mut q),
            Some(d) => {
                self.cv.wait_until_instant(&mut q, d);
            }
        }
        q.sleepers -= 1;
        q
    }

    /// Waits until `done` holds or `deadline` passes; returns the guard and whether `done`
    /// holds.
    fn wait_until<'a>(
        &self,
        mut q: MutexGuard<'a, Queue>,
        deadline: Option<Instant>,
        done: impl Fn(&Queue) -> bool,
    ) -> (MutexGuard<'a, Queue>, bool) {
        loop {
            if done(&q) {
                return (q, true);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return (q, false);
            }
            q = self.sleep(q, deadline);
        }
    }

    /// Queues `work`; the worker runs it after everything queued before it (or the stream's
    /// recorder records it).
    pub(crate) fn enqueue(self: &Arc<Self>, work: impl Work) -> R {
        self.submit(Arc::new(work))
    }

    /// [`Stream::enqueue`] of a shared unit of work.
    pub(crate) fn submit(self: &Arc<Self>, work: Arc<dyn Work>) -> R {
        self.failure.check(self.handle)?;
        let mut q = self.q.lock();
        if let Some(rec) = &q.rec {
            return rec.record(self.handle, work);
        }
        if q.closing {
            return fail(
                RT_INVALID_HANDLE,
                format!("stream {:#x} is being destroyed", self.handle),
            );
        }
        let tid = exception::thread_id();
        q.submitted += 1;
        let id = q.submitted as u32;
        q.tasks.push_back(Queued { work, id, tid });
        if !self.is_default {
            exception::set_last_task(id);
        }
        if !q.worker {
            let me = Arc::clone(self);
            let spawned = std::thread::Builder::new()
                .name(format!("acl-emu-stream-{:x}", self.handle))
                .stack_size(WORKER_STACK)
                .spawn(move || me.work());
            if let Err(e) = spawned {
                q.tasks.pop_back();
                q.submitted -= 1;
                return fail(
                    RT_INTERNAL_ERROR,
                    format!("cannot start the stream's worker thread: {e}"),
                );
            }
            q.worker = true;
        }
        self.submitted.store(q.submitted, Ordering::Release);
        self.wake(q);
        Ok(())
    }

    fn work(self: Arc<Self>) {
        WORKER_OF.with(|w| w.set(self.handle));
        let mut q = self.q.lock();
        loop {
            let next = if q.halted { None } else { q.tasks.pop_front() };
            let Some(Queued { work, id, tid }) = next else {
                if q.closing && q.tasks.is_empty() {
                    q.worker = false;
                    self.wake(q);
                    return;
                }
                if q.halted {
                    // aclrtStreamStop: the queued tasks wait for aclrtStreamAbort (or close).
                    q = self.sleep(q, None);
                    continue;
                }
                // Every submitted task has been taken: poll for the next one briefly, then
                // sleep until enqueue or close wakes us.
                let seen = q.submitted;
                drop(q);
                poll(None, || {
                    self.submitted.load(Ordering::Acquire) != seen
                        || self.closing.load(Ordering::Acquire)
                });
                q = self.q.lock();
                if q.tasks.is_empty() && !q.closing {
                    q = self.sleep(q, None);
                }
                continue;
            };
            // STOP: after a failure the stream's remaining work, and that of every stream of
            // its context, is discarded; event records and waits still complete.
            let skip = (q.stopped || self.failure.failed.load(Ordering::Acquire))
                && !work.runs_after_failure();
            q.running = Some(Mark {
                gate: work.gate(),
                devices: work.devices(),
            });
            drop(q);
            let result = if skip {
                Ok(())
            } else {
                let cx = Cx {
                    cancel: &self.cancel,
                };
                let lane = || Lane {
                    device: self.device,
                    stream: self.id,
                };
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    trace::run(&*work, &cx, lane)
                }))
                .unwrap_or_else(|p| {
                    fail(
                        RT_INTERNAL_ERROR,
                        format!(
                            "a stream task panicked inside the emulator: {}",
                            panic_message(p.as_ref())
                        ),
                    )
                })
            };
            // The work is dropped before it counts as completed (an event wait stops counting
            // as pending for aclrtQueryEventWaitStatus when it has run).
            drop(work);
            q = self.q.lock();
            if let Err(f) = result {
                let info = exception::Info {
                    task_id: id,
                    stream_id: self.id as u32,
                    thread_id: tid,
                    device_id: self.device as u32,
                    error_code: exception::code(f.code),
                };
                drop(q);
                exception::report(info);
                q = self.q.lock();
                if q.mode == 1 || self.failure.stop_mode() {
                    // STOP: the rest of the stream is discarded and the context fails.
                    q.stopped = true;
                    self.failure.fail(self.handle, &f);
                } else if q.error.is_none() {
                    // CONTINUE: the next synchronisation reports it, once.
                    q.error = Some(f);
                }
            }
            q.running = None;
            q.completed += 1;
            self.completed.store(q.completed, Ordering::Release);
            self.wake(q);
            q = self.q.lock();
        }
    }

    /// Waits, until `deadline` at most, for the tasks queued so far that may touch memory of
    /// `device` ([`Work::devices`]) to complete — but not for a gate ([`Work::gate`]) nor for
    /// anything queued behind one, which may wait for the caller. A synchronous memory call
    /// drains first, so that it comes after work the program queued before it, as on a device,
    /// where that work is long done by the time the host makes its next call. Returns at once on
    /// the stream's own worker, on a stopped stream and on one that records its submissions.
    pub(crate) fn drain(&self, device: i32, deadline: Instant) {
        if WORKER_OF.with(|w| w.get()) == self.handle {
            return;
        }
        let bit = device_bit(device);
        let g = self.q.lock();
        let target = g.submitted;
        let pending = |q: &Queue| {
            if q.completed >= target || q.halted {
                return false;
            }
            let ahead = q.running.iter().copied().chain(
                q.tasks
                    .iter()
                    .take_while(|t| u64::from(t.id) <= target)
                    .map(|t| Mark {
                        gate: t.work.gate(),
                        devices: t.work.devices(),
                    }),
            );
            for m in ahead {
                if m.gate {
                    return false;
                }
                if m.devices & bit != 0 {
                    return true;
                }
            }
            false
        };
        let _g = self.wait_until(g, Some(deadline), |q| !pending(q));
    }

    /// The recorder the stream's submissions go to, if any.
    pub(crate) fn recorder(&self) -> Option<Arc<dyn Recorder>> {
        self.q.lock().rec.clone()
    }

    /// Runs `f` with the stream's recorder, under the stream's lock (so that no submission
    /// slips between a check and a record); None when the stream has none.
    pub(crate) fn with_recorder<T>(&self, f: impl FnOnce(&dyn Recorder) -> T) -> Option<T> {
        let q = self.q.lock();
        q.rec.as_deref().map(f)
    }

    /// Whether the stream records its submissions instead of running them.
    pub(crate) fn recording(&self) -> bool {
        self.q.lock().rec.is_some()
    }

    /// Whether the stream is capturing into a model.
    pub(crate) fn is_capturing(&self) -> bool {
        self.q.lock().rec.as_ref().is_some_and(|r| r.capturing())
    }

    /// Fails with 107027 while the stream is capturing (synchronisation, queries, destruction).
    pub(crate) fn not_capturing(&self) -> R {
        if self.is_capturing() {
            return fail(
                RT_STREAM_CAPTURED,
                format!(
                    "stream {:#x} is capturing into a model (aclmdlRICaptureEnd first)",
                    self.handle
                ),
            );
        }
        Ok(())
    }

    /// Fails when the stream cannot be destroyed now: 107027 while it captures, then the
    /// recorder's reason (a stream bound to a model).
    pub(crate) fn check_destroy(&self) -> R {
        self.not_capturing()?;
        match self.with_recorder(|r| r.refuses_destroy(self.handle)) {
            Some(Some(f)) => Err(f),
            _ => Ok(()),
        }
    }

    /// Starts or ends recording (capture, binding, update).
    pub(crate) fn set_recorder(&self, rec: Option<Arc<dyn Recorder>>) {
        self.q.lock().rec = rec;
    }

    /// Waits for every task queued so far; returns (and clears) the first task error.
    pub(crate) fn synchronize(&self, timeout: Option<Duration>, code: i32) -> R {
        self.not_capturing()?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut g = self.q.lock();
        let target = g.submitted;
        if g.completed < target {
            // Poll for the completion briefly before sleeping.
            drop(g);
            poll(deadline, || {
                self.completed.load(Ordering::Acquire) >= target
            });
            g = self.q.lock();
        }
        let (mut g, ok) = self.wait_until(g, deadline, |q| q.completed >= target || q.halted);
        if g.halted {
            return fail(
                RT_INTERNAL_ERROR,
                format!(
                    "stream {:#x} was stopped by aclrtStreamStop with {} task(s) not run \
                     (aclrtStreamAbort discards them and makes the stream usable again)",
                    self.handle,
                    g.submitted - g.completed
                ),
            );
        }
        if !ok {
            return fail(
                code,
                format!(
                    "stream {:#x} still had {} task(s) pending when the timeout expired",
                    self.handle,
                    target - g.completed
                ),
            );
        }
        self.failure.check(self.handle)?;
        match g.error.take() {
            Some(f) => Err(Fail {
                code: f.code,
                msg: format!("a task on stream {:#x} failed: {}", self.handle, f.msg),
            }),
            None => Ok(()),
        }
    }

    /// Whether every queued task has completed.
    pub(crate) fn is_idle(&self) -> bool {
        let q = self.q.lock();
        q.completed >= q.submitted
    }

    /// The failure mode set on the stream (CONTINUE 0, STOP 1).
    pub(crate) fn failure_mode(&self) -> u64 {
        self.q.lock().mode
    }

    /// Stream attribute 2, 3 or 4.
    pub(crate) fn attr(&self, a: u32) -> u32 {
        self.q.lock().attrs[(a - 2) as usize]
    }

    /// Sets stream attribute 2, 3 or 4.
    pub(crate) fn set_attr(&self, a: u32, v: u32) {
        self.q.lock().attrs[(a - 2) as usize] = v;
    }

    /// Sets the failure mode (CONTINUE 0, STOP 1): the same mode again succeeds; STOP back to
    /// CONTINUE is 207000; `check` (the stream's context) runs after those two rules, as in the
    /// runtime. STOP switches the whole context.
    pub(crate) fn set_failure_mode(&self, mode: u64, check: impl FnOnce() -> R) -> R {
        let mut q = self.q.lock();
        if q.mode == mode {
            return Ok(());
        }
        if q.mode == 1 && mode == 0 {
            return fail(
                RT_FEATURE_NOT_SUPPORT,
                format!(
                    "stream {:#x} is in STOP failure mode; it cannot go back to CONTINUE",
                    self.handle
                ),
            );
        }
        check()?;
        q.mode = mode;
        if mode == 1 {
            self.failure.stop.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Stops accepting work; the work already queued runs to completion, and the call returns
    /// once it has. `force` (`aclrtDestroyStreamForce`, a forced device reset) cancels the
    /// stream's waits: an event wait, a notify wait, a value wait or a blocking callback, queued
    /// or running, ends at once instead of waiting for what may never come, and the rest of the
    /// queue (copies, kernels, host functions) still runs, as work handed to a device's stream
    /// does; the call waits for that at most [`FORCE_WAIT`]. A stopped stream
    /// (`aclrtStreamStop`) runs nothing more: its queue is discarded.
    pub(crate) fn close(&self, force: bool) {
        let mut q = self.q.lock();
        q.closing = true;
        self.closing.store(true, Ordering::Release);
        if force || q.halted {
            self.cancel.store(true, Ordering::Release);
        }
        if q.halted {
            q = self.discard(q);
        }
        self.wake(q);
        // Wait for the work. Not on the stream's own worker (a host function destroying its
        // stream), which would wait for itself.
        if WORKER_OF.with(|w| w.get()) == self.handle {
            return;
        }
        let deadline = force.then(|| Instant::now() + FORCE_WAIT);
        let g = self.q.lock();
        let _g = self.wait_until(g, deadline, |q| q.completed >= q.submitted);
    }

    /// Discards the queued work (what waits for it is told: an event record completes, so that
    /// waiters do not hang).
    fn discard<'a>(&'a self, mut q: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        let dropped: Vec<Arc<dyn Work>> = q.tasks.drain(..).map(|q| q.work).collect();
        q.completed += dropped.len() as u64;
        self.completed.store(q.completed, Ordering::Release);
        drop(q);
        for w in dropped {
            w.discard();
        }
        self.q.lock()
    }

    /// `aclrtStreamStop`: the queued tasks stay queued and nothing more runs (the task that is
    /// running finishes: a host thread cannot be interrupted); synchronisations report 507000.
    pub(crate) fn stop(&self) {
        let mut q = self.q.lock();
        q.halted = true;
        self.cancel.store(true, Ordering::Release);
        self.wake(q);
    }

    /// `aclrtStreamAbort`: discards the queued tasks, waits for the running one, and makes the
    /// stream usable again (a context failure in STOP mode stays).
    pub(crate) fn abort(&self) {
        // Cancel under the lock: the worker, released from a wait, cannot take a queued task
        // before the queue is discarded.
        let mut q = self.q.lock();
        self.cancel.store(true, Ordering::Release);
        q = self.discard(q);
        q.halted = false;
        q.stopped = false;
        q.error = None;
        self.wake(q);
        if WORKER_OF.with(|w| w.get()) != self.handle {
            let g = self.q.lock();
            let _g = self.wait_until(g, None, |q| q.completed >= q.submitted);
        }
        self.cancel.store(false, Ordering::Release);
    }
}
