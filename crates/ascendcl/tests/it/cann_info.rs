//! The installed software as the runtime reports it: package versions as text and numbers, and
//! the CANN attributes of the environment, and the architecture check of a SoC name.

use crate::common::*;
use ascendcl::{CannAttr, Error, VersionNumber};

#[test]
fn package_versions_come_as_text_and_as_a_comparable_number() {
    let r = rt();
    let v = r.package_version("runtime").unwrap();
    let parts: Vec<i32> = v
        .text
        .split(['.', '-'])
        .take(3)
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let release = VersionNumber::new(parts[0], parts[1], parts[2]);
    // A pre-release numbers at most 300 below its release.
    assert!(
        v.number <= release && v.number.get() > release.get() - 1000,
        "{v:?}"
    );
    if emulator_active() {
        assert_eq!(v.text, "9.0.0");
        assert_eq!(v.number, VersionNumber(90_000_000));
        assert_eq!(r.package_version("cann").unwrap(), v);
    }
    let err = r.package_version("no-such-package").unwrap_err();
    assert_eq!(err.code(), Some(AclError::INVALID_FILE), "{err}");
    let err = r.package_version("bad\0name").unwrap_err();
    assert!(matches!(err, Error::Argument { .. }), "{err}");
    assert!(VersionNumber::new(8, 5, 0) < VersionNumber::new(9, 0, 0));
    assert_eq!(VersionNumber::new(9, 0, 0).to_string(), "90000000");
}

#[test]
fn cann_attributes_agree_with_the_single_queries() {
    let r = rt();
    let listed = r.cann_attributes().unwrap();
    for &a in CannAttr::ALL {
        assert_eq!(r.supports(a).unwrap(), listed.contains(&a), "{a:?}");
    }
    if emulator_active() {
        assert_eq!(listed, [CannAttr::InfNan, CannAttr::Bf16]);
        assert!(!r.supports(CannAttr::JitCompile).unwrap());
    }
}

#[test]
fn the_devices_own_soc_is_arch_compatible_and_bad_names_are_refused() {
    let r = rt();
    let _d = r.device(0).unwrap();
    let own = r.soc_name().unwrap();
    assert!(r.arch_compatible(&own).unwrap(), "{own}");
    let err = r.arch_compatible("").unwrap_err();
    assert_eq!(err.api(), Some("aclrtCheckArchCompatibility"), "{err}");
    assert_eq!(err.code(), Some(AclError::PARAM_INVALID), "{err}");
    assert_code(r.arch_compatible("no such SoC"), AclError::PARAM_INVALID);
    assert_argument(r.arch_compatible("Ascend\0910B3"));
    if emulator_active() {
        // The emulated A2 part: the other A2 and A3 parts share its architecture (2201), a 310P
        // (2002) and the first 910 (1001) do not.
        assert!(r.arch_compatible("Ascend910B4").unwrap());
        assert!(r.arch_compatible("Ascend910_9392").unwrap());
        assert!(!r.arch_compatible("Ascend310P3").unwrap());
        assert!(!r.arch_compatible("Ascend910A").unwrap());
    }
}
