//! The host-mode AscendC toolchain of an emulator root: ascendc-build's compiler driver
//! (`bin/ascendc-host-cc`), its AscendC host layer (`asc-host/include`) and CMake's ASC language
//! module (`lib64/cmake/asc-config.cmake`, `asc-host/cmake/asc_modules`), so that
//! `find_package(ASC)` + `project(... LANGUAGES ASC)` build single-source `.asc` programs against
//! the root's runtime library.

use crate::tools;
use std::path::Path;
use std::process::Command;

/// Builds the driver and lays the toolchain out in `root`.
pub fn layout(root: &Path, release: bool) -> Result<(), String> {
    let profile = if release { "release" } else { "debug" };
    tools::step(&format!(
        "cargo build -p ascendc-build --bin ascendc-host-cc ({profile})"
    ));
    let mut build = tools::cargo();
    build.args(["build", "-p", "ascendc-build", "--bin", "ascendc-host-cc"]);
    if release {
        build.arg("--release");
    }
    tools::run(&mut build)?;
    let driver = tools::target_dir().join(profile).join("ascendc-host-cc");
    write_layout(root, &driver)
}

/// Lays the toolchain out from a built driver.
pub fn write_layout(root: &Path, driver: &Path) -> Result<(), String> {
    let crate_dir = tools::workspace_root().join("crates/ascendc-build");
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("{}: {e}", bin.display()))?;
    let dst = bin.join("ascendc-host-cc");
    // Replace rather than overwrite: a running build may have the old file open.
    let _ = std::fs::remove_file(&dst);
    std::fs::copy(driver, &dst)
        .map_err(|e| format!("copying {} to {}: {e}", driver.display(), dst.display()))?;
    let asc = root.join("asc-host");
    if asc.exists() {
        std::fs::remove_dir_all(&asc).map_err(|e| format!("{}: {e}", asc.display()))?;
    }
    copy_dir(&crate_dir.join("include"), &asc.join("include"))?;
    copy_dir(
        &crate_dir.join("cmake/asc_modules"),
        &asc.join("cmake/asc_modules"),
    )?;
    let cmake = root.join("lib64/cmake");
    std::fs::create_dir_all(&cmake).map_err(|e| format!("{}: {e}", cmake.display()))?;
    std::fs::copy(
        crate_dir.join("cmake/asc-config.cmake"),
        cmake.join("asc-config.cmake"),
    )
    .map_err(|e| format!("{}: {e}", cmake.display()))?;
    Ok(())
}

/// The lines set_env.sh adds for the toolchain: the driver on PATH, the ASC package on CMake's
/// search path.
pub fn set_env_lines(root: &Path) -> String {
    let r = root.display();
    format!(
        "export PATH=\"{r}/bin${{PATH:+:${{PATH}}}}\"\n\
         export CMAKE_PREFIX_PATH=\"{r}/lib64/cmake${{CMAKE_PREFIX_PATH:+:${{CMAKE_PREFIX_PATH}}}}\"\n"
    )
}

/// Builds the programs of `crates/ascendc-build/tests/programs` with their CMakeLists (CMake's
/// ASC language of the root at `target/emu-root`, laid out by the C programs' step) and runs
/// each; a program's non-zero exit fails. Called by `cargo xtask test`.
pub fn program_test() -> Result<(), String> {
    let root = tools::target_dir().join("emu-root");
    let cmake = tools::cmake()?;
    let sources = tools::workspace_root().join("crates/ascendc-build/tests/programs");
    let build = tools::target_dir().join("asc-host-programs");
    std::fs::create_dir_all(&build).map_err(|e| format!("{}: {e}", build.display()))?;
    let env_path = match std::env::var_os("PATH") {
        Some(p) => {
            let mut v = root.join("bin").into_os_string();
            v.push(":");
            v.push(p);
            v
        }
        None => root.join("bin").into_os_string(),
    };
    let with_env = |cmd: &mut Command| {
        cmd.env("ASCEND_HOME_PATH", &root)
            .env("CMAKE_PREFIX_PATH", root.join("lib64/cmake"))
            .env("PATH", &env_path)
            .env("LD_LIBRARY_PATH", root.join("lib64"));
    };
    tools::step(&format!(
        "cmake {} (ASC language, host mode)",
        sources.display()
    ));
    let mut configure = Command::new(&cmake);
    configure.arg("-S").arg(&sources).arg("-B").arg(&build);
    with_env(&mut configure);
    tools::run(&mut configure)?;
    let mut make = Command::new(&cmake);
    make.arg("--build").arg(&build).arg("-j2");
    with_env(&mut make);
    tools::run(&mut make)?;
    for program in programs(&sources.join("CMakeLists.txt"))? {
        tools::step(&format!("running {program} on the emulator"));
        let mut run = Command::new(build.join(&program));
        run.current_dir(&build);
        with_env(&mut run);
        tools::run(&mut run)?;
    }
    Ok(())
}

/// The programs a CMakeLists lists in its `foreach(program IN ITEMS ...)`.
fn programs(cmakelists: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(cmakelists)
        .map_err(|e| format!("{}: {e}", cmakelists.display()))?;
    let list = text
        .split("foreach(program IN ITEMS")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .ok_or_else(|| {
            format!(
                "{}: no `foreach(program IN ITEMS ...)`",
                cmakelists.display()
            )
        })?;
    Ok(list.split_whitespace().map(str::to_string).collect())
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)
                .map_err(|e| format!("copying {} to {}: {e}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}
