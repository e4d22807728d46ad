//! Streams, events, scoped asynchronous work, host functions and report callbacks.

use crate::common::*;
use ascendcl::{
    CallbackBlock, DeviceBuffer, Error, EventFlags, FailureMode, HostBuffer, MallocPolicy,
    StreamFlags, StreamStatus,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[test]
fn stream_lifecycle() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    assert!(!s.as_raw().is_null());
    assert_eq!(s.device_id(), 0);
    assert_eq!(s.raw_context(), d.raw_context());
    s.synchronize().unwrap();
    s.synchronize_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    s.synchronize_timeout(None).unwrap();
    assert_eq!(s.query().unwrap(), StreamStatus::Complete);
    assert!(s.is_complete().unwrap());
    s.destroy().unwrap();
    // STOP applies to the whole context (and refuses submissions there): one of its own, as
    // tests run in parallel.
    let ctx = d.create_context().unwrap();
    let s = ctx.create_stream().unwrap();
    s.set_failure_mode(FailureMode::Stop).unwrap();
    s.destroy().unwrap();
    let f = d
        .create_stream_with(StreamFlags::FAST_LAUNCH | StreamFlags::FAST_SYNC, 3)
        .unwrap();
    assert_eq!(f.priority().unwrap(), 3);
    assert_eq!(
        f.flags().unwrap(),
        StreamFlags::FAST_LAUNCH | StreamFlags::FAST_SYNC
    );
    f.destroy_force().unwrap();
    let g = d.create_stream_with(StreamFlags::empty(), 7).unwrap();
    drop(g);
}

#[test]
fn stream_timeout_expires() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let h = s
        .launch_host_fn(move || {
            let _ = rx.recv_timeout(Duration::from_secs(5));
        })
        .unwrap();
    let e = assert_code(
        s.synchronize_timeout(Some(Duration::from_millis(20))),
        AclError::STREAM_SYNC_TIMEOUT,
    );
    assert_eq!(e.code_name(), Some("ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"));
    assert_eq!(s.query().unwrap(), StreamStatus::NotReady);
    assert!(!h.is_finished());
    assert!(h.wait_timeout(Duration::from_millis(1)).is_none());
    tx.send(()).unwrap();
    s.synchronize().unwrap();
    assert!(h.is_finished());
    h.wait().unwrap();
}

#[test]
fn events_time_and_order_streams() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s1 = d.create_stream().unwrap();
    let s2 = d.create_stream().unwrap();
    let start = d.create_event().unwrap();
    let end = d.create_event().unwrap();
    let flagged = d.create_event_with_flags(EventFlags::SYNC).unwrap();
    assert!(!start.as_raw().is_null());
    assert_argument(d.create_event_with_flags(EventFlags::empty()).map(|_| ()));

    start.record(&s1).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    s1.launch_host_fn(move || {
        let _ = rx.recv_timeout(Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(5));
    })
    .unwrap();
    s1.record_event(&end).unwrap();
    // s2 waits for s1's event: its host function runs only after s1's.
    s2.wait_event(&end).unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let seen2 = seen.clone();
    s2.launch_host_fn(move || {
        seen2.store(1, Ordering::SeqCst);
    })
    .unwrap();
    assert!(!end.is_complete().unwrap());
    assert_code(
        end.synchronize_timeout(Some(Duration::from_millis(10))),
        AclError::EVENT_SYNC_TIMEOUT,
    );
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    tx.send(()).unwrap();
    end.synchronize().unwrap();
    end.synchronize_timeout(None).unwrap();
    assert!(end.is_complete().unwrap());
    s2.synchronize().unwrap();
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    let t = end.elapsed_since(&start).unwrap();
    assert!(t >= Duration::from_millis(4), "{t:?}");
    assert_eq!(ascendcl::Event::elapsed(&start, &end).unwrap(), t);
    flagged.record(&s2).unwrap();
    flagged.reset(&s2).unwrap();
    flagged.destroy().unwrap();
}

#[test]
fn elapsed_of_unrecorded_event_fails() {
    let r = rt();
    let d = r.device(0).unwrap();
    let a = d.create_event().unwrap();
    let b = d.create_event().unwrap();
    let e = ascendcl::Event::elapsed(&a, &b).unwrap_err();
    assert!(e.code().is_some(), "{e}");
}

#[test]
fn scope_h2d_d2h_round_trip() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let src = HostBuffer::from_slice(&d, &[1u32, 2, 3, 4]).unwrap();
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let mut out = HostBuffer::<u32>::zeroed(&d, 4).unwrap();
    let mut pageable = vec![0u32; 4];
    let n = s
        .scope(|sc| {
            assert_eq!(sc.device_id(), 0);
            assert!(!sc.as_raw().is_null());
            let dv = sc.claim(&mut dev);
            assert_eq!(dv.len(), 4);
            assert!(!dv.is_empty());
            assert_eq!(dv.location(), ascendcl::MemoryLocation::Device(0));
            assert!(!dv.as_ptr().is_null());
            assert!(!dv.as_mut_ptr().is_null());
            sc.copy(dv, &src)?;
            sc.fill_bytes(dv.slice(3..)?, 0)?;
            sc.copy(&mut out, dv)?;
            sc.copy(&mut pageable, dv)?;
            Ok(7)
        })
        .unwrap();
    assert_eq!(n, 7);
    assert_eq!(&out[..], &[1, 2, 3, 0]);
    assert_eq!(pageable, [1, 2, 3, 0]);
}

#[test]
fn scope_errors_and_checks() {
    let r = rt();
    if !needs_devices(&r, 2, "scope_errors_and_checks") {
        return;
    }
    let d = r.device(0).unwrap();
    let d1 = r.device(1).unwrap();
    let s = d.create_stream().unwrap();
    let mut a = DeviceBuffer::<u8>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let other = DeviceBuffer::<u8>::zeroed(&d1, 4, MallocPolicy::HugeFirst).unwrap();
    let short = [0u8; 3];
    let mut host = [0u8; 4];
    d.make_current().unwrap();
    let e = s.scope(|sc| sc.copy(&mut a, &short)).unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    let e = s.scope(|sc| sc.copy(&mut a, &other)).unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    let e = s.scope(|sc| sc.fill_bytes(&mut host, 1)).unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    // The user's error wins, and the stream has been waited for.
    let e = s
        .scope(|sc| -> ascendcl::Result<()> {
            sc.fill_bytes(&mut a, 5)?;
            Err(Error::HostFnPanicked {
                message: "user".into(),
            })
        })
        .unwrap_err();
    assert!(matches!(e, Error::HostFnPanicked { .. }));
    assert_eq!(a.to_vec().unwrap(), [5; 4]);
    // Claimed slices out of range.
    let e = s
        .scope(|sc| sc.claim(&mut a).slice(2..9).map(|_| ()))
        .unwrap_err();
    assert!(matches!(e, Error::Argument { .. }));
}

#[test]
fn scope_waits_on_panic() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let mut dev = DeviceBuffer::<u8>::zeroed(&d, 1 << 16, MallocPolicy::HugeFirst).unwrap();
    let src = HostBuffer::from_slice(&d, &vec![3u8; 1 << 16]).unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let done2 = done.clone();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = s.scope(|sc| -> ascendcl::Result<()> {
            sc.launch_host_fn(move || {
                std::thread::sleep(Duration::from_millis(20));
                done2.store(1, Ordering::SeqCst);
            })?;
            sc.copy(&mut dev, &src)?;
            panic!("user code panics while work is in flight");
        });
    }));
    assert!(caught.is_err());
    // The scope waited for the stream before unwinding past the buffers' borrows.
    assert_eq!(done.load(Ordering::SeqCst), 1);
    assert!(s.is_complete().unwrap());
    assert_eq!(dev.to_vec().unwrap(), vec![3u8; 1 << 16]);
}

#[test]
fn scope_2d_and_events() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let ev = d.create_event().unwrap();
    let host: Vec<u16> = (0..6).collect();
    let mut dev = DeviceBuffer::<u16>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let mut dev2 = DeviceBuffer::<u16>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let g = ascendcl::Copy2d {
        dst_pitch: 2,
        src_pitch: 3,
        width: 2,
        height: 2,
    };
    s.scope(|sc| {
        let dv = sc.claim(&mut dev);
        sc.copy_2d(dv, &host, g)?;
        sc.copy_2d(
            &mut dev2,
            dv,
            ascendcl::Copy2d {
                dst_pitch: 2,
                src_pitch: 2,
                width: 2,
                height: 2,
            },
        )?;
        sc.record_event(&ev)?;
        sc.wait_event(&ev)?;
        Ok(())
    })
    .unwrap();
    assert_eq!(dev.to_vec().unwrap(), [0, 1, 3, 4]);
    assert_eq!(dev2.to_vec().unwrap(), [0, 1, 3, 4]);
    let e = s
        .scope(|sc| sc.copy_2d(&mut dev, &host, ascendcl::Copy2d { height: 3, ..g }))
        .unwrap_err();
    assert!(matches!(e, Error::Argument { .. }));
}

/// The routes between two streams that stay legal now that a claimed region is branded with its
/// own scope (tests/compile_fail/claimed_*.rs hold the refused ones): the outer scope keeps
/// using its claimed region while another stream's scope is open, and a buffer moves from one
/// stream to the other through consecutive scopes, ordered by the first scope's wait, or within
/// one nested pair through an event on unclaimed buffers.
#[test]
fn claimed_regions_stay_usable_by_their_own_scope_inside_another() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (sa, sb) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let ev = d.create_event().unwrap();
    let src = HostBuffer::from_slice(&d, &[9u32, 8, 7, 6]).unwrap();
    let other = HostBuffer::from_slice(&d, &[1u32, 2, 3, 4]).unwrap();
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let mut dev_b = DeviceBuffer::<u32>::zeroed(&d, 4, MallocPolicy::HugeFirst).unwrap();
    let (mut out_a, mut out_b) = (vec![0u32; 4], vec![0u32; 4]);
    sa.scope(|s| {
        let c = s.claim(&mut dev);
        s.copy(c, &src)?;
        s.record_event(&ev)?;
        sb.scope(|t| {
            // The outer region, used by its own (outer) scope: ordered on stream a.
            s.copy(&mut out_a, c)?;
            // Stream b waits for a's event before its own, unrelated copy.
            t.wait_event(&ev)?;
            let b = t.claim(&mut dev_b);
            t.copy(b, &other)?;
            t.copy(&mut out_b, b)
        })
    })
    .unwrap();
    assert_eq!(out_a, [9, 8, 7, 6]);
    assert_eq!(out_b, [1, 2, 3, 4]);
    // Stream a fills a buffer, stream b reads it: the first scope waited before the second began.
    sa.scope(|s| s.copy(&mut dev, &other)).unwrap();
    sb.scope(|t| t.copy(&mut out_b, &dev)).unwrap();
    assert_eq!(out_b, [1, 2, 3, 4]);
}

#[test]
fn unchecked_async_copy() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let src = HostBuffer::from_slice(&d, &[9u64; 32]).unwrap();
    let mut dev = DeviceBuffer::<u64>::zeroed(&d, 32, MallocPolicy::HugeFirst).unwrap();
    // SAFETY: both buffers outlive the synchronisation below and are not touched before it.
    unsafe { s.copy_async_unchecked(&mut dev, &*src) }.unwrap();
    s.synchronize().unwrap();
    assert_eq!(dev.to_vec().unwrap(), vec![9; 32]);
    // SAFETY: as above.
    let e = unsafe { s.copy_async_unchecked(&mut dev, &src[..3]) }.unwrap_err();
    assert!(matches!(e, Error::Argument { .. }));
}

#[test]
fn host_fn_panics_are_reported() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let ok = s.launch_host_fn(|| {}).unwrap();
    let bad = s.launch_host_fn(|| panic!("boom in host fn")).unwrap();
    let after = s.launch_host_fn(|| {}).unwrap();
    let e = s.synchronize().unwrap_err();
    match &e {
        Error::HostFnPanicked { message } => assert!(message.contains("boom"), "{message}"),
        other => panic!("{other}"),
    }
    ok.wait().unwrap();
    assert!(matches!(bad.wait(), Err(Error::HostFnPanicked { .. })));
    assert!(
        bad.clone()
            .wait_timeout(Duration::from_secs(1))
            .unwrap()
            .is_err()
    );
    after.wait().unwrap();
    // Reported once.
    s.synchronize().unwrap();
    // A String payload.
    s.launch_host_fn(|| std::panic::panic_any(String::from("owned")))
        .unwrap();
    let e = s.synchronize_timeout(None).unwrap_err();
    assert!(e.to_string().contains("owned"), "{e}");
    // Through a scope.
    let e = s
        .scope(|sc| {
            sc.launch_host_fn(|| std::panic::panic_any(5u8))?;
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(e, Error::HostFnPanicked { .. }), "{e}");
}

#[test]
fn report_callbacks() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let sub = s.subscribe_report().unwrap();
    assert_ne!(sub.thread_id(), 0);
    let hits = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for block in [CallbackBlock::Block, CallbackBlock::NoBlock] {
        let h = hits.clone();
        handles.push(
            sub.launch_callback(block, move || {
                h.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap(),
        );
    }
    for h in &handles {
        h.wait().unwrap();
    }
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    let bad = sub
        .launch_callback(CallbackBlock::Block, || panic!("cb"))
        .unwrap();
    assert!(bad.wait().is_err());
    let e = sub.close().unwrap_err();
    assert!(matches!(e, Error::HostFnPanicked { .. }), "{e}");
    // Dropping a subscription also cleans up.
    let sub = s.subscribe_report().unwrap();
    drop(sub);
    s.synchronize().unwrap();
}

#[test]
fn destroy_force_drops_host_fns_that_never_ran() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let first = s
        .launch_host_fn(move || {
            let _ = started_tx.send(());
            let _ = go_rx.recv_timeout(Duration::from_secs(10));
        })
        .unwrap();
    let token = Arc::new(());
    let t = token.clone();
    let second = s.launch_host_fn(move || drop(t)).unwrap();
    started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // The first closure is running; the second is queued behind it and gets discarded.
    s.destroy_force().unwrap();
    assert!(matches!(second.wait(), Err(Error::HostFnDiscarded)));
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "the discarded closure was dropped"
    );
    drop(go_tx);
    first.wait().unwrap();
    assert!(
        ascendcl::take_drop_errors()
            .iter()
            .all(|e| e.api() != Some("aclrtDestroyStreamForce"))
    );
}

#[test]
fn closing_a_subscription_runs_queued_no_block_callbacks() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let sub = s.subscribe_report().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let h = hits.clone();
            sub.launch_callback(CallbackBlock::NoBlock, move || {
                std::thread::sleep(Duration::from_millis(2));
                h.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
        })
        .collect();
    sub.close().unwrap();
    // Every callback ran before the report thread left: none is left unrun (and leaked).
    assert!(handles.iter().all(|h| h.is_finished()));
    assert_eq!(hits.load(Ordering::SeqCst), 20);
}
