//! `cargo xtask bench` and `bench-report`: the criterion suite and docs/benchmarks.md.
//!
//! `bench [--quick] [--report] [-- CRITERION ARGS]` ([`runner`]) runs `cargo bench -p
//! ascendcl-benches` and records the machine next to criterion's results. `bench-report
//! [--criterion DIR]` ([`mod@report`]) reads what the run left ([`results`]: criterion's estimates,
//! the suite's record, the machine record) and writes `docs/benchmarks.md` and the plot
//! `docs/benchmarks-throughput.svg` ([`plot`]).

mod plot;
mod report;
mod results;
mod runner;

pub use report::report;
pub use runner::run;

use crate::tools;
use std::path::PathBuf;

/// The suite's record (written by the bench binary).
const RECORD: &str = "ascendcl-skipped.txt";
/// The machine record (written by `cargo xtask bench`).
const MACHINE: &str = "ascendcl-machine.txt";

/// Criterion's output directory as criterion picks it: `--criterion`, `CRITERION_HOME`, else
/// `<target dir>/criterion`.
fn criterion_dir(explicit: Option<PathBuf>) -> PathBuf {
    explicit
        .or_else(|| std::env::var_os("CRITERION_HOME").map(PathBuf::from))
        .unwrap_or_else(|| tools::target_dir().join("criterion"))
}

/// `bytes` in the largest binary unit that divides it: `4 B`, `64 KiB`, `256 MiB`.
fn human(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    const KIB: u64 = 1 << 10;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn sizes() {
        assert_eq!(human(4), "4 B");
        assert_eq!(human(65536), "64 KiB");
        assert_eq!(human(256 << 20), "256 MiB");
        assert_eq!(human(1536), "1536 B");
    }
}
