//! [`AclError`]: an `aclError` status code as a typed value, with a named constant for every
//! code of the headers' error tables (generated into `error_codes.rs` by `cargo xtask codegen`).

use crate::aclError;
use crate::error_codes::CODES;
use std::fmt;

/// An `aclError` status code: what every runtime function returns, `0` being success.
///
/// Every code of the AscendCL headers' error tables is an associated constant, named after the C
/// constant without its prefix: `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) is
/// [`AclError::MEMORY_ALLOCATION`], `ACL_ERROR_INVALID_PARAM` (100000) is
/// [`AclError::INVALID_PARAM`], `ACL_ERROR_GE_REDEPLOYING` is [`AclError::GE_REDEPLOYING`] and
/// `ACL_SUCCESS` is [`AclError::SUCCESS`]. Four short names exist in both the generic and the
/// runtime table; there the generic code keeps the short name and the runtime's keeps `RT_`:
/// [`AclError::FAILURE`] / [`AclError::RT_FAILURE`], [`AclError::INTERNAL_ERROR`] /
/// [`AclError::RT_INTERNAL_ERROR`], [`AclError::GROUP_NOT_SET`] / [`AclError::RT_GROUP_NOT_SET`],
/// [`AclError::GROUP_NOT_CREATE`] / [`AclError::RT_GROUP_NOT_CREATE`].
///
/// The wrapped integer is public, so a status from the function table converts without a call,
/// and the constants work in patterns:
///
/// ```
/// use ascendcl_sys::AclError;
///
/// let status: ascendcl_sys::aclError = 207001;
/// match AclError(status) {
///     AclError::SUCCESS => unreachable!(),
///     AclError::MEMORY_ALLOCATION => {}
///     other => panic!("{other}"),
/// }
/// assert_eq!(AclError::MEMORY_ALLOCATION.name(), Some("ACL_ERROR_RT_MEMORY_ALLOCATION"));
/// assert_eq!(
///     AclError::MEMORY_ALLOCATION.to_string(),
///     "ACL_ERROR_RT_MEMORY_ALLOCATION (207001)"
/// );
/// assert_eq!(AclError(42).to_string(), "unknown aclError (42)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub struct AclError(pub aclError);

impl AclError {
    /// The numeric code.
    #[inline]
    pub const fn code(self) -> aclError {
        self.0
    }

    /// Whether this is `ACL_SUCCESS` (0).
    #[inline]
    pub const fn is_success(self) -> bool {
        self.0 == 0
    }

    /// The symbolic name of the code in the headers (`ACL_ERROR_RT_MEMORY_ALLOCATION`), or `None`
    /// for a code no error table defines.
    pub fn name(self) -> Option<&'static str> {
        CODES
            .binary_search_by_key(&self, |&(c, _)| c)
            .ok()
            .map(|i| CODES[i].1)
    }

    /// The code whose symbolic name in the headers is `name` (the inverse of [`AclError::name`]).
    pub fn from_name(name: &str) -> Option<AclError> {
        CODES.iter().find(|&&(_, n)| n == name).map(|&(c, _)| c)
    }

    /// Every code of the headers' error tables with its symbolic name, sorted by code.
    pub fn all() -> &'static [(AclError, &'static str)] {
        CODES
    }
}

impl From<aclError> for AclError {
    fn from(code: aclError) -> Self {
        AclError(code)
    }
}

impl From<AclError> for aclError {
    fn from(code: AclError) -> Self {
        code.0
    }
}

/// A status from the function table compares with the constants without a conversion:
/// `status == AclError::MEMORY_ALLOCATION`.
impl PartialEq<AclError> for aclError {
    fn eq(&self, other: &AclError) -> bool {
        *self == other.0
    }
}

/// The converse of `aclError == AclError`.
impl PartialEq<aclError> for AclError {
    fn eq(&self, other: &aclError) -> bool {
        self.0 == *other
    }
}

/// `ACL_ERROR_RT_MEMORY_ALLOCATION (207001)`; `unknown aclError (42)` for a code no table names.
impl fmt::Display for AclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({})",
            self.name().unwrap_or("unknown aclError"),
            self.0
        )
    }
}

/// `AclError(207001 ACL_ERROR_RT_MEMORY_ALLOCATION)`.
impl fmt::Debug for AclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "AclError({} {name})", self.0),
            None => write!(f, "AclError({})", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_compare_with_the_constants_both_ways() {
        let status: aclError = 207001;
        assert!(status == AclError::MEMORY_ALLOCATION);
        assert!(AclError::MEMORY_ALLOCATION == status);
        assert!(status != AclError::SUCCESS);
        assert_eq!(vec![status; 2], vec![AclError::MEMORY_ALLOCATION; 2]);
    }

    #[test]
    fn the_table_is_sorted_unique_and_complete() {
        let all = AclError::all();
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(all.len() > 250, "{}", all.len());
        let mut names = std::collections::BTreeSet::new();
        for &(code, name) in all {
            assert!(
                name == "ACL_SUCCESS" || name.starts_with("ACL_ERROR_"),
                "{name}"
            );
            assert!(names.insert(name), "{name} twice");
            assert_eq!(code.name(), Some(name));
            assert_eq!(AclError::from_name(name), Some(code));
        }
    }

    /// The constants carry the values of the bindings' constants, and the names of the rule.
    // The bindings' constants are `int` or `unsigned int`: one cast fits both.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn constants_match_the_bindings() {
        for (constant, value, name) in [
            (
                AclError::SUCCESS,
                crate::ACL_SUCCESS as aclError,
                "ACL_SUCCESS",
            ),
            (
                AclError::INVALID_PARAM,
                crate::ACL_ERROR_INVALID_PARAM as aclError,
                "ACL_ERROR_INVALID_PARAM",
            ),
            (
                AclError::REPEAT_INITIALIZE,
                crate::ACL_ERROR_REPEAT_INITIALIZE as aclError,
                "ACL_ERROR_REPEAT_INITIALIZE",
            ),
            (
                AclError::PARAM_INVALID,
                crate::ACL_ERROR_RT_PARAM_INVALID as aclError,
                "ACL_ERROR_RT_PARAM_INVALID",
            ),
            (
                AclError::MEMORY_ALLOCATION,
                crate::ACL_ERROR_RT_MEMORY_ALLOCATION as aclError,
                "ACL_ERROR_RT_MEMORY_ALLOCATION",
            ),
            (
                AclError::FEATURE_NOT_SUPPORT,
                crate::FEATURE_NOT_SUPPORT,
                "ACL_ERROR_RT_FEATURE_NOT_SUPPORT",
            ),
            (
                AclError::INVALID_HANDLE,
                crate::ACL_ERROR_RT_INVALID_HANDLE as aclError,
                "ACL_ERROR_RT_INVALID_HANDLE",
            ),
            (
                AclError::GE_REDEPLOYING,
                crate::ACL_ERROR_GE_REDEPLOYING as aclError,
                "ACL_ERROR_GE_REDEPLOYING",
            ),
            (
                AclError::FAILURE,
                crate::ACL_ERROR_FAILURE as aclError,
                "ACL_ERROR_FAILURE",
            ),
            (
                AclError::RT_FAILURE,
                crate::ACL_ERROR_RT_FAILURE as aclError,
                "ACL_ERROR_RT_FAILURE",
            ),
            (
                AclError::INTERNAL_ERROR,
                crate::ACL_ERROR_INTERNAL_ERROR as aclError,
                "ACL_ERROR_INTERNAL_ERROR",
            ),
            (
                AclError::RT_INTERNAL_ERROR,
                crate::ACL_ERROR_RT_INTERNAL_ERROR as aclError,
                "ACL_ERROR_RT_INTERNAL_ERROR",
            ),
        ] {
            assert_eq!(constant.code(), value, "{name}");
            assert_eq!(constant.name(), Some(name));
            assert_eq!(AclError::from_name(name), Some(constant));
        }
        assert_ne!(AclError::FAILURE, AclError::RT_FAILURE);
        // Aliases of 0 are reported by the canonical name; log levels are not codes.
        assert_eq!(
            AclError(crate::ACL_ERROR_NONE as aclError),
            AclError::SUCCESS
        );
        assert_eq!(
            AclError(crate::ACL_RT_SUCCESS as aclError).name(),
            Some("ACL_SUCCESS")
        );
        assert_eq!(AclError::from_name("ACL_ERROR"), None);
        assert_eq!(AclError::from_name("ACL_ERROR_NONE"), None);
    }

    #[test]
    fn display_debug_and_conversions() {
        assert_eq!(
            AclError::INVALID_HANDLE.to_string(),
            "ACL_ERROR_RT_INVALID_HANDLE (107017)"
        );
        assert_eq!(
            format!("{:?}", AclError::INVALID_HANDLE),
            "AclError(107017 ACL_ERROR_RT_INVALID_HANDLE)"
        );
        assert_eq!(AclError(1).name(), None);
        assert_eq!(AclError(1).to_string(), "unknown aclError (1)");
        assert_eq!(format!("{:?}", AclError(1)), "AclError(1)");
        assert_eq!(aclError::from(AclError::MEMORY_ALLOCATION), 207001);
        assert_eq!(AclError::from(207001), AclError::MEMORY_ALLOCATION);
        assert!(AclError::default().is_success());
        assert!(!AclError::MEMORY_ALLOCATION.is_success());
    }
}
