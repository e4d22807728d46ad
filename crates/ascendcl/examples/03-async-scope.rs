//! Asynchronous work on a stream: `Stream::scope` enqueues copies and memsets on borrowed
//! buffers, and waits for the stream before it returns, so the borrows outlast the device's use.
//!
//! `cargo run -p ascendcl --example 03-async-scope`

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let device = rt.device(0)?;
    let stream = device.create_stream()?;

    let src = HostBuffer::from_slice(&device, &[1u8, 2, 3, 4, 5, 6, 7, 8])?;
    let mut dev = DeviceBuffer::<u8>::zeroed(&device, src.len(), MallocPolicy::HugeFirst)?;
    let mut out = vec![0u8; src.len()];

    let queued = stream.scope(|s| {
        // `claim` lends the device buffer to the scope as a copyable region: several operations,
        // in stream order, may use it.
        let d = s.claim(&mut dev);
        s.copy(d, &src)?; // aclrtMemcpyAsync, host to device
        s.fill_bytes(d.slice(0..2)?, 0xff)?; // aclrtMemsetAsync over the first two bytes
        s.copy(&mut out, d)?; // device to host, after both
        Ok(3)
    })?; // aclrtSynchronizeStream: `out`, `src` and `dev` are the host's again
    assert_eq!(out, [0xff, 0xff, 3, 4, 5, 6, 7, 8]);
    println!("{queued} operations ran in stream order: {out:?}");
    Ok(())
}
