//! `host_register_zero_copy`: the CANN runtime's `host_register/0_simple_zero_copy` sample in
//! safe Rust.
//!
//! Three host vectors of 16384 halves are registered for device mapping
//! (`aclrtHostRegisterV2` with `ACL_HOST_REG_MAPPED`) and their device addresses taken
//! (`aclrtHostGetDevicePointer`). An AscendC kernel (`kernels/zero_copy_add.cpp`, built by
//! `ascendc-build`) adds them through those addresses, `z = x + y` with x = 1 and y = 2, without
//! a single copy; after the stream is done the host checks every element of z in place. While the
//! kernel may run, the buffers are lent to the device exclusively
//! ([`HostRegistration::device_view_mut`]), so the host cannot read z early.
//!
//! [`HostRegistration::device_view_mut`]: ascendcl::HostRegistration::device_view_mut

use sample_common::report;

use ascendcl::{HostRegisterFlags, HostRegistration, Runtime};
use half::f16;
use report::info;
use std::error::Error;
use std::process::ExitCode;

// The generated module also holds `MODE`, which this sample (printing the reference's lines
// only) does not use.
#[allow(dead_code)]
mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/zero_copy_add.rs"));
}

/// The kernel's shape (constants of kernels/zero_copy_add.cpp).
const ELEMENTS: usize = 8 * 2048;
const BLOCKS: u32 = 8;

fn run() -> Result<(), Box<dyn Error>> {
    info!("Start to run simple_zero_copy sample.");
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let register = |value: f32| {
        // aclrtHostRegisterV2 (mapped), aclrtHostGetDevicePointer
        HostRegistration::with_flags(
            &device,
            vec![f16::from_f32(value).to_bits(); ELEMENTS],
            HostRegisterFlags::MAPPED,
        )
    };
    let (mut x, mut y, mut z) = (register(1.0)?, register(2.0)?, register(0.0)?);
    for r in [&x, &y, &z] {
        if r.device_ptr().is_null() {
            return Err("a mapped device address is NULL".into());
        }
    }
    info!("Registered three Host buffers and obtained their Device mapping addresses.");
    {
        // The kernel's parameters are GM_ADDR (writable): every buffer is lent exclusively.
        let (mut vx, mut vy, mut vz) = (
            x.device_view_mut()?,
            y.device_view_mut()?,
            z.device_view_mut()?,
        );
        stream.scope(|s| {
            kernels::zero_copy_add(s, BLOCKS, &mut vx, &mut vy, &mut vz)?;
            Ok(())
        })?;
    }
    let three = f16::from_f32(3.0).to_bits();
    if let Some(i) = z.iter().position(|&h| h != three) {
        return Err(format!("z[{i}] = {}, expected 3 (1 + 2)", f16::from_bits(z[i])).into());
    }
    info!("Verified {ELEMENTS} FP16 additions through mapped Host memory.");
    for r in [x, y, z] {
        r.unregister()?; // aclrtHostUnregister
    }
    stream.destroy()?; // aclrtDestroyStream
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    let outcome = run();
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] host_register_zero_copy: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(()) => {
            println!("[SUCCESS] Run the simple_zero_copy sample successfully.");
            ExitCode::SUCCESS
        }
        Err(e) => {
            report::error_chain(&*e);
            println!("[FAILURE] Run the simple_zero_copy sample failed.");
            ExitCode::FAILURE
        }
    }
}
