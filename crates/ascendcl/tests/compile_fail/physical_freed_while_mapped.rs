//! Mapping takes the physical memory by value: it cannot be freed while mapped, only after
//! `Mapping::unmap` gives it back.
use ascendcl::{PhysicalMemProp, PhysicalMemory, VirtualRange};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let range = VirtualRange::reserve(&device, 2 << 20)?;
    let phys = PhysicalMemory::new(&device, 2 << 20, PhysicalMemProp::default())?;
    let mapping = range.map::<u8>(0, phys)?;
    phys.free()?;
    drop(mapping);
    Ok(())
}
