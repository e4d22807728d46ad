//! Integration tests of the safe HCCL API on the emulators, one module per family, in one test
//! binary (on parallel threads of one process). The binaries beside it need a process of their
//! own (`arguments` installs a counting HCCL table, `ascend950` emulates another SoC).

#[path = "../common/mod.rs"]
mod common;

mod collectives;
mod compile_fail;
mod groups;
mod init;
mod multiprocess;
