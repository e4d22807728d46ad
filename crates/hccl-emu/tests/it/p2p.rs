//! Sends and receives: matched in order per pair of ranks, synchronous, batched.

use crate::common::*;
use hccl_emu::DType;

fn item(send: bool, buf: &DevBuf, count: u64, t: DType, peer: u32) -> HcclSendRecvItem {
    HcclSendRecvItem {
        sendRecvType: if send { HCCL_SEND } else { HCCL_RECV },
        buf: buf.ptr,
        count,
        dataType: t.raw(),
        remoteRank: peer,
    }
}

#[test]
fn sends_match_receives_in_order_for_every_type() {
    let ranks = Ranks::new(0, 2);
    let (a, b) = (&ranks.0[0], &ranks.0[1]);
    for t in movable() {
        let first = data(t, 5, 1);
        let second = data(t, 5, 2);
        let s1 = DevBuf::from(a.dev, &first);
        let s2 = DevBuf::from(a.dev, &second);
        let r1 = DevBuf::new(b.dev, first.len());
        let r2 = DevBuf::new(b.dev, second.len());
        ok(unsafe { HcclSend(s1.ptr, 5, t.raw(), 1, a.comm, a.stream) });
        ok(unsafe { HcclSend(s2.ptr, 5, t.raw(), 1, a.comm, a.stream) });
        ok(unsafe { HcclRecv(r1.ptr, 5, t.raw(), 0, b.comm, b.stream) });
        ok(unsafe { HcclRecv(r2.ptr, 5, t.raw(), 0, b.comm, b.stream) });
        ranks.sync_ok();
        assert_eq!(r1.read(), first, "{}", t.name());
        assert_eq!(r2.read(), second, "{}", t.name());
    }
}

#[test]
fn a_send_completes_only_when_its_receive_took_the_data() {
    let ranks = Ranks::new(2, 2);
    let (a, b) = (&ranks.0[0], &ranks.0[1]);
    let s = DevBuf::from(a.dev, &[7u8; 8]);
    let r = DevBuf::new(b.dev, 8);
    ok(unsafe { HcclSend(s.ptr, 8, DType::U8.raw(), 1, a.comm, a.stream) });
    std::thread::sleep(std::time::Duration::from_millis(50));
    use_device(a.dev);
    let mut status = 0;
    acl(unsafe { aclrtStreamQuery(a.stream, &mut status) });
    release(a.dev);
    assert_eq!(
        status, ACL_STREAM_STATUS_NOT_READY,
        "the send completed without a receiver"
    );
    ok(unsafe { HcclRecv(r.ptr, 8, DType::U8.raw(), 0, b.comm, b.stream) });
    ranks.sync_ok();
    assert_eq!(r.read(), vec![7u8; 8]);
}

#[test]
fn a_batch_exchanges_in_both_directions_at_once() {
    let ranks = Ranks::new(4, 3);
    let n = 3;
    // Every rank sends its block to the next rank and receives from the previous one, in one
    // batch each: sends first, which would deadlock as separate blocking calls.
    let ins: Vec<Vec<u8>> = (0..n).map(|r| data(DType::F32, 6, r as u64 + 10)).collect();
    let sends: Vec<DevBuf> = ranks
        .0
        .iter()
        .zip(&ins)
        .map(|(r, i)| DevBuf::from(r.dev, i))
        .collect();
    let recvs: Vec<DevBuf> = ranks.0.iter().map(|r| DevBuf::new(r.dev, 24)).collect();
    for (i, r) in ranks.0.iter().enumerate() {
        let next = ((i + 1) % n) as u32;
        let prev = ((i + n - 1) % n) as u32;
        let mut items = [
            item(true, &sends[i], 6, DType::F32, next),
            item(false, &recvs[i], 6, DType::F32, prev),
            // Skipped: a NULL buffer.
            HcclSendRecvItem {
                sendRecvType: HCCL_SEND,
                buf: null_mut(),
                count: 6,
                dataType: DType::F32.raw(),
                remoteRank: next,
            },
        ];
        ok(unsafe { HcclBatchSendRecv(items.as_mut_ptr(), 3, r.comm, r.stream) });
    }
    ranks.sync_ok();
    for i in 0..n {
        assert_eq!(recvs[i].read(), ins[(i + n - 1) % n], "rank {i}");
    }
}

#[test]
fn a_receive_of_another_size_fails_both_streams() {
    let ranks = Ranks::new(6, 2);
    let (a, b) = (&ranks.0[0], &ranks.0[1]);
    let s = DevBuf::new(a.dev, 16);
    let r = DevBuf::new(b.dev, 16);
    ok(unsafe { HcclSend(s.ptr, 4, DType::F32.raw(), 1, a.comm, a.stream) });
    ok(unsafe { HcclRecv(r.ptr, 3, DType::F32.raw(), 0, b.comm, b.stream) });
    let errs = ranks.sync();
    let m = take_msg();
    assert_eq!(errs, vec![ACL_ERROR_RT_AICPU_TIMEOUT as i32; 2], "{m}");
    assert!(
        m.contains("rank 0 sends 4 x FP32, rank 1 receives 3 x FP32"),
        "{m}"
    );
}
