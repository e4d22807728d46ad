//! `h2d_async`: the CANN runtime's `2_h2d_async_memory_copy` sample in safe Rust.
//!
//! Pinned host memory (`aclrtMallocHost`) holding a value, device memory (`aclrtMalloc`), an
//! asynchronous host-to-device copy (`aclrtMemcpyAsync`) waited for by `Stream::scope`
//! (`aclrtSynchronizeStream`), then the AscendC kernel `DeviceRead` prints what the device holds.
//! `cargo xtask sample h2d_async` compares the `Source data:` and `Destination data:` lines;
//! the program also checks every element itself.

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};
use std::error::Error;
use std::process::ExitCode;

/// `INFO_LOG` of the reference sample.
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}

/// Bytes per buffer, as in the reference (1 MiB), in `i32` elements.
const LEN: usize = (1 << 20) / 4;
/// The value the reference writes.
const VALUE: i32 = 123;

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let mut host = HostBuffer::<i32>::zeroed(&device, LEN)?; // aclrtMallocHost
    info!(
        "Allocate memory on the host memory {:p} successfully",
        host.as_ptr()
    );
    let mut dev = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::HugeFirst)?; // aclrtMalloc
    info!(
        "Allocate memory on the device memory {:p} successfully",
        dev.as_ptr()
    );

    host[0] = VALUE;
    info!(
        "Write the data {VALUE} to the virtual memory {:p}",
        host.as_ptr()
    );
    info!("Source data: {}", host[0]);
    // aclrtMemcpyAsync, then aclrtSynchronizeStream when the scope ends.
    stream.scope(|s| s.copy(&mut dev, &host))?;
    info!(
        "Copy memory from memory {:p} to memory {:p} asynchronously",
        host.as_ptr(),
        dev.as_ptr()
    );
    ascendc_kernels::read_value(&stream, &dev, 1)?; // DeviceRead<<<1, nullptr, stream>>>
    if dev.to_vec()?[..] != host[..] {
        return Err("the device memory differs from the host source".into());
    }

    stream.destroy()?; // aclrtDestroyStream
    dev.free()?; // aclrtFree
    host.free()?; // aclrtFreeHost
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    let outcome = run();
    if let Err(e) = &outcome {
        println!("[ERROR]  {e}");
    }
    // The handles are gone: a release that failed fails the sample too.
    match (outcome, sample_common::report::releases_ok()) {
        (Ok(()), true) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}
