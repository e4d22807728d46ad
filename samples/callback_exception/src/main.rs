//! `callback_exception`: the CANN runtime's `callback/2_callback_exception` sample in Rust. On a
//! STOP-mode stream of a context of its own, EasyOP (`num += 1`) and ErrorOP (a kernel that
//! traps) are launched, with a report thread subscribed and the process's exception callback
//! registered. The failing kernel reaches the callback, which prints the failed task's id,
//! stream, thread, device and error code; the stream's synchronisation returns the vector-core
//! exception (507035); the thread's last error, the recent error message and the device's error
//! details say the same. A callback launched after the failing kernel is discarded (STOP mode).
//!
//! A host function holds the stream until the task ids are printed, so that the lines come out
//! in a fixed order. The program checks what the callback received; it ends with
//! `[SUCCESS] ...`, or `[FAILURE] ...` and exit status 1.

use sample_common::report;

use ascendcl::{
    AclError, CallbackBlock, DeviceBuffer, DeviceErrorType, ExceptionCallback, ExceptionInfo,
    FailureMode, MallocPolicy, Runtime,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/ascendc-build/kernel_ops.rs"));
}

/// How long the host function holds the stream at most (it is released long before).
const GATE: Duration = Duration::from_secs(10);

fn run() -> Result<Vec<String>, Box<dyn Error>> {
    let mut failures = Vec::new();
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let context = device.create_context()?; // aclrtCreateContext
    let stream = context.create_stream()?; // aclrtCreateStream
    stream.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode
    let mut num = DeviceBuffer::from_slice(&device, &[0u32], MallocPolicy::HugeFirst)?;

    // The report thread (aclrtSubscribeReport) and the exception callback.
    let reports = stream.subscribe_report()?;
    let (seen_tx, seen) = mpsc::channel::<ExceptionInfo>();
    let callback = ExceptionCallback::register(move |e: &ExceptionInfo| {
        info!("Exception occurred, callback function.");
        info!("The error task id is {}.", e.task_id);
        info!("The error stream id is {}.", e.stream_id);
        info!("The error thread id is {}.", e.thread_id);
        info!("The error device id is {}.", e.device_id);
        info!("The error code id is {}.", e.error.0);
        let _ = seen_tx.send(*e);
    })?;

    let (open, gate) = mpsc::channel::<()>();
    stream.launch_host_fn(move || {
        let _ = gate.recv_timeout(GATE);
    })?;
    info!(
        "Begin an easy task and an error task; the error task will reach the exception callback."
    );
    let mut last_task = None;
    let synced = stream.scope(|s| {
        let n = s.claim(&mut num);
        kernels::EasyOP(s, 1, n)?;
        kernels::ErrorOP(s, 1)?;
        let last = ascendcl::last_task_id()?; // aclrtGetThreadLastTaskId
        info!("The last task id is: {last}.");
        last_task = Some(last);
        // After the failing kernel: discarded in STOP mode, so it never prints.
        reports.launch_callback(CallbackBlock::Block, || {
            info!("After error still callback, the userdata is: 520.");
        })?;
        let _ = open.send(());
        Ok(())
    });
    match synced {
        Ok(()) => failures.push("the synchronisation succeeded".to_string()),
        Err(e) => {
            let code = e.code().map_or(-1, |c| c.0);
            println!("[ERROR]  aclrtSynchronizeStream(stream_) returned error code {code}");
            if e.code() != Some(AclError::VECTOR_CORE_EXCEPTION) {
                failures.push(format!("the synchronisation failed with {e}"));
            }
            // aclGetRecentErrMsg, read right after the failure.
            if let Some(m) = e.runtime_message() {
                info!("Recent error message: {m}");
            }
        }
    }
    match ascendcl::last_error() {
        // aclrtGetLastError (thread level)
        Some(c) => info!(
            "The thread's last error is {} ({}).",
            ascendcl::error_name(c.0).unwrap_or("?"),
            c.0
        ),
        None => failures.push("the thread has no last error".to_string()),
    }
    match device.error_verbose() {
        // aclrtGetErrorVerbose
        Ok(v) => {
            info!(
                "Device 0 error details: {:?} (repairable: {}, details: {})",
                v.error_type, v.try_repair, v.has_detail
            );
            if v.error_type == DeviceErrorType::NoError {
                failures.push("the device reports no error".to_string());
            }
        }
        Err(e) => println!("[WARN]  aclrtGetErrorVerbose: {e}"),
    }
    let result = num.copy_to_vec()?[0];
    info!("After assigning the task, the current num is: {result}.");
    if result != 1 {
        failures.push(format!("num is {result}, expected 1"));
    }
    match seen.try_recv() {
        Ok(e) => {
            let stream_id = stream.id()?;
            if e.error != AclError::VECTOR_CORE_EXCEPTION
                || e.device_id != 0
                || i64::from(e.stream_id) != i64::from(stream_id)
                || Some(e.task_id) != last_task
            {
                failures.push(format!(
                    "the callback got {e:?} (task {last_task:?}, stream {stream_id}, device 0, \
                     507035 expected)"
                ));
            }
        }
        Err(_) => failures.push("the exception callback did not run".to_string()),
    }
    callback.unregister()?; // aclrtSetExceptionInfoCallback(NULL)
    // aclrtUnSubscribeReport, the report thread joined. Closing first waits for the callbacks
    // already queued: that synchronisation reports the context's failure too (STOP mode), which
    // is expected here; anything else is not.
    match reports.close() {
        Ok(()) => {}
        Err(e) if e.code() == Some(AclError::VECTOR_CORE_EXCEPTION) => {}
        Err(e) => return Err(e.into()),
    }
    info!("Thread exit");

    num.free()?; // aclrtFree
    stream.destroy_force()?; // aclrtDestroyStreamForce
    context.destroy()?; // aclrtDestroyContext
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    Ok(failures)
}

fn main() -> ExitCode {
    let outcome = run();
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] callback_exception: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(f) if f.is_empty() => {
            println!(
                "[SUCCESS] the failing kernel reached the exception callback with its task, \
                 stream, device and code 507035"
            );
            ExitCode::SUCCESS
        }
        Ok(f) => {
            for line in &f {
                println!("[ERROR]  {line}");
            }
            println!("[FAILURE] the exception path did not report the failure as documented");
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] the callback_exception sample did not run");
            ExitCode::FAILURE
        }
    }
}
