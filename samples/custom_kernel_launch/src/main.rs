//! `custom_kernel_launch`: the CANN runtime's `0_quickstart/4_custom_kernel_launch` sample in
//! safe Rust.
//!
//! The AscendC kernel of `kernels/vector_add_kernel.cpp` (built by `ascendc-build`: for the
//! host and the emulator without CANN, for the NPU with it) computes `out = self + alpha *
//! other` over the 8 floats of `0_hello_cann`, in one block, launched through its generated,
//! typed launcher (the reference's `<<<blockDim, nullptr, stream>>>` call); each result is
//! checked against the host's value.

use sample_common::report;

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use std::error::Error;
use std::process::ExitCode;

mod kernels {
    include!(concat!(
        env!("OUT_DIR"),
        "/ascendc-build/vector_add_kernel.rs"
    ));
}

const OK: &str = "Sample run successfully with <<<>>> kernel call!";
const FAIL: &str = "Sample run failed: vector addition result mismatched!";
const DEVICE: i32 = 0;
const BLOCKS: u32 = 1;
const ALPHA: f32 = 1.0;
const SELF: [f32; 8] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
const OTHER: [f32; 8] = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0];

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// A vector as the reference prints it: `[1.0, 2.0, ...]`.
fn list(v: &[f32]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:.1}")).collect();
    format!("[{}]", items.join(", "))
}

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    println!("ACL init successfully");
    let device = rt.device(DEVICE)?; // aclrtSetDevice
    println!("Set device {DEVICE} successfully");
    let stream = device.create_stream()?; // aclrtCreateStream
    println!("Create stream successfully");
    let n = SELF.len();
    let zeroed = || DeviceBuffer::<f32>::zeroed(&device, n, MallocPolicy::HugeFirst);
    let (mut dev_self, mut dev_other, mut dev_out) = (zeroed()?, zeroed()?, zeroed()?); // aclrtMalloc
    println!("Allocate device buffers successfully");
    dev_self.copy_from_host(&SELF)?; // aclrtMemcpy, host to device
    dev_other.copy_from_host(&OTHER)?;
    println!("Copy input vectors to device successfully");
    println!("Input vectors:");
    println!("  self:   {}", list(&SELF));
    println!("  other:  {}", list(&OTHER));
    println!("  alpha:  {ALPHA:.1}");

    let count = u32::try_from(n)?;
    stream.scope(|s| {
        kernels::vector_add_kernel(s, BLOCKS, &dev_self, &dev_other, &mut dev_out, ALPHA, count)?;
        println!("Custom AscendC kernel <<<>>> call successfully");
        Ok(())
    })?; // aclrtSynchronizeStream
    println!("Synchronize stream successfully");

    let out = dev_out.copy_to_vec()?; // aclrtMemcpy, device to host
    println!();
    println!("Vector addition result:");
    let mut wrong = 0;
    for (i, &got) in out.iter().enumerate() {
        let expected = SELF[i] + ALPHA * OTHER[i];
        println!("  result[{i}] = {got:.1} (expected: {expected:.1})");
        if got != expected {
            wrong += 1;
        }
    }
    for b in [dev_self, dev_other, dev_out] {
        b.free()?; // aclrtFree
    }
    println!("Free device memory successfully");
    stream.destroy()?; // aclrtDestroyStream
    println!("Destroy stream successfully");
    device.reset()?; // aclrtResetDevice
    println!("Reset device successfully");
    rt.finalize()?; // aclFinalize
    println!("ACL finalize successfully");
    println!();
    if wrong > 0 {
        return Err(format!("{wrong} of {n} results differ from the host's").into());
    }
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
