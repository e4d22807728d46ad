//! Lifecycle and diagnostics: init and finalize, versions, the SoC name, recent errors and the last error.

use super::*;

acl! {
    /// `aclInit`: initialises the runtime; a repeat returns 100002 (and counts a reference).
    fn aclInit(configPath: *const c_char) {
        let path = if configPath.is_null() {
            None
        } else {
            // SAFETY: a non-NULL configPath is a NUL-terminated string (C contract).
            let s = unsafe { CStr::from_ptr(configPath) };
            Some(s.to_str().map_err(|_| Fail {
                code: INVALID_FILE,
                msg: "configPath is not valid UTF-8".to_string(),
            })?)
        };
        crate::lifecycle::init(path)
    }
}

acl! {
    /// `aclFinalize`: tears everything down; a second call returns 100037.
    fn aclFinalize() {
        crate::lifecycle::finalize(false).map(|_| ())
    }
}

acl! {
    /// `aclFinalizeReference`: drops one `aclInit` reference, tearing down at the last; the
    /// remaining count goes to `refCount` unless it is NULL (the header: NULL ignores it).
    fn aclFinalizeReference(refCount: *mut u64) {
        let remaining = crate::lifecycle::finalize(true)?;
        if !refCount.is_null() {
            // SAFETY: C contract: a non-NULL refCount is valid for one write.
            unsafe { refCount.write(remaining) };
        }
        Ok(())
    }
}

acl! {
    /// `aclrtGetVersion`: 1.17.0.
    fn aclrtGetVersion(majorVersion: *mut i32, minorVersion: *mut i32, patchVersion: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let (a, b, c) = unsafe {
            (
                Out::new(majorVersion, "majorVersion")?,
                Out::new(minorVersion, "minorVersion")?,
                Out::new(patchVersion, "patchVersion")?,
            )
        };
        a.set(ACL_MAJOR_VERSION as i32);
        b.set(ACL_MINOR_VERSION as i32);
        c.set(ACL_PATCH_VERSION as i32);
        Ok(())
    }
}

/// The version of every package the emulator answers for.
const PACKAGE_VERSION: &str = "9.0.0";

/// The version string of package `name` (`cann`, `runtime`, `compiler`, `toolkit`, `opp`;
/// case-insensitive, `-` and `_` alike); 100003 for others, as for a package that is not
/// installed.
fn package_version(name: &CStr) -> R<&'static str> {
    let name = name
        .to_string_lossy()
        .to_ascii_lowercase()
        .replace('_', "-");
    if !matches!(
        name.as_str(),
        "cann" | "runtime" | "compiler" | "toolkit" | "opp"
    ) {
        return fail(
            INVALID_FILE,
            format!("no version information for package {name:?}"),
        );
    }
    Ok(PACKAGE_VERSION)
}

/// The runtime's number for a version string `X.Y.Z[-alpha|beta|rcN]`:
/// `X * 10000000 + Y * 100000 + Z * 1000`, less 300 / 200 / 100 for an alpha / beta / release
/// candidate, plus its number.
fn version_number(v: &str) -> R<i32> {
    let bad = || Fail {
        code: INTERNAL_ERROR,
        msg: format!("the version {v:?} is not X.Y.Z[-alpha|beta|rcN]"),
    };
    let digits = |s: &str| -> R<i32> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse::<i32>().map_err(|_| bad())
    };
    let mut parts = v.splitn(3, '.');
    let major = digits(parts.next().unwrap_or_default())?;
    let minor = digits(parts.next().unwrap_or_default())?;
    let rest = parts.next().unwrap_or_default();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let patch = digits(&rest[..end])?;
    let base = major * 10_000_000 + minor * 100_000 + patch * 1000;
    let suffix = rest[end..]
        .trim_start_matches(['.', '-'])
        .to_ascii_lowercase();
    if suffix.is_empty() {
        return Ok(base);
    }
    let (weight, num) = [("alpha", 300), ("beta", 200), ("rc", 100)]
        .iter()
        .find_map(|(k, w)| suffix.strip_prefix(k).map(|n| (*w, n)))
        .ok_or_else(bad)?;
    let num = num.trim_start_matches(['.', '-']);
    let num = if num.is_empty() { 0 } else { digits(num)? };
    Ok(base - weight + num)
}

acl! {
    /// `aclsysGetVersionStr`: "9.0.0" for the `cann`, `runtime`, `compiler`, `toolkit` and `opp`
    /// packages; 100003 for others. `versionStr` must hold ACL_PKG_VERSION_MAX_SIZE (128) bytes.
    fn aclsysGetVersionStr(pkgName: *mut c_char, versionStr: *mut c_char) {
        if pkgName.is_null() {
            return fail(INVALID_PARAM, "pkgName is NULL");
        }
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(versionStr, "versionStr") }?;
        // SAFETY: pkgName is a NUL-terminated string (C contract).
        let v = package_version(unsafe { CStr::from_ptr(pkgName) })?;
        let v = CString::new(v).unwrap_or_default();
        let v = v.as_bytes_with_nul();
        // SAFETY: versionStr holds ACL_PKG_VERSION_MAX_SIZE bytes (C contract), more than the
        // version.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr().cast::<c_char>(), out.0, v.len()) };
        Ok(())
    }
}

acl! {
    /// `aclsysGetVersionNum`: the packages' version as a number (90000000 for 9.0.0; see
    /// [`aclsysGetVersionStr`] for the packages). `versionNum` NULL, then `pkgName` NULL, are
    /// 100000.
    fn aclsysGetVersionNum(pkgName: *mut c_char, versionNum: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(versionNum, "versionNum") }?;
        if pkgName.is_null() {
            return fail(INVALID_PARAM, "pkgName is NULL");
        }
        // SAFETY: pkgName is a NUL-terminated string (C contract).
        let v = package_version(unsafe { CStr::from_ptr(pkgName) })?;
        out.set(version_number(v)?);
        Ok(())
    }
}

/// The CANN attributes the emulated environment supports, in `aclCannAttr` order: Inf/NaN
/// overflow detection and bf16 (both on Atlas A2/A3); not `ACL_CANN_ATTR_JIT_COMPILE`, since the
/// emulator ships no operator binaries.
static CANN_ATTRS: [aclCannAttr; 2] = [ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16];

acl! {
    /// `aclGetCannAttributeList`: the supported attributes (a static array) and their count.
    fn aclGetCannAttributeList(cannAttrList: *mut *const aclCannAttr, num: *mut usize) {
        // SAFETY: C contract (NULL or valid).
        let (list, n) = unsafe { (Out::new(cannAttrList, "cannAttrList")?, Out::new(num, "num")?) };
        list.set(CANN_ATTRS.as_ptr());
        n.set(CANN_ATTRS.len());
        Ok(())
    }
}

acl! {
    /// `aclGetCannAttribute`: 1 when the attribute is supported, else 0; `value` NULL and an
    /// attribute outside `INF_NAN`, `BF16`, `JIT_COMPILE` are 100000.
    fn aclGetCannAttribute(cannAttr: aclCannAttr, value: *mut i32) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(value, "value") }?;
        if !matches!(cannAttr, ACL_CANN_ATTR_INF_NAN | ACL_CANN_ATTR_BF16 | ACL_CANN_ATTR_JIT_COMPILE) {
            return fail(INVALID_PARAM, format!("{cannAttr} is not an aclCannAttr"));
        }
        out.set(i32::from(CANN_ATTRS.contains(&cannAttr)));
        Ok(())
    }
}

acl! {
    /// `aclInitCallbackRegister`: `cbFunc` NULL is 100000; a second callback of a type other
    /// than `ACL_REG_TYPE_OTHER` is 500000. Registered while the runtime is initialised, it
    /// runs at once with the configuration text.
    fn aclInitCallbackRegister(type_: aclRegisterCallbackType, cbFunc: aclInitCallbackFunc, userData: *mut c_void) {
        let Some(f) = cbFunc else {
            return fail(INVALID_PARAM, "cbFunc is NULL");
        };
        crate::lifecycle::callbacks::register_init(type_, f, userData as usize)
    }
}

acl! {
    /// `aclInitCallbackUnRegister`: `cbFunc` NULL is 100000; no callback of the type, or not
    /// this one, is 500000.
    fn aclInitCallbackUnRegister(type_: aclRegisterCallbackType, cbFunc: aclInitCallbackFunc) {
        let Some(f) = cbFunc else {
            return fail(INVALID_PARAM, "cbFunc is NULL");
        };
        crate::lifecycle::callbacks::unregister_init(type_, f)
    }
}

acl! {
    /// `aclFinalizeCallbackRegister`: as `aclInitCallbackRegister`, for `aclFinalize`.
    fn aclFinalizeCallbackRegister(type_: aclRegisterCallbackType, cbFunc: aclFinalizeCallbackFunc, userData: *mut c_void) {
        let Some(f) = cbFunc else {
            return fail(INVALID_PARAM, "cbFunc is NULL");
        };
        crate::lifecycle::callbacks::register_finalize(type_, f, userData as usize)
    }
}

acl! {
    /// `aclFinalizeCallbackUnRegister`: as `aclInitCallbackUnRegister`.
    fn aclFinalizeCallbackUnRegister(type_: aclRegisterCallbackType, cbFunc: aclFinalizeCallbackFunc) {
        let Some(f) = cbFunc else {
            return fail(INVALID_PARAM, "cbFunc is NULL");
        };
        crate::lifecycle::callbacks::unregister_finalize(type_, f)
    }
}

/// `aclGetRecentErrMsg`: the calling thread's messages since the last call, then cleared; NULL
/// when there are none. The string stays valid until the thread's next call.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    catch_unwind(|| {
        if let Some(code) = faults::check("aclGetRecentErrMsg") {
            injected("aclGetRecentErrMsg", code);
            return std::ptr::null();
        }
        take_recent()
    })
    .unwrap_or(std::ptr::null())
}

/// `aclrtGetLastError`: the calling thread's last error, reset to success
/// (`ACL_RT_THREAD_LEVEL`); 100000 for other levels.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError {
    if level != ACL_RT_THREAD_LEVEL {
        return INVALID_PARAM;
    }
    catch_unwind(|| last_error(true)).unwrap_or(RT_INTERNAL_ERROR)
}

/// `aclrtPeekAtLastError`: like `aclrtGetLastError` without resetting it.
///
/// # Safety
/// Always safe to call.
pub unsafe extern "C" fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError {
    if level != ACL_RT_THREAD_LEVEL {
        return INVALID_PARAM;
    }
    catch_unwind(|| last_error(false)).unwrap_or(RT_INTERNAL_ERROR)
}

acl! {
    /// `aclrtGetRunMode`: `ACL_HOST` (the program runs on the host, as with a PCIe card).
    fn aclrtGetRunMode(runMode: *mut aclrtRunMode) {
        // SAFETY: C contract (NULL or valid).
        unsafe { Out::new(runMode, "runMode") }?.set(ACL_HOST);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::version_number;

    #[test]
    fn version_numbers_weigh_the_parts_and_the_prerelease() {
        assert_eq!(version_number("9.0.0"), Ok(90_000_000));
        assert_eq!(version_number("8.5.1"), Ok(80_501_000));
        assert_eq!(version_number("8.5.0-beta.1"), Ok(80_499_801));
        assert_eq!(version_number("8.5.0.alpha003"), Ok(80_499_703));
        assert_eq!(version_number("8.5.0-rc2"), Ok(80_499_902));
        assert_eq!(version_number("8.5.0-RC"), Ok(80_499_900));
        for bad in ["8.0.RC3", "8.5", "x.1.2", "8.5.0-gamma", "8.5.0-beta.x"] {
            assert!(version_number(bad).is_err(), "{bad}");
        }
    }
}

acl! {
    /// `aclsysGetCANNVersion`: "9.0.0" (major "9", minor "0", patch "0") for the CANN, runtime,
    /// compiler, HCCL and toolkit packages; 100000 for other names.
    fn aclsysGetCANNVersion(name: aclCANNPackageName, version: *mut aclCANNPackageVersion) {
        // SAFETY: C contract (NULL or valid).
        let out = unsafe { Out::new(version, "version") }?;
        if name > ACL_PKG_NAME_TOOLKIT {
            return fail(INVALID_PARAM, format!("name {name} is not a CANN package"));
        }
        // SAFETY: all-zero bytes are a valid aclCANNPackageVersion (arrays of chars).
        let mut v: aclCANNPackageVersion = unsafe { std::mem::zeroed() };
        let put = |dst: &mut [c_char], s: &str| {
            for (d, b) in dst.iter_mut().zip(s.bytes()) {
                *d = b as c_char;
            }
        };
        put(&mut v.version, "9.0.0");
        put(&mut v.majorVersion, "9");
        put(&mut v.minorVersion, "0");
        put(&mut v.patchVersion, "0");
        out.set(v);
        Ok(())
    }
}
