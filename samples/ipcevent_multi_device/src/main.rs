//! `ipcevent_multi_device`: the CANN runtime's `ipcevent/1_ipcevent_multi_device` sample in
//! safe Rust.
//!
//! The producer (process A) creates an event with `ACL_EVENT_IPC` on device 0
//! (`aclrtCreateEventExWithFlag`), records it (`aclrtRecordEvent`) and exports its handle
//! (`aclrtIpcGetEventHandle`). It starts one consumer process per other device (this binary
//! again); consumer `i` opens the handle on device `i` (`aclrtIpcOpenEventHandle`), makes a
//! stream of its own wait for the event (`aclrtStreamWaitEvent`), synchronises it, reads the
//! event's status (`aclrtQueryEventStatus`), then records the event itself to tell the
//! producer. The producer synchronises with the event after each consumer's record
//! (`aclrtSynchronizeEventWithTimeout`) and reads its status.
//!
//! The handle and the messages travel as text over pipes (CANN's sample writes the handle and
//! one flag file per consumer); every wait is bounded. The consumers run one after the other,
//! so that each record the producer looks at is that consumer's; the reference starts them
//! together. The long task, and the consumer's look at the record in flight, are not in the
//! reference.

use sample_common::report;
use sample_common::two_process;

use ascendcl::{EventFlags, IpcEventHandle, Runtime};
use report::info;
use std::error::Error;
use std::process::ExitCode;
use two_process::{PATIENCE, Parent, Peer};

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// `aclrtQueryEventStatus` as the reference prints it: 1 completed, 0 not yet.
fn status(complete: bool) -> i32 {
    i32::from(complete)
}

fn producer() -> Res {
    let rt = Runtime::new()?; // aclInit
    let count = rt.device_count()?; // aclrtGetDeviceCount
    if count < 2 {
        return Err(format!("{count} device(s): the sample needs at least 2").into());
    }
    let consumers = count - 1;
    info!("Starting producer on device 0, waiting for {consumers} consumer(s)...");
    let device = rt.device(0)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let event = device.create_event_with_flags(EventFlags::IPC)?; // aclrtCreateEventExWithFlag
    info!("Producer: IPC event created on device 0");
    let mut exported = None;
    for id in 1..=consumers {
        // A long task (a host function held until the consumer has seen the record in
        // flight), then the record the consumer's stream waits for.
        let (release, held) = std::sync::mpsc::channel::<()>();
        stream.launch_host_fn(move || {
            let _ = held.recv_timeout(PATIENCE);
        })?;
        event.record(&stream)?; // aclrtRecordEvent
        let handle = match exported {
            Some(h) => h,
            None => *exported.insert(event.ipc_handle()?), // aclrtIpcGetEventHandle
        };
        info!("Starting consumer {id} on device {id}");
        let mut b = Peer::spawn()?;
        b.send(id)?;
        b.send(handle)?;
        let before: i32 = b.recv_parsed("the event status before the record")?;
        let _ = release.send(()); // the long task ends, the record completes
        let seen: i32 = b.recv_parsed("the event status it saw")?;
        let recorded = b.recv()?;
        if before != 0 || seen != 1 || recorded != "recorded" {
            return Err(format!(
                "consumer {id} saw statuses {before} then {seen} and said {recorded:?}, \
                 not 0, 1 and \"recorded\""
            )
            .into());
        }
        // The consumer's record of the same event: synchronising here waits for it.
        event.synchronize_timeout(Some(PATIENCE))?; // aclrtSynchronizeEventWithTimeout
        b.finish()?;
        let after = status(event.is_complete()?); // aclrtQueryEventStatus
        info!("Producer: event status = {after} (1=completed)");
        if after != 1 {
            return Err(format!("after consumer {id}'s record the status is {after}").into());
        }
    }
    info!("All {consumers} consumers have finished.");

    event.destroy()?; // aclrtDestroyEvent
    stream.destroy()?; // aclrtDestroyStream
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("Producer: finished successfully.");
    Ok(())
}

fn consumer() -> Res {
    let a = Parent::new();
    let id: i32 = a.recv_parsed("the consumer's device")?;
    let handle: IpcEventHandle = a.recv_parsed("the event handle")?;
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(id)?; // aclrtSetDevice
    let stream = device.create_stream()?; // aclrtCreateStream
    let event = device.open_ipc_event(&handle)?; // aclrtIpcOpenEventHandle
    info!("Consumer {id}: IPC event opened on device {id}");
    a.send(status(event.is_complete()?)); // the producer's record is still in flight
    stream.wait_event(&event)?; // aclrtStreamWaitEvent
    stream.synchronize_timeout(Some(PATIENCE))?; // aclrtSynchronizeStreamWithTimeout
    info!("Consumer {id}: event received, stream synchronized");
    let seen = status(event.is_complete()?); // aclrtQueryEventStatus
    info!("Consumer {id}: event status = {seen} (1=completed)");
    a.send(seen);
    event.record(&stream)?; // aclrtRecordEvent: the producer sees it
    event.synchronize_timeout(Some(PATIENCE))?; // aclrtSynchronizeEventWithTimeout
    a.send("recorded");

    event.destroy()?; // aclrtDestroyEvent
    stream.destroy()?; // aclrtDestroyStream
    device.reset()?; // aclrtResetDevice
    rt.finalize()?; // aclFinalize
    info!("Consumer {id} (device {id}) finished successfully.");
    Ok(())
}

fn main() -> ExitCode {
    two_process::main(
        producer,
        consumer,
        "IPC event multi-device synchronization works correctly.",
        "IPC event multi-device synchronization failed.",
    )
}
