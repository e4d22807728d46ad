//! Shared helpers of the `ascendcl-benches` criterion suite (`cargo bench` at the workspace root).
//!
//! * [`backend`] chooses and installs the process's AscendCL backend the way the safe crate does:
//!   `ASCENDCL_BACKEND`, else CANN when found, else the host emulator.
//! * [`raw`] owns device, host and stream resources through the checked raw layer
//!   (`ascendcl::raw`), so the raw-FFI benchmarks need none of the safe API's handles.
//! * [`plan`] holds the sizes and the per-size timing of the default and quick suites.
//! * [`paired`] measures the three fixed copies interleaved, round after round, so that their
//!   ratios do not depend on how the machine's load drifts between criterion's benchmarks.
//! * [`record`] writes what the report needs besides criterion's estimates: the backend, the mode
//!   and every skipped combination with its reason (`<criterion dir>/ascendcl-skipped.txt`).

#![warn(missing_docs)]

pub mod backend;
pub mod paired;
pub mod plan;
pub mod raw;
pub mod record;
