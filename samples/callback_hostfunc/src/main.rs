//! `callback_hostfunc`: the CANN runtime's `callback/1_callback_hostfunc` sample in safe Rust.
//!
//! A device counter starts at 0. On a stream of a created context, in STOP failure mode, a task
//! adds 1 to it (the built-in element-wise sum, `aclrtReduceAsync`, standing in for the
//! reference's one-line kernel), then a Rust closure runs as a host function
//! (`aclrtLaunchHostFunc`): the runtime calls it on a thread of its own once the stream reaches
//! it, with no thread to create. After the wait (`aclrtSynchronizeStream`) the counter must read
//! 1, and the closure must have run once, on another thread than the main one.

use sample_common::report;

use ascendcl::{FailureMode, ReduceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::mpsc;

const OK: &str = "Run the callback_hostfunc sample successfully.";
const FAIL: &str = "Run the callback_hostfunc sample failed.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    let mut num = device.clone_htod(&[0i32])?; // aclrtMalloc, aclrtMemcpy
    let one = device.clone_htod(&[1i32])?;
    let stream = ctx.create_stream()?; // aclrtCreateStream
    stream.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode
    let (ran_on, seen) = mpsc::channel();
    stream.scope(|s| {
        s.reduce(&mut num, &one, ReduceKind::Sum)?; // EasyOP: num += 1
        s.launch_host_fn(move || {
            // aclrtLaunchHostFunc
            info!("Hostfunc callback!!!");
            let _ = ran_on.send(std::thread::current().id());
        })?;
        Ok(())
    })?; // aclrtSynchronizeStream
    let result = num.copy_to_vec()?[0]; // aclrtMemcpy, device to host
    info!("After assigning the task through the created stream, the current result is: {result}.");
    let threads: Vec<_> = seen.try_iter().collect();
    if result != 1 {
        return Err(format!("the counter reads {result}, expected 1").into());
    }
    if threads.len() != 1 || threads[0] == std::thread::current().id() {
        return Err(format!(
            "the host function ran {} time(s), on {threads:?}; expected once, on a runtime thread",
            threads.len()
        )
        .into());
    }
    num.free()?; // aclrtFree
    one.free()?;
    stream.destroy_force()?; // aclrtDestroyStreamForce
    ctx.destroy()?; // aclrtDestroyContext
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("Resource cleanup completed.");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
