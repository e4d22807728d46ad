//! Ordering streams after each other: waits for events with a timeout, an event's wait status,
//! event timestamps, and scopes that hand their work to another stream ([`Scope::hand_off`]),
//! whose ordering is checked on shared memory; a stream's configuration in one value and the
//! configuration handles the hardware does not support.

use crate::common::*;
use ascendcl::{
    Error, EventWaitStatus, FailureMode, Handoff, Notify, ReduceKind, StreamConfig,
    StreamConfigHandle, StreamFlags,
};
use std::sync::mpsc;
use std::time::Duration;

/// A host function that holds its stream until the sender is used (or dropped).
fn gate() -> (mpsc::Sender<()>, impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel::<()>();
    (tx, move || {
        let _ = rx.recv();
    })
}

#[test]
fn a_timed_wait_orders_streams_and_the_wait_status_follows() {
    let r = rt();
    // A wait expires on purpose: on the device kept for failures.
    let d = failure_device(&r);
    let (producer, consumer) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    assert_eq!(e.wait_status().unwrap(), EventWaitStatus::Complete);
    let (open, hold) = gate();
    producer.launch_host_fn(hold).unwrap();
    e.record(&producer).unwrap();
    consumer
        .wait_event_timeout(&e, Some(Duration::from_secs(5)))
        .unwrap();
    let after = consumer.launch_host_fn(|| ()).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!consumer.is_complete().unwrap());
    assert_eq!(e.wait_status().unwrap(), EventWaitStatus::NotReady);
    open.send(()).unwrap();
    consumer.synchronize().unwrap();
    after.wait().unwrap();
    assert_eq!(e.wait_status().unwrap(), EventWaitStatus::Complete);
    // Timestamps: the record was reached, later records later.
    let first = e.timestamp().unwrap();
    e.record(&producer).unwrap();
    e.synchronize().unwrap();
    assert!(e.timestamp().unwrap() >= first);
    // A scope waits the same way; an expired wait fails the scope's stream.
    let (open, hold) = gate();
    producer.launch_host_fn(hold).unwrap();
    e.record(&producer).unwrap();
    let err = consumer
        .scope(|s| s.wait_event_timeout(&e, Some(Duration::from_millis(1))))
        .unwrap_err();
    assert_eq!(err.code(), Some(AclError::TASK_TIMEOUT), "{err}");
    open.send(()).unwrap();
    producer.synchronize().unwrap();
    // None waits for ever (until the record).
    consumer.scope(|s| s.wait_event_timeout(&e, None)).unwrap();
}

#[test]
fn an_event_never_recorded_has_no_timestamp_and_ipc_events_no_wait_status() {
    let r = rt();
    let d = r.device(0).unwrap();
    let e = d.create_event().unwrap();
    assert!(e.timestamp().is_err());
    let ipc = d
        .create_event_with_flags(ascendcl::EventFlags::IPC)
        .unwrap();
    let err = ipc.wait_status().unwrap_err();
    assert!(matches!(err, Error::NotSupported { .. }), "{err}");
    assert!(err.is_not_supported());
    assert_eq!(err.api(), Some("aclrtQueryEventWaitStatus"));
}

#[test]
fn a_hand_off_orders_both_ways_around_the_other_streams_work() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    let mut x = d.clone_htod(&[0i32; 4]).unwrap();
    let ones = d.clone_htod(&[1i32; 4]).unwrap();
    let (open1, hold1) = gate();
    let (open2, hold2) = gate();
    first
        .scope(|a| {
            let xc = a.claim(&mut x);
            a.launch_host_fn(hold1)?;
            a.reduce(xc, &ones, ReduceKind::Sum)?; // 1, held by the gate
            a.hand_off(&second, Handoff::event(&e), |b| {
                b.launch_host_fn(hold2)?;
                b.reduce(xc, xc, ReduceKind::Sum)?; // 2, after the first stream's 1
                // Enqueued on the first stream now, but run after the second's work: 3.
                a.reduce(xc, &ones, ReduceKind::Sum)?;
                assert_eq!(e.wait_status()?, EventWaitStatus::NotReady);
                open1.send(()).unwrap();
                // Were the first stream not held, its +1 would run now, before the doubling.
                std::thread::sleep(Duration::from_millis(30));
                assert!(!second.is_complete()?);
                open2.send(()).unwrap();
                Ok(())
            })?;
            a.reduce(xc, &ones, ReduceKind::Sum) // 4
        })
        .unwrap();
    assert_eq!(x.to_vec().unwrap(), [4; 4]);
    assert_eq!(e.wait_status().unwrap(), EventWaitStatus::Complete);
    // A notify orders the same way; hand-offs nest, and return the closure's value.
    let n = Notify::new(&d).unwrap();
    let third = d.create_stream().unwrap();
    let got = first
        .scope(|a| {
            let xc = a.claim(&mut x);
            a.reduce(xc, &ones, ReduceKind::Sum)?; // 5
            a.hand_off(&second, Handoff::notify(&n), |b| {
                b.reduce(xc, xc, ReduceKind::Sum)?; // 10
                b.hand_off(&third, Handoff::event(&e), |c| {
                    c.reduce(xc, &ones, ReduceKind::Sum)?; // 11
                    Ok(7)
                })
            })
        })
        .unwrap();
    assert_eq!(got, 7);
    assert_eq!(x.to_vec().unwrap(), [11; 4]);
    assert!(ascendcl::take_drop_errors().is_empty());
}

#[test]
fn a_notify_holding_an_older_record_does_not_let_the_other_stream_run_early() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let n = Notify::new(&d).unwrap();
    // A record no wait consumed: the second stream's wait for the notify passes at once.
    first.scope(|a| a.record_notify(&n)).unwrap();
    let mut x = d.clone_htod(&[1i32; 4]).unwrap();
    let ones = d.clone_htod(&[1i32; 4]).unwrap();
    let (open, hold) = gate();
    first
        .scope(|a| {
            let xc = a.claim(&mut x);
            a.launch_host_fn(hold)?;
            a.reduce(xc, &ones, ReduceKind::Sum)?; // 2
            a.hand_off(&second, Handoff::notify(&n), |b| {
                b.reduce(xc, xc, ReduceKind::Sum)?; // 4, not (1 * 2) + 1
                std::thread::sleep(Duration::from_millis(30));
                assert!(!second.is_complete()?, "the hand-off's own notify holds it");
                open.send(()).unwrap();
                Ok(())
            })
        })
        .unwrap();
    assert_eq!(x.to_vec().unwrap(), [4; 4]);
    n.reset().unwrap();
}

#[test]
fn a_timed_out_wait_keeps_the_order_and_is_reported_by_the_scope() {
    let r = rt();
    // A wait expires on purpose: on the device kept for failures.
    let d = failure_device(&r);
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    let mut x = d.clone_htod(&[1i32; 4]).unwrap();
    let ones = d.clone_htod(&[1i32; 4]).unwrap();
    let (open, hold) = gate();
    let err = first
        .scope(|a| {
            let xc = a.claim(&mut x);
            a.launch_host_fn(hold)?;
            a.reduce(xc, &ones, ReduceKind::Sum)?; // 2, held past the timeout
            let by = Handoff::event(&e).timeout(Duration::from_millis(1));
            a.hand_off(&second, by, |b| {
                b.reduce(xc, xc, ReduceKind::Sum)?; // 4: after the 2 all the same
                // The second stream's wait for the event expires after a second; let the first
                // stream go only then.
                let deadline = std::time::Instant::now() + Duration::from_secs(10);
                while e.wait_status()? == EventWaitStatus::NotReady
                    && std::time::Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                assert!(
                    !second.is_complete()?,
                    "the hand-off's own wait holds the stream"
                );
                open.send(()).unwrap();
                Ok(())
            })
        })
        .unwrap_err();
    assert_eq!(err.code(), Some(AclError::TASK_TIMEOUT), "{err}");
    assert_eq!(x.to_vec().unwrap(), [4; 4]);
    // The scope's end waited for the second stream too, and reported its failure.
    second.synchronize().unwrap();
}

#[test]
fn hand_offs_go_to_any_stream_and_return_the_closures_error() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    let mut x = d.clone_htod(&[1i32; 4]).unwrap();
    // To the scope's own stream, and back from the other: one scope, ordered by its tracking
    // (nothing waits for work not enqueued yet, so nothing can wait for itself).
    first
        .scope(|a| {
            let xc = a.claim(&mut x);
            a.hand_off(&first, Handoff::event(&e), |same| {
                same.reduce(xc, xc, ReduceKind::Sum) // 2
            })?;
            a.hand_off(&second, Handoff::event(&e), |b| {
                b.reduce(xc, xc, ReduceKind::Sum)?; // 4
                b.hand_off(&first, Handoff::event(&e), |back| {
                    back.reduce(xc, xc, ReduceKind::Sum) // 8
                })
            })
        })
        .unwrap();
    assert_eq!(x.to_vec().unwrap(), [8; 4]);
    // A stream of another context, in STOP mode (STOP applies to the whole context: one of its
    // own, as tests run in parallel), takes a timed hand-off.
    let ctx = d.create_context().unwrap();
    let stop = ctx.create_stream().unwrap();
    stop.set_failure_mode(FailureMode::Stop).unwrap();
    let timed = Handoff::event(&e).timeout(Duration::from_secs(5));
    first
        .scope(|a| {
            let xc = a.claim(&mut x);
            a.hand_off(&stop, timed, |b| b.reduce(xc, xc, ReduceKind::Sum))
        })
        .unwrap();
    assert_eq!(x.to_vec().unwrap(), [16; 4]);
    // A closure's error is the hand-off's; the scope still waits for both streams.
    let err = first
        .scope(|a| {
            a.hand_off(&second, Handoff::event(&e), |_| -> ascendcl::Result<()> {
                Err(Error::HostFnDiscarded)
            })
        })
        .unwrap_err();
    assert!(matches!(err, Error::HostFnDiscarded), "{err}");
    assert!(second.is_complete().unwrap());
    // A stream of another device joins; memory of this device is refused there without peer
    // access, before anything is enqueued.
    if needs_devices(&r, 2, "hand_offs_refuse_memory_of_another_device") {
        let other = r.device(1).unwrap().create_stream().unwrap();
        first
            .scope(|a| {
                let xc = a.claim(&mut x);
                let err = a
                    .hand_off(&other, Handoff::event(&e), |b| {
                        b.reduce(xc, xc, ReduceKind::Sum)
                    })
                    .unwrap_err();
                assert!(matches!(err, Error::Argument { .. }), "{err}");
                Ok(())
            })
            .unwrap();
        assert_eq!(x.to_vec().unwrap(), [16; 4]);
    }
}

#[test]
fn a_stream_reports_its_configuration_in_one_value() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream_with(StreamFlags::FAST_LAUNCH, 3).unwrap();
    let c = s.config().unwrap();
    assert_eq!(
        c,
        StreamConfig {
            id: s.id().unwrap(),
            flags: StreamFlags::FAST_LAUNCH,
            priority: 3,
        }
    );
    let plain = d.create_stream().unwrap().config().unwrap();
    assert_eq!((plain.flags, plain.priority), (StreamFlags::empty(), 0));
    assert_ne!(plain.id, c.id);
}

#[test]
fn configuration_handles_are_not_supported_on_this_hardware() {
    let r = rt();
    let d = r.device(0).unwrap();
    if !emulator_active() {
        // A runtime that supports them would build a stream; one that does not says so.
        match StreamConfigHandle::new(&d) {
            Ok(mut h) => {
                h.set_flags(StreamFlags::empty()).unwrap();
                h.set_priority(0).unwrap();
                let s = h.create_stream().unwrap();
                assert_eq!(s.config().unwrap().priority, 0);
            }
            Err(e) => assert!(matches!(e, Error::NotSupported { .. }), "{e}"),
        }
        return;
    }
    let err = StreamConfigHandle::new(&d).unwrap_err();
    match &err {
        Error::NotSupported { api, message } => {
            assert_eq!(*api, "aclrtCreateStreamConfigHandle");
            let m = message.as_deref().unwrap_or_default();
            assert!(m.contains("not supported on any Atlas product"), "{m}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(err.code(), Some(AclError::FEATURE_NOT_SUPPORT));
    assert!(
        err.to_string().contains("not supported on this device"),
        "{err}"
    );
}

#[test]
fn streams_of_a_hand_off_may_be_aborted_and_the_scope_reports_it() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    let mut x = d.clone_htod(&[1i32; 4]).unwrap();
    let (open, hold) = gate();
    let err = first
        .scope(|s| {
            let x = s.claim(&mut x);
            s.hand_off(&second, Handoff::event(&e), |t| {
                t.launch_host_fn(hold)?;
                t.reduce(x, x, ReduceKind::Sum)?; // held, then discarded
                // From another thread: the abort is allowed while the scope is open.
                std::thread::scope(|th| {
                    th.spawn(|| {
                        std::thread::sleep(Duration::from_millis(20));
                        let _ = open.send(());
                    });
                    second.abort()
                })
            })?;
            // Ordered after the discarded doubling by the scope's tracking: runs once the
            // abort has discarded it.
            s.reduce(x, x, ReduceKind::Sum)
        })
        .unwrap_err();
    assert!(matches!(err, Error::OnStream { lane: 1, .. }), "{err}");
    assert!(
        matches!(err.on_stream_source(), Error::Aborted { .. }),
        "{err}"
    );
    assert_eq!(x.to_vec().unwrap(), [2; 4], "the discarded work never ran");
    // A stream stopped beforehand is refused at once, and may be aborted.
    second.stop().unwrap();
    let err = first
        .scope(|s| s.hand_off(&second, Handoff::event(&e), |_| Ok(())))
        .unwrap_err();
    assert!(matches!(err, Error::Argument { .. }), "{err}");
    second.abort().unwrap();
    first
        .scope(|s| s.hand_off(&second, Handoff::event(&e), |_| Ok(())))
        .unwrap();
}

#[test]
fn the_end_of_a_scope_waits_for_the_streams_it_handed_work_to() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    let (open, hold) = gate();
    let (started, has_started) = mpsc::channel::<()>();
    let mut x = d.clone_htod(&[1i32; 4]).unwrap();
    let released = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|th| {
        first
            .scope(|s| {
                let x = s.claim(&mut x);
                s.hand_off(&second, Handoff::event(&e), |t| {
                    t.launch_host_fn(move || {
                        let _ = started.send(());
                        hold()
                    })?;
                    t.reduce(x, x, ReduceKind::Sum)
                })?;
                // The second stream runs its hand-off work: the first one has recorded what
                // the second waited for and now waits for the second. Cut that wait short by
                // discarding it (through the raw layer, which the safe `abort` refuses here).
                // The scope's end must still wait for the second stream's work on `x`.
                has_started.recv_timeout(Duration::from_secs(10)).unwrap();
                // SAFETY: a live stream; discarded tasks never touch memory.
                unsafe { ascendcl::raw::aclrtStreamAbort(first.as_raw()) }?;
                th.spawn(|| {
                    std::thread::sleep(Duration::from_millis(50));
                    released.store(true, std::sync::atomic::Ordering::SeqCst);
                    open.send(()).unwrap();
                });
                Ok(())
            })
            .unwrap();
        assert!(
            released.load(std::sync::atomic::Ordering::SeqCst),
            "the scope ended before the second stream's work was let go"
        );
    });
    assert!(second.is_complete().unwrap());
    assert_eq!(x.to_vec().unwrap(), [2; 4]);
}

/// Runs `f` on another thread and fails the test when it has not returned after `limit` (the
/// stuck thread is left behind: a deadlock cannot be undone).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not return within {limit:?}: deadlocked"))
}

#[test]
fn two_threads_handing_off_between_two_shared_streams_never_deadlock() {
    // With the notify-based hand-off this wedged both streams after some 26,000 scopes: each
    // stream waited for the other's record of a later hand-off.
    let r = rt();
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    within(Duration::from_secs(120), move || {
        std::thread::scope(|t| {
            for _ in 0..2 {
                let (first, second, d) = (&first, &second, &d);
                t.spawn(move || {
                    let e = d.create_event().unwrap();
                    let mut x = d.clone_htod(&[1i32; 4]).unwrap();
                    for _ in 0..15_000 {
                        first
                            .scope(|a| {
                                let xc = a.claim(&mut x);
                                a.hand_off(second, Handoff::event(&e), |b| {
                                    b.reduce(xc, xc, ReduceKind::Max)
                                })?;
                                a.reduce(xc, xc, ReduceKind::Max)
                            })
                            .unwrap();
                    }
                    assert_eq!(x.to_vec().unwrap(), [1; 4]);
                });
            }
        });
        drop(r);
    });
}
