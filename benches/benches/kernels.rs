//! The kernel benchmarks: `cargo bench -p ascendcl-benches --bench kernels` (add `-- --quick` for
//! a short run). They run on the emulator (the kernels are host-mode binaries built by
//! `ascendc-build` from kernels/bench_kernels.cpp); on another backend they say so and stop.
//!
//! | group | functions | what |
//! | --- | --- | --- |
//! | `kernel_launch` | `safe`, `typed`, `raw_ffi` | launch + synchronise of an empty kernel, 1 block: the safe API (`Scope::launch_builder` on a `Module`'s function, in a `Stream::scope`), the launcher `ascendc-build` generates (in a scope), and the shortest runtime sequence through the raw table (`aclrtKernelArgsInit`, `aclrtKernelArgsFinalize`, `aclrtLaunchKernelWithConfig`, `aclrtSynchronizeStream`), which the builder and the launcher use too (the thread's argument list) |
//! | `vector_add` | `rust_loop`, `kernel/<blocks>` | `dst = a + alpha * b` over the same 2^20 floats: a plain Rust loop, and the host-mode kernel launched and waited for with 1 to 8 blocks (throughput in bytes moved: three arrays) |
//!
//! Criterion measures one function after the other; the ratios are measured apart, interleaved
//! round after round in the same process (medians of within-round ratios), and printed: safe and
//! typed launches over raw ones, and each block count's kernel time over the Rust loop's.

use ascendcl::{LaunchConfig, Module, Runtime, Stream};
use ascendcl_benches::backend;
use ascendcl_benches::paired::{median, paired};
use ascendcl_sys as sys;
use criterion::{BenchmarkId, Criterion, Throughput};
use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/bench_kernels.rs"));
}

/// Elements of the vector-add arrays.
const N: usize = 1 << 20;
/// Block counts of the vector-add kernel.
const BLOCKS: [u32; 4] = [1, 2, 4, 8];
const ALPHA: f32 = 1.5;

/// The raw launch of `empty`: the shortest sequence of runtime calls (an argument list the
/// runtime allocates), through the table, status checked.
fn raw_launch(func: sys::aclrtFuncHandle, stream: sys::aclrtStream) {
    let api = sys::api();
    let mut args: sys::aclrtArgsHandle = std::ptr::null_mut();
    // SAFETY: a live function handle (its module outlives the benchmark), a live stream, valid
    // out-pointers; `empty` takes no arguments.
    unsafe {
        assert_eq!((api.aclrtKernelArgsInit)(func, &mut args), 0);
        assert_eq!((api.aclrtKernelArgsFinalize)(args), 0);
        assert_eq!(
            (api.aclrtLaunchKernelWithConfig)(
                func,
                1,
                stream,
                std::ptr::null_mut(),
                args,
                std::ptr::null_mut()
            ),
            0
        );
        assert_eq!((api.aclrtSynchronizeStream)(stream), 0);
    }
}

/// The medians of `f[i]`'s time and of its time over `f[0]`'s, from rounds that time each in
/// turn (rotating the order) for about `budget`.
fn interleaved(f: &mut [&mut dyn FnMut()], budget: Duration) -> Vec<(f64, f64)> {
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let start = Instant::now();
    let mut round = 0usize;
    while rows.len() < 9 || start.elapsed() < budget {
        let mut t = vec![0.0; f.len()];
        for k in 0..f.len() {
            let i = (round + k) % f.len();
            f[i]();
            let s = Instant::now();
            f[i]();
            t[i] = s.elapsed().as_nanos() as f64;
        }
        if round > 0 {
            rows.push(t);
        }
        round += 1;
    }
    (0..f.len())
        .map(|i| {
            (
                median(rows.iter().map(|r| r[i]).collect()),
                median(rows.iter().map(|r| r[i] / r[0]).collect()),
            )
        })
        .collect()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let backend = match backend::select() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("kernels: cannot choose a backend: {e}");
            std::process::exit(1);
        }
    };
    if backend.kind != ascendcl::BackendKind::Emulator {
        println!(
            "kernels: skipped: the kernels are host-mode binaries, which run on the emulator; \
             the backend is {}",
            backend::describe(backend)
        );
        return;
    }
    let rt = Runtime::new().expect("aclInit");
    let device = rt.device(0).expect("aclrtSetDevice");
    let stream = device.create_stream().expect("aclrtCreateStream");
    let module = Module::from_bytes(&device, kernels::BINARY).expect("the kernel binary loads");
    let empty = module.function("empty").expect("the empty kernel");
    println!(
        "kernels: backend {}; kernel blocks run on {} host thread(s)",
        backend::describe(backend),
        ascendcl_emu::kernel_pool::threads()
    );
    let mut c = Criterion::default()
        .nresamples(10_000)
        .configure_from_args();

    let cfg = LaunchConfig::blocks(1);
    let mut safe = || {
        stream
            .scope(|s| {
                // SAFETY: `empty()` takes no arguments.
                unsafe { s.launch_builder(&empty).launch(&cfg) }
            })
            .expect("safe launch")
    };
    let mut typed = || {
        stream
            .scope(|s| kernels::empty(s, 1))
            .expect("typed launch")
    };
    stream.make_current().expect("the stream's context");
    let (func, raw_stream) = (empty.as_raw(), stream.as_raw());
    let mut raw = || raw_launch(func, raw_stream);
    {
        let mut g = c.benchmark_group("kernel_launch");
        g.bench_function("safe", |b| b.iter(&mut safe));
        g.bench_function("typed", |b| b.iter(&mut typed));
        g.bench_function("raw_ffi", |b| b.iter(&mut raw));
        g.finish();
    }
    if benchmarking {
        stream.make_current().expect("the stream's context");
        let p = paired(
            &mut safe,
            &mut raw,
            &mut typed,
            Duration::from_millis(if quick { 400 } else { 2000 }),
            &mut [],
        );
        println!(
            "kernel_launch (interleaved, {} rounds): safe {:.2} us, raw_ffi {:.2} us, typed {:.2} us; \
             safe/raw_ffi = {:.3}, typed/raw_ffi = {:.3}",
            p.rounds,
            p.safe_ns / 1e3,
            p.raw_ns / 1e3,
            p.host_ns / 1e3,
            p.safe_over_raw,
            p.host_over_raw
        );
    }

    vector_add(&mut c, &device, &stream, quick, benchmarking);
    c.final_summary();
}

fn vector_add(
    c: &mut Criterion,
    device: &ascendcl::Device,
    stream: &Stream,
    quick: bool,
    benchmarking: bool,
) {
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 7) as f32 - 3.0).collect();
    let mut host_dst = vec![0f32; N];
    let da = device.clone_htod(&a).expect("a on the device");
    let db = device.clone_htod(&b).expect("b on the device");
    // Shared by the closures below, one call at a time.
    let dd = RefCell::new(device.alloc_zeros::<f32>(N).expect("dst on the device"));
    let launch = |blocks: u32| {
        let mut d = dd.borrow_mut();
        stream
            .scope(|s| kernels::vector_add(s, blocks, &da, &db, &mut *d, ALPHA, N as u32))
            .expect("vector_add")
    };
    // One checked run of each, untimed.
    for blocks in BLOCKS {
        launch(blocks);
        let got = dd.borrow().copy_to_vec().expect("dst back");
        assert!(
            got.iter()
                .zip(a.iter().zip(&b))
                .all(|(d, (x, y))| *d == x + ALPHA * y),
            "vector_add with {blocks} blocks computed a wrong result"
        );
    }
    let mut rust_loop = || {
        for ((d, x), y) in host_dst.iter_mut().zip(&a).zip(&b) {
            *d = x + ALPHA * y;
        }
        black_box(&mut host_dst);
    };
    let mut g = c.benchmark_group("vector_add");
    g.throughput(Throughput::Bytes((3 * N * size_of::<f32>()) as u64));
    g.bench_function("rust_loop", |bch| bch.iter(&mut rust_loop));
    for blocks in BLOCKS {
        g.bench_with_input(
            BenchmarkId::new("kernel", blocks),
            &blocks,
            |bch, &blocks| bch.iter(|| launch(blocks)),
        );
    }
    g.finish();
    if !benchmarking {
        return;
    }
    let mut launches: Vec<Box<dyn FnMut() + '_>> = BLOCKS
        .iter()
        .map(|&blocks| Box::new(move || launch(blocks)) as Box<dyn FnMut()>)
        .collect();
    let mut all: Vec<&mut dyn FnMut()> = vec![&mut rust_loop];
    for l in &mut launches {
        all.push(l.as_mut());
    }
    let r = interleaved(
        &mut all,
        Duration::from_millis(if quick { 1500 } else { 6000 }),
    );
    let bytes = (3 * N * size_of::<f32>()) as f64;
    println!(
        "vector_add (interleaved, 2^20 floats): rust_loop {:.0} us ({:.2} GB/s)",
        r[0].0 / 1e3,
        bytes / r[0].0
    );
    for (i, blocks) in BLOCKS.iter().enumerate() {
        let (ns, over) = r[i + 1];
        println!(
            "vector_add kernel, {blocks} block(s): {:.0} us ({:.2} GB/s), {:.2}x the Rust loop's \
             time, {:.2}x the 1-block kernel's speed",
            ns / 1e3,
            bytes / ns,
            over,
            r[1].0 / ns
        );
    }
}
