//! The CI checks that the crates build where users are: cross `cargo check` for aarch64 Linux
//! (Kunpeng hosts) and for macOS, and `cargo bench --no-run` on a machine without cmake.

use crate::tools;
use std::process::Command;

/// The aarch64 Linux target, checked for the whole workspace.
const AARCH64_LINUX: &str = "aarch64-unknown-linux-gnu";
/// The macOS targets, checked for the crates a developer uses on a laptop.
const MACOS: [&str; 2] = ["x86_64-apple-darwin", "aarch64-apple-darwin"];
/// The crates checked for macOS (the kernels need a CANN or a C++ toolchain for the target).
const MACOS_CRATES: [&str; 4] = ["ascendcl-sdk", "ascendcl-sys", "ascendcl-emu", "ascendcl"];
/// The Debian package of the aarch64 C/C++ cross compilers (build scripts of the kernels and of
/// dependencies compile C and C++ for the target).
const CROSS_PACKAGE: &str = "g++-aarch64-linux-gnu";

/// `cargo check --all-targets` for aarch64 Linux (whole workspace) and macOS (the runtime crates).
pub fn cross_checks() -> Result<(), String> {
    tools::step("rustup target add (aarch64 Linux, macOS)");
    let mut add = Command::new("rustup");
    add.current_dir(tools::workspace_root())
        .args(["target", "add", AARCH64_LINUX])
        .args(MACOS);
    tools::run(&mut add)?;
    cross_compiler()?;
    tools::step(&format!(
        "cargo check --workspace --all-targets --target {AARCH64_LINUX}"
    ));
    tools::run(tools::cargo().args([
        "check",
        "--workspace",
        "--all-targets",
        "--target",
        AARCH64_LINUX,
    ]))?;
    for target in MACOS {
        tools::step(&format!(
            "cargo check --all-targets --target {target} -p {}",
            MACOS_CRATES.join(" -p ")
        ));
        let mut cmd = tools::cargo();
        cmd.args(["check", "--all-targets", "--target", target]);
        for krate in MACOS_CRATES {
            cmd.args(["-p", krate]);
        }
        tools::run(&mut cmd)?;
    }
    Ok(())
}

/// Makes sure `aarch64-linux-gnu-gcc` and `-g++` exist: installs them with apt-get when the
/// machine has apt and this runs as root (as on CI), else explains what to install.
fn cross_compiler() -> Result<(), String> {
    let found = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if found("aarch64-linux-gnu-gcc") && found("aarch64-linux-gnu-g++") {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if !(root && found("apt-get")) {
        return Err(format!(
            "the aarch64 check compiles C and C++ for the target and needs aarch64-linux-gnu-gcc \
             and -g++: install {CROSS_PACKAGE} (Debian, Ubuntu) or your distribution's aarch64 \
             cross compilers"
        ));
    }
    tools::step(&format!(
        "apt-get install {CROSS_PACKAGE} (the aarch64 C/C++ cross compilers: about 56 MB of \
         Debian packages, after apt-get update)"
    ));
    tools::run(Command::new("apt-get").args(["update", "-qq"]))?;
    tools::run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", CROSS_PACKAGE])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

/// `cargo bench --no-run` as on a fresh machine without cmake: `CMAKE` unset, and the first
/// `cmake` on `PATH` a stand-in that fails the build if anything runs it.
pub fn bench_without_cmake() -> Result<(), String> {
    tools::step("cargo bench --no-run without cmake (CMAKE unset; a cmake on PATH would fail)");
    let bin = tools::target_dir().join("no-cmake");
    std::fs::create_dir_all(&bin).map_err(|e| format!("{}: {e}", bin.display()))?;
    let stand_in = bin.join("cmake");
    std::fs::write(
        &stand_in,
        "#!/bin/sh\necho \"cmake was run, but building without cmake must not need it\" >&2\nexit 1\n",
    )
    .map_err(|e| format!("{}: {e}", stand_in.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", stand_in.display()))?;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)))
        .map_err(|e| e.to_string())?;
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(tools::workspace_root())
        .args(["bench", "--no-run"])
        .env_remove("CMAKE")
        .env_remove("ASCENDC_BUILD_MODE")
        .env("PATH", path);
    tools::run(&mut cmd)
}
