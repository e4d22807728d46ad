//! `reduce_task`: the CANN runtime's `built_in_task/0_reduce_task` sample in safe Rust.
//!
//! Two device buffers hold {1, 2, 3, 4}; the built-in reduce task (`aclrtReduceAsync`, through
//! [`Scope::reduce`](ascendcl::Scope::reduce)) adds the source into the destination on a
//! stream, element by element: {2, 4, 6, 8}. The sample then also takes the element-wise
//! maximum and minimum of two other buffers, and checks every result against the host's.

use ascendcl::{ReduceKind, Runtime};
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the reduce_task sample successfully.";
const FAIL: &str = "Run the reduce_task sample failed.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let host_input = [1.0f32, 2.0, 3.0, 4.0];
    let input = device.clone_htod(&host_input)?; // aclrtMalloc, aclrtMemcpy
    let mut output = device.clone_htod(&host_input)?;
    stream.scope(|s| s.reduce(&mut output, &input, ReduceKind::Sum))?; // aclrtReduceAsync
    let out = output.copy_to_vec()?; // aclrtMemcpy
    for (i, v) in out.iter().enumerate() {
        println!("Reduce SUM result[{i}] = {v:.6}");
    }
    let want: Vec<f32> = host_input.iter().map(|x| x + x).collect();
    if out != want {
        return Err(format!("SUM gave {out:?}, expected {want:?}").into());
    }

    // The other kinds of the header, against the host.
    let a = [5i32, -2, 7, 0];
    let b = [3i32, 4, 7, -9];
    for (kind, f) in [
        (ReduceKind::Max, i32::max as fn(i32, i32) -> i32),
        (ReduceKind::Min, i32::min),
    ] {
        let src = device.clone_htod(&b)?;
        let mut dst = device.clone_htod(&a)?;
        stream.scope(|s| s.reduce(&mut dst, &src, kind))?;
        let got = dst.copy_to_vec()?;
        let want: Vec<i32> = a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect();
        info!("Reduce {kind:?} of {a:?} and {b:?} = {got:?}");
        if got != want {
            return Err(format!("{kind:?} gave {got:?}, expected {want:?}").into());
        }
    }

    input.free()?; // aclrtFree
    output.free()?;
    stream.destroy()?; // aclrtDestroyStream
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    println!("Sample Run Successfully.");
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => {
            println!("[SUCCESS] {OK}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] {FAIL}");
            ExitCode::FAILURE
        }
    }
}
