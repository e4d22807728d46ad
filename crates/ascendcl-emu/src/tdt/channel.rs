//! Data channels with a capacity (`acltdtCreateChannelWithCapacity`): each is a queue of the
//! table, named after the channel, whose depth is the capacity and whose messages are datasets.

use super::dataset;
use super::queues::{self, Payload};
use crate::base::error::*;
use crate::base::lock::{Mutex, Rank};
use std::collections::HashMap;
use std::sync::LazyLock;

#[derive(Debug, Clone)]
struct Channel {
    qid: u32,
}

static CHANNELS: LazyLock<Mutex<HashMap<usize, Channel>>> =
    LazyLock::new(|| Mutex::ranked(Rank::TdtChannels));

fn channel(h: usize) -> R<Channel> {
    CHANNELS.lock().get(&h).cloned().ok_or_else(|| Fail {
        code: INVALID_PARAM,
        msg: "handle is NULL or not a live channel".to_string(),
    })
}

/// Creates a channel on an open device; its queue's depth is `capacity`.
pub(crate) fn create(device: u32, name: &str, capacity: usize) -> R<usize> {
    if name.len() + 1 > queues::MAX_NAME {
        return fail(
            INVALID_PARAM,
            format!(
                "the name is {} bytes long; with its NUL it must fit in {}",
                name.len(),
                queues::MAX_NAME
            ),
        );
    }
    if device >= crate::device::count() {
        return fail(
            RT_INVALID_DEVICEID,
            format!(
                "device {device} does not exist ({} devices)",
                crate::device::count()
            ),
        );
    }
    if !crate::device::is_open(device as i32) {
        return fail(
            RT_CONTEXT_NULL,
            format!("device {device} is not open: the channel's queue needs aclrtSetDevice first"),
        );
    }
    let depth = u32::try_from(capacity).unwrap_or(u32::MAX);
    let qid = queues::create(Some(name), depth, device as i32)?;
    let h = crate::base::hub::new_handle();
    CHANNELS.lock().insert(h, Channel { qid });
    Ok(h)
}

/// Destroys a channel and its queue (with whatever it still holds).
pub(crate) fn destroy(h: usize) -> R {
    let c = CHANNELS.lock().remove(&h).ok_or_else(|| Fail {
        code: INVALID_PARAM,
        msg: "handle is NULL or not a live channel".to_string(),
    })?;
    queues::destroy(c.qid)
}

/// Stopping a channel with a capacity has nothing to do (the legacy channels' thread does).
pub(crate) fn stop(h: usize) -> R {
    channel(h).map(drop)
}

/// Drops what the channel holds.
pub(crate) fn clean(h: usize) -> R {
    queues::reset(channel(h)?.qid)
}

/// The datasets the channel holds.
pub(crate) fn size(h: usize) -> R<usize> {
    queues::len(channel(h)?.qid)
}

/// Sends a copy of `dataset`, waiting for room as `timeout_ms` says (207014 when full).
pub(crate) fn send(h: usize, dataset: usize, timeout_ms: i32) -> R {
    let c = channel(h)?;
    let deadline = queues::deadline(timeout_ms)?;
    let message = dataset::serialize(dataset)?;
    queues::push(c.qid, message, deadline)
}

/// Receives the next dataset into `dataset`, waiting as `timeout_ms` says (207013 when empty).
pub(crate) fn receive(h: usize, dataset: usize, timeout_ms: i32) -> R {
    let c = channel(h)?;
    let deadline = queues::deadline(timeout_ms)?;
    dataset::check_receivable(dataset)?;
    let (name, items) = queues::pop_with(c.qid, deadline, |m| match m {
        Payload::Dataset { name, items } => Ok((name.clone(), items.clone())),
        Payload::Bytes { .. } => fail(FAILURE, "the channel's queue holds bytes, not a dataset"),
    })?;
    dataset::fill(dataset, &name, items)
}
