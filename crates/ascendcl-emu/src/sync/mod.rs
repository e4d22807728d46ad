//! Synchronisation between streams: notifies, and the value writes and waits on device words.

pub(crate) mod notify;
pub(crate) mod work;
