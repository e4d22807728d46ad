//! `multistream_sync_memory`: the CANN runtime's `9_multistream_sync_memory` sample in safe Rust.
//!
//! Two threads, each with its own stream on one device, share a 64-bit word of device memory
//! ([`DeviceWord`]). Thread A's stream waits until the word equals 100 (`aclrtValueWait`,
//! `ACL_STREAM_WAIT_VALUE_EQ`); thread B sets a host flag to 123, then its stream writes 100 into
//! the word (`aclrtValueWrite`), which releases A. A reads the flag after its wait: 123 shows
//! that A's stream was held until B ran (the reference passes the flag through `file/flag.txt`;
//! here it is an atomic, so there is no "Start writing to file/flag.txt" line). The program also checks, before B starts, that A's stream is still busy
//! (`aclrtStreamQuery`), and aborts A's stream (`aclrtStreamAbort`) if the write has not
//! released it within 30 s, so it cannot hang.

use sample_common::report;

use ascendcl::{DeviceWord, Runtime, ValueCompare};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The value stream A waits for and stream B writes.
const VALUE: u64 = 100;
/// The flag thread B sets before its write.
const FLAG: i32 = 123;
/// How long stream A may stay blocked before the program gives up.
const PATIENCE: Duration = Duration::from_secs(30);

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let word = DeviceWord::new(&device, 0)?; // aclrtMalloc
    info!("Allocate memory on the device successfully");
    let stream_a = device.create_stream()?; // aclrtCreateStream
    info!("Create Stream A successfully");
    let stream_b = device.create_stream()?;
    info!("Create Stream B successfully");

    let flag = AtomicI32::new(0);
    let (queued, wait_queued) = std::sync::mpsc::channel::<()>();
    let (seen, held) = std::thread::scope(|t| -> Result<(i32, bool), Box<dyn Error + Send + Sync>> {
        let a = t.spawn(|| -> Result<i32, Box<dyn Error + Send + Sync>> {
            // The scope ends with aclrtSynchronizeStream: it returns once the wait is met.
            stream_a.scope(|s| {
                s.wait_word(&word, VALUE, ValueCompare::Eq)?; // aclrtValueWait
                info!(
                    "Stream A: wait for data at virtual memory = {:p} to meet the condition",
                    word.as_ptr()
                );
                let _ = queued.send(());
                Ok(())
            })?;
            if word.get()? != VALUE {
                // The scope also ends when the stream is aborted: the condition was not met.
                return Err("stream A's wait was aborted before the condition was met".into());
            }
            info!("Stream A: the data in the specified memory has met the condition, all tasks are complete");
            let f = flag.load(Ordering::Acquire);
            info!("Flag value read by the waiting thread: {f}");
            Ok(f)
        });
        wait_queued
            .recv_timeout(PATIENCE)
            .map_err(|_| "thread A did not queue its wait")?;
        // The wait is queued and the word is 0: stream A must still be busy.
        let held = !stream_a.is_complete()?; // aclrtStreamQuery

        let b = t.spawn(|| -> ascendcl::Result<()> {
            flag.store(FLAG, Ordering::Release);
            info!("Flag value after the writing thread starts: {FLAG}");
            stream_b.scope(|s| {
                s.write_word(&word, VALUE)?; // aclrtValueWrite
                info!("Stream B: write data at virtual memory = {:p}", word.as_ptr());
                Ok(())
            })?;
            info!("Stream B: the data in the specified memory has met the condition, all tasks are complete");
            Ok(())
        });
        let wrote = b.join().map_err(|_| "thread B panicked")?;

        // Stream A must be released by the write; never wait for it for ever (nor when the
        // write failed: thread A would keep the scope of threads open).
        let deadline = Instant::now() + if wrote.is_ok() { PATIENCE } else { Duration::ZERO };
        while !a.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if !a.is_finished() {
            stream_a.abort()?; // aclrtStreamAbort ends the wait; A's scope then returns
            let _ = a.join();
            wrote?;
            return Err("the write did not release stream A's wait within 30 s".into());
        }
        let f = a.join().map_err(|_| "thread A panicked")??;
        wrote?;
        Ok((f, held))
    })
    .map_err(|e| -> Box<dyn Error> { e.to_string().into() })?;

    let value = word.get()?; // aclrtMemcpy
    if !held || seen != FLAG || value != VALUE {
        return Err(format!(
            "stream A held before the write: {held}; flag after the wait {seen} (expected {FLAG}); word {value} (expected {VALUE})"
        )
        .into());
    }
    stream_a.destroy()?;
    stream_b.destroy()?;
    word.free()?;
    device.reset()?;
    rt.finalize()?;
    Ok(())
}

fn main() -> ExitCode {
    // run.sh's verdict: the flag read after the wait is the one written before the write.
    report::verdict(
        run(),
        "Memory semantics synchronization across multiple streams is successful",
        "Memory semantics synchronization across multiple streams failed",
    )
}
