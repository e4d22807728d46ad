//! Integration tests of install discovery, in one test binary: the runtime's install and HCCL's.

mod common;

mod discovery;
mod hccl_discovery;
