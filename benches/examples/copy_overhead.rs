//! Runs `N` synchronous host-to-device copies of `BYTES` through the safe API or the raw table,
//! for instruction-count profiling, where wall-clock noise cannot hide a few nanoseconds:
//!
//! ```sh
//! cargo build --release -p ascendcl-benches --example copy_overhead
//! valgrind --tool=callgrind target/release/examples/copy_overhead safe 100000 4
//! valgrind --tool=callgrind target/release/examples/copy_overhead raw 100000 4
//! ```
//!
//! Both runs do the same setup; the difference of their instruction totals divided by `N` is what
//! the safe layer adds to one copy.

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};
use std::ffi::c_void;
use std::hint::black_box;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, n, bytes) = match args.as_slice() {
        [p, n, b] => (p.as_str(), n.parse::<usize>()?, b.parse::<usize>()?),
        _ => return Err("usage: copy_overhead safe|raw N BYTES".into()),
    };
    let rt = Runtime::new()?;
    let device = rt.device(0)?;
    let src = HostBuffer::<u8>::zeroed(&device, bytes)?;
    let mut dev = DeviceBuffer::<u8>::zeroed(&device, bytes, MallocPolicy::HugeFirst)?;
    match path {
        "safe" => safe(&mut dev, &src, n)?,
        "raw" => raw(dev.as_mut_ptr().cast(), src.as_ptr().cast(), bytes, n),
        other => return Err(format!("unknown path {other:?}: expected safe or raw").into()),
    }
    println!("{n} copies of {bytes} bytes through {path}");
    Ok(())
}

/// `n` copies through `DeviceBuffer::copy_from_host`.
#[inline(never)]
fn safe(dev: &mut DeviceBuffer<u8>, src: &[u8], n: usize) -> ascendcl::Result<()> {
    for _ in 0..n {
        black_box(&mut *dev).copy_from_host(black_box(src))?;
    }
    Ok(())
}

/// `n` copies through `ascendcl::raw::aclrtMemcpy` (the table call and its status check).
#[inline(never)]
fn raw(dst: *mut c_void, src: *const c_void, bytes: usize, n: usize) {
    for _ in 0..n {
        // SAFETY: `dst` and `src` address live device and pinned host buffers of `bytes` bytes,
        // owned by `main` for the whole loop.
        let copied = unsafe {
            ascendcl::raw::aclrtMemcpy(
                black_box(dst),
                bytes,
                black_box(src),
                bytes,
                ascendcl_sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        if let Err(e) = copied {
            panic!("{e}");
        }
    }
}
