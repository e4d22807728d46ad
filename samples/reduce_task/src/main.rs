//! `reduce_task`: the CANN runtime's `built_in_task/0_reduce_task` sample in safe Rust.
//!
//! Two device buffers hold {1, 2, 3, 4}; the built-in reduce task (`aclrtReduceAsync`, through
//! [`Scope::reduce`](ascendcl::Scope::reduce)) adds the source into the destination on a
//! stream, element by element: {2, 4, 6, 8}, checked against the host's sum. (The other kinds,
//! `ReduceKind::Max`, `Min`, `Equal`, work the same way; the crate's tests check each.)

use sample_common::report;

use ascendcl::{ReduceKind, Runtime};
use std::error::Error;
use std::process::ExitCode;

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

    input.free()?; // aclrtFree
    output.free()?;
    stream.destroy()?; // aclrtDestroyStream
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    println!("Sample Run Successfully.");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
