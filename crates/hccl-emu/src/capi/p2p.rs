//! Point-to-point: send, receive and batches of them. A send completes when its receiver has
//! taken the data; sends and receives between two ranks match in the order they were issued.

use super::coll::{count_ok, resolve, submit};
use super::*;
use crate::comm::Comm;
use crate::devmem::Buf;
use crate::dtype;
use crate::group::{self, P2p};
use crate::ops::{Item, Op};
use std::ffi::c_void;

fn peer_ok(peer: u32, c: &Comm, what: &str) -> R {
    if peer >= c.n {
        return fail(
            HCCL_E_PARA,
            format!("{what} {peer} is not below the rank size {}", c.n),
        );
    }
    if peer == c.rank {
        return fail(
            HCCL_E_NOT_SUPPORT,
            format!("{what} {peer} is this rank: a rank cannot send to or receive from itself"),
        );
    }
    Ok(())
}

/// `HcclSend` / `HcclRecv`.
fn send_recv(
    send: bool,
    buf: *mut c_void,
    count: u64,
    dt: HcclDataType,
    peer: u32,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(buf, if send { "sendBuf" } else { "recvBuf" })?;
    non_null(stream, "stream")?;
    let t = dtype::check_move(dt)?;
    let (comm, s) = resolve(c, stream)?;
    peer_ok(peer, &comm, if send { "destRank" } else { "srcRank" })?;
    count_ok("count", count)?;
    let item = Item {
        send,
        buf: Buf::new(
            if send { "sendBuf" } else { "recvBuf" },
            buf as usize,
            count as usize * t.size(),
            comm.device,
        ),
        count,
        dt: t,
        peer,
    };
    submit(&comm, &s, Op::Batch(vec![item]))
}

/// Runs the sends and receives a group captured for one communicator as one batch.
pub(crate) fn batch(c: usize, stream: usize, calls: &[P2p]) -> R {
    let c = c as HcclComm;
    let stream = stream as aclrtStream;
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    let (comm, s) = resolve(c, stream)?;
    let mut items = Vec::new();
    for p in calls {
        if p.count == 0 {
            continue;
        }
        let what = if p.send { "sendBuf" } else { "recvBuf" };
        non_null(p.buf as *const c_void, what)?;
        let t = dtype::check_move(p.dt)?;
        peer_ok(p.peer, &comm, if p.send { "destRank" } else { "srcRank" })?;
        count_ok("count", p.count)?;
        items.push(Item {
            send: p.send,
            buf: Buf::new(what, p.buf, p.count as usize * t.size(), comm.device),
            count: p.count,
            dt: t,
            peer: p.peer,
        });
    }
    if items.is_empty() {
        return Ok(());
    }
    submit(&comm, &s, Op::Batch(items))
}

hccl! {
    /// `HcclSend`: `count` elements to `destRank`, which must issue the matching `HcclRecv`.
    fn HcclSend(sendBuf: *mut c_void, count: u64, dataType: HcclDataType, destRank: u32, comm: HcclComm, stream: aclrtStream) {
        if group::capturing() {
            return group::capture_p2p(P2p { send: true, buf: sendBuf as usize, count, dt: dataType, peer: destRank, comm: comm as usize, stream: stream as usize });
        }
        send_recv(true, sendBuf, count, dataType, destRank, comm, stream)
    }
}

hccl! {
    /// `HcclRecv`: `count` elements from `srcRank`.
    fn HcclRecv(recvBuf: *mut c_void, count: u64, dataType: HcclDataType, srcRank: u32, comm: HcclComm, stream: aclrtStream) {
        if group::capturing() {
            return group::capture_p2p(P2p { send: false, buf: recvBuf as usize, count, dt: dataType, peer: srcRank, comm: comm as usize, stream: stream as usize });
        }
        send_recv(false, recvBuf, count, dataType, srcRank, comm, stream)
    }
}

hccl! {
    /// `HcclBatchSendRecv`: the items' transfers progress together (items with a NULL buffer or
    /// no elements are skipped); not allowed inside a group.
    fn HcclBatchSendRecv(sendRecvInfo: *mut HcclSendRecvItem, itemNum: u32, comm: HcclComm, stream: aclrtStream) {
        non_null(comm, "comm")?;
        non_null(stream, "stream")?;
        non_null(sendRecvInfo, "sendRecvInfo")?;
        if itemNum == 0 {
            return Ok(());
        }
        if group::capturing() {
            return fail(HCCL_E_NOT_SUPPORT, "HcclBatchSendRecv is not allowed inside a group (use HcclSend and HcclRecv there)");
        }
        // SAFETY: C contract: itemNum items.
        let raw = unsafe { std::slice::from_raw_parts(sendRecvInfo, itemNum as usize) };
        let mut calls = Vec::with_capacity(raw.len());
        for (i, it) in raw.iter().enumerate() {
            let send = match it.sendRecvType {
                HCCL_SEND => true,
                HCCL_RECV => false,
                t => return fail(HCCL_E_PARA, format!("item {i}: sendRecvType {t} is neither HCCL_SEND nor HCCL_RECV")),
            };
            if it.buf.is_null() {
                continue;
            }
            calls.push(P2p { send, buf: it.buf as usize, count: it.count, dt: it.dataType, peer: it.remoteRank, comm: comm as usize, stream: stream as usize });
        }
        batch(comm as usize, stream as usize, &calls)
    }
}
