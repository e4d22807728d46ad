//! What the Rust counterparts of CANN's samples share, as CANN's samples share their `utils.h`:
//! the lines they print ([`report`]), the plumbing of the two-process samples
//! ([`two_process`]) and the runner of the HCCL samples' command-line tests ([`hccl_cli`]).

pub mod hccl_cli;
pub mod report;
pub mod two_process;
