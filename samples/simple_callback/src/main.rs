//! `simple_callback`: the CANN runtime's `callback/0_simple_callback` sample in safe Rust.
//!
//! A report thread is subscribed to a stream of a new context (`aclrtSubscribeReport`, [`ReportSubscription`])
//! and, where the SoC offers it, a host-function thread (`aclrtSubscribeHostFunc`,
//! [`HostFnSubscription`]); the three thread ids are printed. On the stream: a blocking callback
//! (`aclrtLaunchCallback`), a task (`num += 1` on the device by the built-in sum,
//! `aclrtReduceAsync`, in place of the reference sample's kernel), a host function (`aclrtLaunchHostFunc`) and five more callbacks; each prints the
//! thread it runs on and the user data (520). The program checks that the callbacks ran on the
//! report thread, the host function on the subscribed thread (on a SoC without host-function
//! subscription, which it reports on a `[WARN]` line, on a runtime thread), all in order, and
//! that the task's result arrived; then both threads exit.
//!
//! [`ReportSubscription`]: ascendcl::ReportSubscription
//! [`HostFnSubscription`]: ascendcl::HostFnSubscription

use sample_common::report;

use ascendcl::{AclError, CallbackBlock, FailureMode, ReduceKind, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

const OK: &str = "Run the simple_callback sample successfully.";
const FAIL: &str = "Run the simple_callback sample failed.";
const CALLBACKS_AFTER: usize = 5;

/// The calling thread's id, as the runtime's subscriptions name threads (`pthread_self`).
fn thread_id() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    #[allow(clippy::unnecessary_cast)]
    let id = unsafe { libc::pthread_self() } as u64;
    id
}

/// What ran, in order: (what, thread id, user data).
type Log = Arc<Mutex<Vec<(&'static str, u64, i32)>>>;

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    let stream = ctx.create_stream()?; // aclrtCreateStream
    stream.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode

    let report = stream.subscribe_report()?; // a report thread, aclrtSubscribeReport
    let hostfn = match stream.subscribe_host_fns() {
        Ok(s) => Some(s), // a host-function thread, aclrtSubscribeHostFunc
        Err(e) if e.code() == Some(AclError::FEATURE_NOT_SUPPORT) => None,
        Err(e) => return Err(e.into()),
    };
    info!("The main thread id is {}", thread_id());
    info!("The created report thread id is {}", report.thread_id());
    match &hostfn {
        Some(h) => info!("The created hostfunc thread id is {}", h.thread_id()),
        None => println!(
            "[WARN]  aclrtSubscribeHostFunc returned {} (ACL_ERROR_RT_FEATURE_NOT_SUPPORT) on {}: \
             host-function subscription is an IPV350-class feature; the host function runs on \
             a runtime thread",
            AclError::FEATURE_NOT_SUPPORT.code(),
            rt.soc_name().unwrap_or_else(|_| "this SoC".into()),
        ),
    }

    let user_data = 520i32;
    let log: Log = Arc::default();
    let callback = |what: &'static str, line: &'static str| {
        let log = Arc::clone(&log);
        move || {
            let tid = thread_id();
            info!("Report callback thread id is {tid}");
            info!("{line}, result: user data is: {user_data}.");
            log.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((what, tid, user_data));
        }
    };
    let mut num = device.clone_htod(&[0i32])?; // aclrtMalloc, aclrtMemcpy
    let one = device.clone_htod(&[1i32])?;
    stream.scope(|s| {
        report.launch_callback(
            CallbackBlock::Block,
            callback("before", "This callback before task"),
        )?;
        s.reduce(&mut num, &one, ReduceKind::Sum)?; // the task: num += 1 (aclrtReduceAsync)
        let log = Arc::clone(&log);
        let place = if hostfn.is_some() {
            "in subscribed thread"
        } else {
            "on a runtime thread"
        };
        s.launch_host_fn(move || {
            let tid = thread_id();
            info!("Hostfunc callback thread id is {tid}");
            info!("Hostfunc executed {place}, user data is: {user_data}.");
            log.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(("hostfunc", tid, user_data));
        })?;
        info!("After begin a task, launch one hostfunc and five callbacks.");
        for _ in 0..CALLBACKS_AFTER {
            report.launch_callback(
                CallbackBlock::Block,
                callback("after", "This callback after task and loop five times"),
            )?;
        }
        Ok(())
    })?; // aclrtSynchronizeStream
    let current = num.to_vec()?[0]; // aclrtMemcpy, device to host
    info!("After assigning the task, the current int is: {current}.");

    let report_tid = report.thread_id();
    let hostfn_tid = hostfn.as_ref().map(|h| h.thread_id());
    report.close()?; // aclrtUnSubscribeReport; the thread exits
    info!("Report callback thread exit");
    if let Some(h) = hostfn {
        h.close()?; // aclrtUnSubscribeHostFunc; the thread exits
        info!("Hostfunc processing thread exit");
    }

    // Checks: the order, the threads, the user data, the task's result.
    let log = log.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let order: Vec<&str> = log.iter().map(|e| e.0).collect();
    let mut want = vec!["before", "hostfunc"];
    want.extend(["after"; CALLBACKS_AFTER]);
    if order != want {
        return Err(format!("ran in the order {order:?}, expected {want:?}").into());
    }
    for (what, tid, data) in &log {
        let expected_thread = match (*what, hostfn_tid) {
            ("hostfunc", Some(t)) => t,
            ("hostfunc", None) => continue,
            _ => report_tid,
        };
        if *tid != expected_thread {
            return Err(format!("{what} ran on thread {tid}, expected {expected_thread}").into());
        }
        if *data != 520 {
            return Err(format!("{what} saw user data {data}").into());
        }
    }
    if current != 1 {
        return Err(format!("the task wrote {current}, expected 1").into());
    }
    num.free()?; // aclrtFree
    one.free()?;
    stream.destroy_force()?; // aclrtDestroyStreamForce
    ctx.destroy()?; // aclrtDestroyContext
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
