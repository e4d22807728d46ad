//! `event_status`: the CANN runtime's `event/0_event_status` sample in safe Rust.
//!
//! An event is complete right after it is created (`aclrtQueryEventStatus`); recorded behind
//! a long task (`aclrtRecordEvent` after a host function that sleeps, `aclrtLaunchHostFunc`) it
//! is not complete until the task is done; after `aclrtSynchronizeEvent` it is complete.

use ascendcl::Runtime;
use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the event_status sample successfully.";
const FAIL: &str = "Run the event_status sample failed.";

/// The legend the reference prints: 1 for complete, 0 for not yet.
fn status(done: bool) -> u8 {
    u8::from(done)
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let event = device.create_event()?; // aclrtCreateEvent
    let created = event.is_complete()?; // aclrtQueryEventStatus
    info!("Event status after create: {}", status(created));
    info!("Launch a long task (a host function sleeping 300 ms)");
    stream.launch_host_fn(|| std::thread::sleep(Duration::from_millis(300)))?;
    event.record(&stream)?; // aclrtRecordEvent
    info!("0 is incompleted, 1 is completed");
    let before = event.is_complete()?;
    info!(
        "Event status after record, before synchronize: {}",
        status(before)
    );
    event.synchronize()?; // aclrtSynchronizeEvent
    let after = event.is_complete()?;
    info!("Event status after synchronize: {}", status(after));
    info!("The answer is {}", status(after));
    if before || !after {
        return Err(format!(
            "expected the event incomplete behind the task and complete after it, got {} then {}",
            status(before),
            status(after)
        )
        .into());
    }
    event.destroy()?; // aclrtDestroyEvent
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
