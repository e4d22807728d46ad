//! Unmapping consumes the mapping: its memory cannot be used afterwards.
use ascendcl::{PhysicalMemProp, PhysicalMemory, VirtualRange};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let range = VirtualRange::reserve(&device, 2 << 20)?;
    let phys = PhysicalMemory::new(&device, 2 << 20, PhysicalMemProp::default())?;
    let mapping = range.map::<u32>(0, phys)?;
    let phys = mapping.unmap()?;
    let values = mapping.to_vec()?;
    drop((phys, values));
    Ok(())
}
