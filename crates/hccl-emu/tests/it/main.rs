//! Integration tests of the HCCL emulator, through its C functions, in one test binary.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

mod collectives;
mod comms;
mod errors;
mod groups;
mod multiprocess;
mod p2p;
mod ranktables;
