//! `event_timestamp`: the CANN runtime's `event/1_event_timestamp` sample in safe Rust.
//!
//! Two events recorded around a short task and around a long one (a host function sleeping
//! 100 ms); after waiting for the end event (`aclrtSynchronizeEvent`) the program reads the time
//! between them (`aclrtEventElapsedTime`) and checks that the long task took longer. The safe
//! API has no wrapper for the absolute timestamps (`aclrtEventGetTimestamp`) the reference also
//! prints, so only the elapsed times are shown.

use ascendcl::{Runtime, Stream};
use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the event_timestamp sample successfully.";
const FAIL: &str = "Run the event_timestamp sample failed.";

/// Records start and end events around `sleep` on `stream` and returns the time between them.
fn timed(stream: &Stream, sleep: Duration) -> Result<Duration, Box<dyn Error>> {
    let device = stream.device();
    let start = device.create_event()?; // aclrtCreateEvent
    let end = device.create_event()?;
    start.record(stream)?; // aclrtRecordEvent
    stream.launch_host_fn(move || std::thread::sleep(sleep))?; // aclrtLaunchHostFunc
    end.record(stream)?;
    end.synchronize()?; // aclrtSynchronizeEvent
    let done = end.is_complete()?; // aclrtQueryEventStatus
    info!(
        "Task of {} ms: answer {}",
        sleep.as_millis(),
        u8::from(done)
    );
    let took = end.elapsed_since(&start)?; // aclrtEventElapsedTime
    info!(
        "Elapsed between the events: {:.3} ms",
        took.as_secs_f64() * 1e3
    );
    end.destroy()?; // aclrtDestroyEvent
    start.destroy()?;
    Ok(took)
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let short = timed(&stream, Duration::ZERO)?;
    let long = timed(&stream, Duration::from_millis(100))?;
    if long <= short {
        return Err(format!(
            "the long task ({long:?}) did not take longer than the short one ({short:?})"
        )
        .into());
    }
    stream.destroy()?; // aclrtDestroyStream
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
    info!("Resources released");
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
