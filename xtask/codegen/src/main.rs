//! `ascendcl-codegen`: every generated file of the workspace, from one program (run by the xtask).
//!
//! ```text
//! ascendcl-codegen bindings acl|hccl INCLUDE_DIR OUT_DIR   ascendcl-sys's or hccl-sys's bindings
//!                                                     (bindgen, libclang)
//! ascendcl-codegen tables ROOT [--check]            ascendcl-sys's error codes and the API map
//! ```
//!
//! `tables` reads the committed bindings with `syn`; with `--check` it writes nothing and fails
//! when a committed file differs from what it would write.

mod api_map;
mod bindings;
mod error_codes;
mod output;
mod unwrapped;

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str =
    "usage: ascendcl-codegen bindings acl|hccl INCLUDE_DIR OUT_DIR | tables ROOT [--check]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["bindings", library, include, out] => {
            let spec = match *library {
                "acl" => Ok(&bindings::ACL),
                "hccl" => Ok(&bindings::HCCL),
                _ => Err(USAGE.to_string()),
            };
            spec.and_then(|spec| bindings::generate(spec, Path::new(include), Path::new(out)))
                .map(|(types, functions)| {
                    eprintln!("generated {types} type items and {functions} functions into {out}");
                })
        }
        ["tables", root, rest @ ..] if rest.is_empty() || rest == ["--check"] => {
            let root = Path::new(root);
            let check = !rest.is_empty();
            error_codes::generate(root)
                .and_then(|files| output::emit(root, &files, check))
                .and_then(|()| api_map::generate(root))
                .and_then(|files| output::emit(root, &files, check))
        }
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
