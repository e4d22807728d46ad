//! `multistream_sync_memory`: the CANN runtime's `9_multistream_sync_memory` sample in safe Rust.
//!
//! Two threads, each with its own stream on one device, share a 64-bit word of device memory
//! ([`DeviceWord`]). Thread A's stream waits until the word equals 100 (`aclrtValueWait`,
//! `ACL_STREAM_WAIT_VALUE_EQ`); thread B sets a host flag to 123, then its stream writes 100 into
//! the word (`aclrtValueWrite`), which releases A. A reads the flag after its wait: 123 shows
//! that A's stream was held until B ran (the reference passes the flag through `file/flag.txt`;
//! here it is an atomic, so there is no "Start writing to file/flag.txt" line). The program also
//! checks, before B starts, that A's stream is still busy (`aclrtStreamQuery`), and aborts A's
//! stream (`aclrtStreamAbort`) if the write has not released it within 30 s. When a step fails
//! early (or panics) while A's stream waits, the word is written from the host before the
//! threads are joined, so the program returns its error instead of hanging.

use sample_common::report;

use ascendcl::{DeviceWord, Runtime, Stream, ValueCompare};
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

    let (seen, held) = exchange(&stream_a, &stream_b, &word, Stream::is_complete)
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

/// An error of either thread.
type ThreadError = Box<dyn Error + Send + Sync>;

/// Releases stream A's wait when the threads' scope is left before B's write did (an early `?`
/// or a panic): `std::thread::scope` joins thread A on the way out, and A's stream would
/// otherwise wait for ever for a write that never comes. The host writes the word, which
/// releases a wait queued before or after it; if even that fails, the stream is aborted.
struct ReleaseOnExit<'a> {
    word: &'a DeviceWord,
    stream: &'a Stream,
    armed: bool,
}

impl Drop for ReleaseOnExit<'_> {
    fn drop(&mut self) {
        if self.armed && self.word.set(VALUE).is_err() {
            let _ = self.stream.abort();
        }
    }
}

/// The exchange: thread A's stream waits for the word, `busy` tells whether A's stream is still
/// held before B starts (`Stream::is_complete`, i.e. `aclrtStreamQuery`), thread B sets the
/// flag and its stream writes the word. Returns the flag A read after its wait and whether A was
/// held. Returns (never hangs) when any step fails.
fn exchange(
    stream_a: &Stream,
    stream_b: &Stream,
    word: &DeviceWord,
    busy: impl FnOnce(&Stream) -> ascendcl::Result<bool>,
) -> Result<(i32, bool), ThreadError> {
    let flag = AtomicI32::new(0);
    let (queued, wait_queued) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|t| -> Result<(i32, bool), ThreadError> {
        let flag = &flag;
        // The sender moves into A: if A fails before queuing its wait, the receive below ends
        // at once.
        let a = t.spawn(move || -> Result<i32, ThreadError> {
            // The scope ends with aclrtSynchronizeStream: it returns once the wait is met.
            stream_a.scope(|s| {
                s.wait_word(word, VALUE, ValueCompare::Eq)?; // aclrtValueWait
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
        let mut release = ReleaseOnExit {
            word,
            stream: stream_a,
            armed: true,
        };
        wait_queued
            .recv_timeout(PATIENCE)
            .map_err(|_| "thread A did not queue its wait")?;
        // The wait is queued and the word is 0: stream A must still be busy.
        let held = !busy(stream_a)?;

        let b = t.spawn(|| -> ascendcl::Result<()> {
            flag.store(FLAG, Ordering::Release);
            info!("Flag value after the writing thread starts: {FLAG}");
            stream_b.scope(|s| {
                s.write_word(word, VALUE)?; // aclrtValueWrite
                info!("Stream B: write data at virtual memory = {:p}", word.as_ptr());
                Ok(())
            })?;
            info!("Stream B: the data in the specified memory has met the condition, all tasks are complete");
            Ok(())
        });
        let wrote = b.join().map_err(|_| "thread B panicked")?;

        // Stream A must be released by the write; never wait for it for ever (nor when the
        // write failed).
        let deadline = Instant::now()
            + if wrote.is_ok() {
                PATIENCE
            } else {
                Duration::ZERO
            };
        while !a.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if !a.is_finished() {
            stream_a.abort()?; // aclrtStreamAbort ends the wait; A's scope then returns
            let _ = a.join();
            release.armed = false;
            wrote?;
            return Err("the write did not release stream A's wait within 30 s".into());
        }
        let a = a.join();
        release.armed = false;
        let f = a.map_err(|_| "thread A panicked")??;
        wrote?;
        Ok((f, held))
    })
}

fn main() -> ExitCode {
    // run.sh's verdict: the flag read after the wait is the one written before the write.
    report::verdict(
        run(),
        "Memory semantics synchronization across multiple streams is successful",
        "Memory semantics synchronization across multiple streams failed",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Runs the exchange with `busy` on a thread of its own and gives its result, or `None` if
    /// it has not returned after two minutes (a hang).
    fn exchange_with(
        busy: fn(&Stream) -> ascendcl::Result<bool>,
    ) -> Option<Result<(i32, bool), String>> {
        let (done, result) = mpsc::channel();
        std::thread::spawn(move || {
            let r = (|| -> Result<(i32, bool), ThreadError> {
                let rt = Runtime::new()?;
                let device = rt.device(0)?;
                let word = DeviceWord::new(&device, 0)?;
                let (a, b) = (device.create_stream()?, device.create_stream()?);
                exchange(&a, &b, &word, busy)
            })();
            let _ = done.send(r.map_err(|e| e.to_string()));
        });
        result.recv_timeout(Duration::from_secs(120)).ok()
    }

    #[test]
    fn the_write_releases_the_wait() {
        let r = exchange_with(Stream::is_complete).expect("the exchange hung");
        assert_eq!(r, Ok((FLAG, true)));
    }

    /// An early `?` in the threads' scope (here the stream query, while A's stream waits for a
    /// word nobody will write) returns its error instead of joining a thread that never ends.
    #[test]
    fn an_early_failure_does_not_hang() {
        let r = exchange_with(|_| Err(ascendcl::Error::HostFnDiscarded))
            .expect("the exchange hung after an early failure");
        let e = r.unwrap_err();
        assert!(e.contains("host function was discarded"), "{e}");
    }

    /// A panic there unwinds through the same release.
    #[test]
    fn an_early_panic_does_not_hang() {
        let (done, result) = mpsc::channel();
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(|| {
                let rt = Runtime::new().unwrap();
                let device = rt.device(0).unwrap();
                let word = DeviceWord::new(&device, 0).unwrap();
                let (a, b) = (
                    device.create_stream().unwrap(),
                    device.create_stream().unwrap(),
                );
                let _ = exchange(&a, &b, &word, |_| panic!("query panicked"));
            });
            let _ = done.send(r.is_err());
        });
        let panicked = result
            .recv_timeout(Duration::from_secs(120))
            .expect("the exchange hung after a panic");
        assert!(panicked);
    }
}
