//! Exporting takes the buffer: it cannot be freed while exported, only after the export is
//! closed and gives it back (the order the runtime asks for).
use ascendcl::{Importers, IpcMemExport, MallocPolicy};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let buf = ascendcl::DeviceBuffer::<u8>::zeroed(&device, 4096, MallocPolicy::HugeFirst)?;
    let export = IpcMemExport::new(buf, Importers::Anyone)?;
    buf.free()?;
    drop(export);
    Ok(())
}
