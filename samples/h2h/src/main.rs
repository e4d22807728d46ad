//! `h2h`: the CANN runtime's `0_h2h_memory_copy` sample in safe Rust.
//!
//! Two pinned host buffers (`aclrtMallocHost`), a value written into the first, a synchronous
//! host-to-host copy (`aclrtMemcpy`, `ACL_MEMCPY_HOST_TO_HOST`) into the second. The program
//! prints `Source data:` and `Destination data:` lines, which `cargo xtask sample h2h` compares
//! as the reference run.sh does; it also checks every element of the copy itself.

use ascendcl::{HostBuffer, MemcpyKind, Runtime, copy_with_kind};
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
    let mut src = HostBuffer::<i32>::zeroed(&device, LEN)?; // aclrtMallocHost
    info!(
        "Allocate memory on the host memory {:p} successfully",
        src.as_ptr()
    );
    let mut dst = HostBuffer::<i32>::zeroed(&device, LEN)?;
    info!(
        "Allocate memory on the host memory {:p} successfully",
        dst.as_ptr()
    );

    src[0] = VALUE;
    info!("Write the data {VALUE} to the memory {:p}", src.as_ptr());
    info!("Source data: {}", src[0]);
    copy_with_kind(&mut *dst, &*src, MemcpyKind::HostToHost)?; // aclrtMemcpy
    info!(
        "Copy memory from memory {:p} to memory {:p}",
        src.as_ptr(),
        dst.as_ptr()
    );
    info!("Destination data: {}", dst[0]);
    if dst[..] != src[..] {
        return Err("the destination differs from the source".into());
    }

    dst.free()?; // aclrtFreeHost
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
