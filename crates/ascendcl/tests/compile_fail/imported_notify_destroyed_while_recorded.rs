//! A record of an imported notify runs when the stream reaches it: the scope borrows the notify
//! until then, so it cannot be destroyed while the task is queued.
use ascendcl::{ImportedNotify, NotifyImportFlags, NotifyKey};

fn main() -> ascendcl::Result<()> {
    let device = ascendcl::Runtime::new()?.device(0)?;
    let stream = device.create_stream()?;
    let key: NotifyKey = "key-from-another-process".parse()?;
    let notify = ImportedNotify::open(&device, &key, NotifyImportFlags::empty())?;
    stream.scope(|s| {
        s.record_imported_notify(&notify)?;
        drop(notify);
        Ok(())
    })?;
    Ok(())
}
