//! `callback_hostfunc`: the CANN runtime's `callback/1_callback_hostfunc` sample in safe Rust.
//!
//! An asynchronous copy from the device to the host, then a host function
//! (`aclrtLaunchHostFunc`) that the stream runs on a runtime thread once the copy is done; the
//! program checks that it ran on another thread and that the copied data sums as on the host.

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use std::error::Error;
use std::process::ExitCode;
use std::sync::mpsc;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the callback_hostfunc sample successfully.";
const FAIL: &str = "Run the callback_hostfunc sample failed.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let input: Vec<i32> = (0..16).collect();
    let dev = DeviceBuffer::from_slice(&device, &input, MallocPolicy::HugeFirst)?;
    let mut back = vec![0i32; input.len()];
    let (tx, rx) = mpsc::channel();
    stream.scope(|s| {
        s.copy(&mut back, &dev)?; // aclrtMemcpyAsync, device to host
        s.launch_host_fn(move || {
            println!("Hostfunc callback!!!");
            let _ = tx.send(std::thread::current().id());
        })?;
        Ok(())
    })?; // aclrtSynchronizeStream
    let thread = rx.recv()?;
    info!(
        "The host function ran on {thread:?} (main is {:?})",
        std::thread::current().id()
    );
    let result: i32 = back.iter().sum();
    info!("result: {result}");
    let expected: i32 = input.iter().sum();
    if back != input || result != expected {
        return Err(format!("expected {expected}, got {result}").into());
    }
    stream.destroy()?; // aclrtDestroyStream
    dev.free()?; // aclrtFree
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
