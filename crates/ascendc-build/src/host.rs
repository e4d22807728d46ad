//! Host mode for a Rust crate: the kernel sources, with their `<<<...>>>` launches rewritten and
//! their kernels registered (`unit`), compiled by the host C++ compiler (the `cc` crate) against
//! the AscendC host layer, into a static library (the host-side code linked into the crate) and
//! a kernel binary (a shared object the emulator loads and launches from).

use crate::unit::{self, Hook};
use crate::{Build, Error, include_dir, write};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) use crate::unit::Source;

/// The file name of a library's kernel binary in its directory.
pub(crate) fn binary_name(prefix: &str) -> String {
    format!("lib{prefix}.so")
}

/// A `cc` build with what both steps share: C++, the target and host, the output directory.
fn base(cfg: &Build, dir: &Path) -> cc::Build {
    let mut cc = cc::Build::new();
    cc.cpp(true)
        .cargo_metadata(!cfg.no_metadata)
        .cargo_warnings(!cfg.no_metadata)
        .out_dir(dir.join("obj"));
    if let Some(t) = cfg.env_or(&cfg.target, "TARGET") {
        cc.target(&t);
    }
    if let Some(h) = cfg.env_or(&cfg.host, "HOST") {
        cc.host(&h);
    }
    cc
}

/// What the C++ compiler said and was asked, collected from the `cc` crate's messages.
#[derive(Default)]
struct Messages {
    /// Each line the compiler wrote to stderr (its warnings).
    stderr: Mutex<Vec<String>>,
    /// Each compilation's command line.
    commands: Mutex<Vec<Vec<String>>>,
}

impl cc::BuildMessageLogger for Messages {
    fn log(&self, kind: cc::BuildMessageKind, msg: cc::BuildMessage<'_>, extra: &dyn Any) {
        match kind {
            cc::BuildMessageKind::StderrForwarding => push(&self.stderr, msg.to_string()),
            cc::BuildMessageKind::CompileCommand => {
                if let Some(c) = extra.downcast_ref::<cc::CompileCommand>() {
                    let args = c
                        .arguments()
                        .map(|a| a.to_string_lossy().into_owned())
                        .collect();
                    push(&self.commands, args);
                }
            }
            _ => {}
        }
    }
}

fn push<T>(m: &Mutex<Vec<T>>, v: T) {
    m.lock().unwrap_or_else(|p| p.into_inner()).push(v);
}

fn take<T>(m: &Mutex<Vec<T>>) -> Vec<T> {
    std::mem::take(&mut *m.lock().unwrap_or_else(|p| p.into_inner()))
}

/// What host mode reports besides the binary: the compiler's warnings and command lines.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub warnings: Vec<String>,
    pub commands: Vec<Vec<String>>,
}

/// The flag that builds for the CPU the compiler runs on, for a target architecture: Arm
/// compilers take `-mcpu=native` (GCC's `-march=native` is not the recommended form there).
pub(crate) fn native_flag(target: &str) -> &'static str {
    if target.starts_with("aarch64") || target.starts_with("arm64") {
        "-mcpu=native"
    } else {
        "-march=native"
    }
}

/// Compiles the sources once, then (1) archives them into the static library linked into the
/// crate (host-side C++ code, `<<<...>>>` launches) and (2) links them with the kernel table into
/// the kernel binary the runtime loads (`lib<prefix>.so` in `dir`). Returns the binary's path.
pub(crate) fn build(
    cfg: &Build,
    prefix: &str,
    dir: &Path,
    sources: &[Source],
) -> Result<(PathBuf, Report), Error> {
    let src_dir = dir.join("host");
    let mut units = Vec::new();
    let hook = Hook::Crate { prefix };
    for (i, s) in sources.iter().enumerate() {
        let stem = s
            .path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("kernel");
        let unit = src_dir.join(format!("{i}_{stem}.cpp"));
        write(&unit, &unit::host_unit(s, &hook, &[]))?;
        units.push(unit);
    }
    let table = src_dir.join("binary_table.cpp");
    write(&table, &unit::binary_table(&hook))?;

    let messages = Arc::new(Messages::default());
    let mut cc = base(cfg, dir);
    // The user's sources are compiled with the compiler's usual warnings (`-Wall -Wextra`, which
    // the `cc` crate prints as cargo warnings); the host layer is a system directory, so its own
    // headers, and the expansions of its macros, stay quiet.
    cc.std("c++17")
        .warnings(!cfg.no_warnings)
        .message_logger(Some(messages.clone()))
        .flag("-isystem")
        .flag(include_dir().as_os_str())
        .define("ASCENDC_HOST", "1")
        .define("__NPU_ARCH__", "2201")
        .define(
            "ASCENDC_HOST_ENQUEUE",
            format!("{prefix}__enqueue").as_str(),
        )
        .pic(true)
        .flag_if_supported("-pthread")
        .flag_if_supported("-ffunction-sections")
        .flag_if_supported("-fdata-sections")
        // Only the kernel table leaves the binary; nothing of it interposes on the program.
        .flag_if_supported("-fvisibility=hidden")
        .flag_if_supported("-fvisibility-inlines-hidden");
    // Host kernels are the emulated device: optimised even in a debug build, unless asked.
    cc.opt_level_str(cfg.opt_level.as_deref().unwrap_or("2"));
    let mut notes = Vec::new();
    if cfg.native_requested() {
        let target = cfg.env_or(&cfg.target, "TARGET").unwrap_or_default();
        let host = cfg.env_or(&cfg.host, "HOST").unwrap_or_default();
        let flag = native_flag(&target);
        if target != host {
            notes.push(format!(
                "native CPU build asked for, but the target {target} is not the host {host}: \
                 {flag} left out"
            ));
        } else if cc.is_flag_supported(flag).unwrap_or(false) {
            cc.flag(flag);
        } else {
            notes.push(format!(
                "native CPU build asked for, but the C++ compiler does not take {flag}"
            ));
        }
    }
    // System directories too, after the host layer: `-I` would be searched before it, and the
    // host layer's `kernel_operator.h` must come first (an include directory of a CANN install
    // has its own). Headers found there do not warn; the sources and the headers next to them
    // (`-iquote` below) do.
    for dir in &cfg.includes {
        cc.flag("-isystem").flag(dir.as_os_str());
    }
    // `#include "..."` of a rewritten source still finds the files next to the original.
    let mut quote_dirs: Vec<&Path> = sources.iter().filter_map(|s| s.path.parent()).collect();
    quote_dirs.sort();
    quote_dirs.dedup();
    for d in quote_dirs {
        cc.flag("-iquote").flag(d.as_os_str());
    }
    for (name, value) in &cfg.defines {
        cc.define(name, value.as_deref());
    }
    for f in &cfg.host_flags {
        cc.flag(f);
    }
    for unit in &units {
        cc.file(unit);
    }
    cc.file(&table);
    let compiler_failed = |e: &dyn std::fmt::Display| {
        Error::new(format!(
            "the host C++ compiler failed on the kernels (host mode, AscendC host layer in {}): {e}\n\
             The compiler's messages are above. Set CXX to choose another compiler; set \
             {}=npu to build for an NPU with CANN instead.",
            include_dir().display(),
            crate::ENV_MODE
        ))
    };
    let objects = cc
        .try_compile_intermediates()
        .map_err(|e| compiler_failed(&e))?;
    let (table_obj, unit_objs) = objects
        .split_last()
        .ok_or_else(|| Error::new("the C++ compiler produced no objects"))?;

    // (1) The static library of the crate.
    let mut archive = base(cfg, dir);
    archive.objects(unit_objs);
    archive
        .try_compile(prefix)
        .map_err(|e| Error::new(format!("archiving the host kernels failed: {e}")))?;

    // (2) The kernel binary.
    let binary = dir.join(binary_name(prefix));
    let tool = cc.try_get_compiler().map_err(|e| compiler_failed(&e))?;
    let mut link = tool.to_command();
    let macos = cfg
        .env_or(&cfg.target, "TARGET")
        .is_some_and(|t| t.contains("apple"));
    link.args(unit::shared_link_flags(macos))
        .arg("-o")
        .arg(&binary)
        .args(unit_objs)
        .arg(table_obj)
        .arg("-pthread");
    let out = link.output().map_err(|e| {
        Error::new(format!(
            "cannot run the C++ compiler to link the kernel binary {}: {e}",
            binary.display()
        ))
    })?;
    if !out.status.success() {
        return Err(Error::new(format!(
            "linking the kernel binary {} failed:\n{}\nSet CXX to choose another compiler.",
            binary.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    for n in &notes {
        cfg.metadata(&format!("warning=ascendc-build: {n}"));
    }
    let mut warnings = notes;
    warnings.extend(take(&messages.stderr));
    Ok((
        binary,
        Report {
            warnings,
            commands: take(&messages.commands),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::native_flag;

    #[test]
    fn arm_targets_get_mcpu_native() {
        assert_eq!(native_flag("aarch64-unknown-linux-gnu"), "-mcpu=native");
        assert_eq!(native_flag("arm64-apple-darwin"), "-mcpu=native");
        assert_eq!(native_flag("x86_64-unknown-linux-gnu"), "-march=native");
    }
}
