//! `stream_with_failure_mode`: the CANN runtime's `stream/1_stream_with_failure_mode` sample in
//! Rust. In a context of its own, EasyOP (`num += 1`), ErrorOP (a kernel that traps) and EasyOP
//! again are launched on a stream, first in the default CONTINUE mode — the synchronisation
//! reports the vector-core exception (507035) and both EasyOPs ran: 2 — then in STOP mode — the
//! same error, and the task after the failure was discarded: 1. Then `aclrtStreamStop` on a
//! device-use-only stream makes its synchronisation report 507000, and `aclrtStreamAbort` on
//! another stream leaves the context's stored failure (507035) to its synchronisation.
//!
//! The program checks each code and value; it ends with `[SUCCESS] ...`, or `[FAILURE] ...` and
//! exit status 1.

use sample_common::report;

use ascendcl::{AclError, DeviceBuffer, FailureMode, Runtime, Stream, StreamFlags};
use report::info;
use std::error::Error;
use std::process::ExitCode;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/kernel_ops.rs"));
}

/// The code of a call's result (0 for success), as the reference sample prints it.
fn code(r: &ascendcl::Result<()>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => e.code().map_or(-1, |c| c.0),
    }
}

/// `CHECK_ERROR_WITHOUT_RETURN(aclrtSynchronizeStream(stream))`: the error line, and the code.
fn check_sync(r: ascendcl::Result<()>) -> i32 {
    let c = code(&r);
    if let Err(e) = &r {
        println!(
            "[ERROR]  Operation failed: aclrtSynchronizeStream(stream) returned error code {c}"
        );
        if e.api() != Some("aclrtSynchronizeStream") {
            println!("[ERROR]  the failure came from {:?}: {e}", e.api());
        }
    }
    c
}

/// `LogOptionalResult`: INFO for success, WARN otherwise.
fn log_optional(api: &str, c: i32) {
    if c == 0 {
        info!("{api} returned {c}.");
    } else {
        println!("[WARN]  {api} returned {c}.");
    }
}

/// EasyOP, ErrorOP, EasyOP on `stream`, then its synchronisation (the end of the scope). Like the
/// reference sample's launchers, the launches' own results are not checked: in STOP mode a
/// launch after the failure may be refused or discarded, which the value shows.
fn easy_error_easy(stream: &Stream, num: &mut DeviceBuffer<u32>) -> i32 {
    check_sync(stream.scope(|s| {
        let n = s.claim(num);
        let _ = kernels::EasyOP(s, 1, n);
        let _ = kernels::ErrorOP(s, 1);
        let _ = kernels::EasyOP(s, 1, n);
        Ok(())
    }))
}

fn expect(what: &str, got: i64, want: i64, failures: &mut Vec<String>) {
    if got != want {
        failures.push(format!("{what}: {got}, expected {want}"));
    }
}

fn run() -> Result<Vec<String>, Box<dyn Error>> {
    let mut failures = Vec::new();
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let context = device.create_context()?; // aclrtCreateContext
    let stream = context.create_stream()?; // aclrtCreateStream
    let mut num = DeviceBuffer::from_slice(&device, &[0u32], ascendcl::MallocPolicy::HugeFirst)?;

    info!("Assigning task without failure mode.");
    let c = easy_error_easy(&stream, &mut num);
    expect(
        "CONTINUE synchronisation",
        c.into(),
        AclError::VECTOR_CORE_EXCEPTION.0.into(),
        &mut failures,
    );
    let result = num.copy_to_vec()?[0];
    info!("Without failure mode, the result is {result}.");
    expect("CONTINUE result", result.into(), 2, &mut failures);

    num.copy_from_host(&[0])?;
    stream.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode
    info!("Assigning task with failure mode.");
    let c = easy_error_easy(&stream, &mut num);
    expect(
        "STOP synchronisation",
        c.into(),
        AclError::VECTOR_CORE_EXCEPTION.0.into(),
        &mut failures,
    );
    let result = num.copy_to_vec()?[0];
    info!("After set failure mode, the current result is: {result}.");
    expect("STOP result", result.into(), 1, &mut failures);

    // aclrtStreamStop on a device-use-only stream after a long task: its synchronisation then
    // reports the stop instead of waiting.
    let stop_stream = context.create_stream_with(StreamFlags::DEVICE_USE_ONLY, 0)?;
    let mut scratch =
        DeviceBuffer::from_slice(&device, &[0u32], ascendcl::MallocPolicy::HugeFirst)?;
    let p = (scratch.as_mut_ptr() as usize as u64).to_ne_bytes();
    // SAFETY: LongOP(uint32_t* x) writes x[0] of `scratch`, which outlives the stream's work:
    // the stream is aborted (discarding what the stop holds) and destroyed before it is freed.
    // The launch's result is not checked, as in the reference sample (in this context, failed
    // in STOP mode, it is refused).
    let _ = unsafe { kernels::LONGOP.launch_unchecked(&stop_stream, 1, &[&p]) };
    let stopped = code(&stop_stream.stop());
    log_optional("aclrtStreamStop", stopped);
    let after_stop = code(&stop_stream.synchronize());
    log_optional("aclrtSynchronizeStream(after stop)", after_stop);
    expect("aclrtStreamStop", stopped.into(), 0, &mut failures);
    expect(
        "synchronisation after the stop",
        after_stop.into(),
        AclError::RT_INTERNAL_ERROR.0.into(),
        &mut failures,
    );
    stop_stream.abort()?;
    stop_stream.destroy_force()?; // aclrtDestroyStreamForce
    scratch.free()?;

    // aclrtStreamAbort on a regular stream after a long task.
    let abort_stream = context.create_stream()?;
    let mut scratch =
        DeviceBuffer::from_slice(&device, &[0u32], ascendcl::MallocPolicy::HugeFirst)?;
    let p = (scratch.as_mut_ptr() as usize as u64).to_ne_bytes();
    // SAFETY: as above; the abort discards the task, and the stream is destroyed before the
    // buffer is freed.
    let _ = unsafe { kernels::LONGOP.launch_unchecked(&abort_stream, 1, &[&p]) };
    let aborted = code(&abort_stream.abort());
    log_optional("aclrtStreamAbort", aborted);
    let after_abort = code(&abort_stream.synchronize());
    if after_abort == 0 {
        info!("aclrtSynchronizeStream(after abort) returned {after_abort}.");
    } else {
        info!(
            "aclrtSynchronizeStream(after abort) returned {after_abort} after stream abort, which is expected."
        );
    }
    expect("aclrtStreamAbort", aborted.into(), 0, &mut failures);
    expect(
        "synchronisation after the abort",
        after_abort.into(),
        AclError::VECTOR_CORE_EXCEPTION.0.into(),
        &mut failures,
    );
    abort_stream.destroy_force()?;
    scratch.free()?;

    num.free()?; // aclrtFree
    stream.destroy_force()?; // aclrtDestroyStreamForce
    context.destroy()?; // aclrtDestroyContext
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("Resource cleanup completed.");
    if failures.is_empty() {
        info!("Run the stream_with_failure_mode sample successfully.");
    }
    Ok(failures)
}

fn main() -> ExitCode {
    let outcome = run();
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] stream_with_failure_mode: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(f) if f.is_empty() => {
            println!(
                "[SUCCESS] a failing kernel gives 507035 in CONTINUE and STOP mode; stop and abort \
                 behave as documented"
            );
            ExitCode::SUCCESS
        }
        Ok(f) => {
            for line in &f {
                println!("[ERROR]  {line}");
            }
            println!("[FAILURE] the failure modes did not behave as documented");
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] the stream_with_failure_mode sample did not run");
            ExitCode::FAILURE
        }
    }
}
