//! Host mode for a Rust crate: the kernel sources, with their `<<<...>>>` launches rewritten and
//! their kernels registered (`unit`), compiled by the host C++ compiler (the `cc` crate) against
//! the AscendC host layer, into a static library (the host-side code linked into the crate) and
//! a kernel binary (a shared object the emulator loads and launches from).

use crate::unit::{self, Hook};
use crate::{Build, Error, include_dir, write};
use std::path::{Path, PathBuf};

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
        .out_dir(dir.join("obj"));
    if let Some(t) = cfg.env_or(&cfg.target, "TARGET") {
        cc.target(&t);
    }
    if let Some(h) = cfg.env_or(&cfg.host, "HOST") {
        cc.host(&h);
    }
    cc
}

/// Compiles the sources once, then (1) archives them into the static library linked into the
/// crate (host-side C++ code, `<<<...>>>` launches) and (2) links them with the kernel table into
/// the kernel binary the runtime loads (`lib<prefix>.so` in `dir`). Returns the binary's path.
pub(crate) fn build(
    cfg: &Build,
    prefix: &str,
    dir: &Path,
    sources: &[Source],
) -> Result<PathBuf, Error> {
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

    let mut cc = base(cfg, dir);
    cc.std("c++17")
        .warnings(false)
        .include(include_dir())
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
    for dir in &cfg.includes {
        cc.include(dir);
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
    Ok(binary)
}
