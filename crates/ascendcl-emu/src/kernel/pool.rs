//! The host threads kernel blocks run on: `ASCENDCL_EMU_KERNEL_THREADS` in all (default: the
//! machine's available parallelism), the stream worker that runs the launch being one of them.
//! Started on the first launch of more than one block; never stopped.

use crate::base::lock::{Condvar, Mutex, Rank};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};

/// Environment variable: the number of host threads kernel blocks run on (1 to 1024).
pub const ENV_KERNEL_THREADS: &str = "ASCENDCL_EMU_KERNEL_THREADS";

/// A block function whose lifetime was erased; valid until its job's `done` reaches `total`.
struct Body(*const (dyn Fn(u32) + Sync));

// SAFETY: the pointee is `Sync` (shared between the threads that run blocks) and outlives every
// call made through the pointer (`run` waits for them).
unsafe impl Send for Body {}
// SAFETY: as above.
unsafe impl Sync for Body {}

struct Job {
    body: Body,
    total: u32,
    next: AtomicU32,
    done: Mutex<u32>,
    finished: Condvar,
}

impl Job {
    /// Runs blocks of the job until none is left to take.
    fn help(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i >= self.total {
                return;
            }
            // SAFETY: block `i` was not finished, so `run` has not returned and the body lives.
            let body = unsafe { &*self.body.0 };
            body(i);
            let mut d = self.done.lock();
            *d += 1;
            if *d == self.total {
                self.finished.notify_all();
            }
        }
    }
}

struct Pool {
    threads: usize,
    jobs: Mutex<Vec<Arc<Job>>>,
    work: Condvar,
}

static POOL: LazyLock<Pool> = LazyLock::new(|| {
    let threads = std::env::var(ENV_KERNEL_THREADS)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| (1..=1024).contains(n))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    Pool {
        threads,
        jobs: Mutex::new(Rank::KernelPool, Vec::new()),
        work: Condvar::new(),
    }
});

static STARTED: std::sync::Once = std::sync::Once::new();

/// The number of host threads kernel blocks run on ([`ENV_KERNEL_THREADS`]).
pub fn threads() -> usize {
    POOL.threads
}

fn worker() {
    let pool = &*POOL;
    loop {
        let job = {
            let mut jobs = pool.jobs.lock();
            loop {
                jobs.retain(|j| j.next.load(Ordering::Acquire) < j.total);
                if let Some(j) = jobs.first() {
                    break Arc::clone(j);
                }
                pool.work.wait(&mut jobs);
            }
        };
        job.help();
    }
}

/// Runs `body(0)`, ..., `body(total - 1)` on the pool and the calling thread; returns when every
/// call has returned.
pub(crate) fn run(total: u32, body: &(dyn Fn(u32) + Sync)) {
    let pool = &*POOL;
    if total <= 1 || pool.threads <= 1 {
        (0..total).for_each(body);
        return;
    }
    STARTED.call_once(|| {
        for i in 1..pool.threads {
            let _ = std::thread::Builder::new()
                .name(format!("acl-emu-kernel-{i}"))
                .spawn(worker);
        }
    });
    // SAFETY (of the erasure): `body` outlives every call through the pointer, because this
    // function returns only once all `total` calls have returned, and no call starts after the
    // last block was taken.
    let erased: *const (dyn Fn(u32) + Sync + '_) = body;
    let job = Arc::new(Job {
        // SAFETY: only the lifetime changes; see above.
        body: Body(unsafe {
            std::mem::transmute::<*const (dyn Fn(u32) + Sync + '_), *const (dyn Fn(u32) + Sync)>(
                erased,
            )
        }),
        total,
        next: AtomicU32::new(0),
        done: Mutex::new(Rank::KernelJob, 0),
        finished: Condvar::new(),
    });
    pool.jobs.lock().push(Arc::clone(&job));
    pool.work.notify_all();
    job.help();
    let mut d = job.done.lock();
    while *d < total {
        job.finished.wait(&mut d);
    }
}
