//! `cargo xtask env`: reports what was detected of a CANN install, the way the build scripts see it.
//!
//! Each line gives a value and where it came from, or why nothing was found. `--export` prints
//! shell exports in the manner of the runtime's `set_env.sh` (`eval "$(cargo xtask env --export)"`),
//! with what was not found left as comments.
//!
//! Detection is shared, not repeated: the install comes from `ascendcl_sdk` (as in
//! `ascendcl-sys`'s build script), and `SOC_VERSION`, cmake and the kernels' build mode from
//! `crates/ascendc-build/src/detect.rs`, the file `ascendc-build` (every kernels build of the
//! workspace) uses.

#[allow(dead_code)]
#[path = "../../crates/ascendc-build/src/detect.rs"]
mod detect;

use crate::tools;

/// One detected item: its value and origin, or why it is missing.
type Found = Result<(String, String), String>;

struct Report {
    root: Found,
    version: Option<String>,
    include: Found,
    lib_dir: Found,
    library: Found,
    hccl: Found,
    cmake_dir: Found,
    soc: Found,
    cmake: Found,
    mode: String,
}

fn detect_all() -> Report {
    let env = ascendcl_sdk::SearchEnv::from_process();
    let install = env.find_install();
    let workspace = tools::workspace_root();
    let (root, version, include, lib_dir, library, cmake_dir) = match &install {
        Ok(i) => (
            Ok((i.root.display().to_string(), i.origin.clone())),
            i.version.clone(),
            i.include_dir
                .as_ref()
                .map(|d| (d.display().to_string(), "install".to_string()))
                .ok_or_else(|| {
                    format!(
                        "no acl/acl.h under {}",
                        env.include_dirs(&i.root)
                            .iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }),
            Ok((i.lib_dir.display().to_string(), "install".to_string())),
            Ok((i.library.display().to_string(), "install".to_string())),
            i.ascendc_cmake_dir()
                .map(|d| {
                    let origin = if std::env::var_os("ASCENDC_CMAKE_DIR")
                        .is_some_and(|v| d.as_os_str() == v)
                    {
                        "$ASCENDC_CMAKE_DIR"
                    } else {
                        "install"
                    };
                    (d.display().to_string(), origin.to_string())
                })
                .map_err(|e| {
                    e.to_string()
                        .replace("no CANN install found; tried:", "no ascendc.cmake; tried:")
                }),
        ),
        Err(e) => {
            let why = "no CANN install (see CANN root)".to_string();
            (
                Err(e.to_string()),
                None,
                Err(why.clone()),
                Err(why.clone()),
                Err(why.clone()),
                Err(why),
            )
        }
    };
    let soc_inputs =
        detect::SocInputs::from_process(None, install.as_ref().ok().map(|i| i.root.clone()));
    let soc = detect::detect_soc(&soc_inputs).map(|s| (s.version, s.origin));
    // What a build finds ($CMAKE, else PATH), else the copy `cargo xtask tools` provisions,
    // which the xtask passes to builds in CMAKE.
    let provisioned = workspace.join("target/tools/cmake/data/bin/cmake");
    let cmake = match detect::find_cmake(std::env::var_os("CMAKE"), std::env::var_os("PATH")) {
        Ok(p) => Ok((p.display().to_string(), "$CMAKE or PATH".to_string())),
        Err(_) if provisioned.is_file() => Ok((
            provisioned.display().to_string(),
            "target/tools".to_string(),
        )),
        Err(e) => Err(e),
    };
    let hccl = env
        .find_hccl()
        .map(|i| (i.library.display().to_string(), i.origin))
        .map_err(|e| match (&install, &env.hccl_lib) {
            // Same roots as the runtime's: do not list them twice.
            (Err(_), None) => "no CANN install (see CANN root)".to_string(),
            _ => e.to_string(),
        });
    let request = detect::parse_request(std::env::var(detect::ENV_MODE).ok().as_deref());
    let mode = match request {
        Err(e) => format!("invalid: {e}"),
        Ok(detect::Request::Host) => format!("host (${}=host)", detect::ENV_MODE),
        Ok(req) => match (&cmake_dir, &soc) {
            (Ok(_), Ok(_)) => "npu (CANN with ascendc.cmake and a SoC version)".to_string(),
            (Ok(_), Err(_)) => {
                "build error: ascendc.cmake found but SOC_VERSION unknown (set SOC_VERSION, or ASCENDC_BUILD_MODE=host)"
                    .to_string()
            }
            (Err(_), _) if req == detect::Request::Npu => format!(
                "build error: ${}=npu but no CANN install with ascendc.cmake",
                detect::ENV_MODE
            ),
            (Err(_), _) => "host (no CANN install with ascendc.cmake; kernels compiled by the C++ compiler, run on the emulator)".to_string(),
        },
    };
    Report {
        root,
        version,
        include,
        lib_dir,
        library,
        hccl,
        cmake_dir,
        soc,
        cmake,
        mode,
    }
}

/// The SoC the kernels build targets, for `cargo xtask sample`'s `Current compile soc version`
/// line: the detected SoC in NPU mode, else why there is none.
pub fn compile_soc_version() -> String {
    let r = detect_all();
    match (&r.cmake_dir, &r.soc) {
        _ if r.mode.starts_with("host") => {
            let why = if r.mode.contains(detect::ENV_MODE) {
                format!("${}=host", detect::ENV_MODE)
            } else {
                "no CANN install with ascendc.cmake was found".to_string()
            };
            format!("none: the kernels are built for the host CPU and run on the emulator ({why})")
        }
        (Ok(_), Ok((soc, origin))) => format!("{soc} (from {origin})"),
        _ => format!("unknown: kernels mode {}", r.mode),
    }
}

fn show(label: &str, item: &Found) {
    match item {
        Ok((value, origin)) => println!("{label:<18} {value}  (from {origin})"),
        Err(why) => {
            let mut lines = why.lines();
            println!("{label:<18} not found: {}", lines.next().unwrap_or(""));
            for line in lines {
                println!("{:<18}   {}", "", line.trim());
            }
        }
    }
}

/// Quotes a value for a POSIX shell.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The first line of a reason, without a trailing list header.
fn summary(why: &str) -> String {
    let first = why.lines().next().unwrap_or("").trim();
    let first = first
        .trim_end_matches("; tried:")
        .trim_end_matches(" tried:");
    if why.lines().count() > 1 {
        format!("{first} (`cargo xtask env` lists the places tried)")
    } else {
        first.to_string()
    }
}

fn export(name: &str, item: &Found) {
    match item {
        Ok((value, _)) => println!("export {name}={}", sh_quote(value)),
        Err(why) => println!("# {name}: not found: {}", summary(why)),
    }
}

/// Runs `cargo xtask env [--export]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut exports = false;
    for arg in args {
        match arg.as_str() {
            "--export" => exports = true,
            other => {
                return Err(format!(
                    "env: unknown argument {other:?}; usage: cargo xtask env [--export]"
                ));
            }
        }
    }
    let r = detect_all();
    if exports {
        println!("# written by `cargo xtask env --export`: eval \"$(cargo xtask env --export)\"");
        export("ASCEND_HOME_PATH", &r.root);
        export("ASCEND_TOOLKIT_HOME", &r.root);
        match &r.lib_dir {
            Ok((dir, _)) => println!(
                "export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}",
                sh_quote(dir)
            ),
            Err(why) => println!("# LD_LIBRARY_PATH: unchanged: {}", summary(why)),
        }
        export("ASCENDC_CMAKE_DIR", &r.cmake_dir);
        export("SOC_VERSION", &r.soc);
        export("CMAKE", &r.cmake);
        return Ok(());
    }
    show("CANN root", &r.root);
    println!(
        "{:<18} {}",
        "CANN version",
        r.version.as_deref().unwrap_or("unknown (no version file)")
    );
    show("include dir", &r.include);
    show("lib dir", &r.lib_dir);
    show("runtime library", &r.library);
    show("HCCL library", &r.hccl);
    show("ASCENDC_CMAKE_DIR", &r.cmake_dir);
    show("SOC_VERSION", &r.soc);
    show("cmake (NPU mode)", &r.cmake);
    println!("{:<18} {}", "kernels mode", r.mode);
    Ok(())
}
