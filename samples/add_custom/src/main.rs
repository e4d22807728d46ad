//! `add_custom`: the tiled AscendC vector add. `z = x + y` over 8 × 2048 halves by the
//! `KernelAdd` class of `kernels/add_custom.cpp` (TPipe, double-buffered VECIN/VECOUT queues,
//! CopyIn / Compute / CopyOut over 16 tiles per block, 8 blocks), built by `ascendc-build` and
//! launched through its typed launcher; the result is checked on the host, element by element,
//! against the same sum rounded to half.
//!
//! ```text
//! add_custom [--device ID]
//! ```
//!
//! Prints each step (`[INFO]`), then `[SUCCESS] ...`, or `[ERROR]` lines and `[FAILURE] ...`
//! with exit status 1.

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use half::f16;
use std::error::Error;
use std::process::ExitCode;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/add_custom.rs"));
}

/// The kernel's shape (constants of kernels/add_custom.cpp).
const TOTAL_LENGTH: usize = 8 * 2048;
const USE_CORE_NUM: u32 = 8;

const USAGE: &str = "\
usage: add_custom [--device ID]

  --device ID   device to use (default 0)
  --help        this text";

fn run(device_id: i32) -> Result<Option<String>, Box<dyn Error>> {
    let rt = Runtime::new()?;
    println!("[INFO]  Backend: {}", rt.backend().description);
    println!(
        "[INFO]  Kernels: add_custom built in {} mode by ascendc-build",
        kernels::MODE.name()
    );
    let device = rt.device(device_id)?;
    let stream = device.create_stream()?;
    // Inputs: halves in [-64, 64) on a coarse grid, so that many sums round.
    let x: Vec<f16> = (0..TOTAL_LENGTH)
        .map(|i| f16::from_f32(((i * 37) % 1024) as f32 / 8.0 - 64.0 + 0.001 * (i % 7) as f32))
        .collect();
    let y: Vec<f16> = (0..TOTAL_LENGTH)
        .map(|i| f16::from_f32(((i * 11) % 509) as f32 / 16.0 - 16.0))
        .collect();
    let bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<u16>>();
    let alloc = || DeviceBuffer::<u16>::zeroed(&device, TOTAL_LENGTH, MallocPolicy::HugeFirst);
    let (mut dev_x, mut dev_y, mut dev_z) = (alloc()?, alloc()?, alloc()?);
    println!(
        "[INFO]  Copy x and y to the device ({TOTAL_LENGTH} halves, {} bytes each)",
        TOTAL_LENGTH * 2
    );
    dev_x.copy_from_host(&bits(&x))?;
    dev_y.copy_from_host(&bits(&y))?;
    println!(
        "[INFO]  Launch add_custom on {USE_CORE_NUM} blocks: 16 tiles of 128 per block, two \
         buffers per queue"
    );
    // The kernel's parameters are GM_ADDR (non-const): every buffer is lent exclusively.
    stream.scope(|s| {
        kernels::add_custom(s, USE_CORE_NUM, &mut dev_x, &mut dev_y, &mut dev_z)?;
        Ok(())
    })?;
    println!("[INFO]  Copy z back and check it on the host");
    let mut z = vec![0u16; TOTAL_LENGTH];
    dev_z.copy_to_host(&mut z)?;
    let expected: Vec<u16> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| f16::from_f32(a.to_f32() + b.to_f32()).to_bits())
        .collect();
    let wrong: Vec<usize> = (0..TOTAL_LENGTH).filter(|&i| z[i] != expected[i]).collect();
    if let Some(&i) = wrong.first() {
        println!(
            "[FAILURE] {} of {TOTAL_LENGTH} elements differ; first at {i}: {} + {} gave {}, not {}",
            wrong.len(),
            x[i],
            y[i],
            f16::from_bits(z[i]),
            f16::from_bits(expected[i])
        );
        return Ok(None);
    }
    let last = TOTAL_LENGTH - 1;
    Ok(Some(format!(
        "[SUCCESS] z = x + y for all {TOTAL_LENGTH} elements; z[{last}] = {} + {} = {}",
        x[last],
        y[last],
        f16::from_bits(z[last])
    )))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let device = match args.as_slice() {
        [] => 0,
        [flag] if flag == "--help" || flag == "-h" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        [flag, id] if flag == "--device" => match id.parse() {
            Ok(d) => d,
            Err(e) => {
                println!("[ERROR] --device {id}: {e}\n{USAGE}");
                return ExitCode::FAILURE;
            }
        },
        _ => {
            println!("[ERROR] unexpected arguments {args:?}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = run(device);
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] add_custom: a release failed");
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
            println!("[FAILURE] add_custom did not run");
            ExitCode::FAILURE
        }
    }
}
