//! `multi_stream`: the CANN runtime's `stream/2_multi_stream` sample in safe Rust.
//!
//! Three ways to order two streams that work on one device word, each in a runtime of its own
//! with both streams in STOP failure mode. A long task on the first stream adds 1 (a host
//! function that holds the stream until the host lets it go, then a built-in reduction,
//! `aclrtReduceAsync`); a short task on the second doubles it (the word reduced with itself).
//! Ordered correctly the answer is 2:
//!
//! * stream synchronisation: the first stream's scope waits (`aclrtSynchronizeStream`), then
//!   the second stream works;
//! * an event: the first stream's scope hands its work to the second (`Scope::hand_off`): the
//!   event is recorded on the first stream (`aclrtRecordEvent`) and waited for by the second
//!   with a timeout (`aclrtStreamWaitEventWithTimeout`), reset there (`aclrtResetEvent`),
//!   recorded after the short task and waited for on the host (`aclrtSynchronizeEvent`);
//! * a notify: recorded on the first stream (`aclrtRecordNotify`), waited for and reset by the
//!   second (`aclrtWaitAndResetNotify`).
//!
//! The stream and event variants then hold another long task and wait 1000 ms for it
//! (`aclrtSynchronizeStreamWithTimeout`, `aclrtSynchronizeEventWithTimeout`): the expected
//! timeouts (507046, 507047) are printed as the reference prints them, then the task is let go.

use sample_common::report;

use ascendcl::{
    AclError, Claimed, DeviceBuffer, FailureMode, Handoff, Notify, ReduceKind, Runtime, Scope,
    Stream,
};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

const OK: &str = "Run the multi_stream sample successfully.";
const FAIL: &str = "Run the multi_stream sample failed.";

/// How long the timeout demonstrations wait (`kWaitTimeMs` of the reference).
const WAIT: Duration = Duration::from_millis(1000);
/// How long a stream waits for the other's event or notify before its wait fails.
const ORDER_TIMEOUT: Duration = Duration::from_secs(5);

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// Lets a long task go on (and lets it go when dropped, on every way out).
struct Gate(Option<mpsc::Sender<()>>);

impl Gate {
    fn open(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

/// The long task: the stream holds until the gate opens, then adds 1 to `num`.
fn long_task<'scope>(
    s: &Scope<'scope, '_>,
    num: Claimed<'scope, i32>,
    one: &'scope DeviceBuffer<i32>,
) -> ascendcl::Result<Gate> {
    let (tx, rx) = mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = rx.recv();
    })?;
    s.reduce(num, one, ReduceKind::Sum)?;
    Ok(Gate(Some(tx)))
}

/// The short task: `num` doubled (added to itself).
fn short_task<'scope>(s: &Scope<'scope, '_>, num: Claimed<'scope, i32>) -> ascendcl::Result<()> {
    s.reduce(num, num, ReduceKind::Sum)
}

/// Prints an expected timeout the way the reference prints a failed call (its `CHECK_ERROR`
/// line, with the call as written there), after checking its code.
fn expect_timeout(call: &str, r: ascendcl::Result<()>, code: AclError) -> Res {
    match r {
        Err(e) if e.code() == Some(code) => {
            println!(
                "[ERROR]  Operation failed: {call} returned error code {}",
                code.code()
            );
            Ok(())
        }
        Err(e) => Err(format!("{call}: expected error code {}, got {e}", code.code()).into()),
        Ok(()) => Err(format!("{call} returned before the long task was let go").into()),
    }
}

/// What each variant leaves: the answer after the ordered tasks, and the final word.
struct Outcome {
    answer: i32,
    last: i32,
}

/// A runtime, a device context and two streams in STOP failure mode, as the reference sets up
/// each variant; `f` gets the streams, the word and the one to add.
fn variant(
    title: &str,
    f: impl FnOnce(&Stream, &Stream, &mut DeviceBuffer<i32>, &DeviceBuffer<i32>) -> Res<i32>,
) -> Res<Outcome> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let ctx = device.create_context()?; // aclrtCreateContext
    let (first, second) = (ctx.create_stream()?, ctx.create_stream()?);
    first.set_failure_mode(FailureMode::Stop)?; // aclrtSetStreamFailureMode
    second.set_failure_mode(FailureMode::Stop)?;
    info!("{title}");
    let mut num = device.clone_htod(&[0i32])?; // aclrtMalloc, aclrtMemcpy
    let one = device.clone_htod(&[1i32])?;
    info!("Applied resource successfully, begin assigning task.");
    let answer = f(&first, &second, &mut num, &one)?;
    let last = num.copy_to_vec()?[0];
    num.free()?; // aclrtFree
    one.free()?;
    first.destroy_force()?; // aclrtDestroyStreamForce
    second.destroy_force()?;
    ctx.destroy()?; // aclrtDestroyContext
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("Resource cleanup completed.");
    Ok(Outcome { answer, last })
}

fn stream_synchronization() -> Res<Outcome> {
    variant("Use stream synchronize.", |first, second, num, one| {
        first.scope(|s| {
            let x = s.claim(num);
            info!("Begin a long task, num += 1.");
            let mut gate = long_task(s, x, one)?;
            info!("Stream synchronize.");
            gate.open();
            Ok(())
        })?; // aclrtSynchronizeStream(stream1): the scope's end
        info!("Begin a short task, num *= 2.");
        second.scope(|s| short_task(s, s.claim(num)))?;
        let answer = num.copy_to_vec()?[0];
        info!("The answer is {answer}.");
        info!("Simulate timeout, wait 1000ms, the task will fail.");
        let waited = first.scope(|s| {
            let mut gate = long_task(s, s.claim(num), one)?;
            let r = s.stream().synchronize_timeout(Some(WAIT));
            gate.open();
            Ok(r)
        })?;
        expect_timeout(
            "aclrtSynchronizeStreamWithTimeout(stream1, kWaitTimeMs)",
            waited,
            AclError::STREAM_SYNC_TIMEOUT,
        )?;
        Ok(answer)
    })
}

fn event_synchronization() -> Res<Outcome> {
    variant("Use event synchronize.", |first, second, num, one| {
        let event = first.device().create_event()?; // aclrtCreateEvent
        first.scope(|s| {
            let x = s.claim(num);
            info!("Begin a long task, num += 1.");
            let mut gate = long_task(s, x, one)?;
            info!("Event synchronize.");
            // aclrtRecordEvent(event, stream1); aclrtStreamWaitEventWithTimeout(stream2, ...)
            let by = Handoff::event(&event).timeout(ORDER_TIMEOUT);
            s.hand_off(second, by, |t| {
                event.reset(t.stream())?; // aclrtResetEvent(event, stream2)
                info!("Begin a short task, num *= 2.");
                short_task(t, x)?;
                t.record_event(&event)?; // aclrtRecordEvent(event, stream2)
                gate.open();
                event.synchronize() // aclrtSynchronizeEvent
            })
        })?;
        let answer = num.copy_to_vec()?[0];
        info!("The answer is {answer}.");
        info!("Simulate timeout, wait 1000ms, the task will fail.");
        let waited = first.scope(|s| {
            let mut gate = long_task(s, s.claim(num), one)?;
            s.record_event(&event)?;
            let r = event.synchronize_timeout(Some(WAIT));
            gate.open();
            Ok(r)
        })?;
        expect_timeout(
            "aclrtSynchronizeEventWithTimeout(event, kWaitTimeMs)",
            waited,
            AclError::EVENT_SYNC_TIMEOUT,
        )?;
        event.destroy()?; // aclrtDestroyEvent
        Ok(answer)
    })
}

fn notify_synchronization() -> Res<Outcome> {
    variant("Use notify synchronize.", |first, second, num, one| {
        let notify = Notify::new(first.device())?; // aclrtCreateNotify
        first.scope(|s| {
            let x = s.claim(num);
            info!("Begin a long task, num += 1.");
            let mut gate = long_task(s, x, one)?;
            info!("Stream synchronize.");
            // aclrtRecordNotify(notify, stream1); aclrtWaitAndResetNotify(notify, stream2, ...)
            let by = Handoff::notify(&notify).timeout(ORDER_TIMEOUT);
            s.hand_off(second, by, |t| {
                info!("Begin a short task, num *= 2.");
                short_task(t, x)?;
                gate.open();
                t.stream().synchronize() // aclrtSynchronizeStream(stream2)
            })
        })?;
        let answer = num.copy_to_vec()?[0];
        info!("The answer is {answer}.");
        notify.destroy()?; // aclrtDestroyNotify
        Ok(answer)
    })
}

fn run() -> Res {
    let checks = [
        ("stream", stream_synchronization()?, 3),
        ("event", event_synchronization()?, 3),
        ("notify", notify_synchronization()?, 2),
    ];
    for (how, got, last) in checks {
        if got.answer != 2 || got.last != last {
            return Err(format!(
                "ordered by {how}: expected the answer 2 and the word {last} at the end, got {} \
                 and {}",
                got.answer, got.last
            )
            .into());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
