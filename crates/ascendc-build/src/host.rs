//! Host mode: the kernel sources, with their `<<<...>>>` launches rewritten and an argument
//! entry appended per kernel, compiled by the host C++ compiler (the `cc` crate) against the
//! AscendC host layer, into one static library.

use crate::parse::{Scan, rewrite_launches};
use crate::{Build, Error, codegen, include_dir, write};
use std::path::{Path, PathBuf};

/// A kernel source as read.
#[derive(Debug)]
pub(crate) struct Source {
    /// The path as given to the build (for messages and generated docs).
    pub shown: PathBuf,
    /// The path it was read from.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// What it holds.
    pub scan: Scan,
}

/// The translation unit compiled for a source in host mode.
pub(crate) fn host_unit(prefix: &str, source: &Source) -> String {
    let kernels: Vec<_> = source.scan.kernels.iter().collect();
    let path = source
        .path
        .display()
        .to_string()
        .replace('\\', "/")
        .replace('"', "\\\"");
    let mut unit = format!("#line 1 \"{path}\"\n");
    unit.push_str(&rewrite_launches(&source.text, &source.scan.launches));
    unit.push_str("\n#line 1 \"ascendc-build generated\"\n");
    unit.push_str(&codegen::host_entries(prefix, &kernels));
    unit
}

pub(crate) fn build(
    cfg: &Build,
    prefix: &str,
    dir: &Path,
    sources: &[Source],
) -> Result<(), Error> {
    let src_dir = dir.join("host");
    let mut units = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let stem = s
            .path
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or("kernel");
        let unit = src_dir.join(format!("{i}_{stem}.cpp"));
        write(&unit, &host_unit(prefix, s))?;
        units.push(unit);
    }
    let runtime = src_dir.join("runtime.cpp");
    write(&runtime, &codegen::host_runtime(prefix))?;
    units.push(runtime);

    let mut cc = cc::Build::new();
    cc.cpp(true)
        .std("c++17")
        .warnings(false)
        .cargo_metadata(!cfg.no_metadata)
        .out_dir(dir.join("obj"))
        .include(include_dir())
        .define("ASCENDC_HOST", "1")
        .define(
            "ASCENDC_HOST_ENQUEUE",
            format!("{prefix}__enqueue").as_str(),
        )
        .flag_if_supported("-pthread");
    if let Some(t) = cfg.env_or(&cfg.target, "TARGET") {
        cc.target(&t);
    }
    if let Some(h) = cfg.env_or(&cfg.host, "HOST") {
        cc.host(&h);
    }
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
    cc.try_compile(prefix).map_err(|e| {
        Error::new(format!(
            "the host C++ compiler failed on the kernels (host mode, AscendC host layer in {}): {e}\n\
             The compiler's messages are above. Set CXX to choose another compiler; set \
             {}=npu to build for an NPU with CANN instead.",
            include_dir().display(),
            crate::ENV_MODE
        ))
    })
}
