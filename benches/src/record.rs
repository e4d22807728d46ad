//! What the report needs besides criterion's estimates, written next to them.
//!
//! `<criterion dir>/ascendcl-skipped.txt` is a tab-separated text file, rewritten by every
//! benchmark run (`cargo xtask bench-report` reads it):
//!
//! ```text
//! # comment lines start with '#'
//! backend<TAB><kind><TAB><description>
//! mode<TAB>default|quick
//! started<TAB><unix seconds>
//! filter<TAB><criterion filter arguments>       (only for a filtered run)
//! skip<TAB><benchmark id or pattern><TAB><reason>
//! paired<TAB><bytes><TAB><rounds><TAB><safe ns><TAB><raw_ffi ns><TAB><host_memcpy ns><TAB><safe/raw_ffi><TAB><host_memcpy/raw_ffi>
//! finished<TAB><unix seconds><TAB><duration in seconds>
//! ```

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

/// The file name under criterion's output directory.
pub const FILE_NAME: &str = "ascendcl-skipped.txt";

/// Criterion's output directory, found as criterion finds it: `CRITERION_HOME`, else
/// `CARGO_TARGET_DIR/criterion`, else `<target dir>/criterion` with the target directory taken from
/// the running executable (`<target>/<profile>/deps/<bench>`), else `target/criterion`.
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(|t| t.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// Writes the record file, or only prints when there is no file (test mode).
#[derive(Debug)]
pub struct Recorder {
    file: Option<File>,
    path: PathBuf,
}

impl Recorder {
    /// Creates (truncates) `<criterion dir>/ascendcl-skipped.txt` and writes the header lines.
    /// With `write == false` (criterion's test mode) nothing is written and skips are only
    /// printed, so a quick `cargo test` does not erase the record of the last benchmark run.
    pub fn create(write: bool, kind: &str, description: &str, mode: &str) -> Recorder {
        let path = criterion_dir().join(FILE_NAME);
        let file = if write {
            let _ = std::fs::create_dir_all(criterion_dir());
            match File::create(&path) {
                Ok(f) => Some(f),
                Err(e) => {
                    eprintln!("ascendcl-benches: cannot write {}: {e}", path.display());
                    None
                }
            }
        } else {
            None
        };
        let mut r = Recorder { file, path };
        r.line("# written by the ascendcl-benches suite; read by `cargo xtask bench-report`");
        r.line(&format!("backend\t{}\t{}", clean(kind), clean(description)));
        r.line(&format!("mode\t{mode}"));
        r.line(&format!("started\t{}", unix_now()));
        r
    }

    /// Records the run's criterion filters (nothing for an unfiltered run): the report then keeps
    /// the results of earlier runs, which a filtered run does not replace.
    pub fn filter(&mut self, filters: &[String]) {
        if !filters.is_empty() {
            self.line(&format!("filter\t{}", clean(&filters.join(" "))));
        }
    }

    /// Records that the run finished after `seconds` (the suite's duration, without the build).
    pub fn finish(&mut self, seconds: f64) {
        self.line(&format!("finished\t{}\t{seconds:.1}", unix_now()));
    }

    /// Where the record goes.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Records and prints that `id` (a benchmark ID or a pattern such as
    /// `memcpy_*_sync/policy/huge_only/*`) was skipped, and why.
    pub fn skip(&mut self, id: &str, reason: &str) {
        println!("skipped {id}: {reason}");
        self.line(&format!("skip\t{}\t{}", clean(id), clean(reason)));
    }

    /// Records the interleaved paired measurement of the fixed IDs at `bytes`.
    pub fn paired(&mut self, bytes: usize, p: &crate::paired::Paired) {
        self.line(&format!(
            "paired\t{bytes}\t{}\t{:.3}\t{:.3}\t{:.3}\t{:.5}\t{:.5}",
            p.rounds, p.safe_ns, p.raw_ns, p.host_ns, p.safe_over_raw, p.host_over_raw
        ));
    }

    fn line(&mut self, line: &str) {
        if let Some(f) = &mut self.file {
            let _ = writeln!(f, "{line}");
            let _ = f.flush();
        }
    }
}

/// One line, no tabs.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// Seconds since the Unix epoch.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Criterion options that take a value (`--option VALUE`), to tell their values from filters.
const OPTIONS_WITH_VALUE: &[&str] = &[
    "--save-baseline",
    "-s",
    "--baseline",
    "-b",
    "--baseline-lenient",
    "--load-baseline",
    "--sample-size",
    "--warm-up-time",
    "--measurement-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--profile-time",
    "--plotting-backend",
    "--output-format",
    "--color",
    "-c",
    "--format",
    "--skip",
];

/// The filter arguments among criterion's command-line arguments (`args` without the program):
/// the positional ones, not the values of options.
pub fn criterion_filters(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for a in args {
        if skip_value {
            skip_value = false;
        } else if a.starts_with('-') {
            skip_value = !a.contains('=') && OPTIONS_WITH_VALUE.contains(&a.as_str());
        } else {
            out.push(a.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_the_positional_arguments() {
        let args: Vec<String> = [
            "--bench",
            "--measurement-time",
            "2",
            "memcpy_h2d",
            "--noplot",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(criterion_filters(&args), ["memcpy_h2d"]);
        assert!(criterion_filters(&["--bench".to_string()]).is_empty());
    }
}
