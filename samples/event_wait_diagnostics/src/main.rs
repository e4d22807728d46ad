//! `event_wait_diagnostics`: the CANN runtime's `event/2_event_wait_diagnostics` sample in safe
//! Rust.
//!
//! The device's free events are counted before and after one is created
//! (`aclrtGetEventAvailNum`). A producer stream runs a long task on a device value (+1: a host
//! function that holds the stream until the host lets it go, then a built-in reduction) and
//! records the event (`aclrtRecordEvent`, its id by `aclrtGetEventId`); a consumer stream waits
//! for it with a 5-second timeout (`aclrtStreamWaitEventWithTimeout`, as a
//! [`Scope::hand_off`](ascendcl::Scope::hand_off)) and doubles the value. The event's wait
//! status (`aclrtQueryEventWaitStatus`) is NOT_READY while the consumer waits and COMPLETE once
//! both streams are synchronised; the value is then 2.

use sample_common::report;

use ascendcl::{EventWaitStatus, Handoff, ReduceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

const OK: &str = "Event wait diagnostics sample executed successfully.";
const FAIL: &str = "Event wait diagnostics sample failed.";

const WAIT_TIMEOUT: Duration = Duration::from_secs(5);
const EXPECTED: i32 = 2;

fn status(s: EventWaitStatus) -> &'static str {
    match s {
        EventWaitStatus::Complete => "COMPLETE",
        EventWaitStatus::NotReady => "NOT_READY",
        _ => "RESERVED",
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    let (producer, consumer) = (ctx.create_stream()?, ctx.create_stream()?);

    let before = device.available_events()?; // aclrtGetEventAvailNum
    if before == 0 {
        return Err("no event is available on device 0".into());
    }
    info!("Available Events before creation: {before}.");
    let event = device.create_event()?; // aclrtCreateEvent
    let after = device.available_events()?;
    info!("Available Events after creation: {after}.");
    if after + 1 != before {
        return Err(format!("creating an event left {after} of {before} available").into());
    }

    let mut value = device.clone_htod(&[0i32])?; // aclrtMalloc, aclrtMemcpy
    let one = device.clone_htod(&[1i32])?;
    let (open, hold) = mpsc::channel::<()>();
    let mut waiting = EventWaitStatus::Reserved;
    producer.scope(|p| {
        let v = p.claim(&mut value);
        info!("Producer starts a long task: value += 1.");
        p.launch_host_fn(move || {
            let _ = hold.recv();
        })?;
        p.reduce(v, &one, ReduceKind::Sum)?;
        // aclrtRecordEvent(producer), aclrtStreamWaitEventWithTimeout(consumer, 5 s)
        let by = Handoff::event(&event).timeout(WAIT_TIMEOUT);
        p.hand_off(&consumer, by, |c| {
            info!("Recorded ordinary Event ID: {}.", event.id()?); // aclrtGetEventId
            info!(
                "Consumer waits for the Event with a {}-second timeout.",
                WAIT_TIMEOUT.as_secs()
            );
            waiting = event.wait_status()?; // aclrtQueryEventWaitStatus
            info!(
                "Wait status before consumer synchronization: {}.",
                status(waiting)
            );
            info!("Consumer submits the dependent task: value *= 2.");
            c.reduce(v, v, ReduceKind::Sum)?;
            let _ = open.send(());
            c.stream().synchronize() // aclrtSynchronizeStream(consumer)
        })
    })?; // aclrtSynchronizeStream(producer): the scope's end
    if waiting != EventWaitStatus::NotReady {
        return Err(format!(
            "expected wait status NOT_READY before synchronization, got {}",
            status(waiting)
        )
        .into());
    }
    let done = event.wait_status()?;
    info!(
        "Wait status after consumer synchronization: {}.",
        status(done)
    );
    if done != EventWaitStatus::Complete {
        return Err(format!(
            "expected wait status COMPLETE after synchronization, got {}",
            status(done)
        )
        .into());
    }
    let out = value.copy_to_vec()?[0]; // aclrtMemcpy
    info!("Output value: {out} (expected: {EXPECTED}).");
    if out != EXPECTED {
        return Err(format!("unexpected output value: got {out}, expected {EXPECTED}").into());
    }

    event.destroy()?; // aclrtDestroyEvent
    consumer.destroy()?; // aclrtDestroyStream
    producer.destroy()?;
    value.free()?; // aclrtFree
    one.free()?;
    ctx.destroy()?; // aclrtDestroyContext
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("[SUCCESS] Event wait diagnostics sample completed successfully.");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
