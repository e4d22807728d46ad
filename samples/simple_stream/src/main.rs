//! `simple_stream`: the CANN runtime's `stream/0_simple_stream` sample in safe Rust.
//!
//! A task (a host function adding 1 to a counter, `aclrtLaunchHostFunc`) on one stream, then
//! one on a second stream, each waited for (`aclrtSynchronizeStream`); then 3000 tasks on one
//! stream, its status queried after the wait (`aclrtStreamQuery`). The counter must read 1, 2
//! and 3002.

use ascendcl::{Runtime, StreamStatus};
use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the simple_stream sample successfully.";
const FAIL: &str = "Run the simple_stream sample failed.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let count = Arc::new(AtomicU32::new(0));
    let add_one = |c: &Arc<AtomicU32>| {
        let c = Arc::clone(c);
        move || {
            c.fetch_add(1, Ordering::SeqCst);
        }
    };
    let check = |what: &str, want: u32| -> Result<(), Box<dyn Error>> {
        let got = count.load(Ordering::SeqCst);
        info!("{what}: result = {got}");
        if got == want {
            Ok(())
        } else {
            Err(format!("{what}: expected {want}, got {got}").into())
        }
    };

    let first = device.create_stream()?; // aclrtCreateStream
    first.launch_host_fn(add_one(&count))?;
    first.synchronize()?;
    check("Task on the first stream", 1)?;

    let second = device.create_stream()?;
    second.launch_host_fn(add_one(&count))?;
    second.synchronize()?;
    check("Task on the created stream", 2)?;

    info!("Begin 3000 task.");
    for _ in 0..3000 {
        second.launch_host_fn(add_one(&count))?;
    }
    second.synchronize()?; // aclrtSynchronizeStream
    let status = second.query()?; // aclrtStreamQuery
    info!(
        "Stream status after synchronize: {}",
        u32::from(status != StreamStatus::Complete)
    );
    if status != StreamStatus::Complete {
        return Err(format!("stream not complete after synchronize: {status:?}").into());
    }
    check("After the loop", 3002)?;

    second.destroy()?; // aclrtDestroyStream
    first.destroy()?;
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
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
