//! Integration tests of the HCCL emulator, through its C functions, in one test binary.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

mod algorithms;
mod collectives;
mod comms;
mod errors;
mod every;
mod failures;
mod groups;
mod multiprocess;
mod p2p;
mod ranktables;
mod servers;
