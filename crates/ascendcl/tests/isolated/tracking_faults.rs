//! A scope whose own ordering fails: when the event it records on one stream, or the wait it
//! queues on another, is refused by the runtime, the use of claimed memory that needed the order
//! is refused too (nothing is enqueued unordered), and the scope still ends only once every
//! stream is done. Injects faults into the emulator, so it runs alone (`exclusive`).

use crate::common::*;
use crate::exclusive;
use ascendcl::ReduceKind;
use ascendcl_emu::{FaultSpec, clear_faults, inject_fault};

#[test]
fn a_failed_record_or_wait_of_the_tracking_refuses_the_use_that_needed_it() {
    let _x = exclusive();
    let r = rt();
    if !needs_emulator("tracking_faults", "fault injection") {
        return;
    }
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let mut x = d.clone_htod(&[1i32; 8]).unwrap();
    let ones = d.clone_htod(&[1i32; 8]).unwrap();
    for api in ["aclrtRecordEvent", "aclrtStreamWaitEvent"] {
        let err = ascendcl::scope([&first, &second], |[a, b]| {
            let xc = a.claim(&mut x);
            // Every event the scope records fails from here (the one it records after the
            // reduction too, which only costs precision), or every wait it queues: the
            // doubling on the other stream needs both and is refused.
            inject_fault(api, FaultSpec::Every);
            a.reduce(xc, &ones, ReduceKind::Sum)?; // runs
            let refused = b.reduce(xc, xc, ReduceKind::Sum);
            clear_faults();
            refused
        })
        .unwrap_err();
        assert_eq!(err.api(), Some(api), "{err}");
    }
    assert_eq!(
        x.to_vec().unwrap(),
        [3; 8],
        "the refused doublings never ran"
    );
    // Both streams are usable again, and the tracking orders them.
    ascendcl::scope([&first, &second], |[a, b]| {
        let xc = a.claim(&mut x);
        a.reduce(xc, &ones, ReduceKind::Sum)?; // 4
        b.reduce(xc, xc, ReduceKind::Sum) // 8
    })
    .unwrap();
    assert_eq!(x.to_vec().unwrap(), [8; 8]);
    assert!(ascendcl::take_drop_errors().is_empty());
}
