//! Measures the safe synchronous copy against the raw `aclrtMemcpy` (`ascendcl::raw`: the table
//! call and its status check), on the same buffers: `cargo run --release -p ascendcl --example copy_overhead`.
//! (The benchmark suite in `benches/` is the reference; this is a quick check.)

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime, raw, sys};
use std::hint::black_box;
use std::time::Instant;

fn time(iters: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..iters / 10 {
        f();
    }
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_nanos() as f64 / f64::from(iters)
}

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    println!("backend: {}", rt.backend().description);
    let dev = rt.device(0)?;
    for (bytes, iters) in [(4usize, 2_000_000u32), (64 << 10, 50_000), (1 << 20, 5_000)] {
        let src = HostBuffer::<u8>::zeroed(&dev, bytes)?;
        let mut dst = DeviceBuffer::<u8>::zeroed(&dev, bytes, MallocPolicy::HugeFirst)?;
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        let mut best = (f64::MAX, f64::MAX);
        for _ in 0..5 {
            let safe = time(iters, || {
                black_box(&mut dst).copy_from_host(black_box(&src)).unwrap();
            });
            let raw = time(iters, || {
                // SAFETY: both buffers are live and `bytes` long.
                unsafe {
                    raw::aclrtMemcpy(
                        black_box(d).cast(),
                        bytes,
                        black_box(s).cast(),
                        bytes,
                        sys::ACL_MEMCPY_HOST_TO_DEVICE,
                    )
                }
                .unwrap();
            });
            best = (best.0.min(safe), best.1.min(raw));
        }
        println!(
            "{bytes:>8} B: safe {:>10.1} ns, raw {:>10.1} ns, overhead {:+.1} ns ({:+.2}%)",
            best.0,
            best.1,
            best.0 - best.1,
            (best.0 / best.1 - 1.0) * 100.0
        );
    }
    Ok(())
}
