//! The lines the samples print as CANN's do: `INFO_LOG` ([`info!`]), the verdict that ends a
//! sample ([`verdict`]) and an error with its causes ([`error_chain`]).

use std::error::Error;
use std::fmt::Display;
use std::process::ExitCode;

/// `INFO_LOG` of the reference samples: the message after `[INFO]  `.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { println!("[INFO]  {}", format_args!($($arg)*)) };
}
pub use crate::info;

/// The sample's last lines and exit status: `[SUCCESS] {ok}` when `result` is `Ok`; otherwise
/// the error after `[ERROR]  `, then `[FAILURE] {fail}`, and a failing status.
pub fn verdict<E: Display>(result: Result<(), E>, ok: &str, fail: &str) -> ExitCode {
    match result {
        Ok(()) => {
            println!("[SUCCESS] {ok}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] {fail}");
            ExitCode::FAILURE
        }
    }
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
