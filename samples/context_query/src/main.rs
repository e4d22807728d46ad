//! `context_query`: the CANN runtime's `context/0_context_query` sample in safe Rust, in part.
//!
//! Creates a context on device 0 (`aclrtCreateContext`), makes it current on this thread
//! (`aclrtSetCurrentContext`), reads the current context back (`aclrtGetCurrentContext`) and
//! checks it is the one made current, then runs a copy on a stream of that context. The safe API
//! wraps neither the context's default stream (`aclrtCtxGetCurrentDefaultStream`) nor the core
//! limits (`aclrtGetResInCurrentThread`) that the reference also prints.

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime, current_context};
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

const OK: &str = "Run the context_query sample successfully.";
const FAIL: &str = "Run the context_query sample failed.";

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    info!(
        "Context {:?} created on device {}",
        ctx.as_raw(),
        ctx.device_id()
    );
    let same = ctx.bind(|cur| -> Result<bool, ascendcl::Error> {
        let got = current_context()?; // aclrtGetCurrentContext
        info!("Current context got: {got:?}");
        Ok(got == ctx.as_raw() && cur.as_raw() == ctx.as_raw())
    })??;
    if !same {
        return Err("the current context is not the one made current".into());
    }
    let stream = ctx.create_stream()?; // aclrtCreateStream in the context
    let dev = DeviceBuffer::from_slice(&device, &[5i32; 64], MallocPolicy::HugeFirst)?;
    let mut back = vec![0i32; 64];
    stream.scope(|s| s.copy(&mut back, &dev))?;
    info!(
        "A copy on the context's stream gave {} x {}",
        back.len(),
        back[0]
    );
    if back != [5; 64] {
        return Err("the copy on the context's stream is wrong".into());
    }
    stream.destroy()?; // aclrtDestroyStream
    dev.free()?;
    ctx.destroy()?; // aclrtDestroyContext
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
