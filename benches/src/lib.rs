//! Shared helpers of the benchmark suite (work in progress).
