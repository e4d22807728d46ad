//! `stream_config_query`: the CANN runtime's `stream/3_stream_config_query` sample in safe Rust.
//!
//! First the configuration-handle path of the reference (`aclrtCreateStreamConfigHandle`,
//! `aclrtSetStreamConfigOpt`, `aclrtCreateStreamV2`): the runtime documents it as supported on
//! no Atlas product, so where it answers "not supported" the sample says so (`[WARN]`) and
//! skips that path (`[SKIP]`), as the reference does when the functions are absent. Then a
//! stream created with priority 0 and flags 0 (`aclrtCreateStreamWithConfig`) is queried
//! (`aclrtStreamGetId`, `aclrtStreamGetFlags`, `aclrtStreamGetPriority`, in one
//! [`StreamConfig`]) and checked against what it was created with.

use sample_common::report;

use ascendcl::{Device, Runtime, Stream, StreamConfig, StreamConfigHandle, StreamFlags};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Stream config query sample executed successfully.";
const FAIL: &str = "Stream config query sample failed.";

const FLAGS: StreamFlags = StreamFlags::empty();
const PRIORITY: u32 = 0;

/// Prints and checks a stream's configuration.
fn query(stream: &Stream) -> Result<StreamConfig, Box<dyn Error>> {
    let c = stream.config()?;
    info!("Stream id: {}", c.id);
    info!("Stream flags: {}", c.flags.bits());
    info!("Stream priority: {}", c.priority);
    if c.flags != FLAGS || c.priority != PRIORITY || c.id < 0 {
        return Err(format!(
            "the stream reports {c:?}, not flags {} and priority {PRIORITY}",
            FLAGS.bits()
        )
        .into());
    }
    stream.synchronize()?; // aclrtSynchronizeStream
    Ok(c)
}

/// The configuration-handle path; `Ok(false)` when the hardware does not support it.
fn with_config_handle(device: &Device) -> Result<bool, Box<dyn Error>> {
    let mut handle = match StreamConfigHandle::new(device) {
        Ok(h) => h,
        Err(e) if e.is_not_supported() => {
            println!("[WARN]  {e}");
            info!(
                "[SKIP] Stream config handles are not supported on this device; using \
                 aclrtCreateStreamWithConfig instead."
            );
            return Ok(false);
        }
        Err(e) => return Err(e.into()),
    };
    info!("Create stream config handle successfully");
    handle.set_flags(FLAGS)?;
    handle.set_priority(PRIORITY)?;
    info!(
        "Set stream config flags={} priority={PRIORITY}",
        FLAGS.bits()
    );
    let stream = handle.create_stream()?;
    info!("Create stream with config successfully");
    query(&stream)?;
    stream.destroy()?; // aclrtDestroyStream
    handle.destroy()?; // aclrtDestroyStreamConfigHandle
    Ok(true)
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    with_config_handle(&device)?;
    let stream = device.create_stream_with(FLAGS, PRIORITY)?; // aclrtCreateStreamWithConfig
    info!(
        "Create stream with priority={PRIORITY} flags={} successfully",
        FLAGS.bits()
    );
    let first = query(&stream)?;
    // A second stream gets another id and its own configuration.
    let other = device.create_stream_with(StreamFlags::FAST_LAUNCH, 7)?;
    let second = other.config()?;
    if second.id == first.id || second.priority != 7 || second.flags != StreamFlags::FAST_LAUNCH {
        return Err(format!("a second stream reports {second:?}").into());
    }
    other.destroy()?;
    stream.destroy()?; // aclrtDestroyStream
    info!("[SUCCESS] Stream config query sample completed successfully");
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
