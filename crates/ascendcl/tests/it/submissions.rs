//! Work submitted without waiting ([`Stream::submit`], [`ascendcl::submit`]): the buffers come
//! back once the streams are past the work — through `wait`, `is_done` or the `Future`, woken by
//! the runtime's host-function callback; dropping or forgetting the handle never frees them
//! early; failures (the closure's, an abort, a refused stream) give the buffers back too.

use crate::common::*;
use ascendcl::{Error, FailureMode, HostBuffer, ReduceKind};
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

/// A host function that holds its stream until the sender is used (or dropped).
fn gate() -> (mpsc::Sender<()>, impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel::<()>();
    (tx, move || {
        let _ = rx.recv();
    })
}

/// Wakes a parked thread, counting the wake-ups.
struct Unpark {
    thread: std::thread::Thread,
    wakes: AtomicUsize,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// The plainest executor: polls `f` on this thread, parking between polls; returns the output
/// and how many times it was polled.
fn block_on<F: Future>(f: F) -> (F::Output, usize) {
    let unpark = Arc::new(Unpark {
        thread: std::thread::current(),
        wakes: AtomicUsize::new(0),
    });
    let waker = Waker::from(Arc::clone(&unpark));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return (v, polls);
        }
        // Parks until woken (a spurious wake-up only costs another poll).
        std::thread::park_timeout(Duration::from_secs(10));
    }
}

#[test]
fn a_submission_returns_at_once_and_gives_the_buffers_back() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let (open, hold) = gate();
    s.launch_host_fn(hold).unwrap();
    let input = HostBuffer::from_slice(&d, &[1i32, 2, 3, 4]).unwrap();
    let ones = d.clone_htod(&[1i32; 4]).unwrap();
    // Pinned host memory: a copy into a pageable `Vec` completes before its enqueue returns (the
    // runtime waits for the stream), which would block the submission behind the gate.
    let back = HostBuffer::<i32>::zeroed(&d, 4).unwrap();
    let bufs = (input, ones, d.alloc_zeros::<i32>(4).unwrap(), back);
    let job = s.submit(bufs, |s, (input, ones, dev, back)| {
        let dev = s.claim(dev);
        s.copy(dev, &*input)?;
        s.reduce(dev, &*ones, ReduceKind::Sum)?;
        s.copy(back, dev)
    });
    std::thread::sleep(Duration::from_millis(20));
    assert!(!job.is_done(), "the stream is held: the work has not run");
    open.send(()).unwrap();
    let (_, _, dev, back) = job.wait().unwrap();
    assert_eq!(back[..], [2, 3, 4, 5]);
    assert_eq!(dev.copy_to_vec().unwrap(), [2, 3, 4, 5]);
}

#[test]
fn the_future_is_woken_by_the_runtime_callback_not_polled() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let (open, hold) = gate();
    s.launch_host_fn(hold).unwrap();
    let bufs = (
        d.alloc_zeros::<i32>(8).unwrap(),
        HostBuffer::<i32>::zeroed(&d, 8).unwrap(),
    );
    let job = s.submit(bufs, |s, (d, back)| {
        let d = s.claim(d);
        s.fill(d, -3)?;
        s.copy(back, d)
    });
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        open.send(()).unwrap();
    });
    let (out, polls) = block_on(job);
    let (_, back) = out.unwrap();
    assert_eq!(back[..], [-3; 8]);
    // Once while pending, once when woken (the park between them is not a polling loop).
    assert!(polls <= 3, "{polls} polls");
}

#[test]
fn dropping_the_handle_frees_the_buffers_only_after_the_stream() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let marker = Arc::new(());
    let (open, hold) = gate();
    s.launch_host_fn(hold).unwrap();
    let job = s.submit(
        (Arc::clone(&marker), d.alloc_zeros::<u8>(16).unwrap()),
        |s, (_, dev)| s.fill_bytes(&mut *dev, 1),
    );
    drop(job); // never blocks
    assert_eq!(
        Arc::strong_count(&marker),
        2,
        "not freed while the stream is held"
    );
    open.send(()).unwrap();
    s.synchronize().unwrap();
    // The completion ran, and dropped the buffers (on the release thread if it had to).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while Arc::strong_count(&marker) > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(Arc::strong_count(&marker), 1);
    // A forgotten handle leaks its buffers: they are never freed, so never early.
    let job = s.submit((Arc::clone(&marker),), |_, _| Ok(()));
    std::mem::forget(job);
    s.synchronize().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(Arc::strong_count(&marker), 2);
}

#[test]
fn a_failing_closure_gives_the_buffers_back_after_its_work() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let (open, hold) = gate();
    s.launch_host_fn(hold).unwrap();
    let bufs = (d.alloc_zeros::<u32>(4).unwrap(), vec![0u32; 5]);
    let job = s.submit(bufs, |s, (dev, short)| {
        let dev = s.claim(dev);
        s.fill(dev, 11)?; // enqueued
        s.copy(short, dev) // lengths differ: refused
    });
    assert!(!job.is_done(), "the fill it enqueued is still held");
    open.send(()).unwrap();
    let err = job.wait().unwrap_err();
    assert!(matches!(err.error(), Error::Argument { .. }), "{err}");
    let (dev, _) = err.into_value();
    assert_eq!(dev.copy_to_vec().unwrap(), [11; 4]);
    // `?` turns it into the crate's error.
    let f = || -> ascendcl::Result<()> {
        s.submit((), |_, _| Err(Error::HostFnDiscarded)).wait()?;
        Ok(())
    };
    assert!(matches!(f(), Err(Error::HostFnDiscarded)));
}

#[test]
fn an_aborted_stream_completes_the_submission_with_its_buffers() {
    let r = rt();
    let d = failure_device(&r);
    let s = d.create_stream().unwrap();
    let (open, hold) = gate();
    s.launch_host_fn(hold).unwrap();
    let job = s.submit((d.alloc_zeros::<u32>(4).unwrap(),), |s, (dev,)| {
        s.fill(&mut *dev, 5)
    });
    let s2 = s.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        let _ = open.send(());
    });
    s2.abort().unwrap();
    let err = job.wait().unwrap_err();
    assert!(matches!(err.error(), Error::Aborted { .. }), "{err}");
    let (dev,) = err.into_value();
    assert_eq!(
        dev.copy_to_vec().unwrap(),
        [0; 4],
        "the discarded fill never ran"
    );
}

#[test]
fn stopped_streams_and_stop_mode_are_refused_at_once() {
    let r = rt();
    let d = failure_device(&r);
    let s = d.create_stream().unwrap();
    s.stop().unwrap();
    let job = s.submit(vec![1u8], |_, _| Ok(()));
    assert!(job.is_done());
    let err = job.wait().unwrap_err();
    assert!(matches!(err.error(), Error::Argument { .. }), "{err}");
    assert_eq!(err.into_value(), [1]);
    s.abort().unwrap();
    // STOP mode applies to the whole context, whose host functions stop after a failure.
    let ctx = d.create_context().unwrap();
    let (stop, other) = (ctx.create_stream().unwrap(), ctx.create_stream().unwrap());
    stop.set_failure_mode(FailureMode::Stop).unwrap();
    let err = other.submit((), |_, _| Ok(())).wait().unwrap_err();
    assert!(matches!(err.error(), Error::Argument { .. }), "{err}");
}

#[test]
fn a_submission_over_several_streams_orders_them_and_waits_for_all() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let (open, hold) = gate();
    a.launch_host_fn(hold).unwrap();
    let bufs = (
        d.alloc_zeros::<u32>(64).unwrap(),
        HostBuffer::<u32>::zeroed(&d, 64).unwrap(),
    );
    let job = ascendcl::submit([&a, &b], bufs, |[sa, sb], (dev, back)| {
        let dev = sa.claim(dev);
        sa.fill(dev, 21)?; // held on a
        sb.copy(back, dev) // on b, after the fill
    });
    std::thread::sleep(Duration::from_millis(20));
    assert!(!job.is_done());
    assert!(!b.is_complete().unwrap(), "b waits for a's fill");
    open.send(()).unwrap();
    let (_, back) = job.wait().unwrap();
    assert_eq!(back[..], [21; 64]);
}

#[test]
fn a_panicking_closure_frees_its_buffers_after_its_work() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let marker = Arc::new(());
    let (open, hold) = gate();
    s.launch_host_fn(hold).unwrap();
    let m = Arc::clone(&marker);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        drop(
            s.submit((m, d.alloc_zeros::<u8>(8).unwrap()), |s, (_, dev)| {
                s.fill_bytes(&mut *dev, 2)?;
                panic!("inside the submission");
            }),
        );
    }));
    assert!(panicked.is_err());
    assert_eq!(
        Arc::strong_count(&marker),
        2,
        "held until the stream is past the fill"
    );
    open.send(()).unwrap();
    s.synchronize().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while Arc::strong_count(&marker) > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(Arc::strong_count(&marker), 1);
}

#[test]
fn requests_on_a_shared_stream_wait_only_for_their_own_work() {
    let r = rt();
    let d = r.device(0).unwrap();
    let shared = d.create_stream().unwrap();
    // A submission on the shared stream ahead of ours is still pending (its work is queued on
    // the stream, so ours runs after it; but we wait for ours only).
    let first = shared.submit((d.alloc_zeros::<u32>(1024).unwrap(),), |s, (x,)| {
        s.fill(&mut *x, 1)
    });
    let second = shared.submit(
        (d.alloc_zeros::<u32>(4).unwrap(), vec![0u32; 4]),
        |s, (x, back)| {
            let x = s.claim(x);
            s.fill(x, 2)?;
            s.copy(back, x)
        },
    );
    let (_, back) = second.wait().unwrap();
    assert_eq!(back, [2; 4]);
    assert!(
        first.is_done(),
        "the stream ran the first request's work before the second's"
    );
    first.wait().unwrap();
}
