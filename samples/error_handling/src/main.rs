//! `error_handling`: the CANN runtime's `0_quickstart/1_error_handling` sample in safe Rust.
//!
//! Initialises the runtime and opens device 0, reads the run mode (`aclrtGetRunMode`), then
//! makes a call fail on purpose (`aclrtGetRunMode` with a NULL out-pointer, through the raw
//! layer: the safe API cannot express it) and collects what the runtime says about it: the
//! returned code (the `ascendcl::Error` value, which also carries `aclGetRecentErrMsg`), the
//! thread's last error peeked (`aclrtPeekAtLastError`) and taken (`aclrtGetLastError`), and the
//! device's verbose error information (`aclrtGetErrorVerbose`). Read a second time, each is
//! empty: reading consumed them. Every value is checked against what the failure must have left.

use sample_common::report;

use ascendcl::{Device, Runtime, last_error, peek_last_error, recent_error_message};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the error_handling sample successfully.";
const FAIL: &str = "Run the error_handling sample failed.";

/// An error code as the reference prints it (`%d`), 0 for none.
fn code(e: Option<ascendcl::AclError>) -> i32 {
    e.map_or(0, |c| c.code())
}

/// The reference's `PrintVerboseErrorInfo`: a `[WARN]` line where the runtime does not answer.
fn print_verbose_error_info(device: &Device) {
    match device.error_verbose() {
        Ok(v) => info!(
            "Verbose error info: errorType={}, tryRepair={}, hasDetail={}",
            ascendcl::sys::aclrtErrorType::from(v.error_type),
            u32::from(v.try_repair),
            u32::from(v.has_detail)
        ),
        Err(e) => println!(
            "[WARN]  aclrtGetErrorVerbose({}) returned error code {}",
            device.id(),
            code(e.code())
        ),
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    info!("ACL init and set device successfully");

    info!("Current run mode: {}", rt.run_mode()?); // aclrtGetRunMode

    info!("Triggering an expected invalid-parameter error with aclrtGetRunMode(nullptr)");
    // SAFETY: NULL is the invalid argument the runtime documents and checks before writing.
    match unsafe { ascendcl::raw::aclrtGetRunMode(std::ptr::null_mut()) } {
        Ok(()) => println!("[WARN]  Expected aclrtGetRunMode(nullptr) to fail, but it succeeded"),
        Err(e) => {
            let peek = peek_last_error(); // aclrtPeekAtLastError
            let last = last_error(); // aclrtGetLastError
            // aclGetRecentErrMsg was read into the error right after the failure.
            let message = e.runtime_message();
            println!(
                "[ERROR]  Diagnostics: ret={}, peekErr={}, lastErr={}, recentErrMsg={}",
                code(e.code()),
                code(peek),
                code(last),
                message.unwrap_or("<null>")
            );
            print_verbose_error_info(&device); // aclrtGetErrorVerbose

            let cleared_peek = peek_last_error();
            let cleared_last = last_error();
            let cleared_message = recent_error_message();
            info!(
                "After diagnostics are consumed once: peekErr={}, lastErr={}, recentErrMsg={}",
                code(cleared_peek),
                code(cleared_last),
                cleared_message.as_deref().unwrap_or("<null>")
            );

            // What the failure must have left, and what reading it must have cleared.
            if e.code().is_none() || peek != e.code() || last != e.code() {
                return Err(format!(
                    "the thread's error codes ({peek:?}, {last:?}) are not the call's {:?}",
                    e.code()
                )
                .into());
            }
            if message.is_none() {
                return Err("the failure left no recent error message".into());
            }
            if cleared_peek.is_some() || cleared_last.is_some() || cleared_message.is_some() {
                return Err("reading the diagnostics did not clear them".into());
            }
        }
    }

    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("ACL finalize successfully");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
