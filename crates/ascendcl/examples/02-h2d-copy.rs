//! Synchronous copies: host to device and back, with pinned host memory and device memory.
//!
//! `cargo run -p ascendcl --example 02-h2d-copy`

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let device = rt.device(0)?;

    // Pinned host memory (aclrtMallocHost) derefs to a slice.
    let mut host = HostBuffer::<u32>::zeroed(&device, 1 << 20)?;
    for (i, x) in host.iter_mut().enumerate() {
        *x = i as u32;
    }
    // Device memory (aclrtMalloc), huge pages first; never dereferenced on the host.
    let mut dev = DeviceBuffer::<u32>::zeroed(&device, host.len(), MallocPolicy::HugeFirst)?;

    // aclrtMemcpy, host to device: the direction follows from the types, and the lengths are
    // checked before the runtime is called.
    dev.copy_from_host(&host)?;

    // And back into ordinary (pageable) memory.
    let mut back = vec![0u32; host.len()];
    dev.copy_to_host(&mut back)?;
    assert_eq!(back[..], host[..]);
    println!(
        "copied {} bytes to the device and back",
        dev.size_in_bytes()
    );

    // A length mismatch is an error, not undefined behaviour.
    let mut short = vec![0u32; 3];
    let e = dev.copy_to_host(&mut short).unwrap_err();
    println!("as expected: {e}");

    // Explicit release reports failures (a plain drop releases too, best effort).
    dev.free()?;
    host.free()?;
    Ok(())
}
