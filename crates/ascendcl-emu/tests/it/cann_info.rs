//! What the runtime says about the installed software: version numbers of the packages
//! (`aclsysGetVersionNum`, next to `aclsysGetVersionStr`) and the CANN attributes
//! (`aclGetCannAttributeList`, `aclGetCannAttribute`).
#![allow(clippy::undocumented_unsafe_blocks)]

use crate::common::*;
use std::ffi::CStr;

fn code(e: AclError) -> aclError {
    e.code()
}

fn version_num(pkg: &CStr) -> Result<i32, aclError> {
    let mut n = -1;
    match unsafe { aclsysGetVersionNum(pkg.as_ptr().cast_mut(), &mut n) } {
        0 => Ok(n),
        e => {
            take_msg();
            Err(e)
        }
    }
}

#[test]
fn version_numbers_follow_the_version_strings() {
    for pkg in [
        c"cann",
        c"runtime",
        c"compiler",
        c"toolkit",
        c"opp",
        c"CANN",
    ] {
        assert_eq!(version_num(pkg), Ok(90_000_000), "{pkg:?}");
        let mut s = [0 as std::ffi::c_char; ACL_PKG_VERSION_MAX_SIZE as usize];
        ok(unsafe { aclsysGetVersionStr(pkg.as_ptr().cast_mut(), s.as_mut_ptr()) });
        let text = unsafe { CStr::from_ptr(s.as_ptr()) }.to_str().unwrap();
        let parts: Vec<i32> = text.split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(
            parts[0] * 10_000_000 + parts[1] * 100_000 + parts[2] * 1000,
            90_000_000
        );
    }
    assert_eq!(
        version_num(c"no-such-package"),
        Err(code(AclError::INVALID_FILE))
    );
    // `versionNum` is checked before `pkgName`; both are 100000.
    let null_param = code(AclError::INVALID_PARAM);
    err(
        unsafe { aclsysGetVersionNum(null_mut(), null_mut()) },
        null_param,
    );
    assert!(take_msg().is_empty());
    let r = unsafe { aclsysGetVersionNum(null_mut(), null_mut()) };
    let m = take_msg();
    assert_eq!(r, null_param);
    assert!(m.contains("versionNum"), "{m}");
    let mut n = 0;
    let r = unsafe { aclsysGetVersionNum(null_mut(), &mut n) };
    let m = take_msg();
    assert_eq!(r, null_param);
    assert!(m.contains("pkgName"), "{m}");
}

#[test]
fn cann_attributes_list_what_the_emulated_environment_supports() {
    let mut list: *const aclCannAttr = null();
    let mut num = 99usize;
    ok(unsafe { aclGetCannAttributeList(&mut list, &mut num) });
    let attrs = unsafe { std::slice::from_raw_parts(list, num) };
    assert_eq!(attrs, [ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16]);
    for (attr, want) in [
        (ACL_CANN_ATTR_INF_NAN, 1),
        (ACL_CANN_ATTR_BF16, 1),
        (ACL_CANN_ATTR_JIT_COMPILE, 0),
    ] {
        let mut v = -1;
        ok(unsafe { aclGetCannAttribute(attr, &mut v) });
        assert_eq!(v, want, "{attr}");
        assert_eq!(attrs.contains(&attr), v == 1);
    }
    let null_param = code(AclError::INVALID_PARAM);
    let mut v = -1;
    err(
        unsafe { aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &mut v) },
        null_param,
    );
    err(unsafe { aclGetCannAttribute(3, &mut v) }, null_param);
    err(
        unsafe { aclGetCannAttribute(ACL_CANN_ATTR_BF16, null_mut()) },
        null_param,
    );
    err(
        unsafe { aclGetCannAttributeList(null_mut(), &mut num) },
        null_param,
    );
    err(
        unsafe { aclGetCannAttributeList(&mut list, null_mut()) },
        null_param,
    );
}
