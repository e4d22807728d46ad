//! Data buffers (`aclDataBuffer`): descriptions of an address and a size, kept in the hub so that
//! a pointer that is not a live buffer is refused instead of read.

use crate::base::error::*;
use crate::base::hub::{self, Kind, Resource, registry};
use crate::base::lock::{Mutex, Rank};
use std::sync::Arc;

/// A data buffer: an address and a size (updated by `aclUpdateDataBuffer`).
#[derive(Debug)]
pub(crate) struct DataBuffer {
    handle: usize,
    at: Mutex<(usize, usize)>,
}

impl Resource for DataBuffer {
    const KIND: Kind = Kind::DataBuffer;

    fn handle(&self) -> usize {
        self.handle
    }
}

/// `aclCreateDataBuffer`: a buffer describing `size` bytes at `data` (NULL data is a placeholder).
pub(crate) fn create(data: usize, size: usize) -> usize {
    let handle = hub::new_handle();
    registry::<DataBuffer>().insert(Arc::new(DataBuffer {
        handle,
        at: Mutex::new(Rank::DataBuffer, (data, size)),
    }));
    handle
}

fn not_a_buffer<T>() -> R<T> {
    fail(
        INVALID_PARAM,
        "dataBuffer is NULL or not a live data buffer",
    )
}

/// `aclDestroyDataBuffer`: the description goes (not the memory it describes).
pub(crate) fn destroy(h: usize) -> R {
    match registry::<DataBuffer>().remove(h) {
        Some(_) => Ok(()),
        None => not_a_buffer(),
    }
}

/// `aclUpdateDataBuffer`: the buffer describes other memory.
pub(crate) fn update(h: usize, data: usize, size: usize) -> R {
    match registry::<DataBuffer>().get(h) {
        Some(b) => {
            *b.at.lock() = (data, size);
            Ok(())
        }
        None => not_a_buffer(),
    }
}

/// The address and size a live buffer describes.
pub(crate) fn get(h: usize) -> Option<(usize, usize)> {
    registry::<DataBuffer>().get(h).map(|b| *b.at.lock())
}
