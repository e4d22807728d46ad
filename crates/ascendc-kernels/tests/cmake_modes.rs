//! The CMake side of the NPU build, driven through the same helpers the build script uses, and
//! the detection shared by the build script and `cargo xtask env`.
//!
//! - NPU mode, as far as it goes without CANN: configure `cpp/` against a fake install tree whose
//!   stand-in `ascendc.cmake` defines `ascendc_library()` and records its arguments.
//! - Failures: the report names the command and carries the tail of CMake's output.
//! - SoC detection and cmake discovery.
//!
//! The tests that run cmake need one (`$CMAKE`, `cmake` on `PATH`, or the copy `cargo xtask tools`
//! provisions). Without one they say so on stderr and pass, unless `ASCENDC_KERNELS_REQUIRE_CMAKE`
//! is set (as `cargo xtask test` does), in which case they fail.

#[path = "../build/detect.rs"]
mod detect;

use std::path::{Path, PathBuf};
use std::process::Command;

fn cmake() -> Option<PathBuf> {
    detect::cmake_for_tests(Path::new(env!("CARGO_MANIFEST_DIR")))
}

fn cpp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cpp")
}

fn configure(cmake: &Path, build: &Path, defs: &[String]) -> Result<String, detect::CmakeFailure> {
    let mut cmd = Command::new(cmake);
    cmd.arg("-S").arg(cpp_dir()).arg("-B").arg(build).args(defs);
    detect::run_step("configure", &mut cmd)
}

/// A fake CANN root with a stand-in ascendc.cmake. Its `ascendc_library` writes its arguments,
/// the SoC and the package path to `ascendc_library_calls.txt`, and declares an imported static
/// library (pointing at an empty archive) so that the rest of the CMakeLists can use the target.
fn fake_install(root: &Path) -> PathBuf {
    let cmake_dir = root
        .join(format!("{}-linux", ascendcl_sdk::arch()))
        .join("tikcpp/ascendc_kernel_cmake");
    std::fs::create_dir_all(&cmake_dir).unwrap();
    std::fs::write(cmake_dir.join("fake_kernels.a"), b"!<arch>\n").unwrap();
    std::fs::write(
        cmake_dir.join("ascendc.cmake"),
        r#"
function(ascendc_library name type)
  file(APPEND "${CMAKE_BINARY_DIR}/ascendc_library_calls.txt"
       "name=${name}\ntype=${type}\nsources=${ARGN}\nsoc=${SOC_VERSION}\npackage=${ASCEND_CANN_PACKAGE_PATH}\nrun_mode=${RUN_MODE}\n")
  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES
    IMPORTED_LOCATION "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/fake_kernels.a"
    INTERFACE_LINK_LIBRARIES "ascendc_runtime;-lprofapi")
endfunction()
"#,
    )
    .unwrap();
    cmake_dir
}

#[test]
fn npu_mode_configures_against_a_fake_install() {
    let Some(cmake) = cmake() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("cann");
    let cmake_dir = fake_install(&root);
    // The crate's discovery finds the stand-in where a real install keeps it.
    assert_eq!(
        ascendcl_sdk::ascendc_cmake_dir(&root, None).unwrap(),
        cmake_dir,
        "ascendc.cmake not found where CANN keeps it"
    );
    let build = tmp.path().join("build");
    configure(
        &cmake,
        &build,
        &[
            "-DSOC_VERSION=Ascend910B2".into(),
            format!("-DASCENDC_CMAKE_DIR={}", cmake_dir.display()),
            format!("-DASCEND_CANN_PACKAGE_PATH={}", root.display()),
        ],
    )
    .unwrap();
    let calls = std::fs::read_to_string(build.join("ascendc_library_calls.txt")).unwrap();
    let field = |k: &str| {
        calls
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} not recorded in {calls}"))
            .to_string()
    };
    assert_eq!(field("name"), "ascendc_kernels_npu");
    assert_eq!(field("type"), "STATIC");
    let sources = field("sources");
    assert!(
        sources.ends_with("kernels/write_read_value.cpp") && !sources.contains(';'),
        "{sources}"
    );
    assert_eq!(field("soc"), "Ascend910B2");
    assert_eq!(field("package"), root.display().to_string());
    assert_eq!(field("run_mode"), "npu");
    assert_eq!(calls.matches("name=").count(), 1, "called once: {calls}");

    // The link file the build script reads names the library and its interface libraries.
    let link = std::fs::read_to_string(build.join("ascendc_kernels_link.txt")).unwrap();
    let lines: Vec<&str> = link.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines,
        [
            cmake_dir
                .join("fake_kernels.a")
                .display()
                .to_string()
                .as_str(),
            "ascendc_runtime",
            "-lprofapi"
        ]
    );
}

#[test]
fn npu_mode_without_soc_fails_with_command_and_output_tail() {
    let Some(cmake) = cmake() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cmake_dir = fake_install(&tmp.path().join("cann"));
    let err = configure(
        &cmake,
        &tmp.path().join("build"),
        &[format!("-DASCENDC_CMAKE_DIR={}", cmake_dir.display())],
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("CMake configure failed: exit status: 1"),
        "{text}"
    );
    assert!(text.contains("command: "), "{text}");
    assert!(text.contains("-DASCENDC_CMAKE_DIR="), "{text}");
    assert!(text.contains("needs SOC_VERSION"), "{text}");
    assert!(err.tail.len() <= detect::TAIL_LINES);
}

#[test]
fn a_missing_ascendc_cmake_is_reported_by_cmake() {
    let Some(cmake) = cmake() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let err = configure(
        &cmake,
        &tmp.path().join("build"),
        &[
            "-DSOC_VERSION=Ascend910B2".into(),
            format!(
                "-DASCENDC_CMAKE_DIR={}",
                tmp.path().join("nowhere").display()
            ),
        ],
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("needs ASCENDC_CMAKE_DIR holding ascendc.cmake"),
        "{err}"
    );
}

#[test]
fn a_cmake_that_cannot_start_is_reported() {
    let mut cmd = Command::new("/nonexistent/cmake");
    cmd.arg("--version");
    let err = detect::run_step("configure", &mut cmd).unwrap_err();
    assert!(err.outcome.starts_with("could not start"), "{err}");
    assert!(
        err.to_string()
            .contains("command: /nonexistent/cmake --version")
    );
}

#[test]
fn command_lines_are_quoted_for_a_shell() {
    let mut cmd = Command::new("cmake");
    cmd.args(["-DX=a b", "it's", "-S", "/p/q"]);
    assert_eq!(
        detect::command_line(&cmd),
        r#"cmake '-DX=a b' 'it'\''s' -S /p/q"#
    );
}

#[test]
fn cmake_is_found_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path();
    let on_path = ws.join("bin/cmake");
    let explicit = ws.join("explicit/cmake");
    for p in [&explicit, &on_path] {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }
    let path = Some(ws.join("bin").into_os_string());
    let (found, origin) = detect::find_cmake(Some(explicit.clone().into()), path.clone()).unwrap();
    assert_eq!((found, origin), (explicit, "$CMAKE"));
    let (found, origin) = detect::find_cmake(None, path).unwrap();
    assert_eq!((found, origin), (on_path, "PATH"));
    let err = detect::find_cmake(
        Some("/nonexistent/cmake".into()),
        Some("/nonexistent".into()),
    )
    .unwrap_err();
    assert!(
        err.contains("$CMAKE = /nonexistent/cmake (no such file)"),
        "{err}"
    );
    // The advice works for a user of the published crate: no command of this repository.
    assert!(err.contains("Install cmake 3.16 or later"), "{err}");
    assert!(err.contains("set CMAKE"), "{err}");
    assert!(!err.contains("xtask"), "{err}");
    let err = detect::find_cmake(None, None).unwrap_err();
    assert!(err.contains("$CMAKE (not set)"), "{err}");
}

#[test]
fn soc_version_sources_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let root = tmp.path().join("cann");
    std::fs::create_dir_all(&ws).unwrap();
    let mut inputs = detect::SocInputs {
        env: Some("Ascend310P3".into()),
        workspace_root: Some(ws.clone()),
        npu_smi: None,
        install_root: Some(root.clone()),
        arch: "x86_64".into(),
    };
    let soc = detect::detect_soc_version(&inputs).unwrap();
    assert_eq!(
        (soc.version.as_str(), soc.origin.as_str()),
        ("Ascend310P3", "$SOC_VERSION")
    );

    inputs.env = None;
    let err = detect::detect_soc_version(&inputs).unwrap_err();
    for part in [
        "$SOC_VERSION: not set",
        "soc_version: missing",
        "npu-smi info: not available",
        "no Ascend*.ini",
    ] {
        assert!(err.contains(part), "{part:?} not in {err}");
    }

    let platform = root.join("x86_64-linux/data/platform_config");
    std::fs::create_dir_all(&platform).unwrap();
    std::fs::write(platform.join("Ascend910B3.ini"), b"").unwrap();
    assert_eq!(
        detect::detect_soc_version(&inputs).unwrap().version,
        "Ascend910B3"
    );
    std::fs::write(platform.join("Ascend910B4.ini"), b"").unwrap();
    let err = detect::detect_soc_version(&inputs).unwrap_err();
    assert!(
        err.contains("2 SoCs (Ascend910B3, Ascend910B4), cannot choose"),
        "{err}"
    );

    inputs.npu_smi = Some(NPU_SMI.to_string());
    let soc = detect::detect_soc_version(&inputs).unwrap();
    assert_eq!(
        (soc.version.as_str(), soc.origin.as_str()),
        ("Ascend910B2", "npu-smi info")
    );

    std::fs::write(ws.join("soc_version"), "# the board\n\nAscend910B1\n").unwrap();
    assert_eq!(
        detect::detect_soc_version(&inputs).unwrap().version,
        "Ascend910B1"
    );
}

const NPU_SMI: &str = "\
+------------------------------------------------------------------------------------------------+
| npu-smi 24.1.rc2                 Version: 24.1.rc2                                             |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B2               | OK            | 93.2        36                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3390 / 65536         |
+===========================+===============+====================================================+
";

#[test]
fn npu_smi_output_without_a_chip_gives_nothing() {
    assert_eq!(
        detect::soc_from_npu_smi(NPU_SMI).as_deref(),
        Some("Ascend910B2")
    );
    assert_eq!(detect::soc_from_npu_smi("no devices"), None);
}

#[test]
fn mode_requests_parse() {
    use detect::ModeRequest;
    assert_eq!(detect::parse_mode_request(None), Ok(ModeRequest::Auto));
    assert_eq!(
        detect::parse_mode_request(Some("host")),
        Ok(ModeRequest::Host)
    );
    assert_eq!(
        detect::parse_mode_request(Some(" npu ")),
        Ok(ModeRequest::Npu)
    );
    assert!(
        detect::parse_mode_request(Some("gpu"))
            .unwrap_err()
            .contains("ASCENDC_KERNELS_MODE")
    );
}

#[test]
fn the_workspace_root_is_the_nearest_workspace_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let member = ws.join("crates/k");
    std::fs::create_dir_all(member.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/k\"]\n",
    )
    .unwrap();
    std::fs::write(member.join("Cargo.toml"), "[package]\nname = \"k\"\n").unwrap();
    assert_eq!(
        detect::workspace_root(&member.join("src")),
        Some(ws.clone())
    );
    assert_eq!(detect::workspace_root(&member), Some(ws));
    assert_eq!(detect::workspace_root(&tmp.path().join("elsewhere")), None);
}
