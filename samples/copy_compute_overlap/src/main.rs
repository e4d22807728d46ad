//! `copy_compute_overlap`: a double-buffered pipeline over one scope of three streams. The
//! input is cut into chunks; each chunk is copied to the device on the *load* stream, computed
//! by the AscendC kernel `scale_add` (`y = a * x + b`, in `kernels/scale_add.cpp`) on the
//! *compute* stream (`--rounds` times over, for as much computing per byte as wanted), and copied
//! back on the *store* stream. Two device slots per side let the
//! load of chunk `i + 1` and the store of chunk `i - 1` run while chunk `i` is computed; the
//! scope orders each slot's uses across the streams by itself (it makes a stream wait for an
//! event recorded after the conflicting use), so the loop reads as if there were one stream.
//!
//! The same pipeline runs on one stream too (the three roles on one stream: nothing overlaps),
//! in the same run, and both are timed with events (`aclrtEventElapsedTime`, best of
//! `--repeat`). The result is checked against the host's computation.
//!
//! ```text
//! copy_compute_overlap [--n N] [--chunks C] [--blocks B] [--rounds K] [--repeat R] [--device ID]
//! ```
//!
//! Prints each step (`[INFO]`), `overlap: serial X ms, overlapped Y ms, ratio Y/X`, the number
//! of waits the scope queued, then `[SUCCESS] ...`, or `[ERROR]` lines and `[FAILURE] ...` with
//! exit status 1.

use ascendcl::{Device, Event, HostBuffer, Runtime, ScopeStats, Stream};
use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/scale_add.rs"));
}

const USAGE: &str = "\
usage: copy_compute_overlap [--n N] [--chunks C] [--blocks B] [--rounds K] [--repeat R] [--device ID]

  --n N         floats in all (default 16777216)
  --chunks C    chunks the input is cut into (default 8)
  --blocks B    blocks of each kernel launch (default 2)
  --repeat R    timed runs of each pipeline, the best kept (default 3)
  --device ID   device to use (default 0)
  --help        this text";

/// The kernel's constants.
const A: f32 = 1.5;
const B: f32 = -0.25;

/// The command line.
#[derive(Debug, Clone, Copy)]
struct Options {
    n: usize,
    chunks: usize,
    blocks: u32,
    rounds: u32,
    repeat: u32,
    device: i32,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        n: 16 << 20,
        chunks: 8,
        blocks: 1,
        rounds: 1,
        repeat: 3,
        device: 0,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--n" => o.n = value.parse().map_err(|e| bad(&e))?,
            "--chunks" => o.chunks = value.parse().map_err(|e| bad(&e))?,
            "--blocks" => o.blocks = value.parse().map_err(|e| bad(&e))?,
            "--rounds" => o.rounds = value.parse().map_err(|e| bad(&e))?,
            "--repeat" => o.repeat = value.parse().map_err(|e| bad(&e))?,
            "--device" => o.device = value.parse().map_err(|e| bad(&e))?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if o.chunks == 0 || !o.n.is_multiple_of(o.chunks) || o.n / o.chunks > u32::MAX as usize {
        return Err(format!(
            "--n {} must be a multiple of --chunks {} (chunks of at most u32::MAX floats)",
            o.n, o.chunks
        ));
    }
    if o.repeat == 0 || o.rounds == 0 {
        return Err("--repeat and --rounds must be at least 1".to_string());
    }
    Ok(Some(o))
}

/// Device memory of the pipeline: two slots for inputs, two for results.
struct Slots {
    x: [ascendcl::DeviceBuffer<f32>; 2],
    y: [ascendcl::DeviceBuffer<f32>; 2],
}

impl Slots {
    fn new(device: &Device, chunk: usize) -> ascendcl::Result<Slots> {
        Ok(Slots {
            x: [device.alloc_zeros(chunk)?, device.alloc_zeros(chunk)?],
            y: [device.alloc_zeros(chunk)?, device.alloc_zeros(chunk)?],
        })
    }
}

/// Runs the pipeline once with the three roles on `[load, compute, store]` (one stream given
/// three times is one stream of the scope): its time between an event recorded on the load
/// stream before the first copy and one recorded on the store stream after the last, and what
/// the scope's tracking did.
fn pipeline(
    streams: [&Stream; 3],
    device: &Device,
    o: &Options,
    slots: &mut Slots,
    input: &HostBuffer<f32>,
    output: &mut HostBuffer<f32>,
) -> Result<(Duration, ScopeStats), Box<dyn Error>> {
    let chunk = o.n / o.chunks;
    let (start, end) = (device.create_event()?, device.create_event()?);
    let stats = ascendcl::scope(streams, |[load, compute, store]| {
        let [x0, x1] = &mut slots.x;
        let [y0, y1] = &mut slots.y;
        let xs = [load.claim(x0), load.claim(x1)];
        let ys = [load.claim(y0), load.claim(y1)];
        load.record_event(&start)?;
        for (i, (inp, out)) in input
            .chunks(chunk)
            .zip(output.chunks_mut(chunk))
            .enumerate()
        {
            let (x, y) = (xs[i % 2], ys[i % 2]);
            load.copy(x, inp)?;
            kernels::scale_add(compute, o.blocks, x, y, A, B, o.rounds, chunk as u32)?;
            store.copy(out, y)?;
        }
        store.record_event(&end)?;
        Ok(load.stats())
    })?;
    Ok((Event::elapsed(&start, &end)?, stats))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn run(o: Options) -> Result<Option<String>, Box<dyn Error>> {
    let rt = Runtime::new()?;
    println!("[INFO]  Backend: {}", rt.backend().description);
    println!(
        "[INFO]  Kernels: scale_add built in {} mode by ascendc-build",
        kernels::MODE.name()
    );
    let device = rt.device(o.device)?;
    let (load, compute, store) = (
        device.create_stream()?,
        device.create_stream()?,
        device.create_stream()?,
    );
    let chunk = o.n / o.chunks;
    println!(
        "[INFO]  {} floats in {} chunks of {} ({} KiB), {} block(s) per launch, {} round(s)",
        o.n,
        o.chunks,
        chunk,
        chunk * 4 / 1024,
        o.blocks,
        o.rounds
    );
    let mut input = HostBuffer::<f32>::zeroed(&device, o.n)?;
    for (i, v) in input.iter_mut().enumerate() {
        *v = (i % 4099) as f32 * 0.125 - 200.0;
    }
    let mut output = HostBuffer::<f32>::zeroed(&device, o.n)?;
    let mut slots = Slots::new(&device, chunk)?;
    // A first run of each warms the pools (events, kernel threads) and the pages.
    let serial = [&load, &load, &load];
    let overlapped = [&load, &compute, &store];
    pipeline(serial, &device, &o, &mut slots, &input, &mut output)?;
    pipeline(overlapped, &device, &o, &mut slots, &input, &mut output)?;
    let (mut best_serial, mut best_overlapped) = (Duration::MAX, Duration::MAX);
    let mut stats = ScopeStats::default();
    for _ in 0..o.repeat {
        let (t, _) = pipeline(serial, &device, &o, &mut slots, &input, &mut output)?;
        best_serial = best_serial.min(t);
        output.fill(0.0);
        let (t, s) = pipeline(overlapped, &device, &o, &mut slots, &input, &mut output)?;
        best_overlapped = best_overlapped.min(t);
        stats = s;
    }
    println!(
        "[INFO]  overlap: serial {:.1} ms, overlapped {:.1} ms, ratio Y/X {:.2}",
        ms(best_serial),
        ms(best_overlapped),
        ms(best_overlapped) / ms(best_serial)
    );
    println!(
        "[INFO]  waits the scope inserted: {} ({} events recorded, {} uses ordered already)",
        stats.waits, stats.records, stats.ordered
    );
    let expected = |x: f32| (1..o.rounds).fold(A * x + B, |y, _| A * y + B);
    let wrong = input
        .iter()
        .zip(output.iter())
        .position(|(&x, &y)| y != expected(x));
    if let Some(i) = wrong {
        println!(
            "[ERROR] element {i} is {} instead of {}",
            output[i],
            expected(input[i])
        );
        return Ok(None);
    }
    Ok(Some(format!(
        "y = {A} * x + {B} ({} round(s)) for all {} elements, through the overlapped pipeline",
        o.rounds, o.n
    )))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            println!("[ERROR] {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = run(o);
    // Every handle is gone: a release that failed is a failure too.
    let dropped = ascendcl::take_drop_errors();
    for e in &dropped {
        println!("[ERROR] a release failed: {e}");
    }
    match outcome {
        Ok(Some(done)) if dropped.is_empty() => {
            println!("[SUCCESS] {done}");
            ExitCode::SUCCESS
        }
        Ok(_) => {
            println!("[FAILURE] copy_compute_overlap did not compute every element cleanly");
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("[ERROR] {e}");
            let mut cause = e.source();
            while let Some(c) = cause {
                println!("[ERROR]   caused by: {c}");
                cause = c.source();
            }
            println!("[FAILURE] copy_compute_overlap did not run");
            ExitCode::FAILURE
        }
    }
}
