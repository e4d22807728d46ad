//! Streams: in-order task queues, each executed by its own worker thread.

use crate::callback::{Done, ReportQueue};
use crate::error::*;
use crate::event::Event;
use crate::memory::{self, Side};
use crate::sync::{lock, wait_until};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Stack size of a stream's worker thread (host functions run on it).
const WORKER_STACK: usize = 1 << 20;

/// A C host function (`aclrtHostFunc`, `aclrtCallback`).
pub(crate) type HostFn = unsafe extern "C" fn(*mut c_void);

/// One unit of stream work. Addresses are validated when the task is queued and checked again
/// (still live) when it runs.
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
    /// A wait for an event record.
    Wait(Arc<Event>, u64),
    /// An event reset.
    Reset(Arc<Event>),
    /// `aclrtLaunchHostFunc`.
    HostFunc(HostFn, usize),
    /// `aclrtLaunchCallback`: handed to the subscribed thread.
    Callback {
        f: HostFn,
        arg: usize,
        block: bool,
        queue: Arc<ReportQueue>,
        stream: usize,
    },
}

impl Task {
    fn sides(&self) -> &[Side] {
        match self {
            Task::Copy { sides, .. } | Task::Copy2d { sides, .. } => sides,
            Task::Staged { side, .. } | Task::Memset { side, .. } => std::slice::from_ref(side),
            _ => &[],
        }
    }

    /// Runs the task on the worker thread.
    fn run(self) -> R {
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
            Task::Record(ev, seq) => ev.complete(seq),
            Task::Wait(ev, seq) => ev.wait_for(seq),
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
        }
        Ok(())
    }
}

#[derive(Default)]
struct Queue {
    tasks: VecDeque<Task>,
    submitted: u64,
    completed: u64,
    worker: bool,
    closing: bool,
    error: Option<Fail>,
    mode: Option<u64>,
    stopped: bool,
}

/// A stream.
pub(crate) struct Stream {
    pub handle: usize,
    pub ctx: usize,
    pub device: i32,
    pub is_default: bool,
    pub priority: u32,
    pub flags: u32,
    q: Mutex<Queue>,
    cv: Condvar,
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
    ) -> Arc<Stream> {
        Arc::new(Stream {
            handle,
            ctx,
            device,
            is_default,
            priority,
            flags,
            q: Mutex::new(Queue::default()),
            cv: Condvar::new(),
        })
    }

    /// Queues a task; the worker runs it after every task queued before it.
    pub(crate) fn enqueue(self: &Arc<Self>, task: Task) -> R {
        let mut q = lock(&self.q);
        if q.closing {
            return fail(
                RT_INVALID_HANDLE,
                format!("stream {:#x} is being destroyed", self.handle),
            );
        }
        q.tasks.push_back(task);
        q.submitted += 1;
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
        drop(q);
        self.cv.notify_all();
        Ok(())
    }

    fn work(self: Arc<Self>) {
        let mut q = lock(&self.q);
        loop {
            let Some(task) = q.tasks.pop_front() else {
                if q.closing {
                    q.worker = false;
                    drop(q);
                    self.cv.notify_all();
                    return;
                }
                q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
                continue;
            };
            let skip = q.stopped && !matches!(task, Task::Record(..) | Task::Wait(..));
            drop(q);
            let result = if skip {
                Ok(())
            } else {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.run()))
                    .unwrap_or_else(|_| {
                        fail(
                            RT_INTERNAL_ERROR,
                            "a stream task panicked inside the emulator",
                        )
                    })
            };
            q = lock(&self.q);
            if let Err(f) = result {
                if q.error.is_none() {
                    q.error = Some(f);
                }
                if q.mode == Some(1) {
                    q.stopped = true;
                }
            }
            q.completed += 1;
            self.cv.notify_all();
        }
    }

    /// Waits for every task queued so far; returns (and clears) the first task error.
    pub(crate) fn synchronize(&self, timeout: Option<Duration>, code: i32) -> R {
        let deadline = timeout.map(|t| Instant::now() + t);
        let g = lock(&self.q);
        let target = g.submitted;
        let (mut g, ok) = wait_until(&self.cv, g, deadline, |q| q.completed >= target);
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

    /// Sets the failure mode (CONTINUE 0, STOP 1), once.
    pub(crate) fn set_failure_mode(&self, mode: u64) -> R {
        let mut q = lock(&self.q);
        if q.mode.is_some() {
            return fail(
                RT_PARAM_INVALID,
                format!(
                    "the failure mode of stream {:#x} was already set; it can be set once",
                    self.handle
                ),
            );
        }
        q.mode = Some(mode);
        Ok(())
    }

    /// Stops accepting work. `force` discards queued tasks (event records still complete so
    /// that waiters do not hang); otherwise queued work runs to completion first.
    pub(crate) fn close(&self, force: bool) {
        let mut q = lock(&self.q);
        q.closing = true;
        if force {
            let dropped: Vec<Task> = q.tasks.drain(..).collect();
            q.completed += dropped.len() as u64;
            drop(q);
            for t in dropped {
                if let Task::Record(ev, seq) = t {
                    ev.complete(seq);
                }
            }
            q = lock(&self.q);
        }
        drop(q);
        self.cv.notify_all();
        if !force {
            let g = lock(&self.q);
            let _g = wait_until(&self.cv, g, None, |q| q.completed >= q.submitted);
        }
    }
}
