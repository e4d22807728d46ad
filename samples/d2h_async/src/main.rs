//! `d2h_async`: the CANN runtime's `4_d2h_async_memory_copy` sample in safe Rust.
//!
//! The AscendC kernel `DeviceWrite` stores a value in device memory (`aclrtMalloc`) and
//! prints it as `Source data:`; an asynchronous device-to-host copy (`aclrtMemcpyAsync`) waited for by `Stream::scope` brings it into pinned host memory (`aclrtMallocHost`),
//! where the program prints it as `Destination data:`. `cargo xtask sample d2h_async` compares the
//! two lines; the program also checks every element itself.

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
    let mut dev = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::HugeFirst)?; // aclrtMalloc
    info!(
        "Allocate memory on the device memory {:p} successfully",
        dev.as_ptr()
    );
    let mut host = HostBuffer::<i32>::zeroed(&device, LEN)?; // aclrtMallocHost
    info!(
        "Allocate memory on the host memory {:p} successfully",
        host.as_ptr()
    );

    info!(
        "Write the data {VALUE} to the device memory {:p}",
        dev.as_ptr()
    );
    // DeviceWrite<<<1, nullptr, stream>>>: prints "Source data: 123".
    ascendc_kernels::write_value(&stream, &mut dev, VALUE, 1)?;
    stream.scope(|s| s.copy(&mut *host, &dev))?; // aclrtMemcpyAsync + aclrtSynchronizeStream
    info!(
        "Copy memory from memory {:p} to memory {:p} asynchronously",
        dev.as_ptr(),
        host.as_ptr()
    );
    info!("Destination data: {}", host[0]);
    let mut expected = vec![0; LEN];
    expected[0] = VALUE;
    if host[..] != expected[..] {
        return Err("the host copy differs from what the kernel wrote".into());
    }

    stream.destroy()?; // aclrtDestroyStream
    host.free()?; // aclrtFreeHost
    dev.free()?; // aclrtFree
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
