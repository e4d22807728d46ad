//! What the runtime says about the installed CANN software: the version of a package as text and
//! as a comparable number ([`PackageVersion`], [`VersionNumber`]), the CANN attributes the
//! environment supports ([`CannAttr`]), and whether a SoC's architecture is the device's
//! ([`Runtime::arch_compatible`]).

use crate::error::{Error, Result};
use crate::raw;
use crate::raw_enum::raw_enum;
use crate::runtime::Runtime;
use ascendcl_sys as sys;
use std::ffi::{CStr, CString, c_char};
use std::fmt;

/// A version as the runtime numbers it (`aclsysGetVersionNum`): `major * 10000000 + minor *
/// 100000 + patch * 1000`, less 300 / 200 / 100 for an alpha / beta / release candidate, plus its
/// number. Later versions have larger numbers, so versions compare as numbers.
///
/// ```
/// use ascendcl::VersionNumber;
/// assert_eq!(VersionNumber::new(9, 0, 0).get(), 90_000_000);
/// assert!(VersionNumber::new(8, 5, 0) < VersionNumber::new(9, 0, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VersionNumber(pub i32);

impl VersionNumber {
    /// The number of the release `major.minor.patch`.
    pub const fn new(major: i32, minor: i32, patch: i32) -> VersionNumber {
        VersionNumber(major * 10_000_000 + minor * 100_000 + patch * 1000)
    }

    /// The number.
    pub const fn get(self) -> i32 {
        self.0
    }
}

impl fmt::Display for VersionNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The version of an installed package: its text (`aclsysGetVersionStr`) and its number
/// (`aclsysGetVersionNum`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageVersion {
    /// The text, as the package's `version.info` has it (`9.0.0`, `8.5.0-beta.1`).
    pub text: String,
    /// The comparable number.
    pub number: VersionNumber,
}

raw_enum! {
    /// A feature of the CANN environment ([`Runtime::supports`], `aclCannAttr`).
    pub enum CannAttr: sys::aclCannAttr {
        /// `ACL_CANN_ATTR_INF_NAN`: overflow detection in Inf/NaN mode.
        InfNan = sys::ACL_CANN_ATTR_INF_NAN,
        /// `ACL_CANN_ATTR_BF16`: the bf16 data type.
        Bf16 = sys::ACL_CANN_ATTR_BF16,
        /// `ACL_CANN_ATTR_JIT_COMPILE`: operator binaries (just-in-time compilation avoided).
        JitCompile = sys::ACL_CANN_ATTR_JIT_COMPILE,
    }
}

fn package_name(api: &'static str, package: &str) -> Result<CString> {
    CString::new(package).map_err(|_| Error::argument(api, "the package name contains a NUL byte"))
}

impl Runtime {
    /// The version of an installed package (`aclsysGetVersionStr`, `aclsysGetVersionNum`):
    /// `cann`, `runtime`, `compiler`, `toolkit`, `opp`, ... A package that is not installed is
    /// `ACL_ERROR_INVALID_FILE`.
    pub fn package_version(&self, package: &str) -> Result<PackageVersion> {
        let name = package_name("aclsysGetVersionStr", package)?;
        let mut text = [0 as c_char; sys::ACL_PKG_VERSION_MAX_SIZE as usize];
        // SAFETY: a NUL-terminated name (not written by the runtime despite the `char *`) and a
        // buffer of ACL_PKG_VERSION_MAX_SIZE bytes, as the function needs.
        unsafe { raw::aclsysGetVersionStr(name.as_ptr().cast_mut(), text.as_mut_ptr()) }?;
        let mut number = 0i32;
        // SAFETY: as above; a valid out-pointer.
        unsafe { raw::aclsysGetVersionNum(name.as_ptr().cast_mut(), &mut number) }?;
        let end = text.iter().position(|&c| c == 0).ok_or_else(|| {
            Error::argument(
                "aclsysGetVersionStr",
                "the runtime's version text is not NUL-terminated",
            )
        })?;
        // SAFETY: `end` is the index of a NUL inside the buffer.
        let text = unsafe { CStr::from_ptr(text[..=end].as_ptr()) };
        Ok(PackageVersion {
            text: text.to_string_lossy().into_owned(),
            number: VersionNumber(number),
        })
    }

    /// The CANN attributes the environment supports (`aclGetCannAttributeList`); values this
    /// crate does not name are left out.
    pub fn cann_attributes(&self) -> Result<Vec<CannAttr>> {
        let mut list: *const sys::aclCannAttr = std::ptr::null();
        let mut num = 0usize;
        // SAFETY: valid out-pointers.
        unsafe { raw::aclGetCannAttributeList(&mut list, &mut num) }?;
        if list.is_null() || num == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: the runtime hands out an array of `num` attributes it keeps alive.
        let raw = unsafe { std::slice::from_raw_parts(list, num) };
        Ok(raw
            .iter()
            .filter_map(|&a| CannAttr::try_from(a).ok())
            .collect())
    }

    /// Whether the environment supports `attr` (`aclGetCannAttribute`).
    pub fn supports(&self, attr: CannAttr) -> Result<bool> {
        let mut v = 0i32;
        // SAFETY: a valid out-pointer.
        unsafe { raw::aclGetCannAttribute(attr.into(), &mut v) }?;
        Ok(v == 1)
    }

    /// Whether code built for the SoC version `soc` (`Ascend910B3`, as [`Runtime::soc_name`]
    /// names one) runs on the current device: whether the two have the same NPU architecture
    /// (`aclrtCheckArchCompatibility`). An empty name, or one the runtime's platform
    /// configuration does not describe, is `ACL_ERROR_RT_PARAM_INVALID` (107000); a name with a
    /// NUL byte is [`Error::Argument`].
    pub fn arch_compatible(&self, soc: &str) -> Result<bool> {
        let name = CString::new(soc).map_err(|_| {
            Error::argument(
                "aclrtCheckArchCompatibility",
                "the SoC name contains a NUL byte",
            )
        })?;
        let mut v = 0i32;
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        unsafe { raw::aclrtCheckArchCompatibility(name.as_ptr(), &mut v) }?;
        Ok(v == 1)
    }
}
