//! `ascendc-host-cc`: the compiler driver of host mode for C++ programs, with the command line of
//! a C++ compiler. What CMake's ASC language (and the `ascendc.cmake` stand-in) of the emulator
//! root run, and what a shell may run directly:
//!
//! ```text
//! ascendc-host-cc [flags] -c add.asc -o add.o      # one source -> an object with its kernels
//! ascendc-host-cc [flags] add.o main.o -o demo     # link a program with the runtime library
//! ascendc-host-cc [flags] add.asc -o demo          # both
//! ascendc-host-cc [flags] -c add.cpp -o add.o --kernel-binary add_kernels.o
//!                                                   # the kernel binary too (a fatbin)
//! ```
//!
//! Sources are compiled by `ascendc_build::program::Compiler` (the host layer of the emulator
//! root's `asc-host/include`, else the one this crate was built with; the ACL headers of
//! `<root>/include`); a program is linked with `<root>/lib64/libacl_rt.so`. `<root>` is
//! `$ASCENDC_HOST_ROOT`, else the directory above the driver's own `bin/`. `--npu-arch=dav-XXXX`
//! sets `__NPU_ARCH__`; the other flags of CANN's compiler that mean nothing on the host
//! (`--npu-soc=`, `--run-mode=`, `-x asc`, `--asc-aicore-lang`, `--enable-simt`) are accepted
//! and ignored; `-l` of the CANN host libraries the host layer implements in its headers
//! (`tiling_api`, `register`, `platform`, ...) are dropped. Everything else goes to `$CXX`.

use ascendc_build::program::{Compiler, link_args};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// CANN host libraries whose API the host layer provides in its headers.
const HEADER_ONLY_LIBS: [&str; 13] = [
    "tiling_api",
    "register",
    "platform",
    "graph_base",
    "unified_dlog",
    "ascendalog",
    "ascendc_runtime",
    "c_sec",
    "error_manager",
    "mmpa",
    "ascend_dump",
    "profapi",
    "ge_common_base",
];

const SOURCE_EXTENSIONS: [&str; 5] = ["asc", "cpp", "cc", "cxx", "cce"];

fn main() -> ExitCode {
    match run(std::env::args_os().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ascendc-host-cc: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The emulator root this driver belongs to.
fn root() -> Option<PathBuf> {
    if let Some(r) = std::env::var_os("ASCENDC_HOST_ROOT").filter(|r| !r.is_empty()) {
        return Some(PathBuf::from(r));
    }
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?;
    (bin.file_name()? == "bin").then(|| bin.parent().map(Path::to_path_buf))?
}

fn is_source(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e))
}

fn run(args: Vec<OsString>) -> Result<(), String> {
    let mut compile_only = false;
    let mut output: Option<PathBuf> = None;
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut compile_flags: Vec<OsString> = Vec::new();
    let mut link_flags: Vec<OsString> = Vec::new();
    let mut arch = 2201u32;
    let mut verbose = false;
    let mut kernel_binary: Option<PathBuf> = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy().into_owned();
        match s.as_str() {
            "-c" => compile_only = true,
            "-v" | "--verbose" => verbose = true,
            "-o" => output = it.next().map(PathBuf::from),
            // With -c: also write the source's kernel binary (what aclrtBinaryLoadFromFile
            // loads; CANN's ascendc_fatbin_library) to the path.
            "--kernel-binary" => kernel_binary = it.next().map(PathBuf::from),
            "-x" => {
                // The language of the next sources: every source is C++ with AscendC here.
                let _ = it.next();
            }
            "--asc-aicore-lang" | "--enable-simt" | "-shared-asc" => {}
            "-shared" | "-rdynamic" => link_flags.push(a),
            "-MF" | "-MT" | "-MQ" | "-I" | "-D" | "-U" | "-include" | "-isystem" | "-iquote" => {
                compile_flags.push(a);
                if let Some(v) = it.next() {
                    compile_flags.push(v);
                }
            }
            "-L" => {
                link_flags.push(a);
                if let Some(v) = it.next() {
                    link_flags.push(v);
                }
            }
            _ if s.starts_with("--npu-arch=") => {
                let v = &s["--npu-arch=".len()..];
                arch = v.trim_start_matches("dav-").parse().map_err(|_| {
                    format!("--npu-arch={v}: expected dav-NNNN (dav-2201, dav-3510)")
                })?;
            }
            _ if s.starts_with("--npu-soc=") || s.starts_with("--run-mode=") => {}
            _ if s.starts_with("-l") => {
                if !HEADER_ONLY_LIBS.contains(&&s[2..]) {
                    link_flags.push(a);
                }
            }
            _ if s.starts_with("-L") || s.starts_with("-Wl,") => link_flags.push(a),
            _ if s.starts_with('-') => {
                // Compiler flags also shape the link (optimisation, -pthread, -fsanitize=...).
                compile_flags.push(a.clone());
                if !s.starts_with("-M") && !s.starts_with("-I") && !s.starts_with("-D") {
                    link_flags.push(a);
                }
            }
            _ => inputs.push(PathBuf::from(a)),
        }
    }
    if inputs.is_empty() {
        return Err("no input files".into());
    }
    let root = root();
    let mut compiler = Compiler::new();
    compiler.npu_arch(arch);
    if let Some(r) = &root {
        let layer = r.join("asc-host/include");
        if layer.join("kernel_operator.h").is_file() {
            compiler.host_include(&layer);
        }
        if r.join("include/acl/acl.h").is_file() {
            compiler.acl_include(r.join("include"));
        }
    }
    for f in &compile_flags {
        compiler.flag(f);
    }

    if kernel_binary.is_some() && !compile_only {
        return Err("--kernel-binary goes with -c".into());
    }
    if compile_only {
        let sources: Vec<&PathBuf> = inputs.iter().filter(|p| is_source(p)).collect();
        if (output.is_some() || kernel_binary.is_some()) && sources.len() > 1 {
            return Err("-o or --kernel-binary with -c takes one source".into());
        }
        for src in sources {
            let obj = match &output {
                Some(o) => o.clone(),
                None => PathBuf::from(src.file_stem().unwrap_or_default()).with_extension("o"),
            };
            let done = compiler.compile(src, &obj).map_err(|e| e.to_string())?;
            if let Some(bin) = &kernel_binary {
                std::fs::copy(&done.binary, bin)
                    .map_err(|e| format!("copying the kernel binary to {}: {e}", bin.display()))?;
            }
            if verbose {
                for n in &done.notes {
                    eprintln!("ascendc-host-cc: note: {n}");
                }
            }
        }
        return Ok(());
    }

    // Link (compiling the sources among the inputs first).
    let out = output.unwrap_or_else(|| PathBuf::from("a.out"));
    let tmp = out.with_extension("host-objs");
    let mut objects = Vec::new();
    for input in &inputs {
        if is_source(input) {
            std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
            let obj = tmp
                .join(input.file_stem().unwrap_or_default())
                .with_extension("o");
            compiler.compile(input, &obj).map_err(|e| e.to_string())?;
            objects.push(obj);
        } else {
            objects.push(input.clone());
        }
    }
    let cxx = std::env::var_os("CXX")
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "c++".into());
    let mut cmd = Command::new(&cxx);
    cmd.args(&link_flags).args(&objects).arg("-o").arg(&out);
    if let Some(r) = &root {
        cmd.args(link_args(r));
    } else {
        cmd.args(["-lacl_rt", "-pthread", "-ldl"]);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", cxx.to_string_lossy()))?;
    if !status.success() {
        return Err(format!("linking {} failed", out.display()));
    }
    Ok(())
}
