//! Data channels and queues through the C functions: datasets copied onto a bounded channel and
//! received into a dataset that owns them, capacity and timeouts, a receive that waits for a
//! send of another thread; queues of bytes and user data, their attributes, routes that forward
//! between queues, and the device side's functions the host answers with 200006.
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::ffi::{CStr, c_char};
use std::time::{Duration, Instant};

/// A dataset of one float item over `values` (borrowed: `Vec::as_mut_ptr` keeps the item's
/// pointer valid while the vector is written through it again).
fn float_dataset(values: &mut Vec<f32>) -> (*mut acltdtDataset, *mut acltdtDataItem) {
    let dims = [1i64, values.len() as i64];
    let item = unsafe {
        acltdtCreateDataItem(
            ACL_TENSOR_DATA_TENSOR,
            dims.as_ptr(),
            2,
            ACL_FLOAT,
            values.as_mut_ptr().cast(),
            values.len() * 4,
        )
    };
    assert!(!item.is_null(), "{}", take_msg());
    let ds = unsafe { acltdtCreateDataset() };
    ok(unsafe { acltdtAddDataItem(ds, item) });
    (ds, item)
}

fn free_dataset((ds, item): (*mut acltdtDataset, *mut acltdtDataItem)) {
    ok(unsafe { acltdtDestroyDataset(ds) });
    ok(unsafe { acltdtDestroyDataItem(item) });
}

fn channel(name: &std::ffi::CStr, capacity: usize) -> *mut acltdtChannelHandle {
    let ch = unsafe { acltdtCreateChannelWithCapacity(0, name.as_ptr(), capacity) };
    assert!(!ch.is_null(), "{}", take_msg());
    ch
}

fn size(ch: *mut acltdtChannelHandle) -> usize {
    let mut n = usize::MAX;
    ok(unsafe { acltdtQueryChannelSize(ch, &mut n) });
    n
}

#[test]
fn a_channel_carries_a_copy_of_each_dataset_in_order() {
    let _d = Dev::new(0);
    let ch = channel(c"tdt-it-order", 2);
    let mut a = vec![1.0f32, 2.0, 3.0, 4.0];
    let sent = float_dataset(&mut a);
    ok(unsafe { acltdtSendTensor(ch, sent.0, 1000) });
    // The sender's memory may change at once: the channel holds a copy.
    unsafe { a.as_mut_ptr().write(9.0) };
    ok(unsafe { acltdtSendTensor(ch, sent.0, 1000) });
    assert_eq!(size(ch), 2);

    let got = unsafe { acltdtCreateDataset() };
    ok(unsafe { acltdtReceiveTensor(ch, got, 1000) });
    assert_eq!(unsafe { acltdtGetDatasetSize(got) }, 1);
    let item = unsafe { acltdtGetDataItem(got, 0) };
    assert_eq!(unsafe { acltdtGetDataSizeFromItem(item) }, 16);
    assert_eq!(
        unsafe { acltdtGetTensorTypeFromItem(item) },
        ACL_TENSOR_DATA_TENSOR
    );
    assert_eq!(unsafe { acltdtGetDataTypeFromItem(item) }, ACL_FLOAT);
    let mut dims = [0i64; 2];
    err(
        unsafe { acltdtGetDimsFromItem(item, dims.as_mut_ptr(), 1) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { acltdtGetDimsFromItem(item, dims.as_mut_ptr(), 2) });
    assert_eq!(dims, [1, 4]);
    let data =
        unsafe { std::slice::from_raw_parts(acltdtGetDataAddrFromItem(item).cast::<f32>(), 4) };
    assert_eq!(data, [1.0, 2.0, 3.0, 4.0]);
    // A received item is the dataset's: it goes with it.
    err(
        unsafe { acltdtDestroyDataItem(item) },
        AclError::INVALID_PARAM,
    );
    // A second receive into the same dataset replaces its items.
    ok(unsafe { acltdtReceiveTensor(ch, got, 1000) });
    let item = unsafe { acltdtGetDataItem(got, 0) };
    let first = unsafe { *acltdtGetDataAddrFromItem(item).cast::<f32>() };
    assert_eq!(first, 9.0);
    assert_eq!(size(ch), 0);
    // A dataset the caller filled cannot be received into, nor a received one added to.
    err(
        unsafe { acltdtReceiveTensor(ch, sent.0, 0) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { acltdtAddDataItem(got, sent.1) },
        AclError::FEATURE_UNSUPPORTED,
    );
    ok(unsafe { acltdtDestroyDataset(got) });
    assert_eq!(
        unsafe { acltdtGetDataSizeFromItem(item) },
        0,
        "freed with its dataset"
    );

    ok(unsafe { acltdtCleanChannel(ch) });
    ok(unsafe { acltdtStopChannel(ch) });
    ok(unsafe { acltdtDestroyChannel(ch) });
    err(unsafe { acltdtDestroyChannel(ch) }, AclError::INVALID_PARAM);
    free_dataset(sent);
}

#[test]
fn a_full_channel_refuses_or_waits_and_an_empty_one_times_out() {
    let _d = Dev::new(0);
    let ch = channel(c"tdt-it-capacity", 2);
    let mut a = vec![1.0f32, 2.0];
    let sent = float_dataset(&mut a);
    ok(unsafe { acltdtSendTensor(ch, sent.0, 0) });
    ok(unsafe { acltdtSendTensor(ch, sent.0, 0) });
    err(
        unsafe { acltdtSendTensor(ch, sent.0, 0) },
        AclError::QUEUE_FULL,
    );
    let start = Instant::now();
    err(
        unsafe { acltdtSendTensor(ch, sent.0, 50) },
        AclError::QUEUE_FULL,
    );
    assert!(start.elapsed() >= Duration::from_millis(50));
    ok(unsafe { acltdtCleanChannel(ch) });
    assert_eq!(size(ch), 0);
    let got = unsafe { acltdtCreateDataset() };
    err(
        unsafe { acltdtReceiveTensor(ch, got, 0) },
        AclError::QUEUE_EMPTY,
    );
    let start = Instant::now();
    err(
        unsafe { acltdtReceiveTensor(ch, got, 30) },
        AclError::QUEUE_EMPTY,
    );
    assert!(start.elapsed() >= Duration::from_millis(30));
    err(
        unsafe { acltdtReceiveTensor(ch, got, -2) },
        AclError::INVALID_PARAM,
    );

    // A receive that waits forever gets what another thread sends.
    let (chv, gotv) = (ch as usize, got as usize);
    let receiver = std::thread::spawn(move || unsafe {
        acltdtReceiveTensor(
            chv as *mut acltdtChannelHandle,
            gotv as *mut acltdtDataset,
            -1,
        )
    });
    std::thread::sleep(Duration::from_millis(20));
    ok(unsafe { acltdtSendTensor(ch, sent.0, -1) });
    ok(receiver.join().unwrap());
    assert_eq!(unsafe { acltdtGetDatasetSize(got) }, 1);
    ok(unsafe { acltdtDestroyDataset(got) });
    ok(unsafe { acltdtDestroyChannel(ch) });
    free_dataset(sent);
}

#[test]
fn channel_creation_checks_its_arguments() {
    let _d = Dev::new(0);
    assert!(unsafe { acltdtCreateChannelWithCapacity(0, null(), 2) }.is_null());
    let long = std::ffi::CString::new("c".repeat(128)).unwrap();
    assert!(unsafe { acltdtCreateChannelWithCapacity(0, long.as_ptr(), 2) }.is_null());
    assert!(take_msg().contains("128"));
    assert!(unsafe { acltdtCreateChannelWithCapacity(99, c"tdt-it-dev".as_ptr(), 2) }.is_null());
    let ch = channel(c"tdt-it-twice", 2);
    assert!(
        unsafe { acltdtCreateChannelWithCapacity(0, c"tdt-it-twice".as_ptr(), 2) }.is_null(),
        "names are unique"
    );
    take_msg();
    assert!(unsafe { acltdtCreateChannel(0, c"tdt-it-legacy".as_ptr()) }.is_null());
    assert!(take_msg().contains("acltdtCreateChannelWithCapacity"));
    ok(unsafe { acltdtDestroyChannel(ch) });
    // Items: dims and their count agree; non-tensors take none.
    let dims = [1i64];
    assert!(
        unsafe {
            acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, null(), 1, ACL_FLOAT, null_mut(), 0)
        }
        .is_null()
    );
    assert!(
        unsafe {
            acltdtCreateDataItem(
                ACL_TENSOR_DATA_TENSOR,
                dims.as_ptr(),
                0,
                ACL_FLOAT,
                null_mut(),
                0,
            )
        }
        .is_null()
    );
    assert!(
        unsafe {
            acltdtCreateDataItem(
                ACL_TENSOR_DATA_END_OF_SEQUENCE,
                dims.as_ptr(),
                1,
                ACL_FLOAT,
                null_mut(),
                0,
            )
        }
        .is_null()
    );
    take_msg();
    let end = unsafe {
        acltdtCreateDataItem(
            ACL_TENSOR_DATA_END_OF_SEQUENCE,
            null(),
            0,
            ACL_FLOAT,
            null_mut(),
            0,
        )
    };
    assert_eq!(unsafe { acltdtGetDataTypeFromItem(end) }, ACL_DT_UNDEFINED);
    let (mut n, mut id) = (9, 9);
    ok(unsafe { acltdtGetSliceInfoFromItem(end, &mut n, &mut id) });
    assert_eq!((n, id), (0, 0));
    ok(unsafe { acltdtDestroyDataItem(end) });
    assert_eq!(
        unsafe { acltdtGetTensorTypeFromItem(end) },
        ACL_TENSOR_DATA_UNDEFINED
    );
    let ds = unsafe { acltdtCreateDataset() };
    assert!(unsafe { acltdtGetDataItem(ds, 0) }.is_null());
    assert_eq!(
        unsafe { CStr::from_ptr(acltdtGetDatasetName(ds)) }.to_bytes(),
        b""
    );
    ok(unsafe { acltdtDestroyDataset(ds) });
}

fn queue(name: Option<&CStr>, depth: u32) -> u32 {
    let attr = unsafe { acltdtCreateQueueAttr() };
    ok(unsafe {
        acltdtSetQueueAttr(
            attr,
            ACL_TDT_QUEUE_DEPTH_UINT32,
            4,
            (&raw const depth).cast(),
        )
    });
    if let Some(n) = name {
        let p: *const c_char = n.as_ptr();
        ok(unsafe {
            acltdtSetQueueAttr(
                attr,
                ACL_TDT_QUEUE_NAME_PTR,
                size_of::<usize>(),
                (&raw const p).cast(),
            )
        });
    }
    let mut qid = u32::MAX;
    ok(unsafe { acltdtCreateQueue(attr, &mut qid) });
    ok(unsafe { acltdtDestroyQueueAttr(attr) });
    qid
}

#[test]
fn queue_attributes_are_copied_and_read_back() {
    let attr = unsafe { acltdtCreateQueueAttr() };
    let (mut depth, mut n) = (0u32, 0usize);
    ok(unsafe {
        acltdtGetQueueAttr(
            attr,
            ACL_TDT_QUEUE_DEPTH_UINT32,
            4,
            &mut n,
            (&raw mut depth).cast(),
        )
    });
    assert_eq!((depth, n), (8, 4));
    let name = std::ffi::CString::new("tdt-it-attr").unwrap();
    let p: *const c_char = name.as_ptr();
    ok(unsafe { acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, 8, (&raw const p).cast()) });
    drop(name);
    let mut back: *const c_char = null();
    ok(unsafe {
        acltdtGetQueueAttr(
            attr,
            ACL_TDT_QUEUE_NAME_PTR,
            8,
            &mut n,
            (&raw mut back).cast(),
        )
    });
    assert_eq!(
        unsafe { CStr::from_ptr(back) }.to_bytes(),
        b"tdt-it-attr",
        "the attribute's copy"
    );
    err(
        unsafe {
            acltdtGetQueueAttr(
                attr,
                ACL_TDT_QUEUE_NAME_PTR,
                4,
                &mut n,
                (&raw mut back).cast(),
            )
        },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe {
            acltdtSetQueueAttr(
                attr,
                ACL_TDT_QUEUE_DEPTH_UINT32,
                8,
                (&raw const depth).cast(),
            )
        },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { acltdtSetQueueAttr(attr, 7, 4, (&raw const depth).cast()) },
        AclError::INVALID_PARAM,
    );
    let long = std::ffi::CString::new("q".repeat(128)).unwrap();
    let p: *const c_char = long.as_ptr();
    err(
        unsafe { acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_NAME_PTR, 8, (&raw const p).cast()) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { acltdtDestroyQueueAttr(attr) });
    err(
        unsafe { acltdtDestroyQueueAttr(attr) },
        AclError::INVALID_PARAM,
    );
}

#[test]
fn a_queue_carries_bytes_and_user_data_with_timeouts() {
    let _d = Dev::new(0);
    let q = queue(Some(c"tdt-it-bytes"), 2);
    let mut dup = 0;
    let a = unsafe { acltdtCreateQueueAttr() };
    let p: *const c_char = c"tdt-it-bytes".as_ptr();
    ok(unsafe { acltdtSetQueueAttr(a, ACL_TDT_QUEUE_NAME_PTR, 8, (&raw const p).cast()) });
    err(
        unsafe { acltdtCreateQueue(a, &mut dup) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { acltdtDestroyQueueAttr(a) });

    let data = *b"hello";
    let user = [7u8; 8];
    ok(unsafe { acltdtEnqueueData(q, data.as_ptr().cast(), 5, user.as_ptr().cast(), 8, 0, 0) });
    ok(unsafe { acltdtEnqueueData(q, data.as_ptr().cast(), 3, null(), 0, 0, 0) });
    err(
        unsafe { acltdtEnqueueData(q, data.as_ptr().cast(), 3, null(), 0, 0, 0) },
        AclError::QUEUE_FULL,
    );
    err(
        unsafe { acltdtEnqueueData(q, data.as_ptr().cast(), 3, user.as_ptr().cast(), 97, 0, 0) },
        AclError::INVALID_PARAM,
    );
    let mut out = [0u8; 8];
    let mut got_user = [0u8; 4];
    let mut n = 0;
    err(
        unsafe { acltdtDequeueData(q, out.as_mut_ptr().cast(), 4, &mut n, null_mut(), 0, 0) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe {
        acltdtDequeueData(
            q,
            out.as_mut_ptr().cast(),
            8,
            &mut n,
            got_user.as_mut_ptr().cast(),
            4,
            0,
        )
    });
    assert_eq!((&out[..n], got_user), (&b"hello"[..], [7; 4]));
    ok(unsafe { acltdtDequeueData(q, out.as_mut_ptr().cast(), 8, &mut n, null_mut(), 0, -1) });
    assert_eq!(&out[..n], b"hel");
    let start = Instant::now();
    err(
        unsafe { acltdtDequeueData(q, out.as_mut_ptr().cast(), 8, &mut n, null_mut(), 0, 20) },
        AclError::QUEUE_EMPTY,
    );
    assert!(start.elapsed() >= Duration::from_millis(20));
    // From a thread without a current device: the queue calls act on the current device.
    std::thread::spawn(move || {
        let mut n = 0;
        let mut out = [0u8; 1];
        err(
            unsafe { acltdtDequeueData(q, out.as_mut_ptr().cast(), 1, &mut n, null_mut(), 0, 0) },
            AclError::CONTEXT_NULL,
        );
    })
    .join()
    .unwrap();
    ok(unsafe { acltdtDestroyQueue(q) });
    err(unsafe { acltdtDestroyQueue(q) }, AclError::INVALID_PARAM);
}

#[test]
fn routes_forward_between_queues_and_are_queried() {
    let _d = Dev::new(0);
    let (src, dst) = (queue(None, 4), queue(None, 4));
    let route = unsafe { acltdtCreateQueueRoute(src, dst) };
    let list = unsafe { acltdtCreateQueueRouteList() };
    ok(unsafe { acltdtAddQueueRoute(list, route) });
    ok(unsafe { acltdtBindQueueRoutes(list) });
    let data = [42u8];
    ok(unsafe { acltdtEnqueueData(src, data.as_ptr().cast(), 1, null(), 0, -1, 0) });
    let mut out = [0u8; 1];
    let mut n = 0;
    ok(unsafe { acltdtDequeueData(dst, out.as_mut_ptr().cast(), 1, &mut n, null_mut(), 0, 1000) });
    assert_eq!(out, [42], "forwarded from the source queue");

    let info = unsafe { acltdtCreateQueueRouteQueryInfo() };
    let found = unsafe { acltdtCreateQueueRouteList() };
    err(
        unsafe { acltdtQueryQueueRoutes(info, found) },
        AclError::INVALID_PARAM,
    );
    let mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST;
    ok(unsafe {
        acltdtSetQueueRouteQueryInfo(
            info,
            ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM,
            4,
            (&raw const mode).cast(),
        )
    });
    err(
        unsafe { acltdtQueryQueueRoutes(info, found) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe {
        acltdtSetQueueRouteQueryInfo(
            info,
            ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32,
            4,
            (&raw const src).cast(),
        )
    });
    ok(unsafe {
        acltdtSetQueueRouteQueryInfo(
            info,
            ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32,
            4,
            (&raw const dst).cast(),
        )
    });
    ok(unsafe { acltdtQueryQueueRoutes(info, found) });
    assert_eq!(unsafe { acltdtGetQueueRouteNum(found) }, 1);
    let view = unsafe { acltdtCreateQueueRoute(0, 0) };
    ok(unsafe { acltdtGetQueueRoute(found, 0, view) });
    err(
        unsafe { acltdtGetQueueRoute(found, 1, view) },
        AclError::INVALID_PARAM,
    );
    let (mut s, mut d, mut st, mut n) = (0u32, 0u32, 0i32, 0usize);
    ok(unsafe {
        acltdtGetQueueRouteParam(
            view,
            ACL_TDT_QUEUE_ROUTE_SRC_UINT32,
            4,
            &mut n,
            (&raw mut s).cast(),
        )
    });
    ok(unsafe {
        acltdtGetQueueRouteParam(
            view,
            ACL_TDT_QUEUE_ROUTE_DST_UINT32,
            4,
            &mut n,
            (&raw mut d).cast(),
        )
    });
    ok(unsafe {
        acltdtGetQueueRouteParam(
            view,
            ACL_TDT_QUEUE_ROUTE_STATUS_INT32,
            4,
            &mut n,
            (&raw mut st).cast(),
        )
    });
    assert_eq!((s, d, st as u32), (src, dst, ACL_TDT_QUEUE_ROUTE_BIND));

    // A queue in a bound route is not destroyed; a cycle is not bound.
    err(unsafe { acltdtDestroyQueue(src) }, AclError::FAILURE);
    let back = unsafe { acltdtCreateQueueRoute(dst, src) };
    let cyc = unsafe { acltdtCreateQueueRouteList() };
    ok(unsafe { acltdtAddQueueRoute(cyc, back) });
    err(unsafe { acltdtBindQueueRoutes(cyc) }, AclError::FAILURE);
    ok(unsafe { acltdtGetQueueRoute(cyc, 0, view) });
    ok(unsafe {
        acltdtGetQueueRouteParam(
            view,
            ACL_TDT_QUEUE_ROUTE_STATUS_INT32,
            4,
            &mut n,
            (&raw mut st).cast(),
        )
    });
    assert_eq!(st as u32, ACL_TDT_QUEUE_ROUTE_BIND_ABNORMAL);

    ok(unsafe { acltdtUnbindQueueRoutes(list) });
    for r in [route, view, back] {
        ok(unsafe { acltdtDestroyQueueRoute(r) });
    }
    for l in [list, found, cyc] {
        ok(unsafe { acltdtDestroyQueueRouteList(l) });
    }
    ok(unsafe { acltdtDestroyQueueRouteQueryInfo(info) });
    ok(unsafe { acltdtDestroyQueue(src) });
    ok(unsafe { acltdtDestroyQueue(dst) });
}

#[test]
fn the_device_sides_buffers_and_sharing_are_200006_on_a_host() {
    let mut buf: acltdtBuf = null_mut();
    err(
        unsafe { acltdtAllocBuf(64, 2, &mut buf) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { acltdtAllocBuf(64, ACL_TDT_NORMAL_MEM, null_mut()) },
        AclError::INVALID_PARAM,
    );
    err(
        unsafe { acltdtAllocBuf(64, ACL_TDT_NORMAL_MEM, &mut buf) },
        AclError::FEATURE_UNSUPPORTED,
    );
    err(
        unsafe { acltdtEnqueue(0, buf, 0) },
        AclError::FEATURE_UNSUPPORTED,
    );
    err(
        unsafe { acltdtDequeue(0, &mut buf, 0) },
        AclError::FEATURE_UNSUPPORTED,
    );
    err(
        unsafe { acltdtGrantQueue(0, 1, 2, 0) },
        AclError::FEATURE_UNSUPPORTED,
    );
    let mut perm = 0;
    err(
        unsafe { acltdtAttachQueue(0, 0, &mut perm) },
        AclError::FEATURE_UNSUPPORTED,
    );
    err(unsafe { acltdtFreeBuf(buf) }, AclError::FEATURE_UNSUPPORTED);
}
