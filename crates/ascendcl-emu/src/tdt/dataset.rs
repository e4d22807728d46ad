//! Data items and datasets (`acl_tdt.h`): what a channel carries. A dataset the user fills
//! borrows its items, and an item borrows its data (neither is copied nor freed by the runtime);
//! a dataset filled by a receive owns its items and their data, and frees them when destroyed.
//! Sending copies each item's data into the message, so the sender may reuse its memory at once.

use super::queues::Payload;
use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use crate::memory::{self, Loc};
use ascendcl_sys::*;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::LazyLock;

/// The most dimensions an item may have.
pub(crate) const MAX_DIMS: usize = 128;

/// An item's description and, in a message, a copy of its data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ItemData {
    pub tdt_type: acltdtTensorType,
    pub dims: Vec<i64>,
    pub dtype: aclDataType,
    pub bytes: Vec<u8>,
    pub slice_num: usize,
    pub slice_id: usize,
}

/// Where an item's data is.
#[derive(Debug)]
enum Bytes {
    /// The caller's memory (`acltdtCreateDataItem`).
    Borrowed { addr: usize, len: usize },
    /// Memory of a received dataset.
    Owned(Box<[u8]>),
}

#[derive(Debug)]
struct Item {
    tdt_type: acltdtTensorType,
    dims: Vec<i64>,
    dtype: aclDataType,
    bytes: Bytes,
    slice_num: usize,
    slice_id: usize,
    /// The received dataset that owns it.
    owner: Option<usize>,
}

/// Whether a dataset's items are in host or device memory (they may not mix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Memory {
    Unknown,
    Host,
    Device,
}

#[derive(Debug)]
struct Dataset {
    name: CString,
    items: Vec<usize>,
    /// Filled by a receive: it owns its items.
    owns_items: bool,
    memory: Memory,
}

#[derive(Debug, Default)]
struct Objects {
    items: HashMap<usize, Item>,
    datasets: HashMap<usize, Dataset>,
}

static OBJECTS: LazyLock<Mutex<Objects>> = LazyLock::new(|| Mutex::ranked(Rank::TdtObjects));

/// `acltdtCreateDataItem`'s checks and the new item's handle.
pub(crate) fn create_item(
    tdt_type: acltdtTensorType,
    dims: Option<&[i64]>,
    dtype: aclDataType,
    data: usize,
    size: usize,
) -> R<usize> {
    let dims = dims.unwrap_or(&[]);
    if dims.len() > MAX_DIMS {
        return fail(
            INVALID_PARAM,
            format!("dimNum {} is larger than {MAX_DIMS}", dims.len()),
        );
    }
    let (dims, dtype, bytes) = if tdt_type == ACL_TENSOR_DATA_TENSOR {
        (
            dims.to_vec(),
            dtype,
            Bytes::Borrowed {
                addr: data,
                len: size,
            },
        )
    } else {
        if !dims.is_empty() {
            return fail(
                INVALID_PARAM,
                format!("dims must be NULL for an item of type {tdt_type} (not a tensor)"),
            );
        }
        (
            Vec::new(),
            ACL_DT_UNDEFINED,
            Bytes::Borrowed { addr: 0, len: 0 },
        )
    };
    let h = crate::base::hub::new_handle();
    OBJECTS.lock().items.insert(
        h,
        Item {
            tdt_type,
            dims,
            dtype,
            bytes,
            slice_num: 0,
            slice_id: 0,
            owner: None,
        },
    );
    Ok(h)
}

/// `acltdtDestroyDataItem`: an item of a received dataset goes with its dataset.
pub(crate) fn destroy_item(h: usize) -> R {
    let mut o = OBJECTS.lock();
    match o.items.get(&h) {
        None => fail(INVALID_PARAM, "dataItem is NULL or not a live data item"),
        Some(i) if i.owner.is_some() => fail(
            INVALID_PARAM,
            "the item belongs to a received dataset, which frees it: destroy the dataset",
        ),
        Some(_) => {
            o.items.remove(&h);
            Ok(())
        }
    }
}

/// What the getters read of an item: type, data type, data address and size, dims, slice.
#[derive(Debug, Clone)]
pub(crate) struct ItemView {
    pub tdt_type: acltdtTensorType,
    pub dtype: aclDataType,
    pub addr: usize,
    pub size: usize,
    pub dims: Vec<i64>,
    pub slice_num: usize,
    pub slice_id: usize,
}

/// An item's view; None for anything but a live item.
pub(crate) fn item(h: usize) -> Option<ItemView> {
    let o = OBJECTS.lock();
    let i = o.items.get(&h)?;
    let (addr, size) = match &i.bytes {
        Bytes::Borrowed { addr, len } => (*addr, *len),
        Bytes::Owned(b) if b.is_empty() => (0, 0),
        Bytes::Owned(b) => (b.as_ptr() as usize, b.len()),
    };
    Some(ItemView {
        tdt_type: i.tdt_type,
        dtype: i.dtype,
        addr,
        size,
        dims: i.dims.clone(),
        slice_num: i.slice_num,
        slice_id: i.slice_id,
    })
}

/// `acltdtCreateDataset`.
pub(crate) fn create_dataset() -> usize {
    let h = crate::base::hub::new_handle();
    OBJECTS.lock().datasets.insert(
        h,
        Dataset {
            name: CString::default(),
            items: Vec::new(),
            owns_items: false,
            memory: Memory::Unknown,
        },
    );
    h
}

/// `acltdtDestroyDataset`: a received dataset frees its items.
pub(crate) fn destroy_dataset(h: usize) -> R {
    let mut o = OBJECTS.lock();
    let Some(d) = o.datasets.remove(&h) else {
        return fail(INVALID_PARAM, "dataset is NULL or not a live dataset");
    };
    if d.owns_items {
        for i in d.items {
            o.items.remove(&i);
        }
    }
    Ok(())
}

/// Where the memory at `addr` is, for the host-or-device rule of a dataset.
fn memory_of(addr: usize) -> Memory {
    match memory::read().check("data", addr, 1).map(|s| s.loc) {
        Ok(Loc::Device(_)) => Memory::Device,
        _ => Memory::Host,
    }
}

/// `acltdtAddDataItem`: the item's data must be in the same kind of memory (host or device) as
/// the dataset's other items; a received dataset takes no more items (200006).
pub(crate) fn add_item(dataset: usize, item: usize) -> R {
    let addr = match OBJECTS.lock().items.get(&item) {
        None => return fail(INVALID_PARAM, "dataItem is NULL or not a live data item"),
        Some(Item {
            bytes: Bytes::Borrowed { addr, .. },
            ..
        }) => *addr,
        Some(_) => 0,
    };
    // Outside the objects' lock: the memory table is its own.
    let kind = if addr == 0 {
        Memory::Unknown
    } else {
        memory_of(addr)
    };
    let mut o = OBJECTS.lock();
    if !o.items.contains_key(&item) {
        return fail(INVALID_PARAM, "dataItem is NULL or not a live data item");
    }
    let Some(d) = o.datasets.get_mut(&dataset) else {
        return fail(INVALID_PARAM, "dataset is NULL or not a live dataset");
    };
    if d.owns_items {
        return fail(
            FEATURE_UNSUPPORTED,
            "items cannot be added to a dataset filled by a receive",
        );
    }
    if d.memory == Memory::Unknown {
        d.memory = kind;
    } else if kind != Memory::Unknown && kind != d.memory {
        return fail(
            INVALID_PARAM,
            "the items of a dataset must all be in host memory or all in device memory",
        );
    }
    d.items.push(item);
    Ok(())
}

/// `acltdtGetDataItem`.
pub(crate) fn dataset_item(dataset: usize, index: usize) -> R<usize> {
    let o = OBJECTS.lock();
    let Some(d) = o.datasets.get(&dataset) else {
        return fail(INVALID_PARAM, "dataset is NULL or not a live dataset");
    };
    d.items.get(index).copied().ok_or_else(|| Fail {
        code: INVALID_PARAM,
        msg: format!(
            "index {index} is not below the dataset's size {}",
            d.items.len()
        ),
    })
}

/// `acltdtGetDatasetSize`; None for anything but a live dataset.
pub(crate) fn dataset_size(dataset: usize) -> Option<usize> {
    OBJECTS.lock().datasets.get(&dataset).map(|d| d.items.len())
}

/// `acltdtGetDatasetName`: the name's address, valid while the dataset lives.
pub(crate) fn dataset_name(dataset: usize) -> Option<*const std::ffi::c_char> {
    OBJECTS
        .lock()
        .datasets
        .get(&dataset)
        .map(|d| d.name.as_ptr())
}

/// Copies `len` bytes of the caller's memory at `addr` (host or device) for a message.
fn copy_in(addr: usize, len: usize) -> R<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if addr == 0 {
        return fail(INVALID_PARAM, format!("an item of {len} bytes has no data"));
    }
    // Device memory is validated against the live allocations; host memory is the caller's
    // (the C contract: valid for `len` bytes).
    let side = match memory::read().check("item data", addr, len) {
        Ok(side) if matches!(side.loc, Loc::Device(_)) => side,
        _ => memory::Side::PAGEABLE,
    };
    let mut bytes = vec![0u8; len];
    // SAFETY: `addr..addr + len` lies in a live device allocation (checked just above; read
    // through the emulator's view of it), or is the caller's host memory, which its item
    // describes as `len` readable bytes (the C contract).
    unsafe { memory::access::read(addr, side, &mut bytes) };
    Ok(bytes)
}

/// The message a send puts on a channel: the dataset's name and a copy of each item.
pub(crate) fn serialize(dataset: usize) -> R<Payload> {
    let (name, described) = {
        let o = OBJECTS.lock();
        let Some(d) = o.datasets.get(&dataset) else {
            return fail(INVALID_PARAM, "dataset is NULL or not a live dataset");
        };
        let mut described = Vec::with_capacity(d.items.len());
        for h in &d.items {
            let Some(i) = o.items.get(h) else {
                return fail(
                    INVALID_PARAM,
                    "the dataset holds an item that was destroyed",
                );
            };
            let (addr, len, owned) = match &i.bytes {
                Bytes::Borrowed { addr, len } => (*addr, *len, None),
                Bytes::Owned(b) => (0, 0, Some(b.to_vec())),
            };
            described.push((
                i.tdt_type,
                i.dims.clone(),
                i.dtype,
                addr,
                len,
                owned,
                i.slice_num,
                i.slice_id,
            ));
        }
        (d.name.to_string_lossy().into_owned(), described)
    };
    if described.is_empty() {
        return fail(
            INVALID_PARAM,
            "the dataset is empty: there is nothing to send",
        );
    }
    let mut items = Vec::with_capacity(described.len());
    for (tdt_type, dims, dtype, addr, len, owned, slice_num, slice_id) in described {
        let bytes = match owned {
            Some(b) => b,
            None => copy_in(addr, len)?,
        };
        items.push(ItemData {
            tdt_type,
            dims,
            dtype,
            bytes,
            slice_num,
            slice_id,
        });
    }
    Ok(Payload::Dataset { name, items })
}

/// Whether `dataset` may be filled by a receive: empty, or filled by an earlier one.
pub(crate) fn check_receivable(dataset: usize) -> R {
    let o = OBJECTS.lock();
    match o.datasets.get(&dataset) {
        None => fail(INVALID_PARAM, "dataset is NULL or not a live dataset"),
        Some(d) if !d.items.is_empty() && !d.owns_items => fail(
            INVALID_PARAM,
            "the dataset must be empty, or filled by an earlier receive, before a receive fills it",
        ),
        Some(_) => Ok(()),
    }
}

/// Fills `dataset` with what a receive took: its earlier items (of an earlier receive) are freed,
/// the new ones are its own.
pub(crate) fn fill(dataset: usize, name: &str, items: Vec<ItemData>) -> R {
    let mut o = OBJECTS.lock();
    let Some(d) = o.datasets.get_mut(&dataset) else {
        return fail(INVALID_PARAM, "dataset is NULL or not a live dataset");
    };
    let old = std::mem::take(&mut d.items);
    d.owns_items = true;
    d.memory = Memory::Host;
    d.name = CString::new(name.replace('\0', "")).unwrap_or_default();
    let handles: Vec<usize> = items
        .iter()
        .map(|_| crate::base::hub::new_handle())
        .collect();
    d.items = handles.clone();
    for h in old {
        o.items.remove(&h);
    }
    for (h, i) in handles.into_iter().zip(items) {
        o.items.insert(
            h,
            Item {
                tdt_type: i.tdt_type,
                dims: i.dims,
                dtype: i.dtype,
                bytes: Bytes::Owned(i.bytes.into_boxed_slice()),
                slice_num: i.slice_num,
                slice_id: i.slice_id,
                owner: Some(dataset),
            },
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_round_trips_through_a_message_and_owns_what_it_received() {
        let values = [1.0f32, 2.0, 3.0, 4.0];
        let item = create_item(
            ACL_TENSOR_DATA_TENSOR,
            Some(&[2, 2]),
            ACL_FLOAT,
            values.as_ptr() as usize,
            16,
        )
        .unwrap();
        let end = create_item(ACL_TENSOR_DATA_END_OF_SEQUENCE, None, ACL_FLOAT, 0, 0).unwrap();
        let sent = create_dataset();
        add_item(sent, item).unwrap();
        add_item(sent, end).unwrap();
        let Payload::Dataset { name, items } = serialize(sent).unwrap() else {
            panic!("a dataset")
        };
        assert_eq!(items[0].bytes.len(), 16);
        assert_eq!(items[1].dtype, ACL_DT_UNDEFINED);

        let got = create_dataset();
        check_receivable(got).unwrap();
        fill(got, &name, items).unwrap();
        assert_eq!(dataset_size(got), Some(2));
        let first = dataset_item(got, 0).unwrap();
        let v = super::item(first).unwrap();
        assert_eq!(
            (v.size, v.dims.as_slice(), v.dtype),
            (16, &[2i64, 2][..], ACL_FLOAT)
        );
        // SAFETY: the received item owns 16 bytes at its address.
        let back = unsafe { std::slice::from_raw_parts(v.addr as *const f32, 4) };
        assert_eq!(back, values);
        assert_eq!(destroy_item(first).unwrap_err().code, INVALID_PARAM);
        assert_eq!(add_item(got, item).unwrap_err().code, FEATURE_UNSUPPORTED);
        assert_eq!(check_receivable(sent).unwrap_err().code, INVALID_PARAM);
        destroy_dataset(got).unwrap();
        assert!(super::item(first).is_none(), "freed with its dataset");
        destroy_dataset(sent).unwrap();
        destroy_item(item).unwrap();
        destroy_item(end).unwrap();
    }

    #[test]
    fn bad_items_are_refused() {
        assert_eq!(
            create_item(ACL_TENSOR_DATA_END_OF_SEQUENCE, Some(&[1]), ACL_FLOAT, 0, 0)
                .unwrap_err()
                .code,
            INVALID_PARAM
        );
        let dims = [1i64; MAX_DIMS + 1];
        assert!(create_item(ACL_TENSOR_DATA_TENSOR, Some(&dims), ACL_FLOAT, 0, 0).is_err());
        let empty = create_dataset();
        assert_eq!(serialize(empty).unwrap_err().code, INVALID_PARAM);
        destroy_dataset(empty).unwrap();
        assert_eq!(destroy_dataset(empty).unwrap_err().code, INVALID_PARAM);
    }
}
