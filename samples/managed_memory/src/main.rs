//! `managed_memory`: the CANN runtime's `managed_memory/0_uvm_allocate` sample in safe Rust.
//!
//! Three managed buffers (`aclrtMemAllocManaged`) are filled on the host, advised to live on the
//! device (`aclrtMemManagedAdvise`), prefetched to it (`aclrtMemManagedPrefetchBatchAsync`) and
//! added by an AscendC kernel (`kernels/uvm_add.cpp`, built by `ascendc-build`): `z = x + y`.
//! The result is prefetched back to the host (`aclrtMemManagedPrefetchAsync`) and checked there
//! in place, without a copy (and the runtime must name the host as its last prefetch location).
//! While the kernel may run, the buffers are lent to the device through
//! [`ManagedView`]s, so the host cannot touch them.
//!
//! On a SoC without managed memory `aclrtMemAllocManaged` answers 207000: the sample says so
//! (`[SKIP]`) and ends successfully, as the reference does.
//!
//! [`ManagedView`]: ascendcl::ManagedView

use sample_common::report;

use ascendcl::{AclError, ManagedBuffer, ManagedLocation, MemAdvice, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/uvm_add.rs"));
}

const N: usize = 8 * 2048;
const BLOCKS: u32 = 8;
const TOLERANCE: f32 = 0.001;

/// How the run ended.
enum Outcome {
    Checked { error_ratio: f32 },
    Skipped(ascendcl::Error),
}

fn run() -> Result<Outcome, Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    info!(
        "Kernels: uvm_add built in {} mode by ascendc-build",
        kernels::MODE.name()
    );
    let alloc = || ManagedBuffer::<f32>::zeroed(&device, N); // aclrtMemAllocManaged
    let mut x = match alloc() {
        Ok(b) => b,
        Err(e) if e.code() == Some(AclError::FEATURE_NOT_SUPPORT) => {
            return Ok(Outcome::Skipped(e));
        }
        Err(e) => return Err(e.into()),
    };
    let (mut y, mut z) = (alloc()?, alloc()?);
    for (i, (a, b)) in x.iter_mut().zip(y.iter_mut()).enumerate() {
        *a = (i % 97) as f32 * 0.5 - 12.0;
        *b = (i % 31) as f32 * 0.25 + 1.0;
    }
    for buf in [&x, &y, &z] {
        buf.advise(MemAdvice::SetPreferredLocation(ManagedLocation::Device(
            device.id(),
        )))?;
    }
    z.advise(MemAdvice::SetAccessedBy(ManagedLocation::Host))?;
    {
        let (mut vx, mut vy, mut vz) = (x.on_device(), y.on_device(), z.on_device());
        let on_device = ManagedLocation::Device(device.id());
        stream.scope(|s| {
            // Each buffer is used by several operations: claimed once for the scope.
            let (cx, cy, cz) = (s.claim(&mut vx), s.claim(&mut vy), s.claim(&mut vz));
            s.prefetch_batch([(cx, on_device), (cy, on_device), (cz, on_device)])?;
            kernels::uvm_add(s, BLOCKS, cx, cy, cz, N as u32)?;
            s.prefetch(cz, ManagedLocation::Host)
        })?;
    }
    // The runtime records where the result went last (`aclrtMemManagedGetAttrs`).
    let last = z.last_prefetch_location()?;
    if last != Some(ManagedLocation::Host) {
        return Err(format!("z was last prefetched to {last:?}, not to the host").into());
    }
    // The host reads the result where the device wrote it.
    let wrong = (0..N)
        .filter(|&i| {
            let want = x[i] + y[i];
            (z[i] - want).abs() > TOLERANCE * want.abs().max(1.0)
        })
        .count();
    Ok(Outcome::Checked {
        error_ratio: wrong as f32 / N as f32,
    })
}

fn main() -> ExitCode {
    let outcome = run();
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] managed_memory: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(Outcome::Checked { error_ratio }) => {
            info!("Run the uvm_allocate sample successfully.");
            // The reference's verification script prints this line, unprefixed.
            println!("error ratio: {error_ratio:.4}, tolerance: {TOLERANCE:.4}");
            if error_ratio <= TOLERANCE {
                println!("[SUCCESS] result correct");
                ExitCode::SUCCESS
            } else {
                println!("[FAILURE] result error");
                ExitCode::FAILURE
            }
        }
        Ok(Outcome::Skipped(e)) => {
            println!(
                "[SKIP] This SoC has no managed memory: aclrtMemAllocManaged returned error code {}",
                e.code().map_or(0, |c| c.code())
            );
            println!(
                "[SUCCESS] uvm_allocate sample skipped because the current SOC does not support UVM."
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            report::error_chain(&*e);
            println!("[FAILURE] managed_memory did not run");
            ExitCode::FAILURE
        }
    }
}
