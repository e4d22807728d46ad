//! The lines the samples print as CANN's do: `INFO_LOG` ([`info!`]), the verdict that ends a
//! sample ([`verdict`]), an error with its causes ([`error_chain`]) and the releases that failed
//! in a `Drop` ([`releases_ok`]).

use std::error::Error;
use std::fmt::Display;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples: the message after `[INFO]  `.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}
pub use crate::info;

/// The sample's last lines and exit status: `[SUCCESS] {ok}` when `result` is `Ok` and no
/// release failed ([`releases_ok`]); otherwise the error after `[ERROR]  `, the failed releases,
/// then `[FAILURE] {fail}`, and a failing status. Called once the sample's handles are gone.
pub fn verdict<E: Display>(result: Result<(), E>, ok: &str, fail: &str) -> ExitCode {
    if let Err(e) = &result {
        println!("[ERROR]  {e}");
    }
    match (result, releases_ok()) {
        (Ok(()), true) => {
            println!("[SUCCESS] {ok}");
            ExitCode::SUCCESS
        }
        _ => {
            println!("[FAILURE] {fail}");
            ExitCode::FAILURE
        }
    }
}

/// Whether every release made by a `Drop` since the last call succeeded: each failure
/// ([`ascendcl::take_drop_errors`]) is printed after `[ERROR]  a release failed: `. A sample
/// calls it once its handles are gone, so that a failed release ends it in `[FAILURE]`, not
/// `[SUCCESS]`.
pub fn releases_ok() -> bool {
    let failed = ascendcl::take_drop_errors();
    for e in &failed {
        println!("[ERROR]  a release failed: {e}");
    }
    let lost = ascendcl::drop_errors_overflow();
    if lost > 0 {
        println!("[ERROR]  {lost} more release failure(s) were not kept");
    }
    failed.is_empty() && lost == 0
}

/// `e` after `[ERROR]  `, then each of its causes after `[ERROR]    caused by: `.
pub fn error_chain(e: &dyn Error) {
    println!("[ERROR]  {e}");
    let mut cause = e.source();
    while let Some(c) = cause {
        println!("[ERROR]    caused by: {c}");
        cause = c.source();
    }
}
