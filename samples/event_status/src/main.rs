//! `event_status`: the CANN runtime's `event/0_event_status` sample in safe Rust.
//!
//! A new event is not complete (`aclrtQueryEventStatus` answers 0: nothing was recorded). A
//! long task on a device value (+1: a host function that holds the stream until the host lets it
//! go, then a built-in reduction, `aclrtReduceAsync`) runs on a stream in STOP failure mode, and
//! the event is recorded behind it (`aclrtRecordEvent`): while the task is held the event is not
//! complete; once the host lets the task go and waits for the event (`aclrtSynchronizeEvent`) it
//! is, and the value reads 1.

use sample_common::report;

use ascendcl::{FailureMode, ReduceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::mpsc;

const OK: &str = "Run the event_status sample successfully.";
const FAIL: &str = "Run the event_status sample failed.";

/// The legend the reference prints: 1 for complete, 0 for not yet.
fn status(done: bool) -> u8 {
    u8::from(done)
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    let stream = ctx.create_stream()?; // aclrtCreateStream
    stream.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode
    let event = device.create_event()?; // aclrtCreateEvent
    let created = event.is_complete()?; // aclrtQueryEventStatus
    info!(
        "After create event, current event status is {}.",
        status(created)
    );
    let mut num = device.clone_htod(&[0i32])?; // aclrtMalloc, aclrtMemcpy
    let one = device.clone_htod(&[1i32])?;
    info!("Applied resource successfully, begin assigning task.");
    let (before, after) = stream.scope(|s| {
        info!("Begin a long task.");
        let (open, hold) = mpsc::channel::<()>();
        s.launch_host_fn(move || {
            let _ = hold.recv();
        })?;
        s.reduce(&mut num, &one, ReduceKind::Sum)?; // num += 1
        s.record_event(&event)?; // aclrtRecordEvent
        let before = event.is_complete()?;
        info!("0 is incompleted, 1 is completed.");
        info!(
            "After record but before synchronize, current event status is {}.",
            status(before)
        );
        let _ = open.send(());
        event.synchronize()?; // aclrtSynchronizeEvent
        let after = event.is_complete()?;
        info!(
            "After synchronize, current event status is {}.",
            status(after)
        );
        Ok((before, after))
    })?;
    let answer = num.copy_to_vec()?[0]; // aclrtMemcpy
    info!("The answer is {answer}.");
    if created || before || !after || answer != 1 {
        return Err(format!(
            "expected the statuses 0, 0, 1 and the answer 1, got {}, {}, {} and {answer}",
            status(created),
            status(before),
            status(after)
        )
        .into());
    }
    num.free()?; // aclrtFree
    one.free()?;
    event.destroy()?; // aclrtDestroyEvent
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
