//! The installed software as the runtime reports it: package versions as text and numbers, and
//! the CANN attributes of the environment.

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
