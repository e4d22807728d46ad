//! Sizes and timing of the default and quick suites.
//!
//! The default suite stays under about ten minutes on a 2-core machine; the quick suite
//! (`cargo xtask bench --quick`, which sets [`ENV_QUICK`]) keeps every fixed benchmark ID but runs
//! the coverage matrix on fewer sizes, with shorter warm-up and measurement times.

use std::time::Duration;

/// Environment variable that selects the quick suite when set to anything but `0` or empty.
pub const ENV_QUICK: &str = "ASCENDCL_BENCH_QUICK";

/// 1 KiB.
pub const KIB: usize = 1 << 10;
/// 1 MiB.
pub const MIB: usize = 1 << 20;

/// The sizes of the fixed `memcpy_h2d_sync/{safe,raw_ffi,host_memcpy}/<bytes>` IDs, in both modes.
pub const FIXED_SIZES: [usize; 6] = [4, 4 * KIB, 64 * KIB, MIB, 16 * MIB, 64 * MIB];

/// The sizes of the coverage matrix (policies, directions, host memory kinds, sync and async).
pub const MATRIX_SIZES: [usize; 8] = [
    4,
    256,
    4 * KIB,
    64 * KIB,
    MIB,
    16 * MIB,
    64 * MIB,
    256 * MIB,
];

/// The sizes of the coverage matrix in quick mode.
pub const QUICK_MATRIX_SIZES: [usize; 3] = [4, 64 * KIB, 16 * MIB];

/// Which suite runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The full suite: every matrix size, timings tuned for stable estimates.
    Default,
    /// The quick suite: fewer matrix sizes, short timings, same fixed IDs.
    Quick,
}

/// How criterion measures one benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Warm-up time.
    pub warm_up: Duration,
    /// Target measurement time.
    pub measurement: Duration,
    /// Number of samples (criterion's minimum is 10).
    pub sample_size: usize,
    /// Flat sampling (the same iteration count in every sample), for long iterations.
    pub flat: bool,
}

impl Mode {
    /// Reads [`ENV_QUICK`].
    pub fn from_env() -> Mode {
        match std::env::var(ENV_QUICK) {
            Ok(v) if !v.is_empty() && v != "0" => Mode::Quick,
            _ => Mode::Default,
        }
    }

    /// The mode's name as recorded for the report: `default` or `quick`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Quick => "quick",
        }
    }

    /// How long the interleaved paired measurement of the fixed IDs runs at each size.
    pub fn paired_budget(self) -> Duration {
        match self {
            Mode::Default => Duration::from_millis(1500),
            Mode::Quick => Duration::from_millis(300),
        }
    }

    /// The sizes of the coverage matrix.
    pub fn matrix_sizes(self) -> &'static [usize] {
        match self {
            Mode::Default => &MATRIX_SIZES,
            Mode::Quick => &QUICK_MATRIX_SIZES,
        }
    }

    /// The timing of one benchmark copying `bytes`. `fixed` marks the fixed IDs, whose goals
    /// compare estimates a few nanoseconds apart and so get longer measurements.
    pub fn timing(self, bytes: usize, fixed: bool) -> Timing {
        let ms = Duration::from_millis;
        match self {
            Mode::Default if bytes <= 64 * KIB => Timing {
                warm_up: ms(300),
                measurement: ms(if fixed { 3000 } else { 700 }),
                sample_size: if fixed { 100 } else { 40 },
                flat: false,
            },
            Mode::Default if bytes <= 16 * MIB => Timing {
                warm_up: ms(if fixed { 500 } else { 300 }),
                measurement: ms(if fixed { 3000 } else { 800 }),
                sample_size: if fixed { 50 } else { 20 },
                flat: false,
            },
            Mode::Default => Timing {
                warm_up: ms(if fixed { 500 } else { 200 }),
                measurement: ms(if fixed { 4000 } else { 1000 }),
                sample_size: if fixed { 20 } else { 10 },
                // Linear sampling needs 55 iterations at 10 samples: too long above 64 MiB.
                flat: bytes > 64 * MIB,
            },
            Mode::Quick if bytes <= 64 * KIB => Timing {
                warm_up: ms(100),
                measurement: ms(if fixed { 500 } else { 200 }),
                sample_size: if fixed { 40 } else { 15 },
                flat: false,
            },
            Mode::Quick => Timing {
                warm_up: ms(100),
                measurement: ms(if fixed { 500 } else { 300 }),
                sample_size: 10,
                flat: bytes >= 16 * MIB,
            },
        }
    }
}

/// A size for people: `4 B`, `64 KiB`, `16 MiB`.
pub fn human_size(bytes: usize) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} B")
    }
}
