//! What every part of the emulator builds on and that names no concept: error codes and
//! messages, the ranked locks, the hub that owns the registries of handle-addressed objects, the
//! teardown hooks concepts register, the configuration, fault injection, leak reports and the
//! waiting primitives of stream tasks.

pub mod config;
pub(crate) mod error;
pub mod faults;
pub(crate) mod hooks;
pub(crate) mod hub;
pub mod leak;
pub(crate) mod lock;
pub(crate) mod rank;
pub(crate) mod wait;
