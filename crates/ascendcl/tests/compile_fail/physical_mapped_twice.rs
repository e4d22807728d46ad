//! One physical allocation backs one mapping at a time: mapping it takes it, so a second
//! mapping (two addresses for the same bytes, two owners) does not compile.
use ascendcl::{PhysicalMemProp, PhysicalMemory, VirtualRange};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let range = VirtualRange::reserve(&device, 4 << 20)?;
    let phys = PhysicalMemory::new(&device, 2 << 20, PhysicalMemProp::default())?;
    let first = range.map::<u8>(0, phys)?;
    let second = range.map::<u8>(2 << 20, phys)?;
    drop((first, second));
    Ok(())
}
