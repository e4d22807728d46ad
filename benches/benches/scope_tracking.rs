//! What the cross-stream tracking of a scope and a submission cost, each paired (same run,
//! same buffers, interleaved by criterion's groups) with the raw calls they make:
//!
//! | group | functions | what |
//! | --- | --- | --- |
//! | `claim_use/<bytes>` | `tracked`, `raw` | one scope over one stream: `iters` device-to-device copies of a claimed region, then the scope's end; against `aclrtMemcpyAsync` × `iters` and `aclrtSynchronizeStream` |
//! | `claim_handover/<bytes>` | `tracked`, `raw` | one scope over two streams: each copy on the other stream than the last, so each use needs an order; against the calls the scope makes for it (`aclrtMemcpyAsync`, `aclrtRecordEvent`, `aclrtStreamWaitEvent`) |
//! | `submission/<bytes>` | `submit`, `raw` | `Stream::submit` of one copy and `wait`; against `aclrtMemcpyAsync`, `aclrtLaunchHostFunc` of a function that signals a condition variable, and the wait for it |
//!
//! The goal: at most 1.05 at 64 KiB and more, at most 150 ns more per operation at 4 bytes.

use ascendcl::{DeviceBuffer, Event, Runtime, Stream, raw};
use criterion::{BenchmarkId, Criterion, Throughput};
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const SIZES: [usize; 2] = [4, 64 << 10];

fn d2d(dst: &DeviceBuffer<u8>, src: &DeviceBuffer<u8>, stream: &Stream) {
    let n = src.len();
    // SAFETY: both buffers are live device memory of the stream's device, `n` bytes long, and
    // every caller synchronises the stream before they are touched again.
    unsafe {
        raw::aclrtMemcpyAsync(
            dst.as_ptr().cast_mut().cast(),
            n,
            src.as_ptr().cast(),
            n,
            ascendcl::sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
            stream.as_raw(),
        )
    }
    .unwrap();
}

/// A host function that sets its flag and wakes the waiter.
unsafe extern "C" fn signal(arg: *mut c_void) {
    // SAFETY: `arg` is the `Arc` leaked for this call by `raw_submission`.
    let done = unsafe { Arc::from_raw(arg.cast_const().cast::<(Mutex<bool>, Condvar)>()) };
    *done.0.lock().unwrap() = true;
    done.1.notify_all();
}

fn main() {
    let rt = Runtime::new().expect("aclInit");
    let dev = rt.device(0).expect("aclrtSetDevice");
    let (a, b) = (dev.create_stream().unwrap(), dev.create_stream().unwrap());
    let mut c = Criterion::default().configure_from_args();
    for bytes in SIZES {
        let src = dev.alloc_zeros::<u8>(bytes).unwrap();
        let mut dst = dev.alloc_zeros::<u8>(bytes).unwrap();
        let mut g = c.benchmark_group("claim_use");
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(BenchmarkId::new("tracked", bytes), |bn| {
            bn.iter_custom(|iters| {
                let t = Instant::now();
                a.scope(|s| {
                    let d = s.claim(&mut dst);
                    for _ in 0..iters {
                        s.copy(d, &src)?;
                    }
                    Ok(())
                })
                .unwrap();
                t.elapsed()
            })
        });
        g.bench_function(BenchmarkId::new("raw", bytes), |bn| {
            bn.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    d2d(&dst, &src, &a);
                }
                a.synchronize().unwrap();
                t.elapsed()
            })
        });
        g.finish();

        let mut g = c.benchmark_group("claim_handover");
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(BenchmarkId::new("tracked", bytes), |bn| {
            bn.iter_custom(|iters| {
                let t = Instant::now();
                ascendcl::scope([&a, &b], |[sa, sb]| {
                    let d = sa.claim(&mut dst);
                    for i in 0..iters {
                        let s = if i % 2 == 0 { sa } else { sb };
                        s.copy(d, &src)?;
                    }
                    Ok(())
                })
                .unwrap();
                t.elapsed()
            })
        });
        // The scope's calls: the copy, the record after it (one scope of two streams records
        // after every use of claimed memory) and, on the other stream, the wait before the next.
        let events: Vec<Event> = (0..2).map(|_| dev.create_event().unwrap()).collect();
        g.bench_function(BenchmarkId::new("raw", bytes), |bn| {
            bn.iter_custom(|iters| {
                let t = Instant::now();
                for i in 0..iters {
                    let (s, other) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
                    let e = &events[(i % 2) as usize];
                    if i > 0 {
                        // SAFETY: live stream and event.
                        unsafe {
                            raw::aclrtStreamWaitEvent(
                                s.as_raw(),
                                events[((i + 1) % 2) as usize].as_raw(),
                            )
                        }
                        .unwrap();
                    }
                    d2d(&dst, &src, s);
                    // SAFETY: live event and stream.
                    unsafe { raw::aclrtRecordEvent(e.as_raw(), s.as_raw()) }.unwrap();
                    black_box(other);
                }
                a.synchronize().unwrap();
                b.synchronize().unwrap();
                t.elapsed()
            })
        });
        g.finish();

        let src: &'static DeviceBuffer<u8> = Box::leak(Box::new(src));
        let mut g = c.benchmark_group("submission");
        g.throughput(Throughput::Bytes(bytes as u64));
        let mut owned = Some(dst);
        g.bench_function(BenchmarkId::new("submit", bytes), |bn| {
            bn.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let buf = owned.take().unwrap();
                    let t = Instant::now();
                    let job = a.submit(buf, move |s, d| s.copy(d, src));
                    owned = Some(job.wait().unwrap());
                    total += t.elapsed();
                }
                total
            })
        });
        let dst = owned.take().unwrap();
        g.bench_function(BenchmarkId::new("raw", bytes), |bn| {
            bn.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    let done = Arc::new((Mutex::new(false), Condvar::new()));
                    d2d(&dst, src, &a);
                    let arg = Arc::into_raw(Arc::clone(&done)).cast_mut().cast::<c_void>();
                    // SAFETY: `signal` consumes the leaked reference once.
                    unsafe { raw::aclrtLaunchHostFunc(a.as_raw(), Some(signal), arg) }.unwrap();
                    let mut g = done.0.lock().unwrap();
                    while !*g {
                        g = done.1.wait(g).unwrap();
                    }
                    total += t.elapsed();
                }
                total
            })
        });
        g.finish();
    }
    c.final_summary();
}
