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
        state::init(path)
    }
}

acl! {
    /// `aclFinalize`: tears everything down; a second call returns 100037.
    fn aclFinalize() {
        state::finalize(false).map(|_| ())
    }
}

acl! {
    /// `aclFinalizeReference`: drops one `aclInit` reference, tearing down at the last; the
    /// remaining count goes to `refCount` unless it is NULL (the header: NULL ignores it).
    fn aclFinalizeReference(refCount: *mut u64) {
        let remaining = state::finalize(true)?;
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

/// The C strings handed out by `aclrtGetSocName`, kept for the life of the process.
static SOC_NAMES: Mutex<Vec<CString>> = Mutex::new(Vec::new());

/// `aclrtGetSocName`: the configured SoC name (`Ascend910B2` by default); NULL on failure.
///
/// # Safety
/// Always safe to call; the returned string lives as long as the process.
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    catch_unwind(|| {
        if let Some(code) = faults::check("aclrtGetSocName") {
            injected("aclrtGetSocName", code);
            return std::ptr::null();
        }
        let name = config::with(|c| c.soc.clone());
        let mut v = crate::sync::lock(&SOC_NAMES);
        if let Some(c) = v.iter().find(|c| c.to_bytes() == name.as_bytes()) {
            return c.as_ptr();
        }
        let c = CString::new(name).unwrap_or_default();
        let p = c.as_ptr();
        v.push(c);
        p
    })
    .unwrap_or(std::ptr::null())
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
        let name = unsafe { CStr::from_ptr(pkgName) }.to_string_lossy().to_ascii_lowercase();
        if !matches!(name.as_str(), "cann" | "runtime" | "compiler" | "toolkit" | "opp") {
            return fail(
                INVALID_FILE,
                format!("no version information for package {name:?}"),
            );
        }
        let v = b"9.0.0\0";
        // SAFETY: versionStr holds ACL_PKG_VERSION_MAX_SIZE bytes (C contract), more than 6.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr().cast::<c_char>(), out.0, v.len()) };
        Ok(())
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
