//! `cargo xtask codegen [--check]`: the files derived from the committed bindings — the typed
//! error codes (`crates/ascendcl-sys/src/error_codes.rs`) and the C-to-Rust map
//! (`docs/api-map.md`, `crates/ascendcl/src/api_table.md`) — written by `ascendcl-codegen tables`.

use crate::tools;

/// Runs `cargo xtask codegen [--check]`.
pub fn run(args: &[String]) -> Result<(), String> {
    match args {
        [] => tables(false),
        [flag] if flag == "--check" => tables(true),
        _ => Err("usage: cargo xtask codegen [--check]".to_string()),
    }
}

/// Regenerates the tables, or with `check` fails when a committed one is out of date.
pub fn tables(check: bool) -> Result<(), String> {
    tools::step(if check {
        "generated tables (error codes, API map): compare with the committed files"
    } else {
        "generating the error codes and the API map from the bindings"
    });
    let mut cmd = tools::cargo();
    cmd.args(["run", "--package", "ascendcl-codegen", "--", "tables"])
        .arg(tools::workspace_root());
    if check {
        cmd.arg("--check");
    }
    tools::run(&mut cmd)
}
