//! Collectives: checks in the library's order (count 0 first, then NULL pointers, counts, data
//! type and operation, root), then one task on the stream.

use super::*;
use crate::comm::{self, Comm};
use crate::devmem::Buf;
use crate::dtype::{self, DType, Personality, RedOp};
use crate::group;
use crate::ops::Op;
use ascendcl_emu::extension::{self, StreamRef};
use std::ffi::c_void;
use std::sync::Arc;

/// The largest count the library accepts.
pub(crate) const SYS_MAX_COUNT: u64 = 0x7_FFFF_FFFF;

pub(crate) fn count_ok(name: &str, count: u64) -> R {
    if count > SYS_MAX_COUNT {
        return fail(
            HCCL_E_PARA,
            format!("{name} {count} is larger than the maximum {SYS_MAX_COUNT:#x}"),
        );
    }
    Ok(())
}

/// Resolves the communicator and the stream: the stream must be live and of the
/// communicator's device, and the communicator not suspended.
pub(crate) fn resolve(c: HcclComm, stream: aclrtStream) -> R<(Arc<Comm>, StreamRef)> {
    let comm = comm::get(c as usize)?;
    non_null(stream, "stream")?;
    let s = extension::stream(stream as usize).map_err(|f| Fail {
        code: HCCL_E_PARA,
        msg: format!("stream {stream:?}: {}", f.message),
    })?;
    if s.device() != comm.device {
        return fail(
            HCCL_E_PARA,
            format!(
                "stream {stream:?} belongs to device {}, but the communicator is bound to device \
                 {} (the emulator checks this; the device would fail the operation)",
                s.device(),
                comm.device
            ),
        );
    }
    if comm.suspended.load(std::sync::atomic::Ordering::Acquire) {
        return fail(HCCL_E_SUSPENDING, "the communicator is suspended");
    }
    Ok((comm, s))
}

/// Queues `op` on the stream.
pub(crate) fn submit(c: &Arc<Comm>, s: &StreamRef, op: Op) -> R {
    let ticket = c.issue(&op.steps());
    s.enqueue_named(op.name(), move || ticket.run(&op))
        .map_err(|f| Fail {
            code: HCCL_E_RUNTIME,
            msg: format!("queuing the operation on the stream failed: {f}"),
        })
}

fn root_ok(root: u32, c: &Comm) -> R {
    if root >= c.n {
        return fail(
            HCCL_E_PARA,
            format!("root {root} is not below the rank size {}", c.n),
        );
    }
    Ok(())
}

/// Copies a host array of `n` u64 values (E_PTR when NULL).
///
/// # Safety
/// `p` is NULL or valid for reading `n` u64 values.
unsafe fn host_array(p: *const c_void, n: u32, name: &str) -> R<Vec<u64>> {
    non_null(p, name)?;
    // SAFETY: C contract.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u64>(), n as usize) }.to_vec())
}

/// A V-variant's own count must equal its rank's entry of the per-rank counts.
fn own_block((name, value): (&str, u64), counts_name: &str, counts: &[u64], rank: usize) -> R {
    if value != counts[rank] {
        return fail(
            HCCL_E_PARA,
            format!(
                "{name} {value} differs from {counts_name}[{rank}] = {} (this rank's block)",
                counts[rank]
            ),
        );
    }
    Ok(())
}

/// `api` does not run in place: when `applies` (both buffers are used), they must differ.
fn not_in_place(api: &str, applies: bool, send: *const c_void, recv: *const c_void) -> R {
    if applies && send == recv {
        return fail(
            HCCL_E_PARA,
            format!("{api} cannot run in place (recvBuf == sendBuf)"),
        );
    }
    Ok(())
}

fn bytes(count: u64, t: DType) -> usize {
    count as usize * t.size()
}

/// The bytes a V-operation's blocks span: the furthest end of `displs[i] + counts[i]`.
fn extent(counts: &[u64], displs: &[u64], t: DType) -> R<usize> {
    let mut end = 0u64;
    for (c, d) in counts.iter().zip(displs) {
        if *c == 0 {
            continue;
        }
        let e = d
            .checked_add(*c)
            .filter(|e| *e <= SYS_MAX_COUNT * 2)
            .ok_or(Fail {
                code: HCCL_E_PARA,
                msg: format!("displacement {d} + count {c} overflows"),
            })?;
        end = end.max(e);
    }
    Ok(end as usize * t.size())
}

/// Inside a group: captures the call (to run at `HcclGroupEnd`) and returns success.
macro_rules! grouped {
    ($stream:expr, barrier($($a:expr),*)) => {
        if group::capturing() {
            let s = $stream as usize;
            return group::capture_coll(s, move || barrier($($a),*));
        }
    };
    ($stream:expr, $f:ident($($a:expr),*)) => {
        if group::capturing() {
            let s = $stream as usize;
            return group::capture_coll(s, move || {
                // SAFETY: the caller keeps the arguments valid until HcclGroupEnd runs the call
                // (the C contract of grouped calls).
                unsafe { $f($($a),*) }
            });
        }
    };
}

/// `HcclAllReduce`.
///
/// # Safety
/// C contract.
pub(crate) unsafe fn all_reduce(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: HcclDataType,
    op: HcclReduceOp,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    non_null(send, "sendBuf")?;
    non_null(recv, "recvBuf")?;
    count_ok("count", count)?;
    let (t, o) = dtype::check_reduce(dt, op)?;
    let (comm, s) = resolve(c, stream)?;
    let d = comm.device;
    let op = Op::AllReduce {
        send: Buf::new("sendBuf", send as usize, bytes(count, t), d),
        recv: Buf::new("recvBuf", recv as usize, bytes(count, t), d),
        count,
        dt: t,
        op: o,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclAllReduce`: every rank's `recvBuf[i]` = op over the ranks of `sendBuf[i]` (in place
    /// when the buffers are the same).
    fn HcclAllReduce(sendBuf: *mut c_void, recvBuf: *mut c_void, count: u64, dataType: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, all_reduce(sendBuf, recvBuf, count, dataType, op, comm, stream));
        // SAFETY: C contract.
        unsafe { all_reduce(sendBuf, recvBuf, count, dataType, op, comm, stream) }
    }
}

/// `HcclBroadcast`.
///
/// # Safety
/// C contract.
pub(crate) unsafe fn broadcast(
    buf: *mut c_void,
    count: u64,
    dt: HcclDataType,
    root: u32,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    non_null(buf, "buf")?;
    count_ok("count", count)?;
    let t = dtype::check_move(dt)?;
    let (comm, s) = resolve(c, stream)?;
    root_ok(root, &comm)?;
    let op = Op::Broadcast {
        buf: Buf::new("buf", buf as usize, bytes(count, t), comm.device),
        count,
        dt: t,
        root,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclBroadcast`: the root's `buf` to every rank's `buf`.
    fn HcclBroadcast(buf: *mut c_void, count: u64, dataType: HcclDataType, root: u32, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, broadcast(buf, count, dataType, root, comm, stream));
        // SAFETY: C contract.
        unsafe { broadcast(buf, count, dataType, root, comm, stream) }
    }
}

/// `HcclReduce`.
///
/// # Safety
/// C contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: HcclDataType,
    op: HcclReduceOp,
    root: u32,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    non_null(send, "sendBuf")?;
    non_null(recv, "recvBuf")?;
    count_ok("count", count)?;
    let (t, o) = dtype::check_reduce(dt, op)?;
    let (comm, s) = resolve(c, stream)?;
    root_ok(root, &comm)?;
    let d = comm.device;
    let op = Op::Reduce {
        send: Buf::new("sendBuf", send as usize, bytes(count, t), d),
        recv: Buf::new("recvBuf", recv as usize, bytes(count, t), d),
        count,
        dt: t,
        op: o,
        root,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclReduce`: the root's `recvBuf` gets op over the ranks of `sendBuf`; the other ranks'
    /// `recvBuf` (required all the same) is not written.
    fn HcclReduce(sendBuf: *mut c_void, recvBuf: *mut c_void, count: u64, dataType: HcclDataType, op: HcclReduceOp, root: u32, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, reduce(sendBuf, recvBuf, count, dataType, op, root, comm, stream));
        // SAFETY: C contract.
        unsafe { reduce(sendBuf, recvBuf, count, dataType, op, root, comm, stream) }
    }
}

/// `HcclReduceScatter`.
///
/// # Safety
/// C contract.
pub(crate) unsafe fn reduce_scatter(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: HcclDataType,
    op: HcclReduceOp,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    non_null(send, "sendBuf")?;
    non_null(recv, "recvBuf")?;
    count_ok("recvCount", count)?;
    let (t, o) = dtype::check_reduce(dt, op)?;
    let (comm, s) = resolve(c, stream)?;
    let d = comm.device;
    let op = Op::ReduceScatter {
        send: Buf::new(
            "sendBuf",
            send as usize,
            bytes(count, t) * comm.n as usize,
            d,
        ),
        recv: Buf::new("recvBuf", recv as usize, bytes(count, t), d),
        count,
        dt: t,
        op: o,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclReduceScatter`: rank r's `recvBuf` gets op over the ranks of block r of `sendBuf`
    /// (blocks of `recvCount` elements).
    fn HcclReduceScatter(sendBuf: *mut c_void, recvBuf: *mut c_void, recvCount: u64, dataType: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, reduce_scatter(sendBuf, recvBuf, recvCount, dataType, op, comm, stream));
        // SAFETY: C contract.
        unsafe { reduce_scatter(sendBuf, recvBuf, recvCount, dataType, op, comm, stream) }
    }
}

/// `HcclReduceScatterV`.
///
/// # Safety
/// C contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter_v(
    send: *mut c_void,
    counts: *const c_void,
    displs: *const c_void,
    recv: *mut c_void,
    recv_count: u64,
    dt: HcclDataType,
    op: HcclReduceOp,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    let comm = comm::get(c as usize)?;
    // SAFETY: C contract: n entries each.
    let (counts, displs) = unsafe {
        (
            host_array(counts, comm.n, "sendCounts")?,
            host_array(displs, comm.n, "sendDispls")?,
        )
    };
    for (i, x) in counts.iter().enumerate() {
        count_ok(&format!("sendCounts[{i}]"), *x)?;
    }
    if counts.iter().all(|x| *x == 0) {
        return Ok(());
    }
    non_null(send, "sendBuf")?;
    if recv_count > 0 {
        non_null(recv, "recvBuf")?;
    }
    let (t, o) = dtype::check_reduce(dt, op)?;
    if Personality::current() == Personality::A2A3 && (t == DType::I64 || o == RedOp::Prod) {
        return fail(
            HCCL_E_NOT_SUPPORT,
            format!(
                "HcclReduceScatterV supports SUM, MAX and MIN of types other than INT64 on \
                 Atlas A2/A3 ({} of {} asked)",
                o.name(),
                t.name()
            ),
        );
    }
    let (comm, s) = resolve(c, stream)?;
    let r = comm.rank as usize;
    own_block(("recvCount", recv_count), "sendCounts", &counts, r)?;
    not_in_place("HcclReduceScatterV", recv_count > 0, send, recv)?;
    let d = comm.device;
    let op = Op::ReduceScatterV {
        send: Buf::new("sendBuf", send as usize, extent(&counts, &displs, t)?, d),
        recv: if recv_count > 0 {
            Buf::new("recvBuf", recv as usize, bytes(recv_count, t), d)
        } else {
            Buf::none()
        },
        counts,
        displs,
        dt: t,
        op: o,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclReduceScatterV`: block j (`sendCounts[j]` elements at `sendDispls[j]`) is reduced
    /// over the ranks into rank j's `recvBuf`.
    fn HcclReduceScatterV(sendBuf: *mut c_void, sendCounts: *const c_void, sendDispls: *const c_void, recvBuf: *mut c_void, recvCount: u64, dataType: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, reduce_scatter_v(sendBuf, sendCounts, sendDispls, recvBuf, recvCount, dataType, op, comm, stream));
        // SAFETY: C contract.
        unsafe { reduce_scatter_v(sendBuf, sendCounts, sendDispls, recvBuf, recvCount, dataType, op, comm, stream) }
    }
}

/// `HcclAllGather`.
///
/// # Safety
/// C contract.
pub(crate) unsafe fn all_gather(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: HcclDataType,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    non_null(send, "sendBuf")?;
    non_null(recv, "recvBuf")?;
    count_ok("sendCount", count)?;
    let t = dtype::check_move(dt)?;
    let (comm, s) = resolve(c, stream)?;
    let d = comm.device;
    let op = Op::AllGather {
        send: Buf::new("sendBuf", send as usize, bytes(count, t), d),
        recv: Buf::new(
            "recvBuf",
            recv as usize,
            bytes(count, t) * comm.n as usize,
            d,
        ),
        count,
        dt: t,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclAllGather`: rank i's `sendBuf` lands at element `i * sendCount` of every rank's
    /// `recvBuf`.
    fn HcclAllGather(sendBuf: *mut c_void, recvBuf: *mut c_void, sendCount: u64, dataType: HcclDataType, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, all_gather(sendBuf, recvBuf, sendCount, dataType, comm, stream));
        // SAFETY: C contract.
        unsafe { all_gather(sendBuf, recvBuf, sendCount, dataType, comm, stream) }
    }
}

/// `HcclAllGatherV`.
///
/// # Safety
/// C contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_gather_v(
    send: *mut c_void,
    send_count: u64,
    recv: *mut c_void,
    counts: *const c_void,
    displs: *const c_void,
    dt: HcclDataType,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    let comm = comm::get(c as usize)?;
    // SAFETY: C contract: n entries each.
    let (counts, displs) = unsafe {
        (
            host_array(counts, comm.n, "recvCounts")?,
            host_array(displs, comm.n, "recvDispls")?,
        )
    };
    count_ok("sendCount", send_count)?;
    for (i, x) in counts.iter().enumerate() {
        count_ok(&format!("recvCounts[{i}]"), *x)?;
    }
    if counts.iter().all(|x| *x == 0) && send_count == 0 {
        return Ok(());
    }
    if send_count > 0 {
        non_null(send, "sendBuf")?;
    }
    non_null(recv, "recvBuf")?;
    let t = dtype::check_move(dt)?;
    let (comm, s) = resolve(c, stream)?;
    let r = comm.rank as usize;
    own_block(("sendCount", send_count), "recvCounts", &counts, r)?;
    not_in_place("HcclAllGatherV", send_count > 0, send, recv)?;
    let d = comm.device;
    let op = Op::AllGatherV {
        send: if send_count > 0 {
            Buf::new("sendBuf", send as usize, bytes(send_count, t), d)
        } else {
            Buf::none()
        },
        count: send_count,
        recv: Buf::new("recvBuf", recv as usize, extent(&counts, &displs, t)?, d),
        counts,
        displs,
        dt: t,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclAllGatherV`: rank i's `sendBuf` lands at `recvDispls[i]` of every rank's `recvBuf`.
    fn HcclAllGatherV(sendBuf: *mut c_void, sendCount: u64, recvBuf: *mut c_void, recvCounts: *const c_void, recvDispls: *const c_void, dataType: HcclDataType, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, all_gather_v(sendBuf, sendCount, recvBuf, recvCounts, recvDispls, dataType, comm, stream));
        // SAFETY: C contract.
        unsafe { all_gather_v(sendBuf, sendCount, recvBuf, recvCounts, recvDispls, dataType, comm, stream) }
    }
}

/// `HcclAlltoAll`.
///
/// # Safety
/// C contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_to_all(
    send: *const c_void,
    send_count: u64,
    st: HcclDataType,
    recv: *const c_void,
    recv_count: u64,
    rt: HcclDataType,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if send_count == 0 && recv_count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    non_null(send, "sendBuf")?;
    non_null(recv, "recvBuf")?;
    count_ok("sendCount", send_count)?;
    count_ok("recvCount", recv_count)?;
    let t = dtype::check_move(st)?;
    dtype::check_move(rt)?;
    if send_count != recv_count || st != rt {
        return fail(
            HCCL_E_PARA,
            format!(
                "sendCount {send_count} / sendType {st} and recvCount {recv_count} / recvType \
                 {rt} must be equal"
            ),
        );
    }
    not_in_place("HcclAlltoAll", true, send, recv)?;
    let (comm, s) = resolve(c, stream)?;
    let d = comm.device;
    let all = bytes(send_count, t) * comm.n as usize;
    let op = Op::AlltoAll {
        send: Buf::new("sendBuf", send as usize, all, d),
        recv: Buf::new("recvBuf", recv as usize, all, d),
        count: send_count,
        dt: t,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclAlltoAll`: block j of rank i's `sendBuf` goes to block i of rank j's `recvBuf`.
    fn HcclAlltoAll(sendBuf: *const c_void, sendCount: u64, sendType: HcclDataType, recvBuf: *const c_void, recvCount: u64, recvType: HcclDataType, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, all_to_all(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType, comm, stream));
        // SAFETY: C contract.
        unsafe { all_to_all(sendBuf, sendCount, sendType, recvBuf, recvCount, recvType, comm, stream) }
    }
}

/// `HcclAlltoAllV`.
///
/// # Safety
/// C contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_to_all_v(
    send: *const c_void,
    scounts: *const c_void,
    sdispls: *const c_void,
    st: HcclDataType,
    recv: *const c_void,
    rcounts: *const c_void,
    rdispls: *const c_void,
    rt: HcclDataType,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    let comm = comm::get(c as usize)?;
    let n = comm.n;
    // SAFETY: C contract: n entries each.
    let (scounts, sdispls, rcounts, rdispls) = unsafe {
        (
            host_array(scounts, n, "sendCounts")?,
            host_array(sdispls, n, "sdispls")?,
            host_array(rcounts, n, "recvCounts")?,
            host_array(rdispls, n, "rdispls")?,
        )
    };
    for (i, x) in scounts.iter().enumerate() {
        count_ok(&format!("sendCounts[{i}]"), *x)?;
    }
    for (i, x) in rcounts.iter().enumerate() {
        count_ok(&format!("recvCounts[{i}]"), *x)?;
    }
    let sends = scounts.iter().any(|x| *x > 0);
    let recvs = rcounts.iter().any(|x| *x > 0);
    if sends {
        non_null(send, "sendBuf")?;
    }
    if recvs {
        non_null(recv, "recvBuf")?;
    }
    let s_t = dtype::check_move(st)?;
    let r_t = dtype::check_move(rt)?;
    not_in_place("HcclAlltoAllV", sends && recvs, send, recv)?;
    let (comm, s) = resolve(c, stream)?;
    let d = comm.device;
    let op = Op::AlltoAllV {
        send: if sends {
            Buf::new(
                "sendBuf",
                send as usize,
                extent(&scounts, &sdispls, s_t)?,
                d,
            )
        } else {
            Buf::none()
        },
        recv: if recvs {
            Buf::new(
                "recvBuf",
                recv as usize,
                extent(&rcounts, &rdispls, r_t)?,
                d,
            )
        } else {
            Buf::none()
        },
        scounts,
        sdispls,
        st: s_t,
        rcounts,
        rdispls,
        rt: r_t,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclAlltoAllV`: `sendCounts[j]` elements at `sdispls[j]` go to rank j, which receives
    /// them as `recvCounts[i]` elements at `rdispls[i]`.
    fn HcclAlltoAllV(sendBuf: *const c_void, sendCounts: *const c_void, sdispls: *const c_void, sendType: HcclDataType, recvBuf: *const c_void, recvCounts: *const c_void, rdispls: *const c_void, recvType: HcclDataType, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, all_to_all_v(sendBuf, sendCounts, sdispls, sendType, recvBuf, recvCounts, rdispls, recvType, comm, stream));
        // SAFETY: C contract.
        unsafe { all_to_all_v(sendBuf, sendCounts, sdispls, sendType, recvBuf, recvCounts, rdispls, recvType, comm, stream) }
    }
}

/// `HcclAlltoAllVC`.
///
/// # Safety
/// C contract.
pub(crate) unsafe fn all_to_all_vc(
    send: *const c_void,
    matrix: *const c_void,
    st: HcclDataType,
    recv: *const c_void,
    rt: HcclDataType,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    let comm = comm::get(c as usize)?;
    let n = comm.n as usize;
    non_null(matrix, "sendCountMatrix")?;
    // SAFETY: C contract: n x n entries.
    let m = unsafe { std::slice::from_raw_parts(matrix.cast::<u64>(), n * n) }.to_vec();
    let r = comm.rank as usize;
    for j in 0..n {
        count_ok(&format!("sendCountMatrix[{r}][{j}]"), m[r * n + j])?;
    }
    if m.iter().all(|x| *x == 0) {
        return Ok(());
    }
    let sends = (0..n).any(|j| m[r * n + j] > 0);
    let recvs = (0..n).any(|i| m[i * n + r] > 0);
    if sends {
        non_null(send, "sendBuf")?;
    }
    if recvs {
        non_null(recv, "recvBuf")?;
    }
    let s_t = dtype::check_move(st)?;
    let r_t = dtype::check_move(rt)?;
    not_in_place("HcclAlltoAllVC", sends && recvs, send, recv)?;
    let (comm, s) = resolve(c, stream)?;
    let d = comm.device;
    let out: u64 = (0..n).map(|i| m[i * n + r]).sum();
    let inp: u64 = (0..n).map(|j| m[r * n + j]).sum();
    let op = Op::AlltoAllVC {
        send: if sends {
            Buf::new("sendBuf", send as usize, bytes(inp, s_t), d)
        } else {
            Buf::none()
        },
        recv: if recvs {
            Buf::new("recvBuf", recv as usize, bytes(out, r_t), d)
        } else {
            Buf::none()
        },
        matrix: m,
        st: s_t,
        rt: r_t,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclAlltoAllVC`: `sendCountMatrix[i * n + j]` elements go from rank i to rank j, packed
    /// in rank order on both sides.
    fn HcclAlltoAllVC(sendBuf: *const c_void, sendCountMatrix: *const c_void, sendType: HcclDataType, recvBuf: *const c_void, recvType: HcclDataType, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, all_to_all_vc(sendBuf, sendCountMatrix, sendType, recvBuf, recvType, comm, stream));
        // SAFETY: C contract.
        unsafe { all_to_all_vc(sendBuf, sendCountMatrix, sendType, recvBuf, recvType, comm, stream) }
    }
}

/// `HcclScatter`.
///
/// # Safety
/// C contract.
pub(crate) unsafe fn scatter(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: HcclDataType,
    root: u32,
    c: HcclComm,
    stream: aclrtStream,
) -> R {
    if count == 0 {
        return Ok(());
    }
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    non_null(recv, "recvBuf")?;
    count_ok("recvCount", count)?;
    let t = dtype::check_move(dt)?;
    let (comm, s) = resolve(c, stream)?;
    root_ok(root, &comm)?;
    let d = comm.device;
    let is_root = comm.rank == root;
    if is_root {
        non_null(send, "sendBuf")?;
    }
    let op = Op::Scatter {
        send: if is_root {
            Buf::new(
                "sendBuf",
                send as usize,
                bytes(count, t) * comm.n as usize,
                d,
            )
        } else {
            Buf::none()
        },
        recv: Buf::new("recvBuf", recv as usize, bytes(count, t), d),
        count,
        dt: t,
        root,
    };
    submit(&comm, &s, op)
}

hccl! {
    /// `HcclScatter`: block i of the root's `sendBuf` to rank i's `recvBuf` (the root's own
    /// block too); other ranks may pass a NULL `sendBuf`.
    fn HcclScatter(sendBuf: *mut c_void, recvBuf: *mut c_void, recvCount: u64, dataType: HcclDataType, root: u32, comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, scatter(sendBuf, recvBuf, recvCount, dataType, root, comm, stream));
        // SAFETY: C contract.
        unsafe { scatter(sendBuf, recvBuf, recvCount, dataType, root, comm, stream) }
    }
}

/// `HcclBarrier`.
pub(crate) fn barrier(c: HcclComm, stream: aclrtStream) -> R {
    non_null(c, "comm")?;
    non_null(stream, "stream")?;
    let (comm, s) = resolve(c, stream)?;
    submit(&comm, &s, Op::Barrier)
}

hccl! {
    /// `HcclBarrier`: the stream waits until every rank's stream reached the barrier.
    fn HcclBarrier(comm: HcclComm, stream: aclrtStream) {
        grouped!(stream, barrier(comm, stream));
        barrier(comm, stream)
    }
}
