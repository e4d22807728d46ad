//! Groups of collectives and point-to-point calls.

use crate::common::*;
use hccl_emu::{DType, RedOp};

#[test]
fn a_group_runs_its_collectives_at_the_end_and_waits_for_them() {
    let ranks = Ranks::new(0, 3);
    let ins: Vec<Vec<u8>> = (0..3).map(|r| data(DType::I32, 11, r + 1)).collect();
    let bufs: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    ok(unsafe { HcclGroupStart() });
    ok(unsafe { HcclGroupStart() });
    for (r, b) in ranks.0.iter().zip(&bufs) {
        ok(unsafe {
            HcclAllReduce(
                b.ptr,
                b.ptr,
                11,
                DType::I32.raw(),
                RedOp::Sum.raw(),
                r.comm,
                r.stream,
            )
        });
    }
    ok(unsafe { HcclGroupEnd() });
    // Inner end: nothing ran yet.
    assert_eq!(bufs[0].read(), ins[0]);
    ok(unsafe { HcclGroupEnd() });
    // The outer end synchronised the streams: the results are there without a sync.
    let want = reference(DType::I32, RedOp::Sum, &ins);
    for b in &bufs {
        assert_eq!(b.read(), want);
    }
}

#[test]
fn sends_and_receives_in_a_group_do_not_deadlock() {
    let ranks = Ranks::new(3, 2);
    let ins: Vec<Vec<u8>> = (0..2).map(|r| data(DType::F16, 9, r + 5)).collect();
    let sends: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    let recvs: Vec<DevBuf> = ranks.0.iter().map(|r| DevBuf::new(r.dev, 18)).collect();
    ok(unsafe { HcclGroupStart() });
    for (i, r) in ranks.0.iter().enumerate() {
        let peer = 1 - i as u32;
        ok(unsafe { HcclSend(sends[i].ptr, 9, DType::F16.raw(), peer, r.comm, r.stream) });
        ok(unsafe { HcclRecv(recvs[i].ptr, 9, DType::F16.raw(), peer, r.comm, r.stream) });
    }
    ok(unsafe { HcclGroupEnd() });
    ranks.sync_ok();
    assert_eq!(recvs[0].read(), ins[1]);
    assert_eq!(recvs[1].read(), ins[0]);
}

#[test]
fn failures_inside_a_group_are_messages_and_the_end_succeeds() {
    setup();
    take_msg();
    ok(unsafe { HcclGroupStart() });
    ok(unsafe {
        HcclAllReduce(
            8 as *mut c_void,
            8 as *mut c_void,
            4,
            4,
            0,
            0x10 as HcclComm,
            null_mut(),
        )
    });
    let m = take_msg();
    assert!(m.is_empty(), "captured before any check: {m}");
    let mut items = [];
    err(
        unsafe { HcclBatchSendRecv(items.as_mut_ptr(), 1, 0x10 as HcclComm, 0x10 as aclrtStream) },
        HCCL_E_NOT_SUPPORT,
    );
    ok(unsafe { HcclGroupEnd() });
    let m = take_msg();
    assert!(
        m.contains("HcclGroupEnd (collective)") && m.contains("stream is NULL"),
        "{m}"
    );
    err(unsafe { HcclGroupEnd() }, HCCL_E_NOT_SUPPORT);
}
