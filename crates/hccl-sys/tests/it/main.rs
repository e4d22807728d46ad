//! Integration tests of hccl-sys, in one test binary: the generated bindings against the
//! headers' facts, and the loader against a real shared library. (`install` has a binary of its
//! own: it installs the backend of the process; `linked` and `header_abi` are built only with the
//! `link` feature.)

mod bindings;
mod loader;
