//! `cargo xtask emu-root`: a CANN-shaped install root whose runtime library is the emulator, and
//! the C program test that runs against it.
//!
//! Layout of `DIR`, in the shape real toolkits have so that the usual detection code finds it:
//! `include/acl/...` (the ACL 1.17.0 headers), `include/hccl/` (the HCCL headers, also where the
//! wheel's `hccl.h` looks for its types, `include/third_party/hccl/inc/hccl/`),
//! `lib64/libacl_rt.so` (the emulator's C library, from the `ascendcl-emu-capi` crate) with
//! `lib64/libascendcl.so`, `lib64/libruntime.so`, `lib64/libhccl.so` and the runtime's
//! companions ([`LINKED_LIBRARIES`]) linking to it (one library, so ACL, HCCL and the
//! companions share the emulated machine), `runtime/include` and `runtime/lib64` linking to
//! those directories,
//! `version.cfg` with the ACL version, `set_env.sh` (with a copy at `bin/setenv.bash`)
//! exporting `ASCEND_HOME_PATH`, `ASCEND_TOOLKIT_HOME` and `LD_LIBRARY_PATH` like a real
//! install's script, and what makes it a toolkit for CANN's samples ([`toolkit`]: headers the
//! ACL set lacks, `lib64/libc_sec.so`, `ascendc.cmake` at the paths the samples probe, `cann/`).

pub mod catalogue;
mod toolkit;

use crate::tools;
use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask emu-root DIR [--debug]";

/// Runs `cargo xtask emu-root DIR [--debug]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut dir = None;
    let mut release = true;
    for a in args {
        match a.as_str() {
            "--debug" => release = false,
            "--release" => release = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            s if s.starts_with('-') => {
                return Err(format!("emu-root: unknown option {s:?}\n{USAGE}"));
            }
            s if dir.is_none() => dir = Some(PathBuf::from(s)),
            s => return Err(format!("emu-root: unexpected argument {s:?}\n{USAGE}")),
        }
    }
    let dir = dir.ok_or_else(|| USAGE.to_string())?;
    let root = layout(&dir, release)?;
    println!("emulator root ready: {}", root.display());
    println!("use it with: source {}/set_env.sh", root.display());
    Ok(())
}

/// Builds the emulator and lays out the root at `dir`; returns its absolute path.
pub fn layout(dir: &Path, release: bool) -> Result<PathBuf, String> {
    let headers = tools::headers()?;
    let profile = if release { "release" } else { "debug" };
    tools::step(&format!("cargo build -p ascendcl-emu-capi ({profile})"));
    let mut build = tools::cargo();
    build.args(["build", "-p", "ascendcl-emu-capi"]);
    if release {
        build.arg("--release");
    }
    tools::run(&mut build)?;
    let built = tools::target_dir()
        .join(profile)
        .join("libascendcl_emu_capi.so");
    if !built.is_file() {
        return Err(format!("the build produced no {}", built.display()));
    }

    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let root = dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    tools::step(&format!("laying out {}", root.display()));
    write_layout(&root, &built, &headers)?;
    crate::asc_host::layout(&root, release)?;
    Ok(root)
}

/// The libraries of a CANN install that the emulator's one library stands for (links to it).
const LINKED_LIBRARIES: [&str; 9] = [
    "libhccl.so",
    "libmsprofiler.so",
    "libprofapi.so",
    "libacl_tdt_channel.so",
    "libacl_tdt_queue.so",
    "libascend_dump.so",
    "libopapi.so",
    "libnnopbase.so",
    "libacl_rt_impl.so",
];

/// The ACL version of the headers the root carries.
const ACL_VERSION: &str = "1.17.0";
/// The CANN version the emulator reports (`aclsysGetVersionStr`).
const CANN_VERSION: &str = "9.0.0";

/// Lays out the root at `root` (which exists) from the built library and the headers directory.
fn write_layout(root: &Path, library: &Path, headers: &Path) -> Result<(), String> {
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e: std::io::Error| format!("{p}: {e}")
    };
    let acl = root.join("include/acl");
    if acl.exists() {
        std::fs::remove_dir_all(&acl).map_err(io(&acl))?;
    }
    copy_dir(&headers.join("acl"), &acl)?;
    // HCCL: include/hccl/ as in a CANN install; the wheel's hccl.h includes its types by the
    // wheel's path, which is laid out too.
    let hccl_src = headers.join(tools::HCCL_HEADERS);
    for dir in [
        root.join("include/hccl"),
        root.join("include").join(tools::HCCL_HEADERS),
    ] {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        }
        copy_dir(&hccl_src, &dir)?;
    }

    let lib64 = root.join("lib64");
    std::fs::create_dir_all(&lib64).map_err(io(&lib64))?;
    let acl_rt = lib64.join("libacl_rt.so");
    // Replace rather than overwrite in place: a running program may have the old file mapped.
    let _ = std::fs::remove_file(&acl_rt);
    std::fs::copy(library, &acl_rt)
        .map_err(|e| format!("copying {} to {}: {e}", library.display(), acl_rt.display()))?;
    // The compatibility library of CANN 8.5 and later, and the runtime library of older ones.
    symlink("libacl_rt.so", &lib64.join("libascendcl.so"))?;
    symlink("libacl_rt.so", &lib64.join("libruntime.so"))?;
    // HCCL lives in the same library, and so do the runtime's companions (profiling, data
    // channels, queues, dump; the profiling API of libprofapi) and the part of the operator
    // library the samples call (libopapi, libnnopbase), as do the older runtime's
    // implementation library (libacl_rt_impl).
    for name in LINKED_LIBRARIES {
        symlink("libacl_rt.so", &lib64.join(name))?;
    }
    // Older toolkits keep the runtime under runtime/.
    let runtime = root.join("runtime");
    std::fs::create_dir_all(&runtime).map_err(io(&runtime))?;
    symlink("../include", &runtime.join("include"))?;
    symlink("../lib64", &runtime.join("lib64"))?;

    let version = root.join("version.cfg");
    std::fs::write(
        &version,
        format!(
            "# Generated by `cargo xtask emu-root`: the ascendcl-rs host emulator.\n\
             acl_version={ACL_VERSION}\n\
             runtime_running_version=[{CANN_VERSION}:{CANN_VERSION}]\n"
        ),
    )
    .map_err(io(&version))?;

    toolkit::write(root)?;

    let script = set_env(root);
    let set_env_sh = root.join("set_env.sh");
    std::fs::write(&set_env_sh, &script).map_err(io(&set_env_sh))?;
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).map_err(io(&bin))?;
    // CANN's own sample scripts source bin/setenv.bash.
    let setenv = bin.join("setenv.bash");
    std::fs::write(&setenv, &script).map_err(io(&setenv))?;
    Ok(())
}

/// Makes `at` a symbolic link to `target`, replacing what was there.
pub(crate) fn symlink(target: &str, at: &Path) -> Result<(), String> {
    if at.symlink_metadata().is_ok() {
        std::fs::remove_file(at).map_err(|e| format!("{}: {e}", at.display()))?;
    }
    std::os::unix::fs::symlink(target, at).map_err(|e| format!("{}: {e}", at.display()))
}

fn set_env(root: &Path) -> String {
    let r = root.display();
    format!(
        "# Generated by `cargo xtask emu-root`: a CANN-shaped root whose runtime library is the\n\
         # ascendcl-rs host emulator (see docs/emulator.md). Source it like a real set_env.sh.\n\
         export ASCEND_HOME_PATH=\"{r}\"\n\
         export ASCEND_TOOLKIT_HOME=\"{r}\"\n\
         export LD_LIBRARY_PATH=\"{r}/lib64${{LD_LIBRARY_PATH:+:${{LD_LIBRARY_PATH}}}}\"\n{asc}",
        asc = crate::asc_host::set_env_lines(root)
    )
}

/// Fails unless the library's SONAME is `libacl_rt.so` (what programs linked against it record).
fn check_soname(library: &Path) -> Result<(), String> {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(library)
        .output()
        .map_err(|e| format!("running readelf: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if text
        .lines()
        .any(|l| l.contains("(SONAME)") && l.contains("[libacl_rt.so]"))
    {
        tools::step("SONAME libacl_rt.so");
        Ok(())
    } else {
        Err(format!(
            "{} has no SONAME libacl_rt.so:\n{text}",
            library.display()
        ))
    }
}

pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
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

/// Builds the C programs under crates/ascendcl-emu/tests/c (and its C++ ones, and the HCCL
/// programs, C++ in C style, under crates/hccl-emu/tests/c) against the real headers, links them against the
/// emulator's shared library and runs them. Called by `cargo xtask test`.
pub fn c_program_test() -> Result<(), String> {
    let root = layout(&tools::target_dir().join("emu-root"), false)?;
    let sources = tools::workspace_root().join("crates/ascendcl-emu/tests/c");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&sources)
        .map_err(|e| format!("{}: {e}", sources.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c" || x == "cpp"))
        .collect();
    programs.sort();
    if programs.is_empty() {
        return Err(format!("no C programs in {}", sources.display()));
    }
    let lib64 = root.join("lib64");
    check_soname(&lib64.join("libacl_rt.so"))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let ld_path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(old) if !old.is_empty() => format!("{}:{old}", lib64.display()),
        _ => lib64.display().to_string(),
    };
    // HCCL's headers are C++ (an inline function using nullptr): its programs are C++ in C
    // style, linked against libhccl.so (the same library).
    let hccl_sources = tools::workspace_root().join("crates/hccl-emu/tests/c");
    let mut hccl_programs: Vec<PathBuf> = std::fs::read_dir(&hccl_sources)
        .map_err(|e| format!("{}: {e}", hccl_sources.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    hccl_programs.sort();
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    // A C++ program among them (one that follows a C++ sample of CANN's) is built as C++.
    let builds = programs
        .into_iter()
        .map(|p| {
            if p.extension().is_some_and(|x| x == "cpp") {
                (p, &cxx, &sources, ["-std=c++14", "-lacl_rt"])
            } else {
                (p, &cc, &sources, ["-std=c11", "-lacl_rt"])
            }
        })
        .chain(
            hccl_programs
                .into_iter()
                .map(|p| (p, &cxx, &hccl_sources, ["-std=c++14", "-lhccl"])),
        );
    for (src, cc, sources, [std, lib]) in builds {
        let stem = src
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let out = tools::target_dir().join("emu-c-programs");
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let exe = out.join(&stem);
        tools::step(&format!("{cc} {} {lib}", src.display()));
        tools::run(
            Command::new(cc)
                .args([std, "-Wall", "-Wextra", "-Werror", "-O1"])
                .arg("-I")
                .arg(root.join("include"))
                .arg("-I")
                .arg(sources)
                .arg(&src)
                .arg("-L")
                .arg(&lib64)
                .args([lib, "-lpthread", "-o"])
                .arg(&exe),
        )?;
        tools::step(&format!("running {stem} on the emulator"));
        tools::run(Command::new(&exe).env("LD_LIBRARY_PATH", &ld_path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout is what the usual detection code looks for: the SDK's discovery finds the root
    /// with its library, headers and version, and every link resolves.
    #[test]
    fn the_layout_has_the_shape_of_a_cann_toolkit() {
        let tmp = std::env::temp_dir().join(format!("emu-root-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let (root, headers) = (tmp.join("root"), tmp.join("headers"));
        std::fs::create_dir_all(headers.join("acl")).unwrap();
        std::fs::write(headers.join("acl/acl.h"), "/* acl.h */\n").unwrap();
        std::fs::create_dir_all(headers.join(tools::HCCL_HEADERS)).unwrap();
        std::fs::write(
            headers.join(tools::HCCL_HEADERS).join("hccl.h"),
            "/* hccl.h */\n",
        )
        .unwrap();
        std::fs::create_dir_all(&root).unwrap();
        let lib = tmp.join("libemu.so");
        std::fs::write(&lib, b"library").unwrap();
        write_layout(&root, &lib, &headers).unwrap();
        // Twice: a second layout replaces the first.
        write_layout(&root, &lib, &headers).unwrap();

        for p in [
            "include/acl/acl.h",
            "lib64/libacl_rt.so",
            "lib64/libascendcl.so",
            "lib64/libruntime.so",
            "lib64/libhccl.so",
            "lib64/libmsprofiler.so",
            "lib64/libacl_tdt_channel.so",
            "lib64/libacl_tdt_queue.so",
            "lib64/libascend_dump.so",
            "include/hccl/hccl.h",
            "include/third_party/hccl/inc/hccl/hccl.h",
            "runtime/include/acl/acl.h",
            "runtime/lib64/libacl_rt.so",
            "set_env.sh",
            "bin/setenv.bash",
            "version.cfg",
            "cann/set_env.sh",
            "include/securec.h",
            "include/mstx/ms_tools_ext.h",
            "include/aclnnop/aclnn_add.h",
            "include/profiling/aprof_pub.h",
            "lib64/libc_sec.so",
            "tikcpp/ascendc_kernel_cmake/ascendc.cmake",
        ] {
            assert!(root.join(p).is_file(), "{p} is missing");
        }
        assert_eq!(
            std::fs::read(root.join("lib64/libruntime.so")).unwrap(),
            b"library"
        );
        assert_eq!(
            std::fs::read_link(root.join("lib64/libhccl.so")).unwrap(),
            Path::new("libacl_rt.so")
        );
        let arch = root.join(toolkit::arch_dir());
        for p in [
            "include/acl/acl.h",
            "lib64/libacl_rt.so",
            "tikcpp/ascendc_kernel_cmake/ascendc.cmake",
        ] {
            assert!(
                arch.join(p).is_file(),
                "{}/{p} is missing",
                toolkit::arch_dir()
            );
        }
        let script = std::fs::read_to_string(root.join("bin/setenv.bash")).unwrap();
        assert!(script.contains(&format!("ASCEND_HOME_PATH=\"{}\"", root.display())));

        let mut env = ascendcl_sdk::SearchEnv::empty();
        env.env_roots
            .push(("ASCEND_HOME_PATH".to_string(), root.clone()));
        let found = env.find_install().unwrap();
        assert_eq!(found.root, root);
        assert_eq!(found.library, root.join("lib64/libacl_rt.so"));
        assert_eq!(found.include_dir, Some(root.join("include")));
        assert_eq!(found.version.as_deref(), Some(ACL_VERSION));
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
