//! Kernels: binaries and their functions, argument lists, launches as stream tasks, and the host
//! threads kernel blocks run on.

pub(crate) mod args;
pub(crate) mod binary;
pub(crate) mod launch;
pub mod pool;
