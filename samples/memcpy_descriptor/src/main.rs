//! `memcpy_descriptor`: the CANN runtime's `memory/13_memcpy_descriptor` sample in safe Rust.
//!
//! Deterministic input (1024 `u32`) is copied to the device (`aclrtMemcpy`); a memcpy descriptor
//! is allocated in device memory (`aclrtGetMemcpyDescSize`, `aclrtMalloc`), written to describe a
//! copy of the input into a second device buffer (`aclrtSetMemcpyDesc`) and run on a stream
//! (`aclrtMemcpyAsyncWithDesc`), both in one [`Scope::copy_with_desc`] call that borrows the
//! descriptor and the buffers until the stream is done. The result is copied back and checked
//! element by element.
//!
//! [`Scope::copy_with_desc`]: ascendcl::Scope::copy_with_desc

use sample_common::report;

use ascendcl::{MemcpyDescriptor, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const ELEMENTS: usize = 1024;

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    // The reference's pattern.
    let input: Vec<u32> = (0..ELEMENTS as u32)
        .map(|i| (i * 37 + 11) ^ 0x5A5A)
        .collect();
    let src = device.clone_htod(&input)?; // aclrtMalloc, aclrtMemcpy
    let mut dst = device.alloc_zeros::<u32>(ELEMENTS)?; // aclrtMalloc, aclrtMemset
    let mut desc = MemcpyDescriptor::new(&device)?; // aclrtGetMemcpyDescSize, aclrtMalloc
    info!(
        "Configured a {}-byte memcpy descriptor for {} bytes of data",
        desc.size(),
        ELEMENTS * size_of::<u32>()
    );
    // aclrtSetMemcpyDesc, aclrtMemcpyAsyncWithDesc, aclrtSynchronizeStream
    stream.scope(|s| s.copy_with_desc(&mut desc, &mut dst, &src))?;
    let out = dst.copy_to_vec()?; // aclrtMemcpy
    if let Some(i) = (0..ELEMENTS).find(|&i| out[i] != input[i]) {
        return Err(format!("element {i} is {}, expected {}", out[i], input[i]).into());
    }
    info!("Verified all {ELEMENTS} copied elements");
    drop(desc); // aclrtFree
    stream.destroy_force()?; // aclrtDestroyStreamForce
    drop((src, dst));
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("[SUCCESS] Memcpy descriptor sample completed successfully");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(
        run(),
        "Memcpy descriptor sample executed successfully.",
        "Memcpy descriptor sample failed.",
    )
}
