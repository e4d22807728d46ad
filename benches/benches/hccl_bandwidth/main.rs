//! Bandwidth of HCCL's all-reduce, all-gather and reduce-scatter on 2, 4 and 8 ranks (one
//! device and one thread each) from 4 B to 64 MiB, and of a host memcpy of the same sizes, the
//! ceiling the collectives are compared with, measured in the same run.
//!
//! IDs: `hccl_<op>/<n>_ranks/<bytes>`, `hccl_memcpy/host/<bytes>` (one thread) and
//! `hccl_memcpy/<k>_threads/<bytes>` (`k` = the host's CPUs, each thread copying `<bytes>` of
//! its own at once: what the host's cores can copy together, the ceiling of ranks that share
//! them), where `<bytes>` is the nominal size as HCCL's and NCCL's benchmarks use it
//! (all-reduce: one rank's buffer; all-gather: the gathered output; reduce-scatter: the full
//! input). One iteration is one collective on every rank: each rank enqueues `iters` of them
//! back to back on its stream and waits; the time per iteration is the wall time over `iters`.
//! The algorithm the emulator runs for each is recorded with the results. `cargo xtask
//! hccl-bench` runs the suite and writes `docs/hccl-benchmarks.md` from criterion's estimates.
//!
//! `HCCL_BENCH_QUICK=1` selects the quick suite (three sizes, short measurements). Under
//! `cargo test --benches` every benchmark runs once, on the quick sizes.

mod copiers;
mod ranks;

use copiers::Copiers;
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use ranks::{Op, Ranks};
use std::hint::black_box;
use std::time::Duration;

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Environment variable selecting the quick suite.
const ENV_QUICK: &str = "HCCL_BENCH_QUICK";

/// The rank counts measured.
const RANKS: [u32; 3] = [2, 4, 8];

/// Written next to criterion's results for the report: what ran, on what.
const RECORD: &str = "hccl-bench.json";

/// 4 B to 64 MiB by factors of 4.
fn sizes(quick: bool) -> Vec<usize> {
    if quick {
        vec![4, 64 * KIB, 16 * MIB]
    } else {
        (0..13).map(|k| 4usize << (2 * k)).collect()
    }
}

/// Criterion's settings per size: many short samples for small sizes; ten samples of the same
/// iteration count for large ones, whose single iterations take up to a second on 2 cores.
fn configure(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    bytes: usize,
    quick: bool,
) {
    let large = bytes >= 4 * MIB;
    let (warm, measure, samples) = match (quick, large) {
        (false, false) => (Duration::from_millis(300), Duration::from_millis(1200), 30),
        (false, true) => (Duration::from_millis(200), Duration::from_secs(2), 10),
        (true, false) => (Duration::from_millis(100), Duration::from_millis(300), 10),
        (true, true) => (Duration::from_millis(50), Duration::from_millis(500), 10),
    };
    g.warm_up_time(warm)
        .measurement_time(measure)
        .sample_size(samples)
        .sampling_mode(if large {
            SamplingMode::Flat
        } else {
            SamplingMode::Auto
        });
}

fn main() {
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let quick = !benchmarking || std::env::var(ENV_QUICK).is_ok_and(|v| !v.is_empty() && v != "0");
    let max_ranks = *RANKS.iter().max().unwrap();
    // The emulated machine gets a device per rank (a CANN server has the devices it has).
    let mut c = ascendcl_emu::config::config();
    c.devices = c.devices.max(max_ranks);
    ascendcl_emu::config::set_config(c);
    let rt = ascendcl::Runtime::new().unwrap_or_else(|e| fail("aclInit", &e));
    let available = rt
        .device_count()
        .unwrap_or_else(|e| fail("device count", &e));
    let backend = rt.backend().description.clone();
    println!(
        "hccl bandwidth: {backend}; {} suite",
        if quick { "quick" } else { "default" }
    );
    let mut c = Criterion::default()
        .nresamples(10_000)
        .configure_from_args();
    let sizes = sizes(quick);
    let max = *sizes.iter().max().unwrap();

    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let copiers = Copiers::new(cpus, max);
    let mut g = c.benchmark_group("hccl_memcpy");
    for &bytes in &sizes {
        configure(&mut g, bytes, quick);
        g.throughput(Throughput::Bytes(bytes as u64));
        let src = vec![1u8; bytes];
        let mut dst = vec![0u8; bytes];
        g.bench_with_input(BenchmarkId::new("host", bytes), &bytes, |b, _| {
            b.iter(|| dst.copy_from_slice(black_box(&src)));
        });
        black_box(&dst);
        g.throughput(Throughput::Bytes((cpus * bytes) as u64));
        g.bench_with_input(
            BenchmarkId::new(format!("{cpus}_threads"), bytes),
            &bytes,
            |b, _| b.iter_custom(|iters| copiers.run(bytes, iters)),
        );
    }
    g.finish();
    drop(copiers);

    let mut measured = Vec::new();
    for n in RANKS {
        if n > available {
            println!("hccl bandwidth: {n} ranks skipped: {available} devices");
            continue;
        }
        let devices: Vec<_> = (0..n as i32)
            .map(|d| rt.device(d).unwrap_or_else(|e| fail("aclrtSetDevice", &e)))
            .collect();
        let ranks = Ranks::new(&devices, max).unwrap_or_else(|e| fail("setting up the ranks", &e));
        measured.push(n);
        for op in Op::ALL {
            let mut g = c.benchmark_group(op.group());
            for &bytes in &sizes {
                configure(&mut g, bytes, quick);
                let (s, r) = op.elements(bytes, n as usize);
                g.throughput(Throughput::Bytes(4 * s.max(r) as u64));
                g.bench_with_input(
                    BenchmarkId::new(format!("{n}_ranks"), bytes),
                    &bytes,
                    |b, _| {
                        b.iter_custom(|iters| ranks.run(op, bytes, iters));
                    },
                );
            }
            g.finish();
        }
    }
    c.final_summary();
    if benchmarking {
        record(&backend, quick, &measured, &sizes);
    }
}

/// The algorithm the emulator runs for each collective of the suite, by criterion id.
fn algorithms(ranks: &[u32], sizes: &[usize]) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    for &n in ranks {
        for op in Op::ALL {
            for &bytes in sizes {
                let (s, r) = op.elements(bytes, n as usize);
                let (c, count) = match op {
                    Op::AllReduce => (hccl_emu::Collective::AllReduce, s),
                    Op::AllGather => (hccl_emu::Collective::AllGather, s),
                    Op::ReduceScatter => (hccl_emu::Collective::ReduceScatter, r),
                };
                let a = hccl_emu::algorithm(c, count as u64, hccl_emu::DType::F32, n);
                m.insert(format!("{}/{n}_ranks/{bytes}", op.group()), a.name().into());
            }
        }
    }
    m
}

/// Writes what ran next to criterion's results.
fn record(backend: &str, quick: bool, ranks: &[u32], sizes: &[usize]) {
    let dir = criterion_dir();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let json = serde_json::json!({
        "backend": backend,
        "mode": if quick { "quick" } else { "default" },
        "ranks": ranks,
        "sizes": sizes,
        "algorithms": algorithms(ranks, sizes),
        "host_cpus": cpus,
        "unix_time": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    });
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(RECORD);
    match std::fs::write(&path, format!("{json:#}\n")) {
        Ok(()) => println!("hccl bandwidth: recorded to {}", path.display()),
        Err(e) => eprintln!("hccl bandwidth: cannot write {}: {e}", path.display()),
    }
}

/// Criterion's output directory: `CRITERION_HOME`, else `<target dir>/criterion`.
fn criterion_dir() -> std::path::PathBuf {
    if let Some(d) = std::env::var_os("CRITERION_HOME") {
        return d.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            // The bench binary lives in <target>/release/deps.
            let exe = std::env::current_exe().expect("the bench's path");
            exe.ancestors()
                .nth(3)
                .expect("<target>/<profile>/deps")
                .to_path_buf()
        });
    target.join("criterion")
}

fn fail(what: &str, e: &dyn std::fmt::Display) -> ! {
    eprintln!("hccl bandwidth: {what} failed: {e}");
    std::process::exit(1);
}
