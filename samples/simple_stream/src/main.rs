//! `simple_stream`: the CANN runtime's `stream/0_simple_stream` sample in safe Rust.
//!
//! A device counter starts at 0 (`aclrtMalloc`, `aclrtMemcpy`). One task adds 1 to it (the
//! runtime's built-in element-wise sum, `aclrtReduceAsync`, standing in for the reference's
//! one-line kernel) on a first stream, one on a created stream in STOP failure mode
//! (`aclrtSetStreamFailureMode`), each waited for (`aclrtSynchronizeStream`); then 3000 such
//! tasks on the created stream, which needs no wait in between (a stream runs its tasks in
//! order), one wait, and the stream's status (`aclrtStreamQuery`: 0, complete). The counter must
//! read 1, 2 and 3002.
//!
//! The first task goes to the context's default stream, as in the reference. The safe API
//! launches only on streams it creates (a scope waits for exactly its own stream), so that one
//! step is raw FFI: the default stream's handle (`aclrtCtxGetCurrentDefaultStream`, through
//! `CurrentContext::default_stream`), `aclrtReduceAsync` and `aclrtSynchronizeStream` on it.

use sample_common::report;

use ascendcl::{
    Context, DeviceBuffer, FailureMode, ReduceKind, Runtime, Stream, StreamStatus, raw,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the simple_stream sample successfully.";
const FAIL: &str = "Run the simple_stream sample failed.";
/// The reference's loop count.
const COUNT: i32 = 3000;

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// `EasyOP` `times` times on `stream` (`num += 1` each), then the wait; the counter's value.
fn add_ones(
    stream: &Stream,
    num: &mut DeviceBuffer<i32>,
    one: &DeviceBuffer<i32>,
    times: i32,
) -> Res<i32> {
    stream.scope(|s| {
        let num = s.claim(num);
        for _ in 0..times {
            s.reduce(num, one, ReduceKind::Sum)?; // aclrtReduceAsync
        }
        Ok(())
    })?; // aclrtSynchronizeStream
    Ok(num.copy_to_vec()?[0]) // aclrtMemcpy, device to host
}

/// `EasyOP` once on the context's default stream (`num += 1`), then the wait; the counter's value.
fn add_one_on_default_stream(
    ctx: &Context,
    num: &mut DeviceBuffer<i32>,
    one: &DeviceBuffer<i32>,
) -> Res<i32> {
    ctx.bind(|current| -> Res {
        let default = current.default_stream()?; // aclrtCtxGetCurrentDefaultStream
        // SAFETY: `num` and `one` are live device buffers of one element each, of the context's
        // device, and `num` is borrowed exclusively: nothing else touches either until the
        // stream is idle. `bytes` is their size, the kind and type match `i32`.
        unsafe {
            raw::aclrtReduceAsync(
                num.as_mut_ptr().cast(),
                one.as_ptr().cast(),
                size_of::<i32>() as u64,
                ReduceKind::Sum.into(),
                ascendcl::sys::ACL_INT32,
                default,
                std::ptr::null_mut(),
            )?;
        }
        // SAFETY: the context's own default stream, while the context is current.
        if let Err(e) = unsafe { raw::aclrtSynchronizeStream(default) } {
            // Nothing shows the stream is done with the buffers: leave without freeing them.
            println!("[ERROR]  {e}");
            println!("[FAILURE] {FAIL}");
            std::process::exit(1);
        }
        Ok(())
    })??;
    Ok(num.copy_to_vec()?[0]) // aclrtMemcpy, device to host
}

/// Fails unless the counter reads `want`.
fn expect(got: i32, want: i32) -> Res {
    if got == want {
        Ok(())
    } else {
        Err(format!("the counter reads {got}, expected {want}").into())
    }
}

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    info!("Use default stream assigning task.");
    let mut num = device.clone_htod(&[0i32])?; // aclrtMalloc, aclrtMemcpy
    let one = device.clone_htod(&[1i32])?;
    info!("Applied resource successfully, begin assigning task.");
    let got = add_one_on_default_stream(&ctx, &mut num, &one)?;
    info!("After assigning the task through the default stream, the current result is: {got}.");
    expect(got, 1)?;

    info!("Use created stream assigning task.");
    let stream = ctx.create_stream()?; // aclrtCreateStream
    stream.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode
    let got = add_ones(&stream, &mut num, &one, 1)?;
    info!("After assigning the task through the created stream, the current result is: {got}.");
    expect(got, 2)?;

    info!("Begin {COUNT} task.");
    let got = add_ones(&stream, &mut num, &one, COUNT)?;
    let status = stream.query()?; // aclrtStreamQuery
    info!(
        "After synchronize, stream status is: {}.",
        ascendcl::sys::aclrtStreamStatus::from(status)
    );
    if status != StreamStatus::Complete {
        return Err(format!("the stream is not complete after the wait: {status:?}").into());
    }
    info!("After loop, the current result is: {got}.");
    expect(got, 2 + COUNT)?;

    num.free()?; // aclrtFree
    one.free()?;
    stream.destroy_force()?; // aclrtDestroyStreamForce
    ctx.destroy()?; // aclrtDestroyContext
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("Resource cleanup completed.");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
