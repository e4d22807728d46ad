//! The emulator's tests that can share one process: one module per family. Tests that change
//! process-wide state (faults, leak reports, the SoC, the environment, aclFinalize, callbacks
//! of aclInit, child processes run by test name) keep a binary of their own next to this one.

#[path = "../common/mod.rs"]
mod common;

mod backend;
mod builtin_tasks;
mod cann_info;
mod capture;
mod copy_descriptors;
mod debug_json;
mod event_waits;
mod extension;
mod helpers;
mod labels;
mod managed_allocator;
mod managed_hints;
mod memory;
mod memory_config;
mod misc_errors;
mod models;
mod not_on_a2_a3;
mod operators;
mod stream_control;
mod streams;
mod structure;
mod sync_primitives;
mod tdt;
