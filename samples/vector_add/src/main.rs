//! `vector_add`: the quickstart custom kernel. `dst = a + alpha * b` over `n` floats, computed
//! by the AscendC kernel in `kernels/vector_add.cpp` (built by `ascendc-build`: for the host and
//! the emulator without CANN, for the NPU with it) and launched through its generated, typed
//! launcher; the result is checked on the host.
//!
//! ```text
//! vector_add [--n N] [--alpha A] [--blocks B] [--device ID]
//! ```
//!
//! Prints each step (`[INFO]`), then `[SUCCESS] ...`, or `[ERROR]` lines and `[FAILURE] ...`
//! with exit status 1.

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use std::error::Error;
use std::process::ExitCode;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/vector_add.rs"));
}

const USAGE: &str = "\
usage: vector_add [--n N] [--alpha A] [--blocks B] [--device ID]

  --n N         elements (default 4096)
  --alpha A     the scale of b (default 2.5)
  --blocks B    blocks of the launch (default 8)
  --device ID   device to use (default 0)
  --help        this text";

/// The command line.
#[derive(Debug, Clone, Copy)]
struct Options {
    n: u32,
    alpha: f32,
    blocks: u32,
    device: i32,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        n: 4096,
        alpha: 2.5,
        blocks: 8,
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
            "--alpha" => o.alpha = value.parse().map_err(|e| bad(&e))?,
            "--blocks" => o.blocks = value.parse().map_err(|e| bad(&e))?,
            "--device" => o.device = value.parse().map_err(|e| bad(&e))?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(Some(o))
}

/// Deterministic inputs.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| (i % 1000) as f32 * 0.5 - 100.0).collect();
    let b = (0..n).map(|i| ((i * 7) % 31) as f32 - 15.25).collect();
    (a, b)
}

fn run(o: Options) -> Result<Option<String>, Box<dyn Error>> {
    let rt = Runtime::new()?;
    let backend = rt.backend();
    println!("[INFO]  Backend: {}", backend.description);
    println!(
        "[INFO]  Kernels: vector_add built in {} mode by ascendc-build",
        kernels::MODE.name()
    );
    let device = rt.device(o.device)?;
    let stream = device.create_stream()?;
    let n = o.n as usize;
    println!(
        "[INFO]  n = {}, alpha = {}, blocks = {}",
        o.n, o.alpha, o.blocks
    );
    let (a, b) = inputs(n);
    let mut dev_a = DeviceBuffer::<f32>::zeroed(&device, n, MallocPolicy::HugeFirst)?;
    let mut dev_b = DeviceBuffer::<f32>::zeroed(&device, n, MallocPolicy::HugeFirst)?;
    let mut dev_dst = DeviceBuffer::<f32>::zeroed(&device, n, MallocPolicy::HugeFirst)?;
    println!("[INFO]  Copy a and b to the device ({} bytes each)", n * 4);
    dev_a.copy_from_host(&a)?;
    dev_b.copy_from_host(&b)?;
    println!(
        "[INFO]  Launch vector_add on {} block(s): dst = a + alpha * b",
        o.blocks
    );
    stream.scope(|s| {
        kernels::vector_add(s, o.blocks, &dev_a, &dev_b, &mut dev_dst, o.alpha, o.n)?;
        Ok(())
    })?;
    println!("[INFO]  Copy dst back and check it on the host");
    let mut dst = vec![0f32; n];
    dev_dst.copy_to_host(&mut dst)?;
    let wrong: Vec<usize> = (0..n)
        .filter(|&i| dst[i] != a[i] + o.alpha * b[i])
        .collect();
    if let Some(&i) = wrong.first() {
        println!(
            "[FAILURE] {} of {n} elements differ; first at {i}: {} instead of {}",
            wrong.len(),
            dst[i],
            a[i] + o.alpha * b[i]
        );
        return Ok(None);
    }
    let show = match dst.last() {
        Some(v) => format!("; dst[{}] = {v}", n - 1),
        None => String::new(),
    };
    Ok(Some(format!(
        "[SUCCESS] dst = a + alpha * b for all {n} elements{show}"
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
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] vector_add: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(Some(done)) => {
            println!("{done}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::FAILURE,
        Err(e) => {
            println!("[ERROR] {e}");
            let mut cause = e.source();
            while let Some(c) = cause {
                println!("[ERROR]   caused by: {c}");
                cause = c.source();
            }
            println!("[FAILURE] vector_add did not run");
            ExitCode::FAILURE
        }
    }
}
