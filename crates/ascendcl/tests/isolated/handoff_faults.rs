//! A hand-off whose closing notify record fails: the scope still ends only once both streams
//! are done, the other stream's work having run and the scope's held work discarded. Injects
//! faults into the emulator, so it runs alone (`exclusive`).

use crate::common::*;
use crate::exclusive;
use ascendcl::{Handoff, ReduceKind};
use ascendcl_emu::{FaultSpec, clear_faults, inject_fault};

#[test]
fn a_failed_join_waits_for_the_other_stream_and_discards_the_held_work() {
    let _x = exclusive();
    let r = rt();
    if !needs_emulator("handoff_faults", "fault injection") {
        return;
    }
    let d = r.device(0).unwrap();
    let (first, second) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event().unwrap();
    let mut x = d.clone_htod(&[1i32; 8]).unwrap();
    let ones = d.clone_htod(&[1i32; 8]).unwrap();
    // With an event as the caller's order, the hand-off records two notifies: the first orders
    // the second stream after the first, the second (failed here) joins them.
    inject_fault("aclrtRecordNotify", FaultSpec::Nth(2));
    let err = first
        .scope(|a| {
            let xc = a.claim(&mut x);
            a.hand_off(&second, Handoff::event(&e), |b| {
                b.reduce(xc, xc, ReduceKind::Sum)?; // 2: runs
                a.reduce(xc, &ones, ReduceKind::Sum) // held behind the join: discarded
            })
        })
        .unwrap_err();
    clear_faults();
    assert_eq!(err.api(), Some("aclrtRecordNotify"), "{err}");
    assert_eq!(x.to_vec().unwrap(), [2; 8]);
    // Both streams are usable again.
    first
        .scope(|a| a.reduce(&mut x, &ones, ReduceKind::Sum))
        .unwrap();
    second.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), [3; 8]);
    assert!(ascendcl::take_drop_errors().is_empty());
}
