//! What makes an emulator root a CANN toolkit for the host, beyond the runtime library: the
//! files of `xtask/emu-root/toolkit` (headers the ACL set lacks, written here: the secure C
//! library's, mstx's, the profiling API's, the operator library's; `ascendc.cmake`), the secure C
//! library built from its source into `lib64/libc_sec.so`, and the directories CANN's scripts
//! probe: `<arch>-linux/` (with `include`, `lib64` and `tikcpp/ascendc_kernel_cmake`), `tikcpp`,
//! and `cann/` (the root itself, for `source <install_root>/cann/set_env.sh`).

use crate::tools;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The toolkit's files in the repository.
pub fn sources() -> PathBuf {
    tools::workspace_root().join("xtask/emu-root/toolkit")
}

/// The host's directory name in CANN's layout (`x86_64-linux`, `aarch64-linux`).
pub fn arch_dir() -> String {
    format!("{}-linux", std::env::consts::ARCH)
}

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

/// Lays the toolkit out in `root` (which holds `include/` and `lib64/` already).
pub fn write(root: &Path) -> Result<(), String> {
    let src = sources();
    super::copy_dir(&src.join("include"), &root.join("include"))?;
    build_securec(&src, root)?;

    let arch = root.join(arch_dir());
    std::fs::create_dir_all(&arch).map_err(io(&arch))?;
    super::symlink("../include", &arch.join("include"))?;
    super::symlink("../lib64", &arch.join("lib64"))?;
    let tikcpp = arch.join("tikcpp");
    if tikcpp.exists() {
        std::fs::remove_dir_all(&tikcpp).map_err(io(&tikcpp))?;
    }
    super::copy_dir(&src.join("tikcpp"), &tikcpp)?;
    super::symlink(&format!("{}/tikcpp", arch_dir()), &root.join("tikcpp"))?;
    // `source <install_root>/cann/set_env.sh`, as the samples' READMEs write it.
    super::symlink(".", &root.join("cann"))?;
    Ok(())
}

/// Compiles the secure C library into `lib64/libc_sec.so`.
fn build_securec(src: &Path, root: &Path) -> Result<(), String> {
    let out = root.join("lib64/libc_sec.so");
    let _ = std::fs::remove_file(&out);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    tools::run(
        Command::new(&cc)
            .args([
                "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
            ])
            .arg("-I")
            .arg(src.join("include"))
            .arg(src.join("src/securec.c"))
            .arg("-Wl,-soname,libc_sec.so")
            .arg("-o")
            .arg(&out),
    )
}
