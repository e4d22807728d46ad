//! An interleaved, paired measurement of the three fixed copies (`safe`, `raw_ffi`,
//! `host_memcpy`).
//!
//! Criterion measures one benchmark after the other, so on a shared 2-core machine a change of
//! load between two benchmarks shows up as a difference between them. Here every round times a
//! batch of each of the three, in an order that cycles through every permutation, and the ratios are taken within a round; their
//! medians over the rounds estimate the ratios free of that drift. Each batch starts with one
//! untimed copy, so no copy is timed right after another copy's buffers filled the cache. The report shows them next to
//! criterion's figures.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Medians over the rounds of the per-copy times and of the within-round time ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Number of rounds.
    pub rounds: usize,
    /// Median time of one `safe` copy, in ns.
    pub safe_ns: f64,
    /// Median time of one `raw_ffi` copy, in ns.
    pub raw_ns: f64,
    /// Median time of one `host_memcpy` copy, in ns.
    pub host_ns: f64,
    /// Median of the rounds' `safe` time / `raw_ffi` time.
    pub safe_over_raw: f64,
    /// Median of the rounds' `host_memcpy` time / `raw_ffi` time, which is `raw_ffi` throughput
    /// over `host_memcpy` throughput.
    pub host_over_raw: f64,
}

/// Target duration of one batch: long enough for the clock, short enough for many rounds.
const BATCH: Duration = Duration::from_micros(300);
/// The orders of the three batches in successive rounds: every permutation, so that each copy
/// runs before each other one as often as after it, and a drift within a round (the first
/// batch slower than the last, say) biases none of the ratios.
const ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [1, 2, 0],
    [2, 0, 1],
    [0, 2, 1],
    [2, 1, 0],
    [1, 0, 2],
];

/// At least this many rounds, whatever the budget.
const MIN_ROUNDS: usize = 12;

/// Runs rounds of `safe`, `raw` and `host` batches (in every order in turn) for about `budget`,
/// after one untimed warm-up round, and returns the medians.
///
/// A non-empty `scratch` is overwritten before every batch, so that every batch starts from the
/// same cache state rather than from the one the previous batch left: pass a buffer larger than
/// the last-level cache when the copies' working set is comparable to it (1 MiB and above), and
/// an empty one for copies that one untimed call brings back into the cache.
pub fn paired(
    mut safe: impl FnMut(),
    mut raw: impl FnMut(),
    mut host: impl FnMut(),
    budget: Duration,
    scratch: &mut [u8],
) -> Paired {
    // Calibrate the batch size on the slowest of the three (they differ little).
    let one = [time(&mut safe, 8), time(&mut raw, 8), time(&mut host, 8)]
        .into_iter()
        .fold(0.0, f64::max);
    let batch = (BATCH.as_nanos() as f64 / one.max(1.0)).clamp(2.0, (1 << 20) as f64) as usize;
    let mut rows: Vec<[f64; 3]> = Vec::new();
    let start = Instant::now();
    let mut round = 0usize;
    while rows.len() < MIN_ROUNDS || start.elapsed() < budget {
        let mut t = [0.0; 3];
        for &which in &ORDERS[round % ORDERS.len()] {
            if !scratch.is_empty() {
                black_box(&mut *scratch).fill(round as u8);
            }
            // Each closure is timed by its own monomorphised loop: no indirect call is added.
            t[which] = match which {
                0 => time(&mut safe, batch),
                1 => time(&mut raw, batch),
                _ => time(&mut host, batch),
            };
        }
        // The first round warms up.
        if round > 0 {
            rows.push(t);
        }
        round += 1;
    }
    let col = |f: &dyn Fn(&[f64; 3]) -> f64| median(rows.iter().map(f).collect());
    Paired {
        rounds: rows.len(),
        safe_ns: col(&|r| r[0]),
        raw_ns: col(&|r| r[1]),
        host_ns: col(&|r| r[2]),
        safe_over_raw: col(&|r| r[0] / r[1]),
        host_over_raw: col(&|r| r[2] / r[1]),
    }
}

/// Nanoseconds per call of `n` calls of `f`, after one untimed call: every timed call follows a
/// call of the same copy, as in criterion's loop, so the cache state left by the copy timed just
/// before (another buffer pair) does not favour one of the three.
#[inline(never)]
fn time(f: &mut impl FnMut(), n: usize) -> f64 {
    f();
    let s = Instant::now();
    for _ in 0..n {
        f();
    }
    s.elapsed().as_nanos() as f64 / n as f64
}

/// The median (mean of the two middle values for an even count); NaN for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(vec![]).is_nan());
    }

    #[test]
    fn counts_rounds_and_orders_columns() {
        let (mut a, mut b, mut c) = (0u64, 0u64, 0u64);
        let mut scratch = [0u8; 64];
        let p = paired(
            || a += 1,
            || b += 1,
            || c += 1,
            Duration::ZERO,
            &mut scratch,
        );
        assert_eq!(scratch[0], (MIN_ROUNDS) as u8);
        assert_eq!(p.rounds, MIN_ROUNDS);
        assert!(a > 0 && a == b && b == c);
    }
}
