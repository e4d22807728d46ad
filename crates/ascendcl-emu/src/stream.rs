//! Streams: in-order task queues, each executed by its own worker thread.

use crate::callback::{Done, ReportQueue};
use crate::error::*;
use crate::event::{Event, EventWait};
use crate::exception;
use crate::memory::{self, Side};
use crate::model::{Model, Step, TaskGroup, Update};
use crate::notify::Notify;
use crate::sync::lock;
use crate::wait;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a waiter (the worker waiting for work, a thread synchronising the stream) polls
/// before it sleeps on the condition variable: a hand-off caught while polling costs well under
/// a microsecond instead of two sleeping wake-ups. Bounded, so an idle stream sleeps.
const POLL: Duration = Duration::from_micros(20);
/// The part of [`POLL`] spent in a pure spin (`spin_loop`); the rest yields the CPU between
/// polls. No pure spin on a single CPU, where the other thread cannot progress meanwhile.
const SPIN: Duration = Duration::from_micros(5);

/// Polls `done` for up to [`POLL`] (or until `deadline`); whether it became true.
fn poll(deadline: Option<Instant>, done: impl Fn() -> bool) -> bool {
    static MULTI_CPU: LazyLock<bool> =
        LazyLock::new(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1));
    if done() {
        return true;
    }
    let start = Instant::now();
    let mut end = start + POLL;
    if let Some(d) = deadline {
        end = end.min(d);
    }
    let spin_end = if *MULTI_CPU { start + SPIN } else { start };
    loop {
        let now = Instant::now();
        if now >= end {
            return done();
        }
        if now < spin_end {
            for _ in 0..16 {
                std::hint::spin_loop();
                if done() {
                    return true;
                }
            }
        } else {
            std::thread::yield_now();
            if done() {
                return true;
            }
        }
    }
}

/// Stack size of a stream's worker thread (host functions run on it).
const WORKER_STACK: usize = 1 << 20;

/// How long `aclrtDestroyStreamForce` waits for the task that is running when it is called (the
/// runtime waits for the device to finish it). A guard against a host function that waits for
/// the caller: past it the call returns and the task finishes in the background.
const FORCE_WAIT: Duration = Duration::from_secs(1);

thread_local! {
    /// The stream whose worker the current thread is (0 on other threads).
    static WORKER_OF: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The failure state of a context, shared by its streams. Setting `ACL_STOP_ON_FAILURE` on any
/// stream switches the whole context to STOP mode (as the runtime does); the first task that
/// fails in STOP mode stops its stream and fails the context: from then on every submission to a
/// stream of the context and every synchronisation of one reports that task's error, until the
/// context is destroyed or its device reset.
#[derive(Debug, Default)]
pub(crate) struct CtxFailure {
    stop: AtomicBool,
    /// Whether `error` is set (read without the lock on every submission).
    failed: AtomicBool,
    /// The failed task's stream and error.
    error: Mutex<Option<(usize, Fail)>>,
}

impl CtxFailure {
    fn stop_mode(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Stores the first failure in STOP mode.
    fn fail(&self, stream: usize, f: &Fail) {
        let mut e = lock(&self.error);
        if e.is_none() {
            *e = Some((stream, f.clone()));
            self.failed.store(true, Ordering::Release);
        }
    }

    /// The stored failure itself, if a task failed in STOP mode.
    pub(crate) fn stored(&self) -> Option<Fail> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.error).as_ref().map(|(_, f)| f.clone())
    }

    /// The stored failure, as the error of a call on stream `me`.
    #[inline]
    fn check(&self, me: usize) -> R {
        if !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        match &*lock(&self.error) {
            Some((stream, f)) if *stream == me => Err(Fail {
                code: f.code,
                msg: format!(
                    "a task on stream {me:#x} failed (STOP failure mode: every submission and \
                     synchronisation in its context reports it until the context is destroyed \
                     or its device reset): {}",
                    f.msg
                ),
            }),
            Some((stream, f)) => Err(Fail {
                code: f.code,
                msg: format!(
                    "stream {me:#x} belongs to a context in STOP failure mode in which a task \
                     failed; every submission and synchronisation in the context reports it \
                     until the context is destroyed or its device reset; the task, on stream \
                     {stream:#x}: {}",
                    f.msg
                ),
            }),
            None => Ok(()),
        }
    }
}

/// A C host function (`aclrtHostFunc`, `aclrtCallback`).
pub(crate) type HostFn = unsafe extern "C" fn(*mut c_void);

/// Work queued by a library layered on the runtime (`crate::extension`). It runs once: a copy of
/// the task (a stream capture replayed by a model) finds it taken and fails.
pub(crate) type ExtTask = Arc<std::sync::Mutex<Option<Box<dyn FnOnce() -> R + Send>>>>;

/// One unit of stream work. Addresses are validated when the task is queued and checked again
/// (still live) when it runs.
#[derive(Clone)]
pub(crate) enum Task {
    /// Copy `len` bytes.
    Copy {
        dst: usize,
        src: usize,
        len: usize,
        sides: [Side; 2],
    },
    /// Copy bytes staged at enqueue time (`ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`).
    Staged {
        dst: usize,
        data: Vec<u8>,
        side: Side,
    },
    /// Fill `len` bytes with `val`.
    Memset {
        dst: usize,
        val: u8,
        len: usize,
        side: Side,
    },
    /// A pitched 2D copy.
    Copy2d {
        dst: usize,
        dpitch: usize,
        src: usize,
        spitch: usize,
        width: usize,
        height: usize,
        sides: [Side; 2],
    },
    /// An event record.
    Record(Arc<Event>, u64),
    /// A wait for an event record (with its timeout).
    Wait(EventWait),
    /// An event reset.
    Reset(Arc<Event>),
    /// `aclrtLaunchHostFunc`.
    HostFunc(HostFn, usize),
    /// `aclrtMemsetD32Async`: fills 32-bit words.
    Fill32 {
        dst: usize,
        value: u32,
        words: usize,
        side: Side,
    },
    /// `aclrtValueWrite`: stores a 64-bit word.
    ValueWrite { addr: usize, value: u64, side: Side },
    /// `aclrtValueWait`: waits until a 64-bit word meets a condition.
    ValueWait {
        addr: usize,
        value: u64,
        flag: u32,
        side: Side,
    },
    /// `aclrtRecordNotify`.
    NotifyRecord(Arc<Notify>),
    /// `aclrtWaitAndResetNotify`, with its timeout (None: forever).
    NotifyWait(Arc<Notify>, Option<Duration>),
    /// `aclrtReduceAsync`: `dst[i] = dst[i] OP src[i]`.
    Reduce {
        dst: usize,
        src: usize,
        len: usize,
        kind: u32,
        dtype: i32,
        sides: [Side; 2],
    },
    /// `aclrtRandomNumAsync`.
    Random(Box<RandomJob>),
    /// `aclrtMemcpyAsyncWithDesc`: a copy described by a descriptor in device memory, read
    /// when the task runs.
    DescCopy { desc: usize, side: Side },
    /// `aclrtMemManagedPrefetch[Batch]Async`: managed ranges that stay where they are (host and
    /// device share the address space); the task only checks they are still allocated.
    Prefetch { sides: Vec<Side> },
    /// `aclrtLaunchCallback`: handed to the subscribed thread.
    Callback {
        f: HostFn,
        arg: usize,
        block: bool,
        queue: Arc<ReportQueue>,
        stream: usize,
    },
    /// Work of a library layered on the runtime; its error is the task's error.
    External(ExtTask),
    /// One execution of a model runtime instance (`aclmdlRIExecuteAsync`).
    Model(Arc<crate::model_exec::Execution>),
    /// `aclmdlRICaptureTaskUpdateEnd`: the group's tasks are replaced when the stream gets here.
    UpdateGroup(Arc<TaskGroup>, Arc<Vec<Step>>),
    /// A kernel launch (`aclrtLaunchKernel*`): its blocks run on the kernel thread pool.
    Kernel(Arc<crate::kernel_run::Launch>),
}

/// Where a stream's submissions go instead of its queue.
#[derive(Clone)]
pub(crate) enum Recording {
    /// Captured into a model (`aclmdlRICaptureBegin`).
    Capture(Arc<Model>),
    /// Recorded on the stream's part of a built model (`aclmdlRIBindStream`).
    Bound(Arc<Model>),
    /// The replacement tasks of a task group (`aclmdlRICaptureTaskUpdateBegin`).
    Update(Arc<Update>),
}

impl Task {
    fn sides(&self) -> &[Side] {
        match self {
            Task::Copy { sides, .. } | Task::Copy2d { sides, .. } | Task::Reduce { sides, .. } => {
                sides
            }
            Task::Random(job) => &job.sides,
            Task::Prefetch { sides } => sides,
            Task::Kernel(launch) => launch.sides(),
            Task::Staged { side, .. }
            | Task::Memset { side, .. }
            | Task::ValueWrite { side, .. }
            | Task::ValueWait { side, .. }
            | Task::DescCopy { side, .. }
            | Task::Fill32 { side, .. } => std::slice::from_ref(side),
            _ => &[],
        }
    }

    /// Runs the task on the worker thread; waits give up when `cancel` is set (the stream was
    /// aborted, stopped or destroyed by force).
    pub(crate) fn run(self, cancel: &AtomicBool) -> R {
        if !self.sides().is_empty() {
            let t = memory::read();
            if let Some(bad) = self.sides().iter().find(|s| !t.still_live(**s)) {
                return fail(
                    RT_INTERNAL_ERROR,
                    format!(
                        "a queued memory task touches the allocation at {:#x}, which was freed \
                         before the task ran (free does not wait for work in flight)",
                        bad.alloc
                    ),
                );
            }
        }
        match self {
            Task::Copy { dst, src, len, .. } => {
                // SAFETY: both ranges were validated against the allocation table when queued
                // (live allocations, or caller-vouched pinned memory) and their allocations are
                // still live; ptr::copy tolerates overlap.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
            }
            Task::Staged { dst, data, .. } => {
                // SAFETY: as for Copy; the source is our own staging buffer.
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) };
            }
            Task::Memset { dst, val, len, .. } => {
                // SAFETY: the range was validated when queued and its allocation is still live.
                unsafe { std::ptr::write_bytes(dst as *mut u8, val, len) };
            }
            Task::Copy2d {
                dst,
                dpitch,
                src,
                spitch,
                width,
                height,
                ..
            } => {
                // SAFETY: the whole pitched ranges were validated when queued.
                unsafe { crate::copy::copy_2d(dst, dpitch, src, spitch, width, height) };
            }
            Task::Fill32 {
                dst, value, words, ..
            } => {
                // SAFETY: validated as words * 4 bytes of a live allocation when queued.
                unsafe { crate::copy::fill32(dst, value, words) };
            }
            Task::ValueWrite { addr, value, .. } => {
                // SAFETY: validated as 8 bytes of a live device allocation when queued.
                unsafe { wait::write_u64(addr, value) };
            }
            Task::ValueWait {
                addr, value, flag, ..
            } => {
                wait::poll_until(cancel, || {
                    // SAFETY: as for ValueWrite. The allocation stays mapped (freed ranges are
                    // kept reserved), so polling after a concurrent free reads harmless memory.
                    let x = unsafe { wait::read_u64(addr) };
                    wait::value_condition(x, value, flag)
                });
            }
            Task::Reduce {
                dst,
                src,
                len,
                kind,
                dtype,
                ..
            } => {
                // SAFETY: both ranges were validated as live device memory when queued; the
                // source is read before the destination is written, so they may overlap.
                let s = unsafe { std::slice::from_raw_parts(src as *const u8, len) }.to_vec();
                // SAFETY: as above; no other reference to the destination exists here.
                let d = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, len) };
                crate::builtin::reduce(d, &s, kind, dtype);
            }
            Task::Random(job) => job.run(),
            // The ranges are live (checked above) and shared with the host: nothing to move.
            Task::Prefetch { .. } => {}
            Task::DescCopy { desc, .. } => {
                // SAFETY: the descriptor was validated as 32 bytes of live device memory.
                let (len, src, dst) = unsafe {
                    (
                        std::ptr::read_unaligned(desc as *const u32) as usize,
                        std::ptr::read_unaligned((desc + 8) as *const u64) as usize,
                        std::ptr::read_unaligned((desc + 16) as *const u64) as usize,
                    )
                };
                let t = memory::read();
                let d = t.check("dst", dst, len);
                let s = t.check("src", src, len);
                match (d, s) {
                    (Ok(d), Ok(s))
                        if matches!(d.loc, memory::Loc::Device(_))
                            && matches!(s.loc, memory::Loc::Device(_)) =>
                    {
                        // SAFETY: both ranges are live device memory, just validated under the
                        // table lock (still held).
                        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
                    }
                    _ => {
                        return fail(
                            RT_INTERNAL_ERROR,
                            format!(
                                "the memcpy descriptor at {desc:#x} names {len} bytes from {src:#x} \
                                 to {dst:#x}, which are not live device memory"
                            ),
                        );
                    }
                }
            }
            Task::NotifyRecord(n) => n.record(),
            Task::NotifyWait(n, timeout) => {
                if n.wait(timeout, cancel) == wait::Outcome::TimedOut {
                    return fail(
                        RT_TASK_TIMEOUT,
                        format!(
                            "the wait for notify {:#x} timed out after {} s without a record",
                            n.handle,
                            timeout.map_or(0, |t| t.as_secs())
                        ),
                    );
                }
            }
            Task::Record(ev, seq) => ev.complete(seq),
            Task::Wait(w) => return w.run(cancel),
            Task::Reset(ev) => ev.reset(),
            Task::HostFunc(f, arg) => {
                // SAFETY: the caller of aclrtLaunchHostFunc provided a function and argument
                // that are valid to call from a runtime thread.
                unsafe { f(arg as *mut c_void) };
            }
            Task::Callback {
                f,
                arg,
                block,
                queue,
                stream,
            } => {
                let done = block.then(|| Arc::new(Done::default()));
                queue.push(f, arg, stream, done.clone());
                if let Some(d) = done {
                    d.wait();
                }
            }
            Task::Kernel(launch) => return launch.run(),
            Task::External(f) => {
                let task = f.lock().unwrap_or_else(|p| p.into_inner()).take();
                return match task {
                    Some(run) => run(),
                    None => Err(Fail {
                        code: crate::error::RT_FEATURE_NOT_SUPPORT,
                        msg: "a task queued by a library on the runtime (an HCCL collective) \
                              runs once; it cannot be replayed from a captured model"
                            .to_string(),
                    }),
                };
            }
            Task::Model(exec) => return exec.run(cancel),
            Task::UpdateGroup(g, steps) => g.replace(steps.as_ref().clone()),
        }
        Ok(())
    }
}

/// Records `step` where `rec` says (a bound stream of a finished build refuses it).
fn record(rec: &Recording, stream: usize, step: Step) -> R {
    match rec {
        Recording::Capture(m) => {
            m.push_captured(step);
            Ok(())
        }
        Recording::Bound(m) => m.push_bound(stream, step),
        Recording::Update(u) => {
            u.push(step);
            Ok(())
        }
    }
}

/// A scalar of a random task: inline bytes, or the device address that holds them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scalar {
    pub addr: Option<usize>,
    pub bytes: [u8; 8],
    pub size: usize,
}

impl Scalar {
    /// The scalar's bytes when the task runs (read from device memory for an address).
    fn read(&self) -> [u8; 8] {
        match self.addr {
            None => self.bytes,
            Some(a) => {
                let mut b = [0u8; 8];
                // SAFETY: the address was validated as `size` bytes of live device memory
                // (size ≤ 8) when the task was queued.
                unsafe { std::ptr::copy_nonoverlapping(a as *const u8, b.as_mut_ptr(), self.size) };
                b
            }
        }
    }
}

/// An `aclrtRandomNumAsync` task.
#[derive(Debug, Clone)]
pub(crate) struct RandomJob {
    pub dtype: i32,
    pub func: u32,
    pub params: [Scalar; 2],
    pub seed: Scalar,
    pub num: Scalar,
    pub result: usize,
    pub result_len: usize,
    pub counter: usize,
    pub sides: [Side; 2],
}

impl RandomJob {
    fn run(&self) {
        use crate::builtin::{self, Distribution};
        let size = |s: &Scalar| s.size.min(8);
        let uint = |s: &Scalar| {
            let b = s.read();
            let mut w = [0u8; 8];
            w[..size(s)].copy_from_slice(&b[..size(s)]);
            u64::from_le_bytes(w)
        };
        let float = |s: &Scalar| builtin::float_from(self.dtype, &s.read());
        let int = |s: &Scalar| builtin::int_from(self.dtype, &s.read()[..size(s)]);
        let cap = if self.func == ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK {
            self.result_len * 8
        } else {
            self.result_len / builtin::element_size(self.dtype).unwrap_or(4)
        };
        let num = (uint(&self.num) as usize).min(cap);
        let d = match self.func {
            ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK => Distribution::Dropout {
                ratio: float(&self.params[0]),
            },
            ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS => {
                if matches!(self.dtype, 0 | 1 | 27) {
                    Distribution::UniformFloat {
                        min: float(&self.params[0]),
                        max: float(&self.params[1]),
                    }
                } else {
                    Distribution::UniformInt {
                        min: int(&self.params[0]),
                        max: int(&self.params[1]),
                    }
                }
            }
            ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS => Distribution::Normal {
                mean: float(&self.params[0]),
                stddev: float(&self.params[1]),
            },
            _ => Distribution::Truncated {
                mean: float(&self.params[0]),
                stddev: float(&self.params[1]),
            },
        };
        // SAFETY: the counter was validated as 16 bytes of live device memory when queued.
        let c = unsafe { std::ptr::read_unaligned(self.counter as *const u128) };
        let mut words = builtin::Words::new(uint(&self.seed), c);
        // SAFETY: the result range was validated as live device memory of result_len bytes.
        let out =
            unsafe { std::slice::from_raw_parts_mut(self.result as *mut u8, self.result_len) };
        builtin::generate(out, num, self.dtype, d, &mut words);
        // The generator's offset moves on, so the next task draws new numbers.
        // SAFETY: as for the read above.
        unsafe {
            std::ptr::write_unaligned(self.counter as *mut u128, c.wrapping_add(words.blocks))
        };
    }
}

/// A queued task with its identity (for exception reports).
struct Queued {
    task: Task,
    /// The task's id on its stream (its submission number).
    id: u32,
    /// The submitting thread.
    tid: u32,
}

#[derive(Default)]
struct Queue {
    tasks: VecDeque<Queued>,
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
    rec: Option<Recording>,
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
            q: Mutex::new(Queue::default()),
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
        let mut q = match deadline {
            None => self.cv.wait(q).unwrap_or_else(|e| e.into_inner()),
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                self.cv
                    .wait_timeout(q, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
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

    /// Queues a task; the worker runs it after every task queued before it.
    pub(crate) fn enqueue(self: &Arc<Self>, task: Task) -> R {
        self.submit(std::iter::once(task))
    }

    fn submit(self: &Arc<Self>, tasks: impl IntoIterator<Item = Task>) -> R {
        self.failure.check(self.handle)?;
        let mut q = lock(&self.q);
        if let Some(rec) = &q.rec {
            for task in tasks {
                record(rec, self.handle, Step::Task(task))?;
            }
            return Ok(());
        }
        if q.closing {
            return fail(
                RT_INVALID_HANDLE,
                format!("stream {:#x} is being destroyed", self.handle),
            );
        }
        let tid = exception::thread_id();
        let mut added = 0;
        for task in tasks {
            q.submitted += 1;
            let id = q.submitted as u32;
            q.tasks.push_back(Queued { task, id, tid });
            if !self.is_default {
                exception::set_last_task(id);
            }
            added += 1;
        }
        if !q.worker {
            let me = Arc::clone(self);
            let spawned = std::thread::Builder::new()
                .name(format!("acl-emu-stream-{:x}", self.handle))
                .stack_size(WORKER_STACK)
                .spawn(move || me.work());
            if let Err(e) = spawned {
                for _ in 0..added {
                    q.tasks.pop_back();
                }
                q.submitted -= added;
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
        let mut q = lock(&self.q);
        loop {
            let next = if q.halted { None } else { q.tasks.pop_front() };
            let Some(Queued { task, id, tid }) = next else {
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
                q = lock(&self.q);
                if q.tasks.is_empty() && !q.closing {
                    q = self.sleep(q, None);
                }
                continue;
            };
            // STOP: after a failure the stream's remaining work, and that of every stream of
            // its context, is discarded; event records and waits still complete.
            let skip = (q.stopped || self.failure.failed.load(Ordering::Acquire))
                && !matches!(task, Task::Record(..) | Task::Wait(..));
            drop(q);
            let result = if skip {
                Ok(())
            } else {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.run(&self.cancel)))
                    .unwrap_or_else(|_| {
                        fail(
                            RT_INTERNAL_ERROR,
                            "a stream task panicked inside the emulator",
                        )
                    })
            };
            q = lock(&self.q);
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
                q = lock(&self.q);
                if q.mode == 1 || self.failure.stop_mode() {
                    // STOP: the rest of the stream is discarded and the context fails.
                    q.stopped = true;
                    self.failure.fail(self.handle, &f);
                } else if q.error.is_none() {
                    // CONTINUE: the next synchronisation reports it, once.
                    q.error = Some(f);
                }
            }
            q.completed += 1;
            self.completed.store(q.completed, Ordering::Release);
            self.wake(q);
            q = lock(&self.q);
        }
    }

    /// The model the stream is capturing into, if any.
    pub(crate) fn capturing(&self) -> Option<Arc<Model>> {
        match &lock(&self.q).rec {
            Some(Recording::Capture(m)) => Some(Arc::clone(m)),
            _ => None,
        }
    }

    /// The built model the stream is bound to, if any.
    pub(crate) fn bound_model(&self) -> Option<Arc<Model>> {
        match &lock(&self.q).rec {
            Some(Recording::Bound(m)) => Some(Arc::clone(m)),
            _ => None,
        }
    }

    /// The task group update in progress on the stream, if any.
    pub(crate) fn updating(&self) -> Option<Arc<Update>> {
        match &lock(&self.q).rec {
            Some(Recording::Update(u)) => Some(Arc::clone(u)),
            _ => None,
        }
    }

    /// Whether the stream records its submissions instead of running them.
    pub(crate) fn recording(&self) -> bool {
        lock(&self.q).rec.is_some()
    }

    /// Fails with 107027 while the stream is capturing (synchronisation, queries, destruction).
    pub(crate) fn not_capturing(&self) -> R {
        if self.capturing().is_some() {
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

    /// Starts or ends recording (capture, binding, update).
    pub(crate) fn set_recording(&self, rec: Option<Recording>) {
        lock(&self.q).rec = rec;
    }

    /// Records a step when the stream records; None when it does not (the caller queues the
    /// work).
    pub(crate) fn record_step(&self, step: impl FnOnce() -> Step) -> Option<R> {
        let q = lock(&self.q);
        q.rec.as_ref().map(|rec| record(rec, self.handle, step()))
    }

    /// Waits for every task queued so far; returns (and clears) the first task error.
    pub(crate) fn synchronize(&self, timeout: Option<Duration>, code: i32) -> R {
        self.not_capturing()?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut g = lock(&self.q);
        let target = g.submitted;
        if g.completed < target {
            // Poll for the completion briefly before sleeping.
            drop(g);
            poll(deadline, || {
                self.completed.load(Ordering::Acquire) >= target
            });
            g = lock(&self.q);
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
        let q = lock(&self.q);
        q.completed >= q.submitted
    }

    /// The failure mode set on the stream (CONTINUE 0, STOP 1).
    pub(crate) fn failure_mode(&self) -> u64 {
        lock(&self.q).mode
    }

    /// Stream attribute 2, 3 or 4.
    pub(crate) fn attr(&self, a: u32) -> u32 {
        lock(&self.q).attrs[(a - 2) as usize]
    }

    /// Sets stream attribute 2, 3 or 4.
    pub(crate) fn set_attr(&self, a: u32, v: u32) {
        lock(&self.q).attrs[(a - 2) as usize] = v;
    }

    /// Sets the failure mode (CONTINUE 0, STOP 1): the same mode again succeeds; STOP back to
    /// CONTINUE is 207000; `check` (the stream's context) runs after those two rules, as in the
    /// runtime. STOP switches the whole context.
    pub(crate) fn set_failure_mode(&self, mode: u64, check: impl FnOnce() -> R) -> R {
        let mut q = lock(&self.q);
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

    /// Stops accepting work. `force` discards the tasks that have not started (event records
    /// still complete so that waiters do not hang) and waits for the running one (up to
    /// [`FORCE_WAIT`]); otherwise queued work runs to completion first.
    pub(crate) fn close(&self, force: bool) {
        let mut q = lock(&self.q);
        q.closing = true;
        self.closing.store(true, Ordering::Release);
        // A stopped stream runs nothing more: its queue is discarded as on a forced destroy.
        let force = force || q.halted;
        if force {
            self.cancel.store(true, Ordering::Release);
            q = self.discard(q);
        }
        self.wake(q);
        // Wait for the work: all of it, or (force) the task that is running. Not on the
        // stream's own worker (a host function destroying its stream), which would wait for
        // itself.
        if WORKER_OF.with(|w| w.get()) == self.handle {
            return;
        }
        let deadline = force.then(|| Instant::now() + FORCE_WAIT);
        let g = lock(&self.q);
        let _g = self.wait_until(g, deadline, |q| q.completed >= q.submitted);
    }

    /// Discards the queued tasks (completing their event records, so that waiters do not hang).
    fn discard<'a>(&'a self, mut q: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        let dropped: Vec<Task> = q.tasks.drain(..).map(|q| q.task).collect();
        q.completed += dropped.len() as u64;
        self.completed.store(q.completed, Ordering::Release);
        drop(q);
        for t in dropped {
            if let Task::Record(ev, seq) = t {
                ev.complete(seq);
            }
        }
        lock(&self.q)
    }

    /// `aclrtStreamStop`: the queued tasks stay queued and nothing more runs (the task that is
    /// running finishes: a host thread cannot be interrupted); synchronisations report 507000.
    pub(crate) fn stop(&self) {
        let mut q = lock(&self.q);
        q.halted = true;
        self.cancel.store(true, Ordering::Release);
        self.wake(q);
    }

    /// `aclrtStreamAbort`: discards the queued tasks, waits for the running one, and makes the
    /// stream usable again (a context failure in STOP mode stays).
    pub(crate) fn abort(&self) {
        // Cancel under the lock: the worker, released from a wait, cannot take a queued task
        // before the queue is discarded.
        let mut q = lock(&self.q);
        self.cancel.store(true, Ordering::Release);
        q = self.discard(q);
        q.halted = false;
        q.stopped = false;
        q.error = None;
        self.wake(q);
        if WORKER_OF.with(|w| w.get()) != self.handle {
            let g = lock(&self.q);
            let _g = self.wait_until(g, None, |q| q.completed >= q.submitted);
        }
        self.cancel.store(false, Ordering::Release);
    }
}
