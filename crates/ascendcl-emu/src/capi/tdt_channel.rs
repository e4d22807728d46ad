//! `acl_tdt.h`: data items, datasets and data channels (the `tdt` concept).

use super::*;
use crate::tdt::{channel, dataset};

/// Runs a call that returns a handle: NULL, with the failure recorded for
/// `aclGetRecentErrMsg`, when it fails or panics.
fn handle_or_null<T>(api: &'static str, f: impl FnOnce() -> R<usize>) -> *mut T {
    let run = move || match f() {
        Ok(h) => h as *mut T,
        Err(e) => {
            record(api, e);
            std::ptr::null_mut()
        }
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| {
        panicked(api, p.as_ref());
        std::ptr::null_mut()
    })
}

/// A C string argument, or 100000.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_str<'a>(p: *const c_char, what: &str) -> R<&'a str> {
    if p.is_null() {
        return fail(INVALID_PARAM, format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| Fail {
        code: INVALID_PARAM,
        msg: format!("{what} is not UTF-8"),
    })
}

/// `acltdtCreateDataItem`: an item describing the caller's data (borrowed, not copied). Tensor
/// items take dims (NULL with dimNum 0, at most 128); other types take none, and have no data.
///
/// # Safety
/// `dims` is NULL or valid for `dimNum` reads; `data` stays valid while the item is sent.
pub unsafe extern "C" fn acltdtCreateDataItem(
    tdtType: acltdtTensorType,
    dims: *const i64,
    dimNum: usize,
    dataType: aclDataType,
    data: *mut c_void,
    size: usize,
) -> *mut acltdtDataItem {
    handle_or_null("acltdtCreateDataItem", || {
        let dims = match (dims.is_null(), dimNum) {
            (true, 0) => None,
            (true, n) => return fail(INVALID_PARAM, format!("dims is NULL but dimNum is {n}")),
            (false, 0) => return fail(INVALID_PARAM, "dims is not NULL but dimNum is 0"),
            (false, n) if n > dataset::MAX_DIMS => {
                return fail(
                    INVALID_PARAM,
                    format!("dimNum {n} is larger than {}", dataset::MAX_DIMS),
                );
            }
            // SAFETY: the caller's contract: dimNum readable values.
            (false, n) => Some(unsafe { std::slice::from_raw_parts(dims, n) }),
        };
        dataset::create_item(tdtType, dims, dataType, data as usize, size)
    })
}

acl! {
    /// `acltdtDestroyDataItem`: an item the caller created (a received dataset frees its own).
    fn acltdtDestroyDataItem(dataItem: *mut acltdtDataItem) {
        dataset::destroy_item(handle(dataItem))
    }
}

/// `acltdtGetTensorTypeFromItem`: `ACL_TENSOR_DATA_UNDEFINED` for anything but a live item.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetTensorTypeFromItem(
    dataItem: *const acltdtDataItem,
) -> acltdtTensorType {
    dataset::item(dataItem as usize).map_or(ACL_TENSOR_DATA_UNDEFINED, |i| i.tdt_type)
}

/// `acltdtGetDataTypeFromItem`: `ACL_DT_UNDEFINED` for anything but a live item.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetDataTypeFromItem(dataItem: *const acltdtDataItem) -> aclDataType {
    dataset::item(dataItem as usize).map_or(ACL_DT_UNDEFINED, |i| i.dtype)
}

/// `acltdtGetDataAddrFromItem`: the item's data (the caller's, or a received dataset's own).
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetDataAddrFromItem(dataItem: *const acltdtDataItem) -> *mut c_void {
    dataset::item(dataItem as usize).map_or(std::ptr::null_mut(), |i| i.addr as *mut c_void)
}

/// `acltdtGetDataSizeFromItem`: 0 for anything but a live item.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetDataSizeFromItem(dataItem: *const acltdtDataItem) -> usize {
    dataset::item(dataItem as usize).map_or(0, |i| i.size)
}

/// `acltdtGetDimNumFromItem`: 0 for anything but a live item.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetDimNumFromItem(dataItem: *const acltdtDataItem) -> usize {
    dataset::item(dataItem as usize).map_or(0, |i| i.dims.len())
}

fn live_item(p: *const acltdtDataItem) -> R<dataset::ItemView> {
    dataset::item(p as usize).ok_or_else(|| Fail {
        code: INVALID_PARAM,
        msg: "dataItem is NULL or not a live data item".to_string(),
    })
}

acl! {
    /// `acltdtGetSliceInfoFromItem`: the slice count and index (0 and 0 but for split tensors).
    fn acltdtGetSliceInfoFromItem(dataItem: *const acltdtDataItem, sliceNum: *mut usize, sliceId: *mut usize) {
        let item = live_item(dataItem)?;
        // SAFETY: NULL or valid for one write each (the C contract).
        let (num, id) = unsafe { (Out::new(sliceNum, "sliceNum")?, Out::new(sliceId, "sliceId")?) };
        num.set(item.slice_num);
        id.set(item.slice_id);
        Ok(())
    }
}

acl! {
    /// `acltdtGetDimsFromItem`: the dims into `dims` (room for `dimNum`, at least the item's).
    fn acltdtGetDimsFromItem(dataItem: *const acltdtDataItem, dims: *mut i64, dimNum: usize) {
        let item = live_item(dataItem)?;
        match (dims.is_null(), dimNum) {
            (true, 0) | (false, 1..) => {}
            (true, n) => return fail(INVALID_PARAM, format!("dims is NULL but dimNum is {n}")),
            (false, 0) => return fail(INVALID_PARAM, "dims is not NULL but dimNum is 0"),
        }
        if dimNum < item.dims.len() {
            return fail(INVALID_PARAM, format!("dimNum {dimNum} is less than the item's {} dims", item.dims.len()));
        }
        if !item.dims.is_empty() {
            // SAFETY: `dims` holds `dimNum` >= the item's count of writable values.
            unsafe { std::ptr::copy_nonoverlapping(item.dims.as_ptr(), dims, item.dims.len()) };
        }
        Ok(())
    }
}

/// `acltdtCreateDataset`: an empty dataset.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtCreateDataset() -> *mut acltdtDataset {
    handle_or_null("acltdtCreateDataset", || Ok(dataset::create_dataset()))
}

acl! {
    /// `acltdtDestroyDataset`: a dataset the caller filled leaves its items alone; one a receive
    /// filled frees them.
    fn acltdtDestroyDataset(dataset: *mut acltdtDataset) {
        dataset::destroy_dataset(handle(dataset))
    }
}

/// `acltdtGetDataItem`: the item at `index`; NULL past the end.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetDataItem(
    dataset: *const acltdtDataset,
    index: usize,
) -> *mut acltdtDataItem {
    handle_or_null("acltdtGetDataItem", || {
        dataset::dataset_item(dataset as usize, index)
    })
}

acl! {
    /// `acltdtAddDataItem`: borrows the item (all items of a dataset in host memory, or all in
    /// device memory); a received dataset takes no more (200006).
    fn acltdtAddDataItem(dataset: *mut acltdtDataset, dataItem: *mut acltdtDataItem) {
        dataset::add_item(handle(dataset), handle(dataItem))
    }
}

/// `acltdtGetDatasetSize`: 0 for anything but a live dataset.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetDatasetSize(dataset: *const acltdtDataset) -> usize {
    dataset::dataset_size(dataset as usize).unwrap_or(0)
}

/// `acltdtGetDatasetName`: the name a receive gave it ("" for one the caller made); NULL for
/// anything but a live dataset.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn acltdtGetDatasetName(dataset: *const acltdtDataset) -> *const c_char {
    dataset::dataset_name(dataset as usize).unwrap_or(std::ptr::null())
}

/// `acltdtCreateChannel`: the legacy channels, documented for the Atlas training series in
/// virtualised instances only; on Atlas A2/A3 it is NULL (use a channel with a capacity).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
pub unsafe extern "C" fn acltdtCreateChannel(
    deviceId: u32,
    name: *const c_char,
) -> *mut acltdtChannelHandle {
    handle_or_null("acltdtCreateChannel", || {
        // SAFETY: the caller's contract.
        unsafe { c_str(name, "name") }?;
        let _ = deviceId;
        fail(
            RT_FEATURE_NOT_SUPPORT,
            "channels without a capacity are the Atlas training series' (virtualised instances); \
             this SoC has queue-backed channels: acltdtCreateChannelWithCapacity",
        )
    })
}

/// `acltdtCreateChannelWithCapacity`: a channel of `capacity` datasets on an open device (its
/// name with its NUL at most 128 bytes, unique among the process's queues); NULL on failure.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
pub unsafe extern "C" fn acltdtCreateChannelWithCapacity(
    deviceId: u32,
    name: *const c_char,
    capacity: usize,
) -> *mut acltdtChannelHandle {
    handle_or_null("acltdtCreateChannelWithCapacity", || {
        // SAFETY: the caller's contract.
        let name = unsafe { c_str(name, "name") }?;
        channel::create(deviceId, name, capacity)
    })
}

acl! {
    /// `acltdtStopChannel`: nothing to stop for a channel with a capacity.
    fn acltdtStopChannel(handle: *mut acltdtChannelHandle) {
        channel::stop(super::handle(handle))
    }
}

acl! {
    /// `acltdtDestroyChannel`: the channel and what it still holds.
    fn acltdtDestroyChannel(handle: *mut acltdtChannelHandle) {
        channel::destroy(super::handle(handle))
    }
}

acl! {
    /// `acltdtCleanChannel`: drops what the channel holds.
    fn acltdtCleanChannel(handle: *mut acltdtChannelHandle) {
        channel::clean(super::handle(handle))
    }
}

acl! {
    /// `acltdtSendTensor`: a copy of the dataset onto the channel; `timeout` -1 waits for room,
    /// 0 does not wait, n waits n ms; full then is 207014.
    fn acltdtSendTensor(handle: *const acltdtChannelHandle, dataset: *const acltdtDataset, timeout: i32) {
        if dataset.is_null() {
            return fail(INVALID_PARAM, "dataset is NULL");
        }
        channel::send(handle as usize, dataset as usize, timeout)
    }
}

acl! {
    /// `acltdtReceiveTensor`: the next dataset into `dataset` (empty, or filled by an earlier
    /// receive), which then owns its items; `timeout` as for a send, empty then is 207013.
    fn acltdtReceiveTensor(handle: *const acltdtChannelHandle, dataset: *mut acltdtDataset, timeout: i32) {
        if dataset.is_null() {
            return fail(INVALID_PARAM, "dataset is NULL");
        }
        channel::receive(handle as usize, dataset as usize, timeout)
    }
}

acl! {
    /// `acltdtQueryChannelSize`: the datasets the channel holds.
    fn acltdtQueryChannelSize(handle: *const acltdtChannelHandle, size: *mut usize) {
        // SAFETY: NULL or valid for one write (the C contract).
        let size = unsafe { Out::new(size, "size") }?;
        size.set(channel::size(handle as usize)?);
        Ok(())
    }
}
