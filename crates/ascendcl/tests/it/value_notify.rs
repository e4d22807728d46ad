//! Stream-ordered value writes and waits on device words, and notifies between streams.

use crate::common::*;
use ascendcl::{DeviceWord, Error, Notify, ValueCompare};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[test]
fn a_value_write_lands_in_stream_order() {
    let r = rt();
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let mut buf = d.alloc_zeros::<u64>(4).unwrap();
    s.scope(|sc| {
        let b = sc.claim(&mut buf);
        sc.write_value(b.slice(2..3)?, 0xfeed_0001)?;
        sc.write_value(b.slice(0..1)?, 5)
    })
    .unwrap();
    assert_eq!(buf.to_vec().unwrap(), [5, 0, 0xfeed_0001, 0]);
    // Only a one-word region of device memory is a word.
    let e = s.scope(|sc| sc.write_value(&mut buf, 1)).unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    let mut host = vec![0u64; 1];
    let e = s.scope(|sc| sc.write_value(&mut host, 1)).unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
    let e = s
        .scope(|sc| sc.wait_value(&host, 1, ValueCompare::Eq))
        .unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e}");
}

#[test]
fn a_wait_holds_its_stream_until_the_condition_holds() {
    let r = rt();
    let d = r.device(0).unwrap();
    let (waiter, writer) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let word = DeviceWord::new(&d, 9).unwrap();
    assert_eq!(word.get().unwrap(), 9);
    assert_eq!(word.device_id(), 0);
    // Its address is device memory of device 0, and the one the host copies read.
    let at = ascendcl::pointer_attributes(word.as_ptr()).unwrap();
    assert_eq!(at.location, ascendcl::PointerLocation::Device(0));
    for (compare, value, release) in [
        (ValueCompare::Geq, 10, 10),
        (ValueCompare::Eq, 123, 123),
        (ValueCompare::And, 0b100, 0b110),
        (ValueCompare::Nor, 0b01, 0b10),
    ] {
        // Not satisfied at first: u64::MAX fails every comparison but GEQ (wrap-around: it is
        // "before" 10), so start from a value below `value` that shares no bits with it.
        let start = match compare {
            ValueCompare::Nor => u64::MAX,
            _ => 0,
        };
        word.set(start).unwrap();
        let passed = Arc::new(AtomicBool::new(false));
        let seen = passed.clone();
        waiter
            .scope(|w| {
                w.wait_word(&word, value, compare)?;
                w.launch_host_fn(move || seen.store(true, Ordering::SeqCst))?;
                std::thread::sleep(Duration::from_millis(20));
                assert!(!passed.load(Ordering::SeqCst), "{compare:?} held");
                assert!(!waiter.is_complete()?);
                // Another stream's write, in its own scope, releases the waiter.
                writer.scope(|x| x.write_word(&word, release))
            })
            .unwrap();
        assert!(passed.load(Ordering::SeqCst), "{compare:?} released");
        assert_eq!(word.get().unwrap(), release);
    }
    word.free().unwrap();
}

#[test]
fn threads_signal_each_other_through_a_shared_word() {
    let r = rt();
    let d = r.device(0).unwrap();
    let word = Arc::new(DeviceWord::new(&d, 0).unwrap());
    let mut out = d.alloc_zeros::<u32>(4).unwrap();
    let src = d.clone_htod(&[1u32, 2, 3, 4]).unwrap();
    let (w2, d2) = (word.clone(), d.clone());
    // Thread A: copy only after the word reaches 3.
    let a = std::thread::spawn(move || -> ascendcl::Result<Vec<u32>> {
        let s = d2.create_stream()?;
        s.scope(|sc| {
            sc.wait_word(&w2, 3, ValueCompare::Geq)?;
            sc.copy(&mut out, &src)
        })?;
        out.to_vec()
    });
    // Thread B: counts up, one write per scope.
    let s = d.create_stream().unwrap();
    for v in 1..=3 {
        std::thread::sleep(Duration::from_millis(5));
        s.scope(|sc| sc.write_word(&word, v)).unwrap();
    }
    assert_eq!(a.join().unwrap().unwrap(), [1, 2, 3, 4]);
}

#[test]
fn a_record_releases_one_wait() {
    let r = rt();
    // The last wait expires on purpose: on the device kept for failures.
    let d = failure_device(&r);
    let n = Notify::new(&d).unwrap();
    let m = Notify::device_only(&d).unwrap();
    assert_ne!(n.id().unwrap(), m.id().unwrap());
    assert_eq!(n.device().id(), d.id());
    assert!(!n.as_raw().is_null());
    let (waiter, recorder) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h = hits.clone();
    waiter
        .scope(|w| {
            for _ in 0..2 {
                w.wait_notify(&n, None)?;
                let h = h.clone();
                w.launch_host_fn(move || {
                    h.fetch_add(1, Ordering::SeqCst);
                })?;
            }
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(hits.load(Ordering::SeqCst), 0, "no record yet");
            recorder.scope(|x| x.record_notify(&n))?;
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while hits.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(hits.load(Ordering::SeqCst), 1, "one record, one wait");
            recorder.scope(|x| x.record_notify(&n))
        })
        .unwrap();
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    // A record that no wait consumed is cleared by a reset: the next wait times out.
    recorder.scope(|x| x.record_notify(&n)).unwrap();
    n.reset().unwrap();
    let e = waiter
        .scope(|w| w.wait_notify(&n, Some(Duration::from_millis(1))))
        .unwrap_err();
    assert_eq!(e.code(), Some(AclError::TASK_TIMEOUT), "{e}");
    m.destroy().unwrap();
    drop(n);
    assert!(ascendcl::take_drop_errors().is_empty());
}
