//! `error_handling`: how the runtime's failures reach a Rust program.
//!
//! Three mistakes, each caught as an `ascendcl::Error`: a device id that does not exist
//! (`aclrtSetDevice` refuses with a runtime code), a copy whose lengths differ (refused by the
//! safe API before any C call, so it carries no runtime code), and a request to make a device its
//! own peer (refused by the safe API as well). The program then shows that the runtime still works: a copy succeeds.

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Every error was reported as expected and the runtime kept working.";
const FAIL: &str = "An error was not reported as expected.";

/// Prints what an error carries.
fn show(what: &str, e: &ascendcl::Error) {
    info!("{what}: {e}");
    info!(
        "  function {:?}, code {:?} ({})",
        e.api(),
        e.code(),
        e.code_name().unwrap_or("no runtime code")
    );
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let count = rt.device_count()?;

    let Err(e) = rt.device(count as i32 + 7) else {
        return Err("a device id past the last one was accepted".into());
    };
    show("Open a device that does not exist", &e);
    if e.api() != Some("aclrtSetDevice") || e.code().is_none() {
        return Err("expected a runtime code from aclrtSetDevice".into());
    }

    let device = rt.device(0)?;
    let mut dev = DeviceBuffer::<i32>::zeroed(&device, 4, MallocPolicy::HugeFirst)?;
    let Err(e) = dev.copy_from_host(&[1, 2, 3, 4, 5, 6, 7, 8]) else {
        return Err("a copy of 8 elements into 4 was accepted".into());
    };
    show("Copy 8 elements into 4", &e);
    if e.code().is_some() {
        return Err("a length mismatch should be refused before the runtime is called".into());
    }

    let Err(e) = device.enable_peer_access(&device) else {
        return Err("a device was accepted as its own peer".into());
    };
    show("Enable peer access from a device to itself", &e);

    dev.copy_from_host(&[1, 2, 3, 4])?;
    let back = dev.to_vec()?;
    info!("After the errors, a copy round trip gives {back:?}");
    if back != [1, 2, 3, 4] {
        return Err("the runtime did not recover".into());
    }
    dev.free()?;
    device.reset()?;
    rt.finalize()?;
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
