//! The copy benchmarks: `cargo bench` at the workspace root (or `cargo xtask bench [--quick]`).
//!
//! Benchmark IDs are `<group>/<function>/<bytes>`, throughput in bytes:
//!
//! | group | functions | what |
//! | --- | --- | --- |
//! | `memcpy_h2d_sync` | `safe`, `raw_ffi`, `host_memcpy` | the fixed IDs: the safe API's synchronous host-to-device copy, the same `aclrtMemcpy` through `ascendcl::raw` (the table call and its status check), and a plain host copy of the same bytes (the host-bandwidth limit under the emulator); pinned host memory, default policy, the same buffers |
//! | `memcpy_{h2d,d2h,d2d}_sync` | `policy/<policy>` | `aclrtMemcpy` with device memory of every allocation policy the backend serves, pinned host memory |
//! | `memcpy_{h2d,d2h}_sync` | `pageable` | `aclrtMemcpy` from or to pageable host memory |
//! | `memcpy_h2h_sync` | `pinned`, `pageable` | `aclrtMemcpy` host to host |
//! | `memcpy_{h2d,d2h,d2d,h2h}_async` | `pinned` | `aclrtMemcpyAsync` then `aclrtSynchronizeStream` |
//!
//! Every buffer is allocated once per size, outside the timed loop. Combinations the backend
//! refuses (a huge-page-only policy without huge pages) are printed and recorded in
//! `<criterion dir>/ascendcl-skipped.txt` with the reason, for `cargo xtask bench-report`.

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy};
use ascendcl_benches::backend;
use ascendcl_benches::paired::paired;
use ascendcl_benches::plan::{FIXED_SIZES, MIB, Mode, Timing};
use ascendcl_benches::raw::{
    self, CopyPair, DEFAULT_POLICY, Device, DeviceMem, Direction, HostKind, POLICIES, Policy,
    Stream,
};
use ascendcl_benches::record::{Recorder, criterion_filters};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use std::ffi::c_void;
use std::hint::black_box;
use std::time::Duration;

fn main() {
    // `cargo bench` passes `--bench`; without it (cargo test --benches) criterion runs every
    // benchmark once as a test, so the quick sizes suffice and the record is left alone.
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let started = std::time::Instant::now();
    let mode = if benchmarking {
        Mode::from_env()
    } else {
        Mode::Quick
    };
    let backend = backend::select().unwrap_or_else(|e| fail("choosing the backend", &e));
    println!(
        "ascendcl-benches: backend {}; {} suite",
        backend::describe(backend),
        mode.name()
    );
    let mut rec = Recorder::create(
        benchmarking,
        &backend.kind.to_string(),
        &backend.description,
        mode.name(),
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    rec.filter(&criterion_filters(&args));
    // The safe API's runtime and device (for `memcpy_h2d_sync/safe`), then the raw FFI's own
    // aclInit/aclrtSetDevice, which share them (the runtime counts both).
    let runtime = ascendcl::Runtime::new().unwrap_or_else(|e| fail("aclInit (safe API)", &e));
    let safe_device = runtime
        .device(raw::DEVICE_ID)
        .unwrap_or_else(|e| fail("aclrtSetDevice (safe API)", &e));
    let device = Device::open().unwrap_or_else(|e| fail("aclInit/aclrtSetDevice (raw)", &e));
    let served = served_policies(&mut rec);
    let mut suite = Suite {
        // 10 000 bootstrap resamples instead of 100 000: the same estimates, and a tenth of the
        // analysis time, which would otherwise dominate the small benchmarks on 2 cores.
        c: Criterion::default()
            .nresamples(10_000)
            .configure_from_args(),
        mode,
        rec: &mut rec,
        device: &safe_device,
        paired: benchmarking,
        served,
    };
    suite.h2d_sync();
    suite.device_sync(Direction::D2H);
    suite.device_sync(Direction::D2D);
    suite.h2h_sync();
    suite.async_copies();
    let Suite { c, .. } = suite;
    drop(device);
    drop(safe_device);
    drop(runtime);
    c.final_summary();
    rec.finish(started.elapsed().as_secs_f64());
    if benchmarking {
        println!("ascendcl-benches: recorded to {}", rec.path().display());
    }
}

/// Prints why the suite cannot start and exits.
fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("ascendcl-benches: {what} failed: {e}");
    std::process::exit(1);
}

/// The criterion instance and what every group needs.
struct Suite<'r, 'd> {
    c: Criterion,
    mode: Mode,
    rec: &'r mut Recorder,
    device: &'d ascendcl::Device,
    /// Whether to run the interleaved paired measurement of the fixed IDs (benchmark mode only).
    paired: bool,
    /// The allocation policies the backend serves.
    served: Vec<Policy>,
}

/// Applies `timing` and the byte throughput to the benchmarks `group` registers next.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>, timing: Timing, bytes: usize) {
    group
        .warm_up_time(timing.warm_up)
        .measurement_time(timing.measurement)
        .sample_size(timing.sample_size)
        .sampling_mode(if timing.flat {
            SamplingMode::Flat
        } else {
            SamplingMode::Auto
        })
        .throughput(Throughput::Bytes(bytes as u64));
}

/// Panics with the failure of a copy inside a timed loop (a benchmark must not time errors).
#[cold]
#[inline(never)]
fn copy_failed(what: &str, e: ascendcl::Error) -> ! {
    panic!("{what} failed inside the timed loop: {e}")
}

impl Suite<'_, '_> {
    /// `memcpy_h2d_sync`: the fixed IDs, then every policy and pageable host memory.
    fn h2d_sync(&mut self) {
        let mode = self.mode;
        let mut group = self.c.benchmark_group("memcpy_h2d_sync");
        for &bytes in &FIXED_SIZES {
            configure(&mut group, mode.timing(bytes, true), bytes);
            let budget = self.paired.then(|| mode.paired_budget());
            if let Err(e) = fixed(&mut group, self.device, bytes, budget, self.rec) {
                for f in ["safe", "raw_ffi", "host_memcpy"] {
                    self.rec
                        .skip(&format!("memcpy_h2d_sync/{f}/{bytes}"), &e.to_string());
                }
            }
        }
        policies(&mut group, self.rec, mode, Direction::H2D, &self.served);
        host_kind(
            &mut group,
            self.rec,
            mode,
            Direction::H2D,
            HostKind::Pageable,
        );
        group.finish();
    }

    /// `memcpy_d2h_sync` and `memcpy_d2d_sync`: every policy, and pageable host memory for D2H.
    fn device_sync(&mut self, direction: Direction) {
        let mode = self.mode;
        let mut group = self
            .c
            .benchmark_group(format!("memcpy_{}_sync", direction.name()));
        policies(&mut group, self.rec, mode, direction, &self.served);
        if direction == Direction::D2H {
            host_kind(&mut group, self.rec, mode, direction, HostKind::Pageable);
        }
        group.finish();
    }

    /// `memcpy_h2h_sync`: pinned and pageable host memory.
    fn h2h_sync(&mut self) {
        let mode = self.mode;
        let mut group = self.c.benchmark_group("memcpy_h2h_sync");
        for kind in [HostKind::Pinned, HostKind::Pageable] {
            host_kind(&mut group, self.rec, mode, Direction::H2H, kind);
        }
        group.finish();
    }

    /// `memcpy_<dir>_async/pinned`: an asynchronous copy and a stream synchronise per iteration.
    fn async_copies(&mut self) {
        let stream = match Stream::create() {
            Ok(s) => s,
            Err(e) => {
                self.rec.skip("memcpy_*_async/*", &e.to_string());
                return;
            }
        };
        for direction in Direction::ALL {
            let name = format!("memcpy_{}_async", direction.name());
            let mut group = self.c.benchmark_group(&name);
            for &bytes in self.mode.matrix_sizes() {
                configure(&mut group, self.mode.timing(bytes, false), bytes);
                let id = BenchmarkId::new("pinned", bytes);
                let pair = CopyPair::alloc(direction, bytes, DEFAULT_POLICY, HostKind::Pinned)
                    .and_then(|p| p.copy_async(&stream).map(|()| p));
                match pair {
                    Ok(pair) => {
                        group.bench_function(id, |b| {
                            b.iter(|| {
                                if let Err(e) = pair.copy_async(&stream) {
                                    panic!("inside the timed loop: {e}");
                                }
                            })
                        });
                    }
                    Err(e) if e.code() == Some(ascendcl::AclError::FEATURE_NOT_SUPPORT) => {
                        // Not a matter of size: record the whole function once.
                        self.rec.skip(&format!("{name}/pinned/*"), &e.to_string());
                        break;
                    }
                    Err(e) => self
                        .rec
                        .skip(&format!("{name}/pinned/{bytes}"), &e.to_string()),
                }
            }
            group.finish();
        }
    }
}

/// Bytes written between the paired measurement's batches from 1 MiB: twice a large
/// last-level cache.
const FLUSH_BYTES: usize = 64 * MIB;

/// Why the fixed IDs could not run at one size.
type FixedError = Box<dyn std::error::Error>;

/// The fixed IDs at one size: `safe`, `raw_ffi` and `host_memcpy` over the same buffers — pinned
/// host memory and device memory allocated once through the safe API; `raw_ffi` calls
/// `aclrtMemcpy` on their addresses, `host_memcpy` copies the host source into a second pinned
/// buffer.
fn fixed(
    group: &mut BenchmarkGroup<'_, WallTime>,
    device: &ascendcl::Device,
    bytes: usize,
    paired_budget: Option<Duration>,
    rec: &mut Recorder,
) -> Result<(), FixedError> {
    let mut src = HostBuffer::<u8>::zeroed(device, bytes)?;
    src.fill(0xA5);
    let mut host_dst = HostBuffer::<u8>::zeroed(device, bytes)?;
    let mut dev = DeviceBuffer::<u8>::zeroed(device, bytes, MallocPolicy::HugeFirst)?;
    // One copy outside the loop: checks the combination and makes the device pages resident.
    dev.copy_from_host(&src)?;

    group.bench_function(BenchmarkId::new("safe", bytes), |b| {
        b.iter(|| {
            if let Err(e) = black_box(&mut dev).copy_from_host(black_box(&src)) {
                panic!("safe copy failed inside the timed loop: {e}");
            }
        })
    });

    let (dst, s) = (
        dev.as_mut_ptr().cast::<c_void>(),
        src.as_ptr().cast::<c_void>(),
    );
    // One raw copy, for criterion and for the paired measurement (a `Copy` closure: it captures
    // only the two addresses and the size).
    let raw_copy = move || {
        // SAFETY: `dst` and `s` address the live device and pinned host buffers of `bytes` bytes
        // owned by this function; nothing else touches them while either measurement runs.
        let copied = unsafe {
            ascendcl::raw::aclrtMemcpy(
                black_box(dst),
                bytes,
                black_box(s),
                bytes,
                ascendcl_sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        if let Err(e) = copied {
            copy_failed("raw_ffi", e);
        }
    };
    group.bench_function(BenchmarkId::new("raw_ffi", bytes), |b| b.iter(raw_copy));

    group.bench_function(BenchmarkId::new("host_memcpy", bytes), |b| {
        b.iter(|| black_box(&mut host_dst[..]).copy_from_slice(black_box(&src[..])))
    });

    if let Some(budget) = paired_budget {
        // From 1 MiB the three copies' buffers compete for the last-level cache: start every
        // batch from a cache filled with unrelated data.
        let mut scratch = vec![0u8; if bytes >= MIB { FLUSH_BYTES } else { 0 }];
        let p = paired(
            || {
                if let Err(e) = black_box(&mut dev).copy_from_host(black_box(&src)) {
                    panic!("safe copy failed: {e}");
                }
            },
            raw_copy,
            || black_box(&mut host_dst[..]).copy_from_slice(black_box(&src[..])),
            budget,
            &mut scratch,
        );
        println!(
            "memcpy_h2d_sync paired at {bytes} B ({} rounds): safe/raw_ffi time {:.4}, \
             host_memcpy/raw_ffi time {:.4}",
            p.rounds, p.safe_over_raw, p.host_over_raw
        );
        rec.paired(bytes, &p);
    }
    Ok(())
}

/// `policy/<policy>` for every allocation policy: the sync copy with device memory of that policy
/// and pinned host memory. A policy the backend refuses is recorded as skipped, once.
fn policies(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rec: &mut Recorder,
    mode: Mode,
    direction: Direction,
    served: &[Policy],
) {
    let group_name = format!("memcpy_{}_sync", direction.name());
    for &policy in served {
        let function = format!("policy/{}", policy.name);
        for &bytes in mode.matrix_sizes() {
            configure(group, mode.timing(bytes, false), bytes);
            match CopyPair::alloc(direction, bytes, policy, HostKind::Pinned) {
                Ok(pair) => bench_sync(group, &function, bytes, &pair, rec, &group_name),
                Err(e) => rec.skip(&format!("{group_name}/{function}/{bytes}"), &e.to_string()),
            }
        }
    }
}

/// The policies the backend serves, each probed with one small allocation; every refused policy
/// is recorded once as skipped, with the backend's reason.
fn served_policies(rec: &mut Recorder) -> Vec<Policy> {
    POLICIES
        .into_iter()
        .filter(|&policy| match probe(policy) {
            Ok(()) => true,
            Err(e) => {
                rec.skip(
                    &format!("memcpy_{{h2d,d2h,d2d}}_sync/policy/{}/*", policy.name),
                    &e.to_string(),
                );
                false
            }
        })
        .collect()
}

/// Whether the backend serves `policy` at all: one small allocation.
fn probe(policy: Policy) -> ascendcl::Result<()> {
    DeviceMem::alloc(4096, policy).map(drop)
}

/// `<kind>` (`pinned` or `pageable`): the sync copy with host memory of `kind`, default policy.
fn host_kind(
    group: &mut BenchmarkGroup<'_, WallTime>,
    rec: &mut Recorder,
    mode: Mode,
    direction: Direction,
    kind: HostKind,
) {
    let group_name = format!("memcpy_{}_sync", direction.name());
    for &bytes in mode.matrix_sizes() {
        configure(group, mode.timing(bytes, false), bytes);
        match CopyPair::alloc(direction, bytes, DEFAULT_POLICY, kind) {
            Ok(pair) => bench_sync(group, kind.name(), bytes, &pair, rec, &group_name),
            Err(e) => rec.skip(
                &format!("{group_name}/{}/{bytes}", kind.name()),
                &e.to_string(),
            ),
        }
    }
}

/// Registers `<function>/<bytes>`: one synchronous `aclrtMemcpy` of `pair` per iteration, after
/// an untimed copy that checks the combination works.
fn bench_sync(
    group: &mut BenchmarkGroup<'_, WallTime>,
    function: &str,
    bytes: usize,
    pair: &CopyPair,
    rec: &mut Recorder,
    group_name: &str,
) {
    if let Err(e) = pair.copy_sync() {
        rec.skip(&format!("{group_name}/{function}/{bytes}"), &e.to_string());
        return;
    }
    let (dst, src, kind) = (pair.dst.ptr(), pair.src.ptr(), pair.direction.kind());
    group.bench_function(BenchmarkId::new(function, bytes), |b| {
        b.iter(|| {
            // SAFETY: `pair` owns both ends, live allocations of `bytes` bytes of the kinds
            // `kind` names, for the whole benchmark.
            let copied = unsafe { ascendcl::raw::aclrtMemcpy(dst, bytes, src, bytes, kind) };
            if let Err(e) = copied {
                copy_failed(function, e);
            }
        })
    });
}
