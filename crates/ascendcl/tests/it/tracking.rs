//! One scope over several streams ([`ascendcl::scope`], [`Scope::on`]): the order the scope's
//! tracking gives to uses of claimed memory across its streams, checked on the memory with
//! streams held by host functions; the waits it does not queue (already ordered, or ordered by
//! the caller's event); streams of two devices; errors naming their stream; nested scopes,
//! panics and `mem::forget`.

use crate::common::*;
use ascendcl::{Error, HostBuffer, ReduceKind, Scope};
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
fn a_read_on_another_stream_waits_for_the_write() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let mut x = d.alloc_zeros::<u32>(64).unwrap();
    let mut back = HostBuffer::<u32>::zeroed(&d, 64).unwrap();
    let (open, hold) = gate();
    let stats = ascendcl::scope([&a, &b], |[sa, sb]| {
        let xc = sa.claim(&mut x);
        sa.launch_host_fn(hold)?;
        sa.fill(xc, 5)?; // held behind the gate
        sb.copy(&mut back, xc)?; // must wait for the fill
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            !b.is_complete()?,
            "the read waits for the write on the other stream"
        );
        open.send(()).unwrap();
        Ok(sa.stats())
    })
    .unwrap();
    assert_eq!(back[..], [5; 64]);
    assert_eq!(stats.waits, 1, "{stats:?}");
}

#[test]
fn a_write_waits_for_reads_queued_on_other_streams() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b, c) = (
        d.create_stream().unwrap(),
        d.create_stream().unwrap(),
        d.create_stream().unwrap(),
    );
    let mut x = d.clone_htod(&[1u32; 32]).unwrap();
    let mut first = HostBuffer::<u32>::zeroed(&d, 32).unwrap();
    let mut second = HostBuffer::<u32>::zeroed(&d, 32).unwrap();
    let (open_b, hold_b) = gate();
    let (open_c, hold_c) = gate();
    ascendcl::scope([&a, &b, &c], |[sa, sb, sc]| {
        let xc = sa.claim(&mut x);
        sb.launch_host_fn(hold_b)?;
        sb.copy(&mut first, xc)?; // a read held on b
        sc.launch_host_fn(hold_c)?;
        sc.copy(&mut second, xc)?; // another held on c
        sa.fill(xc, 9)?; // the write waits for both reads
        std::thread::sleep(Duration::from_millis(30));
        assert!(!a.is_complete()?, "the write waits for the reads");
        open_b.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!a.is_complete()?, "and for the last of them");
        open_c.send(()).unwrap();
        Ok(())
    })
    .unwrap();
    assert_eq!(first[..], [1; 32], "the read ran before the write");
    assert_eq!(second[..], [1; 32]);
    assert_eq!(x.to_vec().unwrap(), [9; 32]);
}

#[test]
fn uses_already_ordered_queue_no_wait() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let mut x = d.alloc_zeros::<i32>(8).unwrap();
    let mut y = d.alloc_zeros::<i32>(8).unwrap();
    let mut back = vec![0i32; 8];
    let stats = ascendcl::scope([&a, &b], |[sa, sb]| {
        let (xc, yc) = (sa.claim(&mut x), sa.claim(&mut y));
        sa.fill(xc, 3)?;
        sa.fill(yc, 4)?;
        sb.reduce(yc, xc, ReduceKind::Sum)?; // one wait covers both fills (y after x on a)
        sb.reduce(yc, xc, ReduceKind::Sum)?; // same stream: ordered by it
        sb.copy(&mut back, yc)?;
        Ok(sa.stats())
    })
    .unwrap();
    assert_eq!(back, [10; 8]);
    assert_eq!(stats.waits, 1, "{stats:?}");
    assert!(stats.ordered >= 1, "{stats:?}");
    // Reads on several streams need no order between them.
    let mut r1 = vec![0i32; 8];
    let mut r2 = vec![0i32; 8];
    let stats = ascendcl::scope([&a, &b], |[sa, sb]| {
        let xc = sa.claim(&mut x);
        sa.copy(&mut r1, xc)?;
        sb.copy(&mut r2, xc)?;
        Ok(sa.stats())
    })
    .unwrap();
    assert_eq!((r1, r2), (vec![3; 8], vec![3; 8]));
    assert_eq!(stats.waits, 0, "{stats:?}");
}

#[test]
fn the_callers_event_is_recognised_as_an_order_until_recorded_elsewhere() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b, other) = (
        d.create_stream().unwrap(),
        d.create_stream().unwrap(),
        d.create_stream().unwrap(),
    );
    let e = d.create_event().unwrap();
    let mut x = d.alloc_zeros::<u32>(8).unwrap();
    // Pinned: a copy into pageable memory completes before its enqueue returns, which would
    // wait here for the gate below.
    let mut back = HostBuffer::<u32>::zeroed(&d, 8).unwrap();
    let stats = ascendcl::scope([&a, &b], |[sa, sb]| {
        let xc = sa.claim(&mut x);
        sa.fill(xc, 1)?;
        sa.record_event(&e)?;
        sb.wait_event(&e)?;
        sb.copy(&mut back, xc)?; // ordered by the caller's event: no wait of the scope's
        Ok(sa.stats())
    })
    .unwrap();
    assert_eq!(back[..], [1; 8]);
    assert_eq!((stats.waits, stats.recognised), (0, 1), "{stats:?}");
    // Recorded again outside the scope in between: the wait orders after that record, not the
    // scope's, and the scope queues its own.
    let (open, hold) = gate();
    let stats = ascendcl::scope([&a, &b], |[sa, sb]| {
        let xc = sa.claim(&mut x);
        sa.launch_host_fn(hold)?;
        sa.fill(xc, 2)?;
        sa.record_event(&e)?;
        e.record(&other)?; // another record of the same event
        sb.wait_event(&e)?;
        sb.copy(&mut back, xc)?;
        open.send(()).unwrap();
        Ok(sa.stats())
    })
    .unwrap();
    assert_eq!(back[..], [2; 8]);
    assert_eq!((stats.waits, stats.recognised), (1, 0), "{stats:?}");
    // A timed wait may expire: never an order.
    let stats = ascendcl::scope([&a, &b], |[sa, sb]| {
        let xc = sa.claim(&mut x);
        sa.fill(xc, 3)?;
        sa.record_event(&e)?;
        sb.wait_event_timeout(&e, Some(Duration::from_secs(5)))?;
        sb.copy(&mut back, xc)?;
        Ok(sa.stats())
    })
    .unwrap();
    assert_eq!(back[..], [3; 8]);
    assert_eq!((stats.waits, stats.recognised), (1, 0), "{stats:?}");
}

#[test]
fn streams_join_a_scope_and_a_stream_given_twice_is_one() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let b2 = b.clone();
    let mut x = d.alloc_zeros::<u32>(4).unwrap();
    let mut back = vec![0u32; 4];
    let stats = a
        .scope(|sa| {
            let xc = sa.claim(&mut x);
            let sb = sa.on(&b)?;
            let again = sa.on(&b2)?; // the same stream: the same scope on it
            sb.fill(xc, 6)?;
            again.copy(&mut back, xc)?; // ordered by the stream itself
            Ok(sa.stats())
        })
        .unwrap();
    assert_eq!(back, [6; 4]);
    assert_eq!(stats.waits, 0, "{stats:?}");
    // More than 16 streams are refused.
    let many: Vec<_> = (0..17).map(|_| d.create_stream().unwrap()).collect();
    a.scope(|sa| {
        for s in &many[..15] {
            sa.on(s)?;
        }
        assert_argument(sa.on(&many[15]));
        Ok(())
    })
    .unwrap();
}

#[test]
fn memory_of_another_device_needs_peer_access() {
    let r = rt();
    if !needs_devices(&r, 2, "memory_of_another_device_needs_peer_access") {
        return;
    }
    let (d0, d1) = (r.device(0).unwrap(), r.device(1).unwrap());
    let (s0, s1) = (d0.create_stream().unwrap(), d1.create_stream().unwrap());
    let mut x = d0.alloc_zeros::<u32>(16).unwrap();
    let mut y = d1.alloc_zeros::<u32>(16).unwrap();
    // Without a PeerAccess, device 1's stream may not touch device 0's memory.
    ascendcl::scope([&s0, &s1], |[a, b]| {
        let xc = a.claim(&mut x);
        a.fill(xc, 4)?;
        let e = assert_argument(b.copy(&mut y, xc));
        assert!(e.to_string().contains("PeerAccess"), "{e}");
        assert_argument(b.fill(xc, 1));
        Ok(())
    })
    .unwrap();
    assert_eq!(y.copy_to_vec().unwrap(), [0; 16]);
    // With one, the copy runs on device 1's stream after the fill on device 0's.
    let peer = d0.enable_peer_access(&d1).unwrap();
    let (open, hold) = gate();
    ascendcl::scope([&s0, &s1], |[a, b]| {
        let xc = a.claim(&mut x);
        a.launch_host_fn(hold)?;
        a.fill(xc, 8)?;
        b.copy(&mut y, xc)?;
        open.send(()).unwrap();
        Ok(())
    })
    .unwrap();
    assert_eq!(y.copy_to_vec().unwrap(), [8; 16]);
    drop(peer);
    ascendcl::scope([&s0, &s1], |[a, b]| {
        let xc = a.claim(&mut x);
        assert_argument(b.copy(&mut y, xc));
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_failure_is_reported_with_its_stream() {
    let r = rt();
    let d = failure_device(&r);
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    let (open, hold) = gate();
    a.launch_host_fn(hold).unwrap();
    e.record(&a).unwrap();
    // The first stream is let go once the second stream's wait (one second, the shortest) has
    // expired; the scope's end waits for both.
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        open.send(()).unwrap();
    });
    let err = ascendcl::scope([&a, &b], |[_, sb]| {
        sb.wait_event_timeout(&e, Some(Duration::from_millis(1)))
    })
    .unwrap_err();
    match &err {
        Error::OnStream {
            lane, stream_id, ..
        } => {
            assert_eq!(*lane, 1);
            assert_eq!(*stream_id, Some(b.id().unwrap()));
        }
        other => panic!("{other}"),
    }
    assert_eq!(err.code(), Some(AclError::TASK_TIMEOUT), "{err}");
    assert!(
        err.to_string().starts_with("stream 1 of the scope"),
        "{err}"
    );
    a.synchronize().unwrap();
}

#[test]
fn nested_scopes_keep_their_own_claims_and_orders() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let mut x = d.alloc_zeros::<u32>(8).unwrap();
    let mut y = d.alloc_zeros::<u32>(8).unwrap();
    let mut back = vec![0u32; 8];
    ascendcl::scope([&a, &b], |[sa, sb]| {
        let xc = sa.claim(&mut x);
        sa.fill(xc, 1)?;
        // An inner scope over one of the outer's streams and a new one: its own claims, its
        // own end (which waits for the outer's work queued on the shared stream too).
        ascendcl::scope([&b, &a], |[ib, ia]| {
            let yc = ib.claim(&mut y);
            ib.fill(yc, 2)?;
            ia.copy(&mut back, yc)
        })?;
        assert_eq!(back, [2; 8]);
        // The outer scope's claim is still ordered across its streams.
        sb.copy(&mut back, xc)
    })
    .unwrap();
    assert_eq!(back, [1; 8]);
}

#[test]
fn a_panic_inside_the_closure_waits_for_every_stream() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let mut x = d.alloc_zeros::<u32>(8).unwrap();
    let mut back = HostBuffer::<u32>::zeroed(&d, 8).unwrap();
    let (open, hold) = gate();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _: ascendcl::Result<()> = ascendcl::scope([&a, &b], |[sa, sb]| {
            let xc = sa.claim(&mut x);
            sb.launch_host_fn(hold)?;
            sa.fill(xc, 7)?;
            sb.copy(&mut back, xc)?;
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                open.send(()).unwrap();
            });
            panic!("inside the scope");
        });
    }));
    assert!(panicked.is_err());
    // The scope waited for both streams while unwinding: the copy has landed.
    assert!(a.is_complete().unwrap() && b.is_complete().unwrap());
    assert_eq!(back[..], [7; 8]);
}

// The point: forgetting them is the same as dropping them, since neither owns the scope's end.
#[allow(clippy::forget_non_drop, forgetting_copy_types)]
#[test]
fn a_forgotten_scope_value_changes_nothing() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let mut x = d.alloc_zeros::<u32>(8).unwrap();
    let mut back = HostBuffer::<u32>::zeroed(&d, 8).unwrap();
    let (open, hold) = gate();
    a.scope(|sa| {
        let xc = sa.claim(&mut x);
        let sb: Scope<'_, '_> = sa.on(&b)?;
        sb.launch_host_fn(hold)?;
        sb.fill(xc, 3)?;
        sa.copy(&mut back, xc)?;
        // Forgetting the scope on `b` (or a claimed region) skips no wait: the scope's end is
        // not theirs to run.
        std::mem::forget(sb);
        std::mem::forget(xc);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            open.send(()).unwrap();
        });
        Ok(())
    })
    .unwrap();
    assert!(b.is_complete().unwrap());
    assert_eq!(back[..], [3; 8]);
}

#[test]
fn a_long_pipeline_reuses_its_events() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (a, b) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let mut x = d.alloc_zeros::<u32>(4).unwrap();
    let mut back = HostBuffer::<u32>::zeroed(&d, 4).unwrap();
    let before = d.available_events().unwrap();
    let stats = ascendcl::scope([&a, &b], |[sa, sb]| {
        let (xc, bc) = (sa.claim(&mut x), sa.claim(&mut back));
        let caught_up = d.create_event()?;
        for i in 0..2000u32 {
            sa.fill(xc, i)?;
            sb.copy(bc, xc)?;
            // The host waits for the streams now and then (it may, inside the scope), so
            // that the events retired meanwhile are idle when the scope looks at them.
            if i % 200 == 199 {
                caught_up.record(&b)?;
                caught_up.synchronize()?;
            }
        }
        Ok(sa.stats())
    })
    .unwrap();
    assert_eq!(back[..], [1999; 4]);
    assert_eq!(stats.waits, 3999, "{stats:?}");
    // Retired events are reused within the scope: far fewer than one per use were created.
    let used = before.saturating_sub(d.available_events().unwrap());
    assert!(used < 1000, "{used} events for {} records", stats.records);
}

#[test]
fn memsets_and_uploads_into_another_devices_memory_are_refused() {
    // Device-to-device copies had the device check; memsets and host-to-device copies into a
    // buffer of another device, on this device's stream, did not.
    let r = rt();
    if !needs_devices(
        &r,
        2,
        "memsets_and_uploads_into_another_devices_memory_are_refused",
    ) {
        return;
    }
    let (d0, d1) = (r.device(0).unwrap(), r.device(1).unwrap());
    let s0 = d0.create_stream().unwrap();
    let mut other = d1.clone_htod(&[3u8; 16]).unwrap();
    let host = HostBuffer::from_slice(&d0, &[9u8; 16]).unwrap();
    s0.scope(|s| {
        assert_argument(s.fill_bytes(&mut other, 0));
        Ok(())
    })
    .unwrap();
    s0.scope(|s| {
        assert_argument(s.copy(&mut other, &host));
        Ok(())
    })
    .unwrap();
    s0.scope(|s| {
        assert_argument(s.copy(&mut other, &[1u8; 16]));
        Ok(())
    })
    .unwrap();
    // SAFETY: nothing is enqueued (refused before the call).
    let e = unsafe { s0.copy_async_unchecked(&mut other, &*host) }.unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    assert_eq!(other.copy_to_vec().unwrap(), [3; 16]);
}
