//! `cargo xtask`: every chore of the workspace, so that the README's commands are the ones CI runs.
//!
//! Each subcommand lives in its own module; `tools` provisions what a fresh machine lacks.

mod asc_examples;
mod asc_host;
mod bench;
mod bindgen;
mod codegen;
mod emu_root;
mod env;
mod hccl_bench;
mod hccl_link_check;
mod link_check;
mod package;
mod portability;
mod qualify;
mod sample;
mod symbols;
mod test;
mod test_binaries;
mod tools;
mod trace;

use std::process::ExitCode;

const HELP: &str = "\
cargo xtask <command> [args]

  test                 rustfmt check; every workspace test, built by one compilation that clippy
                       lints (-D warnings) and run a few binaries at a time (XTASK_TEST_JOBS);
                       rustdoc -D warnings; the C programs built against the real headers and
                       run on the emulator; the link checks
  ci                   test, plus: the bindings and codegen freshness checks, cargo check for
                       aarch64 Linux and macOS, cargo bench --no-run without cmake, cargo
                       package of the publishable crates, and the rust-version toolchain
  release-checks       only those last four checks of ci
  bindgen [--include DIR] [--check]
                       regenerate the bindings of ascendcl-sys and hccl-sys (src/generated) from
                       the torch-npu wheel's headers (or an installed CANN's include DIR);
                       then the codegen tables; --check only diffs the bindings
  codegen [--check]    regenerate what derives from the bindings: ascendcl-sys's error codes
                       (AclError constants and names) and docs/api-map.md (from xtask/codegen/api-map*.tsv); --check only diffs
  sample <name> [-- ARGS] | sample --list
                       build and run a sample as its run.sh does, and check its verdict
  trace <name> [-- ARGS]
                       run a sample on the emulator with ASCENDCL_EMU_TRACE and draw its timeline:
                       target/trace/<name>.json (Chrome trace / Perfetto) and <name>.svg (a lane
                       per stream, bars coloured by kind), with a summary of the lanes
  qualify [--stand-in] [--out DIR] [--samples a,b,...]
                       with ASCENDCL_BACKEND=cann: the test suites meaningful on hardware and the
                       samples, reported in target/qualify/report.md and report.json (versions,
                       SoC, pass/fail per test and sample, emulator-only tests listed);
                       --stand-in uses the emulator's C library as the CANN install
  env [--export]       what was detected: CANN root, include and lib dirs, SOC_VERSION,
                       ASCENDC_CMAKE_DIR; --export prints shell exports
  emu-root DIR         lay out a CANN-shaped install root whose runtime is the emulator
  asc-examples [--source DIR] [--arch A|all] [FILTER...]
                       build and run AscendC's own examples (asc-devkit, fetched from GitHub:
                       local verification only) through the emulator root's ASC language
  cann-catalogue --runtime DIR [--runs N] [SAMPLE...]
                       CANN's sample catalogue (a hicann/runtime checkout or bare clone), each
                       sample unchanged through its own run.sh against an emulator root; a
                       report of the passes per sample (target/cann-catalogue/report.md)
  emu-c                build the emulator's C test programs (crates/ascendcl-emu/tests/c) against the
                       real headers and run them on its shared library (part of test)
  bench [--quick]      run the criterion suite
  bench-report         write docs/benchmarks.md from criterion's results
  hccl-bench [--quick] [--report]  run the HCCL bandwidth suite and write docs/hccl-benchmarks.md
  link-check EMU_ROOT  build ascendcl-sys with feature `link` against an emulator install root
                       (from emu-root) and run its linked-table test; then link a program that
                       embeds the emulator against a stand-in library and check it reaches it
  link-check --hccl    the same for hccl-sys, against a libhccl.so assembled from its test
                       fixture and stubs
  symbols              check that the sample and the ascendcl test binaries, which embed the
                       emulator, define no acl* symbol (nm -D --defined-only)
  tools                provision cmake (and libclang with --libclang) into target/tools
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    };
    let result = match cmd.as_str() {
        "test" => test::run(rest, false),
        "ci" => test::run(rest, true),
        "release-checks" => match rest {
            [] => test::release_checks(),
            _ => Err("usage: cargo xtask release-checks".to_string()),
        },
        "bindgen" => bindgen::run(rest),
        "codegen" => codegen::run(rest),
        "sample" => sample::run(rest),
        "trace" => sample::trace(rest),
        "qualify" => qualify::run(rest),
        "env" => env::run(rest),
        "emu-root" => emu_root::run(rest),
        "asc-examples" => asc_examples::run(rest),
        "emu-c" => emu_root::c_program_test(),
        "cann-catalogue" => emu_root::catalogue::run(rest),
        "bench" => bench::run(rest),
        "bench-report" => bench::report(rest),
        "hccl-bench" => hccl_bench::run(rest),
        "tools" => tools::run_tools(rest),
        "symbols" => symbols::run(),
        "link-check" => match rest {
            [flag] if flag == "--hccl" => hccl_link_check::run(),
            [dir] => link_check::run(std::path::Path::new(dir)),
            _ => Err("usage: cargo xtask link-check EMU_ROOT | link-check --hccl".to_string()),
        },
        "help" | "--help" | "-h" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n\n{HELP}")),
    };
    tools::finish_steps(result.is_ok());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
