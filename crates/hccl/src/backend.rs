//! Backend pairing: the HCCL implementation that matches the ACL runtime's backend.

use crate::error::{Error, Result};
use ascendcl::sys::BackendKind;

/// Installs the HCCL backend that belongs with the active ACL backend, once per process, and
/// returns it: the emulator's HCCL table for the runtime emulator (feature `emulator`),
/// `libhccl.so` from the CANN install for a CANN runtime. Every constructor of this crate calls
/// it; call it first to learn early whether HCCL is available.
///
/// Fails when no ACL runtime is initialised yet (create an [`ascendcl::Runtime`] first), when
/// no `libhccl.so` loads (the error lists every path tried), or when an HCCL backend of the
/// other kind was already installed (the emulator's runtime with CANN's HCCL, or the reverse).
pub fn install() -> Result<&'static hccl_sys::Backend> {
    let acl = ascendcl::sys::active().ok_or_else(|| {
        Error::Backend("no ACL runtime is initialised: create an ascendcl::Runtime first".into())
    })?;
    if let Some(b) = hccl_sys::active() {
        return paired(acl.kind, b);
    }
    let backend = match acl.kind {
        BackendKind::Emulator => emulator()?,
        BackendKind::Cann | BackendKind::Linked => hccl_sys::load_cann().map_err(Error::Load)?,
        _ => {
            return Err(Error::Backend(
                "the ACL backend is a custom in-process one: install its HCCL table with \
                 hccl_sys::install first"
                    .into(),
            ));
        }
    };
    match hccl_sys::install(backend) {
        Ok(b) => {
            crate::trace::event!(
                INFO,
                backend = %b.kind,
                description = %b.description,
                library = ?b.library,
                acl_backend = %acl.kind,
                "HCCL backend chosen (paired with the ACL runtime's)"
            );
            Ok(b)
        }
        // Another thread installed one first.
        Err(b) => paired(acl.kind, b),
    }
}

/// Checks that an installed HCCL backend fits the ACL backend.
fn paired(
    acl: BackendKind,
    hccl: &'static hccl_sys::Backend,
) -> Result<&'static hccl_sys::Backend> {
    let emu = |k| k == BackendKind::Emulator;
    let ok = acl == BackendKind::Custom
        || hccl.kind == BackendKind::Custom
        || emu(acl) == emu(hccl.kind);
    if ok {
        Ok(hccl)
    } else {
        Err(Error::Backend(format!(
            "the ACL backend is {acl} but the installed HCCL backend is {} ({}); the two must \
             both be the emulator or both be CANN",
            hccl.kind, hccl.description
        )))
    }
}

#[cfg(feature = "emulator")]
fn emulator() -> Result<hccl_sys::Backend> {
    Ok(hccl_emu::backend())
}

#[cfg(not(feature = "emulator"))]
fn emulator() -> Result<hccl_sys::Backend> {
    Err(Error::Backend(
        "the ACL backend is the emulator but hccl was built without its `emulator` feature".into(),
    ))
}

/// The installed table, installing the paired backend first if needed.
pub(crate) fn api() -> Result<&'static hccl_sys::HcclApi> {
    install().map(|b| &b.api)
}
