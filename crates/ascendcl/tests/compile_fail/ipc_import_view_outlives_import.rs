//! A view of imported memory borrows the import: the import cannot be closed (or dropped, which
//! closes it) while the view exists.
use ascendcl::{IpcImportFlags, IpcMemImport, IpcMemKey};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let key: IpcMemKey = "key-from-another-process".parse()?;
    let import = IpcMemImport::<u32>::open(&device, &key, IpcImportFlags::empty())?;
    let view = import.slice(0..4)?;
    drop(import);
    let values = view.to_vec()?;
    drop(values);
    Ok(())
}
