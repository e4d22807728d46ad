//! `context_query`: the CANN runtime's `context/0_context_query` sample in safe Rust.
//!
//! Creates a context on device 0 (`aclrtCreateContext`), makes it current on this thread
//! (`aclrtSetCurrentContext`, for the duration of `Context::bind`), reads the current context
//! back (`aclrtGetCurrentContext`) and checks it is the one made current, asks for the
//! context's default stream (`aclrtCtxGetCurrentDefaultStream`) and the cube-core and
//! vector-core limits that apply to the thread (`aclrtGetResInCurrentThread`), checks those
//! against the device's limits (`aclrtGetDeviceResLimit`: nothing lowered them, so they agree),
//! and destroys the context (`aclrtDestroyContext`).

use sample_common::report;

use ascendcl::{ResourceKind, Runtime, current_context};
use report::info;
use std::error::Error;
use std::process::ExitCode;

/// What the program prints when every query answered (the reference's last line).
const DONE: &str = "[SUCCESS] Context query sample completed successfully";
/// The verdict run.sh prints after finding `DONE`.
const OK: &str = "Context query sample executed successfully.";
const FAIL: &str = "Context query sample did not print the expected success marker.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    ctx.bind(|current| -> Result<(), Box<dyn Error>> {
        // aclrtSetCurrentContext (bind), aclrtGetCurrentContext
        if current_context()? != ctx.as_raw() || current.as_raw() != ctx.as_raw() {
            return Err("Current context is different from the created context.".into());
        }
        info!("Get current context successfully");

        let stream = current.default_stream()?; // aclrtCtxGetCurrentDefaultStream
        if stream.is_null() {
            return Err("the context's default stream is NULL".into());
        }
        info!("Get current default stream successfully, stream={stream:p}");

        for (kind, name) in [
            (ResourceKind::CubeCore, "cube"),
            (ResourceKind::VectorCore, "vector"),
        ] {
            let limit = ctx.device().thread_res_limit(kind)?; // aclrtGetResInCurrentThread
            info!("Get current thread {name} core limit: {limit}");
            let expected = ctx.device().res_limit(kind)?; // aclrtGetDeviceResLimit
            if limit != expected {
                return Err(format!(
                    "the thread's {name} core limit is {limit}, the device's {expected}"
                )
                .into());
            }
        }
        Ok(())
    })??;
    ctx.destroy()?; // aclrtDestroyContext
    info!("{DONE}");
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
