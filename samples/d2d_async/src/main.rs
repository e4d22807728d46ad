//! `d2d_async`: the CANN runtime's `6_d2d_async_memory_copy` sample in safe Rust.
//!
//! The AscendC kernel `DeviceWrite` stores a value in one device buffer (`aclrtMalloc`) and
//! prints it as `Source data:`; an asynchronous device-to-device copy (`aclrtMemcpyAsync`) waited for by `Stream::scope` moves it into a second device buffer, and the kernel
//! `DeviceRead` prints that one as `Destination data:`. `cargo xtask sample d2d_async` compares the
//! two lines; the program also compares both buffers element by element on the host.

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
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
    let mut src = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::HugeFirst)?; // aclrtMalloc
    info!(
        "Allocate memory on the device memory {:p} successfully",
        src.as_ptr()
    );
    let mut dst = DeviceBuffer::<i32>::zeroed(&device, LEN, MallocPolicy::HugeFirst)?;
    info!(
        "Allocate memory on the device memory {:p} successfully",
        dst.as_ptr()
    );

    info!(
        "Write the data {VALUE} to the device memory {:p}",
        src.as_ptr()
    );
    // DeviceWrite<<<1, nullptr, stream>>>: prints "Source data: 123".
    ascendc_kernels::write_value(&stream, &mut src, VALUE, 1)?;
    stream.scope(|s| s.copy(&mut dst, &src))?; // aclrtMemcpyAsync + aclrtSynchronizeStream
    info!(
        "Copy memory from memory {:p} to memory {:p} asynchronously",
        src.as_ptr(),
        dst.as_ptr()
    );
    // DeviceRead<<<1, nullptr, stream>>>: prints "Destination data: 123".
    ascendc_kernels::read_value(&stream, &dst, 1)?;
    let (a, b) = (src.to_vec()?, dst.to_vec()?);
    if a != b || a[0] != VALUE {
        return Err("the destination buffer differs from the source buffer".into());
    }

    stream.destroy()?; // aclrtDestroyStream
    dst.free()?; // aclrtFree
    src.free()?;
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
