//! Events: record them on a stream around some work, wait for the last one, and read the time
//! the stream took between them.
//!
//! `cargo run -p ascendcl --example 04-events-timing`

use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, Runtime};

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let device = rt.device(0)?;
    let stream = device.create_stream()?;
    let start = device.create_event()?; // aclrtCreateEvent
    let end = device.create_event()?;

    let src = HostBuffer::<u8>::zeroed(&device, 64 << 20)?;
    let mut dev = DeviceBuffer::<u8>::zeroed(&device, src.len(), MallocPolicy::HugeFirst)?;
    stream.scope(|s| {
        s.record_event(&start)?; // aclrtRecordEvent
        s.copy(&mut dev, &src)?;
        s.record_event(&end)?;
        Ok(())
    })?;
    end.synchronize()?; // aclrtSynchronizeEvent (already complete: the scope waited)
    assert!(end.is_complete()?); // aclrtQueryEventStatus

    let took = end.elapsed_since(&start)?; // aclrtEventElapsedTime
    let mib = src.len() as f64 / (1 << 20) as f64;
    println!(
        "{mib:.0} MiB host to device in {took:?} ({:.1} GiB/s on this backend)",
        mib / 1024.0 / took.as_secs_f64().max(1e-9)
    );
    Ok(())
}
