//! A scope borrows the mapping until the stream is idle: it cannot be unmapped under a queued
//! copy.
use ascendcl::{PhysicalMemProp, PhysicalMemory, VirtualRange};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let stream = device.create_stream()?;
    let range = VirtualRange::reserve(&device, 2 << 20)?;
    let phys = PhysicalMemory::new(&device, 2 << 20, PhysicalMemProp::default())?;
    let mapping = range.map::<u8>(0, phys)?;
    let mut out = ascendcl::HostBuffer::<u8>::zeroed(&device, 2 << 20)?;
    stream.scope(|s| {
        s.copy(&mut out, &mapping)?;
        let phys = mapping.unmap()?;
        drop(phys);
        Ok(())
    })?;
    Ok(())
}
