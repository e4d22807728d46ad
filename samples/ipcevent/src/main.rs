//! `ipcevent`: the CANN runtime's `ipcevent/0_ipcevent` sample in safe Rust.
//!
//! Process A (the producer) creates an event with `ACL_EVENT_IPC` (`aclrtCreateEventExWithFlag`)
//! and records it behind a long task on its stream, exports its handle
//! (`aclrtIpcGetEventHandle`) and starts process B (this binary again), which opens it
//! (`aclrtIpcOpenEventHandle`) and sees the record still in flight (`aclrtQueryEventStatus`).
//! When A's long task ends, B's stream, made to wait for the event (`aclrtStreamWaitEvent`),
//! synchronises; once A has seen its own record complete, B records the event itself and sends
//! its completion flag, and A, synchronising with the event (`aclrtSynchronizeEventWithTimeout`),
//! sees B's record complete.
//! The handle and the flag travel as text over a pipe (CANN's sample writes `event_handle.bin`
//! and `consumer_done.flag`); every wait is bounded. The reference's consumer sleeps 2 s to
//! stand for work of its own ("doing some work..."); this one goes straight on. The long task
//! A records behind, and B's look at the record in flight, are not in the reference.

use sample_common::report;
use sample_common::two_process;

use ascendcl::{EventFlags, IpcEventHandle, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use two_process::{PATIENCE, Parent, Peer};

/// `aclrtQueryEventStatus` as the reference prints it: 1 completed, 0 not yet.
fn status(complete: bool) -> i32 {
    i32::from(complete)
}

fn process_a() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let event = device.create_event_with_flags(EventFlags::IPC)?; // aclrtCreateEventExWithFlag
    info!("Process A: IPC event created");

    // A long task (a host function held until B has seen the record in flight), then the record.
    let (release, held) = std::sync::mpsc::channel::<()>();
    stream.launch_host_fn(move || {
        let _ = held.recv_timeout(PATIENCE);
    })?;
    event.record(&stream)?; // aclrtRecordEvent
    info!("Process A: event recorded behind a long task");
    let handle = event.ipc_handle()?; // aclrtIpcGetEventHandle
    let mut b = Peer::spawn()?;
    b.send(handle)?;
    info!("Process A: IPC event handle sent to Process B");

    let seen: i32 = b.recv_parsed("the event status it saw")?;
    if seen != 0 {
        return Err(format!("process B saw status {seen} while the record was in flight").into());
    }
    let _ = release.send(()); // the long task ends
    event.synchronize_timeout(Some(PATIENCE))?; // aclrtSynchronizeEventWithTimeout
    info!("Process A: event recorded and synchronized");
    let mine = status(event.is_complete()?); // aclrtQueryEventStatus
    info!("Process A: event status = {mine} (1=completed)");
    // B records the same event next; it waits for this so that A's look above sees A's record.
    b.send("checked")?;

    info!("Process A: waiting for consumer to finish...");
    let theirs: i32 = b.recv_parsed("the event status after its record")?;
    let recorded = b.recv()?;
    // B's record of the same event: synchronising here waits for B's stream.
    event.synchronize_timeout(Some(PATIENCE))?;
    let after = status(event.is_complete()?);
    b.finish()?;
    info!("Process A: consumer finished");
    if mine != 1 || theirs != 1 || recorded != "recorded" || after != 1 {
        return Err(format!(
            "statuses A {mine}, B {theirs}, after B's record {after} (B said {recorded:?}), not all 1"
        )
        .into());
    }

    event.destroy()?; // aclrtDestroyEvent
    stream.destroy()?;
    device.reset()?;
    rt.finalize()?;
    info!("Process A: cleanup completed");
    Ok(())
}

fn process_b() -> Result<(), Box<dyn Error>> {
    let a = Parent::new();
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream

    info!("Process B: waiting for event handle...");
    let handle: IpcEventHandle = a.recv_parsed("the event handle")?;
    info!("Process B: read event handle");
    let event = device.open_ipc_event(&handle)?; // aclrtIpcOpenEventHandle
    info!("Process B: IPC event opened");
    let before = status(event.is_complete()?);
    info!("Process B: event status = {before} (the producer's record is in flight)");
    a.send(before);

    stream.wait_event(&event)?; // aclrtStreamWaitEvent
    stream.synchronize_timeout(Some(PATIENCE))?; // aclrtSynchronizeStreamWithTimeout
    info!("Process B: event received, stream synchronized");

    // A record replaces the one A is looking at: wait until A has seen its own complete.
    let go = a.recv()?;
    if go != "checked" {
        return Err(format!("process A said {go:?}, not \"checked\"").into());
    }
    event.record(&stream)?; // aclrtRecordEvent: A sees it too
    event.synchronize_timeout(Some(PATIENCE))?; // aclrtSynchronizeEventWithTimeout
    info!("Process B: event recorded");
    let after = status(event.is_complete()?); // aclrtQueryEventStatus
    info!("Process B: event status = {after} (1=completed)");
    a.send(after);
    a.send("recorded");
    info!("Process B: completion flag sent");

    event.destroy()?; // aclrtDestroyEvent
    stream.destroy()?;
    device.reset()?;
    rt.finalize()?;
    info!("Process B: cleanup completed");
    Ok(())
}

fn main() -> ExitCode {
    two_process::main(
        process_a,
        process_b,
        "IPC event synchronization works correctly.",
        "IPC event synchronization failed.",
    )
}
