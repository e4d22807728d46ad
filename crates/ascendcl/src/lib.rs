//! Safe, typed Rust API for the CANN runtime (work in progress).
