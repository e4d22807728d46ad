//! Integration tests of the safe API, one module per family, in one test binary. Its tests run
//! on parallel threads of one process and share the backend, so none changes process-wide state
//! (those are in `tests/isolated`), tests whose tasks fail on purpose use
//! [`common::failure_device`], and the tests of device 0's resource limits hold
//! [`common::device_limits`].

#[path = "../common/mod.rs"]
mod common;

mod allocator;
mod api_coverage;
mod builtin;
mod cann_info;
mod copies;
mod copy_props;
mod device_info;
#[cfg(all(feature = "half", feature = "bytemuck"))]
mod elements;
mod lifecycle;
mod managed;
mod memcpy_batch_desc;
mod memory;
mod model_crate;
mod models;
mod modules;
mod owned;
mod raw;
mod sharing;
mod stream_control;
mod stream_ordering;
mod streams;
mod submissions;
mod tracking;
mod value_notify;
mod vmm;
mod wrappers;
mod zero_copy;
