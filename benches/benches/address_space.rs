//! What device memory as its own address space costs: `cargo bench -p ascendcl-benches --bench
//! address_space` (add `-- --quick` for a short run). On the emulator only (elsewhere it says so
//! and stops).
//!
//! Each group pairs the guarded path with the path device memory took before it had an address
//! space of its own, measured in the same run: pinned host memory still takes that path (one
//! anonymous mapping per allocation, reached by the emulator at the program's address, needing
//! no opening for kernels).
//!
//! | group | functions | what |
//! | --- | --- | --- |
//! | `alloc_free` | `device`, `pinned_host`, `mmap` | `aclrtMalloc` + `aclrtFree` (a range of the device arena, its pages released at the free), `aclrtMallocHost` + `aclrtFreeHost` (a mapping per allocation, the former device path), and an anonymous `mmap` + `munmap` of the same size |
//! | `copy_sync` | `d2h`, `h2h`, `host_memcpy` | `aclrtMemcpy` from device memory (through its alias) to pinned memory, `aclrtMemcpy` between two pinned buffers (the same code without the alias), and a host `memcpy` |
//! | `kernel_touch` | `device`, `pinned_host`, `empty` | launch + synchronise of a 1-block kernel that writes a word of its buffer: in device memory (the guard opens and closes the buffer's pages for the launch), in pinned host memory (nothing to open), and an empty kernel |
//!
//! Criterion measures one function after another; the paired ratios (`benches/src/paired.rs`:
//! rounds of batches of the three in every order, medians of within-round ratios) are printed
//! after each group.

use ascendcl::{Module, Runtime};
use ascendcl_benches::backend;
use ascendcl_benches::paired::paired;
use ascendcl_sys as sys;
use criterion::{BenchmarkId, Criterion, Throughput};
use std::ffi::c_void;
use std::hint::black_box;
use std::ptr::null_mut;
use std::time::Duration;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/bench_kernels.rs"));
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

fn check(what: &str, code: sys::aclError) {
    assert_eq!(code, 0, "{what} failed with {code}");
}

fn device_alloc(len: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: a valid out-pointer; the caller frees the memory.
    check("aclrtMalloc", unsafe {
        (sys::api().aclrtMalloc)(&mut p, len, sys::ACL_MEM_MALLOC_NORMAL_ONLY)
    });
    p
}

fn device_free(p: *mut c_void) {
    // SAFETY: memory from `device_alloc`, freed once.
    check("aclrtFree", unsafe { (sys::api().aclrtFree)(p) });
}

fn host_alloc(len: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: a valid out-pointer; the caller frees the memory.
    check("aclrtMallocHost", unsafe {
        (sys::api().aclrtMallocHost)(&mut p, len)
    });
    p
}

fn host_free(p: *mut c_void) {
    // SAFETY: memory from `host_alloc`, freed once.
    check("aclrtFreeHost", unsafe { (sys::api().aclrtFreeHost)(p) });
}

fn memcpy(dst: *mut c_void, src: *const c_void, len: usize) {
    // SAFETY: both ranges are allocations of at least `len` bytes made by this benchmark.
    check("aclrtMemcpy", unsafe {
        (sys::api().aclrtMemcpy)(dst, len, src, len, sys::ACL_MEMCPY_DEFAULT)
    });
}

/// The paired ratios of `a`, `b` and `c` (named), printed.
fn report(group: &str, names: [&str; 3], p: ascendcl_benches::paired::Paired) {
    println!(
        "{group} (interleaved, {} rounds): {} {:.1} ns, {} {:.1} ns, {} {:.1} ns; {}/{} = {:.3}, \
         {}/{} = {:.3}",
        p.rounds,
        names[0],
        p.safe_ns,
        names[1],
        p.raw_ns,
        names[2],
        p.host_ns,
        names[0],
        names[1],
        p.safe_over_raw,
        names[2],
        names[1],
        p.host_over_raw,
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let backend = backend::select().expect("a backend");
    if backend.kind != ascendcl::BackendKind::Emulator {
        println!(
            "address_space: skipped: it measures the emulator's device address space; the \
             backend is {}",
            backend::describe(backend)
        );
        return;
    }
    let rt = Runtime::new().expect("aclInit");
    let device = rt.device(0).expect("aclrtSetDevice");
    let stream = device.create_stream().expect("aclrtCreateStream");
    stream.make_current().expect("the stream's context");
    let budget = Duration::from_millis(if quick { 300 } else { 1500 });
    let mut c = Criterion::default()
        .nresamples(10_000)
        .configure_from_args();

    // Per synchronous copy, from 1 MiB.
    let sizes = [MIB, 16 * MIB, 64 * MIB];
    let mut scratch = vec![0u8; if benchmarking { 64 * MIB } else { 0 }];
    {
        let mut g = c.benchmark_group("copy_sync");
        for len in sizes {
            let (dev, a, b) = (device_alloc(len), host_alloc(len), host_alloc(len));
            // Written first, so that every buffer has pages of its own (a source never written
            // would read the kernel's shared zero page, which stays in the cache).
            // SAFETY: two pinned buffers of `len` bytes.
            unsafe {
                a.cast::<u8>().write_bytes(1, len);
                b.cast::<u8>().write_bytes(2, len);
            }
            memcpy(dev, a, len);
            g.throughput(Throughput::Bytes(len as u64));
            g.bench_with_input(BenchmarkId::new("d2h", len), &len, |bch, &len| {
                bch.iter(|| memcpy(a, dev, len))
            });
            g.bench_with_input(BenchmarkId::new("h2h", len), &len, |bch, &len| {
                bch.iter(|| memcpy(a, b, len))
            });
            g.bench_with_input(BenchmarkId::new("host_memcpy", len), &len, |bch, &len| {
                // SAFETY: two pinned buffers of `len` bytes.
                bch.iter(|| unsafe { std::ptr::copy_nonoverlapping(b.cast::<u8>(), a.cast(), len) })
            });
            if benchmarking {
                let p = paired(
                    || memcpy(a, dev, len),
                    || memcpy(a, b, len),
                    // SAFETY: as above.
                    || unsafe { std::ptr::copy_nonoverlapping(b.cast::<u8>(), a.cast(), len) },
                    budget,
                    &mut scratch,
                );
                report(
                    &format!("copy_sync/{len}"),
                    ["d2h", "h2h", "host_memcpy"],
                    p,
                );
                println!(
                    "copy_sync/{len}: d2h throughput / host memcpy throughput = {:.3}",
                    p.host_ns / p.safe_ns
                );
            }
            device_free(dev);
            host_free(a);
            host_free(b);
        }
        g.finish();
    }

    // Per allocation.
    let sizes = [4 * KIB, MIB, 16 * MIB];
    {
        let mut g = c.benchmark_group("alloc_free");
        for len in sizes {
            g.bench_with_input(BenchmarkId::new("device", len), &len, |b, &len| {
                b.iter(|| device_free(black_box(device_alloc(len))))
            });
            g.bench_with_input(BenchmarkId::new("pinned_host", len), &len, |b, &len| {
                b.iter(|| host_free(black_box(host_alloc(len))))
            });
            g.bench_with_input(BenchmarkId::new("mmap", len), &len, |b, &len| {
                b.iter(|| mmap_munmap(len))
            });
        }
        g.finish();
    }
    if benchmarking {
        for len in sizes {
            let p = paired(
                || device_free(black_box(device_alloc(len))),
                || host_free(black_box(host_alloc(len))),
                || mmap_munmap(len),
                budget,
                &mut [],
            );
            report(
                &format!("alloc_free/{len}"),
                ["device", "pinned_host", "mmap"],
                p,
            );
        }
    }

    // Per kernel launch.
    let module = Module::from_bytes(&device, kernels::BINARY).expect("the kernel binary loads");
    let touch = module.function("touch").expect("the touch kernel").as_raw();
    let empty = module.function("empty").expect("the empty kernel").as_raw();
    let raw_stream = stream.as_raw();
    let dev_buf = device_alloc(4096);
    let host_buf = host_alloc(4096);
    memcpy(dev_buf, host_buf, 4096);
    let mut on_device = || launch(touch, raw_stream, Some(dev_buf));
    let mut on_host = || launch(touch, raw_stream, Some(host_buf));
    let mut nothing = || launch(empty, raw_stream, None);
    {
        let mut g = c.benchmark_group("kernel_touch");
        g.bench_function("device", |b| b.iter(&mut on_device));
        g.bench_function("pinned_host", |b| b.iter(&mut on_host));
        g.bench_function("empty", |b| b.iter(&mut nothing));
        g.finish();
    }
    if benchmarking {
        let p = paired(&mut on_device, &mut on_host, &mut nothing, budget, &mut []);
        report("kernel_touch", ["device", "pinned_host", "empty"], p);
        println!(
            "kernel_touch: the guard adds {:.2} us per launch ({:.3}x)",
            (p.safe_ns - p.raw_ns) / 1e3,
            p.safe_over_raw
        );
    }
    device_free(dev_buf);
    host_free(host_buf);
    c.final_summary();
}

/// An anonymous mapping of `len` bytes, touched once, and its unmapping.
fn mmap_munmap(len: usize) {
    use rustix::mm::{MapFlags, ProtFlags, mmap_anonymous, munmap};
    // SAFETY: a fresh private anonymous mapping where the kernel chooses, written within its
    // length and unmapped; nothing else uses it.
    unsafe {
        let p = mmap_anonymous(
            null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE,
        )
        .expect("mmap");
        p.cast::<u8>().write_volatile(1);
        munmap(p, len).expect("munmap");
    }
}

/// Launches `func` on `stream` with one pointer argument (or none) and waits for it.
fn launch(func: sys::aclrtFuncHandle, stream: sys::aclrtStream, arg: Option<*mut c_void>) {
    let api = sys::api();
    let mut args: sys::aclrtArgsHandle = null_mut();
    // SAFETY: a live function handle (its module outlives the benchmark), a live stream, valid
    // out-pointers; the argument is the kernel's one pointer parameter.
    unsafe {
        check(
            "aclrtKernelArgsInit",
            (api.aclrtKernelArgsInit)(func, &mut args),
        );
        if let Some(p) = arg {
            let mut param = null_mut();
            check(
                "aclrtKernelArgsAppend",
                (api.aclrtKernelArgsAppend)(
                    args,
                    (&p as *const *mut c_void).cast_mut().cast(),
                    8,
                    &mut param,
                ),
            );
        }
        check(
            "aclrtKernelArgsFinalize",
            (api.aclrtKernelArgsFinalize)(args),
        );
        check(
            "aclrtLaunchKernelWithConfig",
            (api.aclrtLaunchKernelWithConfig)(func, 1, stream, null_mut(), args, null_mut()),
        );
        check(
            "aclrtSynchronizeStream",
            (api.aclrtSynchronizeStream)(stream),
        );
    }
}
