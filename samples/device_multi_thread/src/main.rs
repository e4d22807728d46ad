//! `device_multi_thread`: the CANN runtime's `device/1_device_multi_thread` sample in safe Rust.
//!
//! The main thread opens device 0 (`aclrtSetDevice`) and limits the vector cores later work may
//! use to 1 (`aclrtSetDeviceResLimit`). A worker thread then opens the device too (another
//! handle on the same open device: `Device` is `Send + Sync`), creates a stream, queries the
//! device — SoC, device count, status, run mode, utilisation, stream priority range, vector
//! cores — reads the vector-core limit back (`aclrtGetDeviceResLimit`) and launches an AscendC
//! add kernel (`kernels/kernel_add.cpp`) on that many blocks: `hostDst[i] = a[i] + b[i]` with
//! `a[i] = b[i] = i`, every element checked against the host's sum. The worker restores the
//! limits (`aclrtResetDeviceResLimit`) and releases its memory and stream.
//!
//! The reference resets the device at the end of the worker (`aclrtResetDeviceForce`); here the
//! device is reset when its last handle — the main thread's — goes.

use sample_common::report;

use ascendcl::{DeviceAttr, DeviceBuffer, HostBuffer, MallocPolicy, ResourceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

// The sample does not print the build mode (`kernels::MODE`).
#[allow(dead_code)]
mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/kernel_add.rs"));
}

const OK: &str = "Run the device_multi_thread sample successfully.";
const FAIL: &str = "Run the device_multi_thread sample failed.";

/// The reference's kernel size.
const TOTAL_SIZE: usize = 1024;
/// The vector-core limit the main thread sets.
const VECTOR_CORE_LIMIT: u32 = 1;

type BoxResult<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// A utilisation figure as the runtime reports it (`-1` where it could not measure).
fn pct(v: Option<u32>) -> i64 {
    v.map_or(-1, i64::from)
}

/// The reference's `DeviceInfoQuery`, on the worker thread.
fn device_info_query(rt: &Runtime, device: &ascendcl::Device) -> BoxResult<()> {
    info!("Current Ascend chipset platform is: {}.", rt.soc_name()?); // aclrtGetSocName
    info!(
        "Get device count success. deviceCount: {}.",
        rt.device_count()?
    );
    let status = device.status()?; // aclrtQueryDeviceStatus
    info!(
        "Query device status success. deviceStatus: {}.",
        ascendcl::sys::aclrtDeviceStatus::from(status)
    );
    match rt.run_mode()? {
        // aclrtGetRunMode
        ascendcl::RunMode::Device => info!("RunMode is ACL_DEVICE."),
        ascendcl::RunMode::Host => info!("RunMode is ACL_HOST."),
        _ => info!("RunMode is invalid."),
    }
    let u = device.utilization()?; // aclrtGetDeviceUtilizationRate
    info!(
        "Get device utilizationRate success. cubeUtilization {}, vectorUtilization {}, \
         aicpuUtilization {},memoryUtilization {}.",
        pct(u.cube),
        pct(u.vector),
        pct(u.aicpu),
        pct(u.memory)
    );
    let range = device.stream_priority_range()?; // aclrtDeviceGetStreamPriorityRange
    info!(
        "Get stream priorityRange success. leastPriority {}, greatestPriority {}.",
        range.least, range.greatest
    );
    let cores = device.attribute(DeviceAttr::VectorCoreNum)?; // aclrtGetDeviceInfo
    info!("Get device info success. vectorCoreNum {cores}.");
    Ok(())
}

/// The reference's `RunThread`.
fn run_thread(rt: &Runtime) -> BoxResult<()> {
    let device = rt.device(0)?; // aclrtSetDevice (the device is open: another handle)
    let stream = device.create_stream()?; // aclrtCreateStream
    device_info_query(rt, &device)?;

    let src: Vec<f32> = (0..TOTAL_SIZE).map(|i| i as f32).collect();
    let host_a = HostBuffer::from_slice(&device, &src)?; // aclrtMallocHost
    let host_b = HostBuffer::from_slice(&device, &src)?;
    let mut host_dst = HostBuffer::<f32>::zeroed(&device, TOTAL_SIZE)?;
    let policy = MallocPolicy::HugeFirst;
    let mut dev_a = DeviceBuffer::<f32>::zeroed(&device, TOTAL_SIZE, policy)?; // aclrtMalloc
    let mut dev_b = DeviceBuffer::<f32>::zeroed(&device, TOTAL_SIZE, policy)?;
    let mut dev_dst = DeviceBuffer::<f32>::zeroed(&device, TOTAL_SIZE, policy)?;
    dev_a.copy_from(&host_a)?; // aclrtMemcpy, host to device
    dev_b.copy_from(&host_b)?;

    let limit = device.res_limit(ResourceKind::VectorCore)?; // aclrtGetDeviceResLimit
    info!("Get device resLimit success. VECTOR_CORE {limit}.");
    if limit != VECTOR_CORE_LIMIT {
        return Err(format!("the vector-core limit is {limit}, set {VECTOR_CORE_LIMIT}").into());
    }
    // AddDo: the kernel on as many blocks as the limit allows; aclrtSynchronizeStream at the
    // scope's end.
    stream.scope(|s| {
        kernels::kernel_add(s, limit, &dev_a, &dev_b, &mut dev_dst, TOTAL_SIZE as u32)
    })?;
    dev_dst.copy_to(&mut host_dst)?; // aclrtMemcpy, device to host

    info!("The results (first 10 elements) of the kernel function:");
    for i in 0..10 {
        info!(
            "Result: hostDst[{i}]: {:.6} Expected value: {:.6}",
            host_dst[i],
            host_a[i] + host_b[i]
        );
    }
    if let Some(i) = (0..TOTAL_SIZE).find(|&i| host_dst[i] != host_a[i] + host_b[i]) {
        return Err(format!(
            "hostDst[{i}] = {}, expected {}",
            host_dst[i],
            host_a[i] + host_b[i]
        )
        .into());
    }

    device.reset_res_limits()?; // aclrtResetDeviceResLimit
    for buf in [dev_a, dev_b, dev_dst] {
        buf.free()?; // aclrtFree
    }
    for buf in [host_a, host_b, host_dst] {
        buf.free()?; // aclrtFreeHost
    }
    stream.destroy()?; // aclrtDestroyStream
    Ok(())
}

fn run() -> BoxResult<()> {
    info!("Start to run device_multi_thread sample.");
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    device.set_res_limit(ResourceKind::VectorCore, VECTOR_CORE_LIMIT)?; // aclrtSetDeviceResLimit

    std::thread::scope(|scope| {
        scope
            .spawn(|| run_thread(&rt))
            .join()
            .map_err(|_| "the worker thread panicked")?
    })?;

    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
