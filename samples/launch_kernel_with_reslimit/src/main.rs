//! `launch_kernel_with_reslimit`: the CANN runtime's `kernel/1_launch_kernel_with_reslimit`
//! sample in Rust.
//!
//! A process-level limit of 8 cube cores on device 0 (`aclrtSetDeviceResLimit`), read back
//! (`aclrtGetDeviceResLimit`) and used as the block count of a kernel launch: the AscendC
//! kernel of `kernels/print_hello.cpp` (built by `ascendc-build`, launched through its
//! generated, typed launcher) prints `Hello World` once per block. Beyond the reference, each
//! block also records that it ran, and the host checks that every one of the limit's blocks did.

use sample_common::report;

use ascendcl::{DeviceBuffer, MallocPolicy, ResourceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/print_hello.rs"));
}

const OK: &str = "Launch kernels under resource limits successfully.";
const FAIL: &str = "Launch kernels under resource limits failed.";
/// The device the reference uses.
const DEVICE: i32 = 0;
/// The limit the reference sets, and the kind it limits.
const LIMIT: u32 = 8;
const KIND: ResourceKind = ResourceKind::CubeCore;

type Res<T = ()> = Result<T, Box<dyn Error>>;

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    info!("ACL initialized.");
    let device = rt.device(DEVICE)?; // aclrtSetDevice
    info!("Device {DEVICE} selected.");
    let stream = device.create_stream()?; // aclrtCreateStream
    info!("Stream created.");
    let kind = ascendcl::sys::aclrtDevResLimitType::from(KIND);
    device.set_res_limit(KIND, LIMIT)?; // aclrtSetDeviceResLimit
    info!("Device resource limit type {kind} set to {LIMIT}.");

    let blocks = device.res_limit(KIND)?; // aclrtGetDeviceResLimit
    info!("Current device resource limit type {kind} is {blocks}.");
    if blocks != LIMIT {
        return Err(format!("the limit reads back as {blocks}, {LIMIT} was set").into());
    }
    let mut dev_seen =
        DeviceBuffer::<u32>::zeroed(&device, blocks as usize, MallocPolicy::HugeFirst)?;
    stream.scope(|s| {
        kernels::print_hello(s, blocks, &mut dev_seen)?; // the <<<blocks, nullptr, stream>>> launch
        Ok(())
    })?; // aclrtSynchronizeStream
    let seen = dev_seen.copy_to_vec()?;
    dev_seen.free()?; // aclrtFree
    let missing: Vec<usize> = (0..seen.len())
        .filter(|&i| seen[i] as usize != i + 1)
        .collect();
    if !missing.is_empty() {
        return Err(format!("blocks {missing:?} of {blocks} did not run (seen: {seen:?})").into());
    }

    stream.destroy_force()?; // aclrtDestroyStreamForce
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("Run the launch_kernel_with_reslimit sample successfully.");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
