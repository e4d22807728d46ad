//! `event_timestamp`: the CANN runtime's `event/1_event_timestamp` sample in safe Rust.
//!
//! A device value starts at 0. Events are recorded around a short task (the value doubled, a
//! built-in reduction: `aclrtReduceAsync`) and around a long one (a host function that holds the
//! stream until the host lets it go 20 ms later, then +1), each on a stream in STOP failure
//! mode. After waiting for the stream the program reads the answer (0, then 1), the events'
//! timestamps (`aclrtEventGetTimestamp`) and the time between them (`aclrtEventElapsedTime`),
//! and checks that the timestamps are ordered, agree with the elapsed time, and that the long
//! task took at least the 20 ms it was held, longer than the short one.

use sample_common::report;

use ascendcl::{Claimed, DeviceBuffer, Event, FailureMode, ReduceKind, Runtime, Scope, Stream};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

const OK: &str = "Run the event_timestamp sample successfully.";
const FAIL: &str = "Run the event_timestamp sample failed.";

/// How long the host holds the long task.
const HOLD: Duration = Duration::from_millis(20);

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// Enqueues the task: the long one holds the stream until the returned sender is used.
fn task<'scope>(
    s: &Scope<'scope, '_>,
    num: Claimed<'scope, i32>,
    one: &'scope DeviceBuffer<i32>,
    long: bool,
) -> ascendcl::Result<Option<mpsc::Sender<()>>> {
    if !long {
        s.reduce(num, num, ReduceKind::Sum)?; // num *= 2
        return Ok(None);
    }
    let (tx, rx) = mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = rx.recv();
    })?;
    s.reduce(num, one, ReduceKind::Sum)?; // num += 1
    Ok(Some(tx))
}

/// Runs one task between two events; the answer and the time between the events.
fn timed(
    stream: &Stream,
    events: (&Event, &Event),
    num: &mut DeviceBuffer<i32>,
    one: &DeviceBuffer<i32>,
    long: bool,
) -> Res<(i32, Duration)> {
    let (start, end) = events;
    let name = if long { "long" } else { "short" };
    info!("Begin a {name} task.");
    start.record(stream)?; // aclrtRecordEvent
    stream.scope(|s| {
        let gate = task(s, s.claim(num), one, long)?;
        s.record_event(end)?;
        if let Some(gate) = gate {
            // Held for HOLD from when the stream has reached the start event.
            start.synchronize()?;
            std::thread::sleep(HOLD);
            let _ = gate.send(());
        }
        Ok(())
    })?; // aclrtSynchronizeStream
    let answer = num.copy_to_vec()?[0]; // aclrtMemcpy
    info!("After completing the {name} task, the answer is {answer}.");
    info!("After synchronize, check the time.");
    let (t0, t1) = (start.timestamp()?, end.timestamp()?); // aclrtEventGetTimestamp
    info!("Start event timestamp: {}.", t0.as_micros());
    info!("End event timestamp: {}.", t1.as_micros());
    let took = end.elapsed_since(start)?; // aclrtEventElapsedTime
    info!(
        "The {name} task consume time {:.6} ms.",
        took.as_secs_f64() * 1e3
    );
    if t1 < t0 {
        return Err(format!("the end event ({t1:?}) is stamped before the start ({t0:?})").into());
    }
    // Both answers come from the same clock: they agree to within the timestamps' precision.
    let between = (t1 - t0).as_secs_f64();
    if (between - took.as_secs_f64()).abs() > 50e-6 {
        return Err(format!("timestamps {between} s apart, elapsed time {took:?}").into());
    }
    Ok((answer, took))
}

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    let stream = ctx.create_stream()?; // aclrtCreateStream
    stream.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode
    let (start, end) = (device.create_event()?, device.create_event()?); // aclrtCreateEvent
    let mut num = device.clone_htod(&[0i32])?; // aclrtMalloc, aclrtMemcpy
    let one = device.clone_htod(&[1i32])?;
    let (short_answer, short) = timed(&stream, (&start, &end), &mut num, &one, false)?;
    let (long_answer, long) = timed(&stream, (&start, &end), &mut num, &one, true)?;
    if (short_answer, long_answer) != (0, 1) {
        return Err(
            format!("expected the answers 0 and 1, got {short_answer} and {long_answer}").into(),
        );
    }
    if long < HOLD || long <= short {
        return Err(format!(
            "the long task ({long:?}) did not take the {HOLD:?} it was held, or not longer than \
             the short one ({short:?})"
        )
        .into());
    }
    num.free()?; // aclrtFree
    one.free()?;
    start.destroy()?; // aclrtDestroyEvent
    end.destroy()?;
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
