//! [`RootInfo`]: the rendezvous token of root-info initialisation, and its bytes.

use crate::backend;
use crate::error::{Error, Result, check};
use ascendcl::Device;
use hccl_sys as sys;

/// The `HcclRootInfo` that rank 0 creates and every rank joins with
/// ([`Comm::init_root_info`](crate::Comm::init_root_info)). Ship it to the other processes as
/// [`RootInfo::as_bytes`] and rebuild it there with [`RootInfo::from_bytes`].
///
/// The process that created it hosts the rendezvous and must stay alive until every rank has
/// joined. One root info makes one communicator per device: create a new one for the next.
#[derive(Clone)]
pub struct RootInfo {
    raw: Box<sys::HcclRootInfo>,
}

impl std::fmt::Debug for RootInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootInfo")
            .field("bytes", &Self::LEN)
            .finish_non_exhaustive()
    }
}

impl RootInfo {
    /// The size of the token in bytes (`HCCL_ROOT_INFO_BYTES`).
    pub const LEN: usize = sys::HCCL_ROOT_INFO_BYTES as usize;

    /// Creates a rendezvous point with `device` current (`HcclGetRootInfo`).
    pub fn new(device: &Device) -> Result<RootInfo> {
        let api = backend::api()?;
        device.make_current()?;
        let mut info = RootInfo::zeroed();
        // SAFETY: `info.raw` is a writable HcclRootInfo.
        check("HcclGetRootInfo", unsafe {
            (api.HcclGetRootInfo)(&mut *info.raw)
        })?;
        Ok(info)
    }

    fn zeroed() -> RootInfo {
        RootInfo {
            raw: Box::new(sys::HcclRootInfo {
                internal: [0; Self::LEN],
            }),
        }
    }

    /// The token's bytes, to send to the other ranks unchanged.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `c_char` and `u8` have one layout; the array is LEN bytes long and borrowed.
        unsafe { std::slice::from_raw_parts(self.raw.internal.as_ptr().cast::<u8>(), Self::LEN) }
    }

    /// A token received from the rank that created it; `bytes` must be exactly
    /// [`RootInfo::LEN`] long. Its content is checked by the library when a rank joins.
    pub fn from_bytes(bytes: &[u8]) -> Result<RootInfo> {
        if bytes.len() != Self::LEN {
            return Err(Error::argument(
                "RootInfo::from_bytes",
                format!(
                    "a root info is {} bytes, {} were given",
                    Self::LEN,
                    bytes.len()
                ),
            ));
        }
        let mut info = RootInfo::zeroed();
        for (d, s) in info.raw.internal.iter_mut().zip(bytes) {
            *d = *s as std::ffi::c_char;
        }
        Ok(info)
    }

    pub(crate) fn as_raw(&self) -> *const sys::HcclRootInfo {
        &*self.raw
    }
}
