// A claimed region cannot be moved into a host function (it would outlive the scope's checks,
// and run on a runtime thread): it is not Send.
use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let mut d = DeviceBuffer::<u8>::zeroed(&dev, 16, MallocPolicy::HugeFirst)?;
    stream.scope(|s| {
        let c = s.claim(&mut d);
        s.launch_host_fn(move || {
            let _ = c.len();
        })?;
        Ok(())
    })?;
    Ok(())
}
