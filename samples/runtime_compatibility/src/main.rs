//! `runtime_compatibility`: the CANN runtime's `3_cross_version/0_runtime_compatibility` sample
//! in Rust.
//!
//! What a program checks before it relies on one CANN version's features: the `runtime`
//! package's version as text and as a number (`aclsysGetVersionStr`, `aclsysGetVersionNum`),
//! the CANN attributes the environment supports (`aclGetCannAttributeList`, each read again
//! with `aclGetCannAttribute`), whether code built for the device's own SoC passes the
//! architecture check (`aclrtGetSocName`, `aclrtCheckArchCompatibility`), and whether the
//! device updates captured AI Core tasks (`aclrtGetDeviceCapability`). Where the reference
//! prints the answers, this sample also checks them against each other: the number is the
//! text's release (less at most a pre-release's offset), every listed attribute reads as
//! supported and every other one as not, and the device's own SoC is compatible with it.

use sample_common::report;

use ascendcl::{CannAttr, DeviceFeature, Runtime, VersionNumber};
use report::info;
use std::error::Error;
use std::process::ExitCode;

const OK: &str = "Runtime compatibility sample executed successfully.";
const FAIL: &str = "Runtime compatibility sample failed.";
/// The package whose version the reference reads.
const PACKAGE: &str = "runtime";
/// How many listed attributes the reference prints at most.
const PRINTED: usize = 3;

type Res<T = ()> = Result<T, Box<dyn Error>>;

/// The C name of an attribute, as the reference prints it.
fn attr_name(a: CannAttr) -> &'static str {
    match a {
        CannAttr::InfNan => "ACL_CANN_ATTR_INF_NAN",
        CannAttr::Bf16 => "ACL_CANN_ATTR_BF16",
        CannAttr::JitCompile => "ACL_CANN_ATTR_JIT_COMPILE",
        _ => "ACL_CANN_ATTR_UNKNOWN",
    }
}

/// The `runtime` package's version; its number must be the release its text names, or a
/// pre-release of it (at most 1000 below).
fn query_version(rt: &Runtime) -> Res {
    let v = rt.package_version(PACKAGE)?;
    info!("CANN package [{PACKAGE}] version string: {}", v.text);
    info!("CANN package [{PACKAGE}] version number: {}", v.number);
    let parts: Vec<i32> = v
        .text
        .split(['.', '-'])
        .take(3)
        .map(|p| p.parse::<i32>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("version text {:?}: {e}", v.text))?;
    let [major, minor, patch] = parts[..] else {
        return Err(format!("version text {:?} is not major.minor.patch", v.text).into());
    };
    let release = VersionNumber::new(major, minor, patch);
    if v.number > release || v.number.get() <= release.get() - 1000 {
        return Err(format!("version number {} is not that of {:?}", v.number, v.text).into());
    }
    Ok(())
}

/// The attributes the environment lists; each reads as supported on its own, every other one
/// as not.
fn query_attributes(rt: &Runtime) -> Res {
    let listed = rt.cann_attributes()?;
    info!("CANN attribute count: {}", listed.len());
    for &a in listed.iter().take(PRINTED) {
        let supported = rt.supports(a)?;
        info!(
            "CANN attribute {} support value: {}",
            attr_name(a),
            i32::from(supported)
        );
    }
    for &a in CannAttr::ALL {
        if rt.supports(a)? != listed.contains(&a) {
            return Err(format!(
                "{} reads as supported: {}, listed: {}",
                attr_name(a),
                rt.supports(a)?,
                listed.contains(&a)
            )
            .into());
        }
    }
    Ok(())
}

/// The architecture check of the device's own SoC, which must pass, and the device's task
/// update capability.
fn query_compatibility(rt: &Runtime, device: &ascendcl::Device) -> Res {
    let soc = rt.soc_name()?;
    if soc.is_empty() {
        println!(
            "[WARNING]  aclrtGetSocName returned empty soc name. Skip architecture compatibility check."
        );
    } else {
        let compatible = rt.arch_compatible(&soc)?;
        info!(
            "Architecture compatibility for {soc}: {}",
            i32::from(compatible)
        );
        if !compatible {
            return Err(format!("the device's own SoC {soc} fails the architecture check").into());
        }
    }
    let capability = device.supports(DeviceFeature::TaskUpdateAicAiv)?;
    info!(
        "Device capability ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV: {}",
        i32::from(capability)
    );
    Ok(())
}

fn run() -> Res {
    let rt = Runtime::new()?; // aclInit
    let device = rt.device(0)?; // aclrtSetDevice
    query_version(&rt)?;
    query_attributes(&rt)?;
    query_compatibility(&rt, &device)?;
    device.reset_force()?; // aclrtResetDeviceForce
    rt.finalize()?; // aclFinalize
    info!("[SUCCESS] Runtime compatibility sample completed successfully");
    Ok(())
}

fn main() -> ExitCode {
    report::verdict(run(), OK, FAIL)
}
