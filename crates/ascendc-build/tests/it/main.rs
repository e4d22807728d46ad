//! Integration tests of ascendc-build, in one test binary: the host layer compiled on its own,
//! the launch support on the emulator, and a user crate built outside the workspace. (`npu_mode`
//! has a binary of its own: it changes the process environment.)

mod host_layer;
mod host_warnings;
mod rt_support;
mod user_crate;
