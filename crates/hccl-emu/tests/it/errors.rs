//! Bad arguments get the codes the library documents, checked in its order; failures on the
//! device side are stream errors.

use crate::common::*;
use hccl_emu::{DType, RedOp};

const F32: u32 = HCCL_DATA_TYPE_FP32;
const SUM: u32 = HCCL_REDUCE_SUM;

#[test]
fn count_zero_succeeds_before_any_null_check() {
    setup();
    ok(unsafe { HcclAllReduce(null_mut(), null_mut(), 0, F32, SUM, null_mut(), null_mut()) });
    ok(unsafe { HcclBroadcast(null_mut(), 0, 99, 7, null_mut(), null_mut()) });
    ok(unsafe { HcclAllGather(null_mut(), null_mut(), 0, F32, null_mut(), null_mut()) });
    ok(unsafe { HcclSend(null_mut(), 0, F32, 0, null_mut(), null_mut()) });
    ok(unsafe { HcclAlltoAll(null(), 0, F32, null(), 0, F32, null_mut(), null_mut()) });
}

#[test]
fn checks_run_in_the_library_order() {
    let ranks = Ranks::new(0, 2);
    let r = &ranks.0[0];
    let b = DevBuf::new(r.dev, 64);
    // NULL pointers: E_PTR, comm first, before an oversized count.
    let m = err(
        unsafe { HcclAllReduce(b.ptr, b.ptr, 1 << 40, F32, SUM, null_mut(), r.stream) },
        HCCL_E_PTR,
    );
    assert!(m.contains("comm is NULL"), "{m}");
    err(
        unsafe { HcclAllReduce(b.ptr, b.ptr, 4, F32, SUM, r.comm, null_mut()) },
        HCCL_E_PTR,
    );
    err(
        unsafe { HcclAllReduce(null_mut(), b.ptr, 4, F32, SUM, r.comm, r.stream) },
        HCCL_E_PTR,
    );
    err(
        unsafe { HcclAllReduce(b.ptr, null_mut(), 4, F32, SUM, r.comm, r.stream) },
        HCCL_E_PTR,
    );
    // Count above 0x7FFFFFFFF: E_PARA, before the data type.
    err(
        unsafe { HcclAllReduce(b.ptr, b.ptr, 0x8_0000_0000, 99, SUM, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    // Data type, then operation, then the pair: E_NOT_SUPPORT; before the root.
    for t in [
        HCCL_DATA_TYPE_UINT8,
        HCCL_DATA_TYPE_UINT32,
        HCCL_DATA_TYPE_UINT64,
        HCCL_DATA_TYPE_FP64,
        13,
        255,
    ] {
        err(
            unsafe { HcclAllReduce(b.ptr, b.ptr, 4, t, SUM, r.comm, r.stream) },
            HCCL_E_NOT_SUPPORT,
        );
    }
    err(
        unsafe { HcclAllReduce(b.ptr, b.ptr, 4, F32, 4, r.comm, r.stream) },
        HCCL_E_NOT_SUPPORT,
    );
    let m = err(
        unsafe {
            HcclAllReduce(
                b.ptr,
                b.ptr,
                4,
                HCCL_DATA_TYPE_INT16,
                HCCL_REDUCE_PROD,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_NOT_SUPPORT,
    );
    assert!(m.contains("PROD of INT16"), "{m}");
    err(
        unsafe {
            HcclAllReduce(
                b.ptr,
                b.ptr,
                4,
                HCCL_DATA_TYPE_BFP16,
                HCCL_REDUCE_PROD,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_NOT_SUPPORT,
    );
    err(
        unsafe { HcclBroadcast(b.ptr, 4, 99, 9, r.comm, r.stream) },
        HCCL_E_NOT_SUPPORT,
    );
    // Data movement: types 0-11 only on A2/A3.
    for t in [
        HCCL_DATA_TYPE_INT128,
        HCCL_DATA_TYPE_FP8E4M3,
        HCCL_DATA_TYPE_HIF8,
    ] {
        err(
            unsafe { HcclAllGather(b.ptr, b.ptr, 1, t, r.comm, r.stream) },
            HCCL_E_NOT_SUPPORT,
        );
    }
    // Root out of range: E_PARA.
    err(
        unsafe { HcclBroadcast(b.ptr, 4, F32, 2, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclReduce(b.ptr, b.ptr, 4, F32, SUM, 5, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclScatter(b.ptr, b.ptr, 4, F32, 2, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    // Scatter: NULL recv always, NULL send on the root only.
    err(
        unsafe { HcclScatter(b.ptr, null_mut(), 4, F32, 1, r.comm, r.stream) },
        HCCL_E_PTR,
    );
    err(
        unsafe { HcclScatter(null_mut(), b.ptr, 4, F32, 0, r.comm, r.stream) },
        HCCL_E_PTR,
    );
    // Nothing above was queued: the streams are idle and the communicators usable.
    ranks.sync_ok();
}

#[test]
fn v_and_all_to_all_forms_check_their_arrays() {
    let ranks = Ranks::new(2, 2);
    let r = &ranks.0[0];
    let b = DevBuf::new(r.dev, 256);
    let c = DevBuf::new(r.dev, 256);
    let counts: [u64; 2] = [2, 3];
    let displs: [u64; 2] = [0, 2];
    err(
        unsafe {
            HcclReduceScatterV(
                b.ptr,
                null(),
                displs.as_ptr().cast(),
                c.ptr,
                2,
                F32,
                SUM,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_PTR,
    );
    // recvCount must be this rank's count.
    let m = err(
        unsafe {
            HcclReduceScatterV(
                b.ptr,
                counts.as_ptr().cast(),
                displs.as_ptr().cast(),
                c.ptr,
                3,
                F32,
                SUM,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_PARA,
    );
    assert!(m.contains("sendCounts[0]"), "{m}");
    for (t, op) in [(F32, HCCL_REDUCE_PROD), (HCCL_DATA_TYPE_INT64, SUM)] {
        err(
            unsafe {
                HcclReduceScatterV(
                    b.ptr,
                    counts.as_ptr().cast(),
                    displs.as_ptr().cast(),
                    c.ptr,
                    2,
                    t,
                    op,
                    r.comm,
                    r.stream,
                )
            },
            HCCL_E_NOT_SUPPORT,
        );
    }
    let zeros = [0u64; 2];
    ok(unsafe {
        HcclReduceScatterV(
            null_mut(),
            zeros.as_ptr().cast(),
            zeros.as_ptr().cast(),
            null_mut(),
            0,
            F32,
            SUM,
            r.comm,
            r.stream,
        )
    });
    err(
        unsafe {
            HcclAllGatherV(
                b.ptr,
                3,
                c.ptr,
                counts.as_ptr().cast(),
                displs.as_ptr().cast(),
                F32,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_PARA,
    );
    // All-to-all: equal counts and types, never in place.
    err(
        unsafe { HcclAlltoAll(b.ptr, 2, F32, c.ptr, 3, F32, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    err(
        unsafe {
            HcclAlltoAll(
                b.ptr,
                2,
                F32,
                c.ptr,
                2,
                HCCL_DATA_TYPE_INT32,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclAlltoAll(b.ptr, 2, F32, b.ptr, 2, F32, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    err(
        unsafe {
            HcclAlltoAllV(
                b.ptr,
                counts.as_ptr().cast(),
                displs.as_ptr().cast(),
                F32,
                b.ptr,
                counts.as_ptr().cast(),
                displs.as_ptr().cast(),
                F32,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclAlltoAllVC(b.ptr, null(), F32, c.ptr, F32, r.comm, r.stream) },
        HCCL_E_PTR,
    );
    let matrix: [u64; 4] = [1, 1, 1, 1];
    err(
        unsafe {
            HcclAlltoAllVC(
                b.ptr,
                matrix.as_ptr().cast(),
                F32,
                b.ptr,
                F32,
                r.comm,
                r.stream,
            )
        },
        HCCL_E_PARA,
    );
    ranks.sync_ok();
}

#[test]
fn point_to_point_checks_the_peer() {
    let ranks = Ranks::new(4, 2);
    let r = &ranks.0[1];
    let b = DevBuf::new(r.dev, 64);
    err(
        unsafe { HcclSend(b.ptr, 4, F32, 2, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclRecv(b.ptr, 4, F32, 7, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclSend(b.ptr, 4, F32, 1, r.comm, r.stream) },
        HCCL_E_NOT_SUPPORT,
    );
    err(
        unsafe { HcclSend(b.ptr, 4, 99, 0, r.comm, r.stream) },
        HCCL_E_NOT_SUPPORT,
    );
    err(
        unsafe { HcclRecv(null_mut(), 4, F32, 0, r.comm, r.stream) },
        HCCL_E_PTR,
    );
    let mut items = [HcclSendRecvItem {
        sendRecvType: 7,
        buf: b.ptr,
        count: 1,
        dataType: F32,
        remoteRank: 0,
    }];
    err(
        unsafe { HcclBatchSendRecv(items.as_mut_ptr(), 1, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    items[0].sendRecvType = HCCL_SEND;
    items[0].remoteRank = 3;
    err(
        unsafe { HcclBatchSendRecv(items.as_mut_ptr(), 1, r.comm, r.stream) },
        HCCL_E_PARA,
    );
    err(
        unsafe { HcclBatchSendRecv(null_mut(), 1, r.comm, r.stream) },
        HCCL_E_PTR,
    );
    ok(unsafe { HcclBatchSendRecv(items.as_mut_ptr(), 0, r.comm, r.stream) });
    ranks.sync_ok();
}

#[test]
fn streams_and_communicators_must_be_live_and_match() {
    let ranks = Ranks::new(6, 2);
    let (a, b) = (&ranks.0[0], &ranks.0[1]);
    let buf = DevBuf::new(a.dev, 64);
    // A stream of the other rank's device.
    let m = err(
        unsafe { HcclAllReduce(buf.ptr, buf.ptr, 4, F32, SUM, a.comm, b.stream) },
        HCCL_E_PARA,
    );
    assert!(m.contains("belongs to device 7"), "{m}");
    // A handle that is no communicator.
    err(
        unsafe { HcclAllReduce(buf.ptr, buf.ptr, 4, F32, SUM, 0x1234 as HcclComm, a.stream) },
        HCCL_E_PARA,
    );
    let mut v = 0u32;
    err(unsafe { HcclGetRankId(null_mut(), &mut v) }, HCCL_E_PTR);
    err(unsafe { HcclGetRankSize(a.comm, null_mut()) }, HCCL_E_PTR);
    // Suspended communicators refuse operations until resumed.
    ok(unsafe { HcclCommSuspend(a.comm) });
    err(
        unsafe { HcclAllReduce(buf.ptr, buf.ptr, 4, F32, SUM, a.comm, a.stream) },
        HCCL_E_SUSPENDING,
    );
    ok(unsafe { HcclCommResume(a.comm) });
    ranks.sync_ok();
}

#[test]
fn a_buffer_that_is_not_device_memory_fails_on_the_stream() {
    let ranks = Ranks::new(0, 2);
    let host = [0u8; 64];
    let bufs: Vec<DevBuf> = ranks.0.iter().map(|r| DevBuf::new(r.dev, 64)).collect();
    let a = &ranks.0[0];
    // Rank 0 passes host memory: the call succeeds, the stream fails.
    ok(unsafe {
        HcclAllReduce(
            host.as_ptr() as *mut c_void,
            bufs[0].ptr,
            16,
            F32,
            SUM,
            a.comm,
            a.stream,
        )
    });
    use_device(a.dev);
    let e = unsafe { aclrtSynchronizeStream(a.stream) };
    let m = take_msg();
    release(a.dev);
    assert_eq!(e, ACL_ERROR_RT_DEVICE_MEM_ERROR as i32, "{m}");
    assert!(
        m.contains("host memory the runtime did not allocate"),
        "{m}"
    );
    // A freed device buffer is reported the same way.
    let gone = DevBuf::new(a.dev, 64);
    let p = gone.ptr;
    drop(gone);
    ok(unsafe { HcclAllReduce(p, bufs[0].ptr, 16, F32, SUM, a.comm, a.stream) });
    use_device(a.dev);
    let e = unsafe { aclrtSynchronizeStream(a.stream) };
    let m = take_msg();
    release(a.dev);
    assert_eq!(e, ACL_ERROR_RT_DEVICE_MEM_ERROR as i32, "{m}");
    assert!(m.contains("freed"), "{m}");
}

#[test]
fn a_rank_that_never_comes_times_out_on_the_stream() {
    let mut cfg = comm_config();
    cfg.hcclExecTimeOut = 1;
    let ranks = root_ranks(&[1, 2], Some(cfg));
    let a = &ranks.0[0];
    let buf = DevBuf::new(a.dev, 64);
    ok(unsafe { HcclAllReduce(buf.ptr, buf.ptr, 16, F32, SUM, a.comm, a.stream) });
    use_device(a.dev);
    let e = unsafe { aclrtSynchronizeStream(a.stream) };
    let m = take_msg();
    release(a.dev);
    assert_eq!(e, ACL_ERROR_RT_AICPU_TIMEOUT as i32, "{m}");
    assert!(m.contains("execution timeout"), "{m}");
    let mut ae = HCCL_SUCCESS;
    ok(unsafe { HcclGetCommAsyncError(a.comm, &mut ae) });
    assert_eq!(ae, HCCL_E_TIMEOUT);
    let mut fine = HCCL_E_PARA;
    ok(unsafe { HcclGetCommAsyncError(ranks.0[1].comm, &mut fine) });
    assert_eq!(fine, HCCL_SUCCESS);
}

#[test]
fn ranks_that_issue_different_collectives_fail_on_their_streams() {
    let ranks = Ranks::new(3, 2);
    let bufs: Vec<DevBuf> = ranks.0.iter().map(|r| DevBuf::new(r.dev, 64)).collect();
    let (a, b) = (&ranks.0[0], &ranks.0[1]);
    ok(unsafe { HcclAllReduce(bufs[0].ptr, bufs[0].ptr, 4, F32, SUM, a.comm, a.stream) });
    ok(unsafe { HcclAllReduce(bufs[1].ptr, bufs[1].ptr, 5, F32, SUM, b.comm, b.stream) });
    let errs = ranks.sync();
    let m = take_msg();
    assert_eq!(errs, vec![ACL_ERROR_RT_AICPU_TIMEOUT as i32; 2], "{m}");
    assert!(m.contains("count 4") && m.contains("count 5"), "{m}");
}

#[test]
fn error_strings_and_capability() {
    let s = |c: HcclResult| {
        unsafe { std::ffi::CStr::from_ptr(HcclGetErrorString(c)) }
            .to_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(s(HCCL_SUCCESS), "no error");
    assert_eq!(s(HCCL_E_PARA), "parameter error");
    assert_eq!(s(HCCL_E_PTR), "empty pointer");
    assert_eq!(s(HCCL_E_TIMEOUT), "timeout");
    assert_eq!(s(HCCL_E_AGAIN), "try again");
    assert_eq!(s(HcclResult(9999)), "unknown error");
    assert_eq!(unsafe { HcclGetCommConfigCapability() }, 12);
    assert_eq!(
        hccl_emu::code_name(HCCL_E_NOT_SUPPORT),
        "HCCL_E_NOT_SUPPORT"
    );
    assert_eq!(hccl_emu::code_name(HcclResult(1041)), "HCCL_E_1041");
    let _ = (DType::F32, RedOp::Sum);
}
