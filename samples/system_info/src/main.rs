//! `system_info`: the CANN runtime's `0_quickstart/2_system_info` sample in safe Rust.
//!
//! Initialises the runtime, prints the ACL API version (`aclrtGetVersion`) and the version of
//! the installed `runtime` package (`aclsysGetVersionStr`, `aclsysGetVersionNum`), the run mode
//! (`aclrtGetRunMode`), a float converted to half precision and back by the runtime
//! (`aclFloatToFloat16`, `aclFloat16ToFloat`) and the sizes of three data types
//! (`aclDataTypeSize`), then finalises. The conversions and sizes are checked against the host's
//! own (`half::f16`, `size_of`), and a release's version number against its text.

use sample_common::report;

use ascendcl::half::f16;
use ascendcl::{Runtime, VersionNumber, raw, sys};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Run the system_info sample successfully.";
const FAIL: &str = "Run the system_info sample failed.";

/// The package the reference asks about.
const PACKAGE: &str = "runtime";

/// The number `aclsysGetVersionNum` gives a plain release text `major.minor.patch`; `None` for
/// other texts (pre-releases, `8.0.RC3`), whose numbering the sample does not recompute.
fn release_number(text: &str) -> Option<VersionNumber> {
    let parts: Vec<i32> = text
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    match parts[..] {
        [major, minor, patch] => Some(VersionNumber::new(major, minor, patch)),
        _ => None,
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let rt = Runtime::new()?; // aclInit
    info!("ACL init successfully");
    info!("ACL Runtime API version: {}", rt.version()?); // aclrtGetVersion

    let package = rt.package_version(PACKAGE)?; // aclsysGetVersionStr, aclsysGetVersionNum
    info!("CANN package [{PACKAGE}] version string: {}", package.text);
    info!(
        "CANN package [{PACKAGE}] version number: {}",
        package.number
    );
    let plausible = match release_number(&package.text) {
        Some(n) => n == package.number,
        None => !package.text.is_empty() && package.number.get() > 0,
    };
    if !plausible {
        return Err(format!(
            "version {} does not number as {}",
            package.text, package.number
        )
        .into());
    }

    info!("Current run mode: {}", rt.run_mode()?); // aclrtGetRunMode

    let original = 1.625f32;
    let half = raw::aclFloatToFloat16(original); // aclFloatToFloat16
    let restored = raw::aclFloat16ToFloat(half); // aclFloat16ToFloat
    info!("Float conversion: {original:.6} -> 0x{half:04x} -> {restored:.6}");
    if half != f16::from_f32(original).to_bits() || restored != f16::from_bits(half).to_f32() {
        return Err("the runtime's half-precision conversion differs from the host's".into());
    }

    let sizes = [
        raw::aclDataTypeSize(sys::ACL_FLOAT), // aclDataTypeSize
        raw::aclDataTypeSize(sys::ACL_FLOAT16),
        raw::aclDataTypeSize(sys::ACL_INT64),
    ];
    info!(
        "Data type size: ACL_FLOAT={}, ACL_FLOAT16={}, ACL_INT64={}",
        sizes[0], sizes[1], sizes[2]
    );
    let host = [size_of::<f32>(), size_of::<f16>(), size_of::<i64>()];
    if sizes != host {
        return Err(format!("data type sizes {sizes:?}, the host's {host:?}").into());
    }

    rt.finalize()?; // aclFinalize
    info!("ACL finalize successfully");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
