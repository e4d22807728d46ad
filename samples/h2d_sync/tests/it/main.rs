//! Integration tests of the sample, in one test binary: its output against the reference, and
//! the fault sweep. Each test runs the built binary as a child process with its own environment.

mod common;

mod cli;
mod fault_sweep;
