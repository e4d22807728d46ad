//! `kernel_binary`: the CANN runtime's kernel-loading sample (`kernel/0_launch_kernel`) in Rust.
//! The Add operator of kernels/add.cpp is loaded from its kernel binary file
//! (`aclrtBinaryLoadFromFile`; by default the host-mode binary `ascendc-build` linked, which the
//! emulator runs), taken by name (`aclrtBinaryGetFunction`), given its arguments in an argument
//! list (`aclrtKernelArgs*`) and launched (`aclrtLaunchKernelWithConfig`); `z = x + y` is then
//! checked against a host computation.
//!
//! ```text
//! kernel_binary [--mode simple|placeholder] [--n N] [--blocks B] [--binary PATH] [--device ID]
//! ```
//!
//! In `simple` mode `x` and `y` are device buffers the program fills first; in `placeholder`
//! mode they are placeholder data that the launch copies to the device. Prints the steps, the
//! error ratio, then `[SUCCESS] result correct` or `[FAILURE] ...` (exit status 1).

use sample_common::report;

use ascendcl::{KernelArgs, LaunchConfig, Module, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const USAGE: &str = "\
usage: kernel_binary [--mode simple|placeholder] [--n N] [--blocks B] [--binary PATH] [--device ID]

  --mode M       how x and y reach the kernel: device buffers (simple, the default) or
                 placeholder data copied by the launch (placeholder)
  --n N          elements (default 512)
  --blocks B     blocks of the launch (default 4)
  --binary PATH  the kernel binary to load (default: the one this sample's build made)
  --device ID    device to use (default 0)
  --help         this text";

/// The largest error ratio accepted, as the reference sample's check.
const TOLERANCE: f64 = 0.001;

#[derive(Debug, Clone)]
struct Options {
    placeholder: bool,
    n: u32,
    blocks: u32,
    binary: String,
    device: i32,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        placeholder: false,
        n: 512,
        blocks: 4,
        binary: env!("KERNEL_BINARY_DEFAULT").to_string(),
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
            "--mode" => {
                o.placeholder = match value.as_str() {
                    "simple" => false,
                    "placeholder" => true,
                    other => return Err(format!("--mode {other}: expected simple or placeholder")),
                }
            }
            "--n" => o.n = value.parse().map_err(|e| bad(&e))?,
            "--blocks" => o.blocks = value.parse().map_err(|e| bad(&e))?,
            "--binary" => o.binary = value.clone(),
            "--device" => o.device = value.parse().map_err(|e| bad(&e))?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if o.binary.is_empty() {
        return Err(format!(
            "the kernels were built in {} mode, which makes no kernel binary file: give the \
             operator binary with --binary",
            env!("KERNEL_BINARY_MODE")
        ));
    }
    Ok(Some(o))
}

/// Deterministic inputs.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 100) as f32 * 0.25).collect();
    let y = (0..n).map(|i| ((i * 13) % 17) as f32 - 8.5).collect();
    (x, y)
}

/// The share of elements farther from the golden values than the tolerance allows.
fn error_ratio(out: &[f32], golden: &[f32]) -> f64 {
    let bad = out
        .iter()
        .zip(golden)
        .filter(|(o, g)| f64::from((*o - *g).abs()) > TOLERANCE * f64::from(g.abs()).max(1.0))
        .count();
    bad as f64 / golden.len().max(1) as f64
}

fn run(o: &Options) -> Result<f64, Box<dyn Error>> {
    let mode = if o.placeholder {
        "placeholder"
    } else {
        "simple"
    };
    info!("Kernel launch sample runs in {mode} mode.");
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(o.device)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let n = o.n as usize;
    let (x, y) = inputs(n);
    let golden: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();

    let module = Module::load(&device, &o.binary)?; // aclrtBinaryLoadFromFile
    info!("Loaded the kernel binary {}", o.binary);
    let add = module.function("add")?; // aclrtBinaryGetFunction
    let dev_x = device.clone_htod(&x)?; // aclrtMalloc, aclrtMemcpy
    let dev_y = device.clone_htod(&y)?;
    let mut dev_z = device.alloc_zeros::<f32>(n)?;
    stream.scope(|s| {
        // Room for the parameters and, in placeholder mode, both inputs.
        let mut args = KernelArgs::with_capacity(&add, 2 * n * size_of::<f32>() + 64)?;
        if o.placeholder {
            args.placeholder(&x)?; // aclrtKernelArgsAppendPlaceHolder
            args.placeholder(&y)?;
        } else {
            args.arg(&dev_x)?; // aclrtKernelArgsAppend
            args.arg(&dev_y)?;
        }
        args.arg(&mut dev_z)?;
        args.arg(o.n)?;
        info!(
            "Launch add on {} block(s) with {} parameters",
            o.blocks,
            args.params().len()
        );
        // SAFETY: add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n) reads n floats of x and y
        // and writes n floats of z: the list holds exactly these, each n floats long.
        unsafe { s.launch(&mut args, &LaunchConfig::blocks(o.blocks)) }
    })?; // aclrtLaunchKernelWithConfig, aclrtSynchronizeStream
    let z = dev_z.copy_to_vec()?; // aclrtMemcpy
    drop(add);
    module.unload()?; // aclrtBinaryUnLoad
    stream.destroy_force()?; // aclrtDestroyStreamForce
    dev_z.free()?;
    info!("Run the kernel_binary sample successfully.");
    Ok(error_ratio(&z, &golden))
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
            println!("[ERROR]  {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = run(&o);
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] kernel_binary: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(ratio) => {
            println!("error ratio: {ratio:.4}, tolerance: {TOLERANCE:.4}");
            if ratio <= TOLERANCE {
                println!("[SUCCESS] result correct");
                ExitCode::SUCCESS
            } else {
                println!("[FAILURE] result error");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] the kernel_binary sample did not run");
            ExitCode::FAILURE
        }
    }
}
